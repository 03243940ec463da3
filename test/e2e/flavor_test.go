package e2e

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// TestFlavor: a cluster-scoped Flavor is created with the admin scope, its description and extra
// specs follow the spec; a name clash with an admin's flavor is Degraded (never adopted), and
// importing that flavor instead leaves it untouched.
func TestFlavor(t *testing.T) {
	parallel(t)
	provider, cloud := connect(t)
	ctx := env.Ctx
	nova, err := gcopenstack.NewComputeV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	nova.Microversion = "2.61"
	name := fmt.Sprintf("e2e-flavor-%d", time.Now().UnixNano()%1000000)
	fl := &kupenstackv1.Flavor{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kupenstackv1.FlavorSpec{VCPUs: 2, RAMMiB: 256, DiskGiB: 1, Description: "first",
			ExtraSpecs: map[string]string{"hw:cpu_policy": "shared"}},
	}
	if err := env.Client.Create(ctx, fl); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(fl)
	check := func(desc string, specs map[string]string) {
		t.Helper()
		eventually(t, "flavor "+desc, func() error {
			if err := env.Client.Get(ctx, key, fl); err != nil {
				return err
			}
			if !conditions.IsReady(fl.Status.Conditions, fl.Generation) {
				return fmt.Errorf("not ready: %+v", fl.Status.Conditions)
			}
			got, err := flavors.Get(ctx, nova, fl.Status.ID).Extract()
			if err != nil {
				return err
			}
			userSpecs := maps.Clone(got.ExtraSpecs)
			delete(userSpecs, "kupenstack:owner-uid")
			if got.Description != desc || !maps.Equal(userSpecs, specs) || got.VCPUs != 2 || got.RAM != 256 {
				return fmt.Errorf("flavor = %+v", got)
			}
			return nil
		})
	}
	check("first", map[string]string{"hw:cpu_policy": "shared"})
	updateSpec(t, fl, func(fl *kupenstackv1.Flavor) {
		fl.Spec.Description = "second"
		fl.Spec.ExtraSpecs = map[string]string{"hw:mem_page_size": "small"}
	})
	check("second", map[string]string{"hw:mem_page_size": "small"})

	// A clash with the admin's m1.tiny is reported, not adopted.
	clash := &kupenstackv1.Flavor{ObjectMeta: metav1.ObjectMeta{Name: name + "-clash"},
		Spec: kupenstackv1.FlavorSpec{Name: "m1.tiny", VCPUs: 1, RAMMiB: 512, DiskGiB: 1}}
	if err := env.Client.Create(ctx, clash); err != nil {
		t.Fatal(err)
	}
	eventually(t, "clash degraded", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(clash), clash); err != nil {
			return err
		}
		c := meta.FindStatusCondition(clash.Status.Conditions, kupenstackv1.ConditionDegraded)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != kupenstackv1.ReasonInvalidConfiguration || !strings.Contains(c.Message, "409") {
			return fmt.Errorf("conditions %+v", clash.Status.Conditions)
		}
		return nil
	})
	imported := &kupenstackv1.Flavor{ObjectMeta: metav1.ObjectMeta{Name: name + "-tiny"},
		Spec: kupenstackv1.FlavorSpec{ManagedSpec: kupenstackv1.ManagedSpec{
			ManagementPolicy: kupenstackv1.ManagementPolicyUnmanaged, Import: &kupenstackv1.ImportSpec{Name: "m1.tiny"}}}}
	if err := env.Client.Create(ctx, imported); err != nil {
		t.Fatal(err)
	}
	eventually(t, "import ready", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(imported), imported); err != nil {
			return err
		}
		if !conditions.IsReady(imported.Status.Conditions, imported.Generation) || imported.Status.Resource.RAMMiB != 512 {
			return fmt.Errorf("status %+v", imported.Status)
		}
		return nil
	})

	for _, o := range []client.Object{fl, clash, imported} {
		if err := env.Client.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []client.Object{fl, clash, imported} {
		waitGone(t, o)
	}
	if err := flavors.Get(ctx, nova, fl.Status.ID).Err; !openstack.IsNotFound(err) {
		t.Errorf("flavor left in Nova: %v", err)
	}
	if _, err := flavors.Get(ctx, nova, imported.Status.ID).Extract(); err != nil {
		t.Errorf("the imported admin flavor was deleted: %v", err)
	}
}
