package values

import (
	"reflect"
	"testing"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// A profile that never met the API server (kupenstack render) gets the CRD's defaults; only
// cinder and libvirt mount the Ceph client configuration.
func TestCephClientAndPrerequisites(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    *kupenstackv1.OpenstackCloudConfigurationProfileSpec
		want *kupenstackv1.CephClient
	}{
		{"no profile", nil, nil},
		{"no ceph", &kupenstackv1.OpenstackCloudConfigurationProfileSpec{}, nil},
		{"defaults", &kupenstackv1.OpenstackCloudConfigurationProfileSpec{Ceph: &kupenstackv1.CephClient{}},
			&kupenstackv1.CephClient{ConfigMap: "ceph-etc", Secret: "pvc-ceph-client-key", PoolReplicas: 3}},
		{"given", &kupenstackv1.OpenstackCloudConfigurationProfileSpec{Ceph: &kupenstackv1.CephClient{ConfigMap: "c", Secret: "s", PoolReplicas: 1}},
			&kupenstackv1.CephClient{ConfigMap: "c", Secret: "s", PoolReplicas: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := cephClient(tt.p); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("cephClient = %+v, want %+v", got, tt.want)
			}
			for _, c := range Components {
				cv, err := renderComponent(c, tt.p)
				if err != nil {
					t.Fatal(err)
				}
				got := cv.Prerequisites
				mounts := tt.want != nil && (c.Chart == "cinder" || c.Chart == "libvirt")
				if !mounts {
					if len(got) != 0 {
						t.Errorf("%s: prerequisites %+v, want none", c.Name, got)
					}
					continue
				}
				want := []Prerequisite{{Kind: "ConfigMap", Name: tt.want.ConfigMap, Why: "the profile's spec.ceph.configMap"},
					{Kind: "Secret", Name: tt.want.Secret, Why: "the profile's spec.ceph.secret"}}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: prerequisites %+v, want %+v", c.Name, got, want)
				}
			}
		})
	}
}
