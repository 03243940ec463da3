package floatingip

import (
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
)

func spec() *kupenstackv1.FloatingIP {
	return &kupenstackv1.FloatingIP{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web-0", UID: types.UID("uid-1")},
		Spec: kupenstackv1.FloatingIPSpec{
			FloatingNetworkRef: "public", Description: "d", PortRef: "web-0", FixedIPAddress: "10.0.0.5",
			Tags: []kupenstackv1.NeutronTag{"a", "b"},
		},
	}
}

func matching(f *kupenstackv1.FloatingIP) *floatingips.FloatingIP {
	tags := neutron.Tags(f, f.Spec.Tags)
	slices.Reverse(tags)
	return &floatingips.FloatingIP{Description: "d", PortID: "port-1", FixedIP: "10.0.0.5", FloatingIP: "172.24.4.9", Tags: tags}
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  map[string]string
		spec func(*kupenstackv1.FloatingIP)
		res  func(*floatingips.FloatingIP)
		want []string
	}{
		{name: "unchanged, tags reordered"},
		{name: "description changed", res: func(r *floatingips.FloatingIP) { r.Description = "x" }, want: []string{fieldDescription}},
		{name: "description removed from the spec", spec: func(f *kupenstackv1.FloatingIP) { f.Spec.Description = "" }, want: []string{fieldDescription}},
		{name: "moved to another port", res: func(r *floatingips.FloatingIP) { r.PortID, r.FixedIP = "port-2", "10.0.0.8" }, want: []string{fieldPortRef}},
		{name: "disassociated", res: func(r *floatingips.FloatingIP) { r.PortID, r.FixedIP = "", "" }, want: []string{fieldPortRef}},
		{name: "port re-created with a new ID", ids: map[string]string{"Port/web-0": "port-1b"}, want: []string{fieldPortRef}},
		{
			name: "associated, the spec has no port",
			spec: func(f *kupenstackv1.FloatingIP) { f.Spec.PortRef, f.Spec.FixedIPAddress = "", "" },
			want: []string{fieldPortRef},
		},
		{
			name: "unassociated as the spec says",
			spec: func(f *kupenstackv1.FloatingIP) { f.Spec.PortRef, f.Spec.FixedIPAddress = "", "" },
			res:  func(r *floatingips.FloatingIP) { r.PortID, r.FixedIP = "", "" },
		},
		{name: "fixed IP changed on the same port", res: func(r *floatingips.FloatingIP) { r.FixedIP = "10.0.0.6" }, want: []string{fieldFixedIPAddress}},
		{name: "fixed IP unset: Neutron's pick", spec: func(f *kupenstackv1.FloatingIP) { f.Spec.FixedIPAddress = "" }, res: func(r *floatingips.FloatingIP) { r.FixedIP = "10.0.0.6" }},
		{name: "tag removed", res: func(r *floatingips.FloatingIP) { r.Tags = r.Tags[1:] }, want: []string{fieldTags}},
		{name: "tag added", res: func(r *floatingips.FloatingIP) { r.Tags = append(r.Tags, "x") }, want: []string{fieldTags}},
		{name: "tag changed", spec: func(f *kupenstackv1.FloatingIP) { f.Spec.Tags[1] = "c" }, want: []string{fieldTags}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := spec()
			res := matching(f)
			if tc.spec != nil {
				tc.spec(f)
			}
			if tc.res != nil {
				tc.res(res)
			}
			ids := map[string]string{"Network/public": "ext-1", "Port/web-0": "port-1"}
			for k, v := range tc.ids {
				ids[k] = v
			}
			got := actuator{}.Diff(generic.TestScope(ids), f, res)
			if !slices.Equal(got.Fields(), tc.want) {
				t.Errorf("changes %v, want %v", got, tc.want)
			}
		})
	}
}
