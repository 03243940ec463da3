package volume

import (
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

func TestDiff(t *testing.T) {
	obj := func(mod func(*kupenstackv1.VolumeSpec)) *kupenstackv1.Volume {
		v := &kupenstackv1.Volume{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "data", UID: "u1"}, Spec: kupenstackv1.VolumeSpec{
			Description: "logs", SizeGiB: 2, Metadata: map[string]string{"tier": "gold"}}}
		if mod != nil {
			mod(&v.Spec)
		}
		return v
	}
	res := func(mod func(*volumes.Volume)) *volumes.Volume {
		r := &volumes.Volume{ID: "v1", Name: "data", Description: "logs", Size: 2, Status: "available",
			Metadata: map[string]string{"tier": "gold", OwnerKey: "u1"}}
		if mod != nil {
			mod(r)
		}
		return r
	}
	for _, tc := range []struct {
		name string
		obj  *kupenstackv1.Volume
		res  *volumes.Volume
		want []string
	}{
		{"unchanged", obj(nil), res(nil), nil},
		{"in use, unchanged", obj(nil), res(func(r *volumes.Volume) { r.Status = "in-use" }), nil},
		{"name changed", obj(nil), res(func(r *volumes.Volume) { r.Name = "other" }), []string{"spec.name"}},
		{"spec name", obj(func(s *kupenstackv1.VolumeSpec) { s.Name = "logs" }), res(nil), []string{"spec.name"}},
		{"description changed", obj(nil), res(func(r *volumes.Volume) { r.Description = "x" }), []string{"spec.description"}},
		{"description removed", obj(nil), res(func(r *volumes.Volume) { r.Description = "" }), []string{"spec.description"}},
		{"metadata changed", obj(nil), res(func(r *volumes.Volume) { r.Metadata["tier"] = "bronze" }), []string{"spec.metadata"}},
		{"metadata added", obj(nil), res(func(r *volumes.Volume) { r.Metadata["x"] = "y" }), []string{"spec.metadata"}},
		{"metadata removed", obj(nil), res(func(r *volumes.Volume) { delete(r.Metadata, "tier") }), []string{"spec.metadata"}},
		{"owner key removed", obj(nil), res(func(r *volumes.Volume) { delete(r.Metadata, OwnerKey) }), []string{"spec.metadata"}},
		{"imported: no owner key wanted", obj(func(s *kupenstackv1.VolumeSpec) { s.Import = &kupenstackv1.ImportSpec{ID: "v1"} }),
			res(func(r *volumes.Volume) { delete(r.Metadata, OwnerKey) }), nil},
		{"grown in Cinder", obj(nil), res(func(r *volumes.Volume) { r.Size = 5 }), []string{"spec.sizeGiB"}},
		{"spec grown", obj(func(s *kupenstackv1.VolumeSpec) { s.SizeGiB = 3 }), res(nil), []string{"spec.sizeGiB"}},
		// Unset (imported), the size is Cinder's.
		{"size unset", obj(func(s *kupenstackv1.VolumeSpec) { s.SizeGiB = 0 }), res(func(r *volumes.Volume) { r.Size = 5 }), nil},
		// Cinder is working on it: nothing until it settles.
		{"extending", obj(nil), res(func(r *volumes.Volume) { r.Status, r.Size, r.Name = "extending", 1, "x" }), nil},
		{"error", obj(nil), res(func(r *volumes.Volume) { r.Status = "error" }), []string{statusField}},
		{"error extending", obj(nil), res(func(r *volumes.Volume) { r.Status = "error_extending" }), []string{statusField}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := actuator{}.Diff(generic.TestScope(nil), tc.obj, tc.res)
			if !slices.Equal(got.Fields(), tc.want) {
				t.Errorf("Diff = %q, want %q (%+v)", got.Fields(), tc.want, got)
			}
		})
	}
}
