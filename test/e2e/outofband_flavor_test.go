package e2e

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// A Flavor's description and extra specs are all Nova lets change after creation.
func init() {
	objects := func(ns string) []client.Object {
		return []client.Object{&kupenstackv1.Flavor{ObjectMeta: objMeta("", ns+"-drift"), Spec: kupenstackv1.FlavorSpec{
			VCPUs: 1, RAMMiB: 64, DiskGiB: 1, Description: "drift", ExtraSpecs: map[string]string{"e2e:tier": "gold"}}}}
	}
	get := func(ctx context.Context, c driftClients, obj generic.Object) (*flavors.Flavor, error) {
		return flavors.Get(ctx, c.nova, obj.GetManagedStatus().ID).Extract()
	}
	addFieldDrifts(
		fieldDrift{kind: "Flavor", field: "spec.description", objects: objects,
			change: func(ctx context.Context, c driftClients, obj generic.Object) error {
				_, err := flavors.Update(ctx, c.nova, obj.GetManagedStatus().ID, flavors.UpdateOpts{Description: "changed"}).Extract()
				return err
			},
			repaired: func(ctx context.Context, c driftClients, obj generic.Object) error {
				f, err := get(ctx, c, obj)
				if err == nil && f.Description != "drift" {
					err = fmt.Errorf("description %q", f.Description)
				}
				return err
			}},
		fieldDrift{kind: "Flavor", field: "spec.extraSpecs", objects: objects,
			change: func(ctx context.Context, c driftClients, obj generic.Object) error {
				_, err := flavors.CreateExtraSpecs(ctx, c.nova, obj.GetManagedStatus().ID, flavors.ExtraSpecsOpts{"e2e:tier": "bronze", "e2e:added": "x"}).Extract()
				return err
			},
			repaired: func(ctx context.Context, c driftClients, obj generic.Object) error {
				f, err := get(ctx, c, obj)
				if err != nil {
					return err
				}
				if _, added := f.ExtraSpecs["e2e:added"]; added || f.ExtraSpecs["e2e:tier"] != "gold" {
					return fmt.Errorf("extra specs %v", f.ExtraSpecs)
				}
				return nil
			}},
	)
}
