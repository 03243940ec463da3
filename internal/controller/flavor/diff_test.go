package flavor

import (
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

func TestDiff(t *testing.T) {
	spec := func(mod func(*kupenstackv1.FlavorSpec)) *kupenstackv1.Flavor {
		f := &kupenstackv1.Flavor{ObjectMeta: metav1.ObjectMeta{Name: "small", UID: "u1"}, Spec: kupenstackv1.FlavorSpec{
			Description: "web", VCPUs: 1, RAMMiB: 512, DiskGiB: 1, ExtraSpecs: map[string]string{"hw:cpu_policy": "shared"}}}
		if mod != nil {
			mod(&f.Spec)
		}
		return f
	}
	res := func(mod func(*flavors.Flavor)) *flavors.Flavor {
		r := &flavors.Flavor{ID: "u1", Name: "small", Description: "web", VCPUs: 1, RAM: 512, Disk: 1, IsPublic: true,
			ExtraSpecs: map[string]string{"hw:cpu_policy": "shared", ownerSpec: "u1"}}
		if mod != nil {
			mod(r)
		}
		return r
	}
	for _, tc := range []struct {
		name string
		obj  *kupenstackv1.Flavor
		res  *flavors.Flavor
		want []string
	}{
		{"unchanged", spec(nil), res(nil), nil},
		{"description changed", spec(nil), res(func(r *flavors.Flavor) { r.Description = "db" }), []string{"spec.description"}},
		{"description removed", spec(nil), res(func(r *flavors.Flavor) { r.Description = "" }), []string{"spec.description"}},
		{"description added", spec(func(s *kupenstackv1.FlavorSpec) { s.Description = "" }), res(nil), []string{"spec.description"}},
		{"extra spec changed", spec(nil), res(func(r *flavors.Flavor) { r.ExtraSpecs["hw:cpu_policy"] = "dedicated" }), []string{"spec.extraSpecs"}},
		{"extra spec added", spec(nil), res(func(r *flavors.Flavor) { r.ExtraSpecs["hw:mem_page_size"] = "large" }), []string{"spec.extraSpecs"}},
		{"extra spec removed", spec(nil), res(func(r *flavors.Flavor) { delete(r.ExtraSpecs, "hw:cpu_policy") }), []string{"spec.extraSpecs"}},
		{"owner spec removed", spec(nil), res(func(r *flavors.Flavor) { delete(r.ExtraSpecs, ownerSpec) }), []string{"spec.extraSpecs"}},
		{"both", spec(nil), res(func(r *flavors.Flavor) { r.Description, r.ExtraSpecs = "", nil }), []string{"spec.description", "spec.extraSpecs"}},
		// Nova cannot change these after creation, so they are not compared (immutable in the spec too).
		{"sizes not compared", spec(nil), res(func(r *flavors.Flavor) { r.VCPUs, r.RAM, r.Name, r.IsPublic = 8, 4096, "other", false }), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := actuator{}.Diff(generic.TestScope(nil), tc.obj, tc.res)
			if !slices.Equal(got.Fields(), tc.want) {
				t.Errorf("Diff = %q, want %q (%+v)", got.Fields(), tc.want, got)
			}
		})
	}
}
