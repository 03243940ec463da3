package e2e

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/aggregates"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// A HostAggregate's zone, metadata and hosts. Its selector picks no node, so that the hosts case
// needs no node labels: the all-in-one's compute host added in Nova is drift, and removed again.
func init() {
	objects := func(ns string) []client.Object {
		return []client.Object{&kupenstackv1.HostAggregate{ObjectMeta: objMeta("", ns), Spec: kupenstackv1.HostAggregateSpec{
			NodeSelector: map[string]kupenstackv1.LabelValue{"e2e.kupenstack.io/" + ns: "none"}, Metadata: map[string]string{"disk": "ssd"}}}}
	}
	id := func(obj generic.Object) int {
		n, _ := strconv.Atoi(obj.GetManagedStatus().ID)
		return n
	}
	get := func(ctx context.Context, c driftClients, obj generic.Object) (*aggregates.Aggregate, error) {
		return aggregates.Get(ctx, c.nova, id(obj)).Extract()
	}
	addFieldDrifts(
		fieldDrift{kind: "HostAggregate", field: "spec.availabilityZone", objects: objects,
			change: func(ctx context.Context, c driftClients, obj generic.Object) error {
				_, err := aggregates.Update(ctx, c.nova, id(obj), aggregates.UpdateOpts{AvailabilityZone: obj.GetName() + "-changed"}).Extract()
				return err
			},
			repaired: func(ctx context.Context, c driftClients, obj generic.Object) error {
				a, err := get(ctx, c, obj)
				if err == nil && a.AvailabilityZone != obj.GetName() {
					err = fmt.Errorf("zone %q", a.AvailabilityZone)
				}
				return err
			}},
		fieldDrift{kind: "HostAggregate", field: "spec.metadata", objects: objects,
			change: func(ctx context.Context, c driftClients, obj generic.Object) error {
				_, err := aggregates.SetMetadata(ctx, c.nova, id(obj), aggregates.SetMetadataOpts{Metadata: map[string]any{"disk": "hdd", "added": "x"}}).Extract()
				return err
			},
			repaired: func(ctx context.Context, c driftClients, obj generic.Object) error {
				a, err := get(ctx, c, obj)
				if err != nil {
					return err
				}
				if _, added := a.Metadata["added"]; added || a.Metadata["disk"] != "ssd" {
					return fmt.Errorf("metadata %v", a.Metadata)
				}
				return nil
			}},
		fieldDrift{kind: "HostAggregate", field: "spec.nodeSelector", objects: objects,
			change: func(ctx context.Context, c driftClients, obj generic.Object) error {
				_, err := aggregates.AddHost(ctx, c.nova, id(obj), aggregates.AddHostOpts{Host: computeHost()}).Extract()
				return err
			},
			repaired: func(ctx context.Context, c driftClients, obj generic.Object) error {
				a, err := get(ctx, c, obj)
				if err == nil && len(a.Hosts) > 0 {
					err = fmt.Errorf("hosts %v", a.Hosts)
				}
				return err
			}},
	)
}
