package e2e

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/volume"
)

// A Volume's name, description and metadata are set back; a volume extended outside KupenStack
// cannot shrink, so its object goes Degraded.
func init() {
	objects := func(ns string) []client.Object {
		return []client.Object{&kupenstackv1.Volume{ObjectMeta: objMeta(ns, "data"), Spec: kupenstackv1.VolumeSpec{
			SizeGiB: 1, Description: "drift", Metadata: map[string]string{"tier": "gold"}}}}
	}
	update := func(opts volumes.UpdateOpts) func(ctx context.Context, c driftClients, obj generic.Object) error {
		return func(ctx context.Context, c driftClients, obj generic.Object) error {
			_, err := volumes.Update(ctx, c.cinder, obj.GetManagedStatus().ID, opts).Extract()
			return err
		}
	}
	check := func(ok func(v *volumes.Volume) error) func(ctx context.Context, c driftClients, obj generic.Object) error {
		return func(ctx context.Context, c driftClients, obj generic.Object) error {
			v, err := volumes.Get(ctx, c.cinder, obj.GetManagedStatus().ID).Extract()
			if err != nil {
				return err
			}
			return ok(v)
		}
	}
	changed := "changed"
	addFieldDrifts(
		fieldDrift{kind: "Volume", field: "spec.name", objects: objects, change: update(volumes.UpdateOpts{Name: &changed}),
			repaired: check(func(v *volumes.Volume) error {
				if v.Name != "data" {
					return fmt.Errorf("name %q", v.Name)
				}
				return nil
			})},
		fieldDrift{kind: "Volume", field: "spec.description", objects: objects, change: update(volumes.UpdateOpts{Description: &changed}),
			repaired: check(func(v *volumes.Volume) error {
				if v.Description != "drift" {
					return fmt.Errorf("description %q", v.Description)
				}
				return nil
			})},
		fieldDrift{kind: "Volume", field: "spec.metadata", objects: objects,
			// Cinder's update replaces the whole metadata: the owner key goes too.
			change: update(volumes.UpdateOpts{Metadata: map[string]string{"tier": "bronze", "added": "x"}}),
			repaired: check(func(v *volumes.Volume) error {
				if _, added := v.Metadata["added"]; added || v.Metadata["tier"] != "gold" || v.Metadata[volume.OwnerKey] == "" {
					return fmt.Errorf("metadata %v", v.Metadata)
				}
				return nil
			})},
		fieldDrift{kind: "Volume", field: "spec.sizeGiB", objects: objects, degradedReason: kupenstackv1.ReasonDriftNotRepairable,
			change: func(ctx context.Context, c driftClients, obj generic.Object) error {
				return volumes.ExtendSize(ctx, c.cinder, obj.GetManagedStatus().ID, volumes.ExtendSizeOpts{NewSize: 2}).ExtractErr()
			}},
	)
}
