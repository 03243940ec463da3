package e2e

import (
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// TestOutOfBandDeletionRepaired, for every managed kind: a resource deleted in OpenStack behind
// the operator's back is re-created (a new one: the old ID stays gone), the object says so with
// a DeletedOutOfBand Event, and exactly one resource exists for it again.
func TestOutOfBandDeletionRepaired(t *testing.T) {
	parallel(t)
	c := adminClients(t)
	for _, k := range kindCases {
		t.Run(k.kind, func(t *testing.T) {
			t.Parallel()
			ctx := env.Ctx
			ns := newNamespace(t)
			deps := k.dependencies(ns)
			obj := k.newObj(ns, "drift")
			obj.GetManagedSpec().ResyncPeriod = &kupenstackv1.Duration{Duration: 2 * time.Second}
			create(t, append(deps, obj)...)
			waitReady(t, obj)
			project := k.project(t, ns)
			old := obj.GetManagedStatus().ID
			if err := k.remove(ctx, c, old); err != nil {
				t.Fatal(err)
			}
			expectRecreated(t, c, k, project, obj, old)
			deleteAll(t, ns, k.clusterScoped, append([]client.Object{obj}, deps...)...)
		})
	}

	// A Subnet of a Network deleted out of band goes with it (Neutron deletes a network's
	// subnets); the user expects both back, the Subnet inside the new network, without waiting
	// for the Subnet's own drift check (it has none of its own here).
	t.Run("SubnetOfRecreatedNetwork", func(t *testing.T) {
		t.Parallel()
		ctx := env.Ctx
		ns := newNamespace(t)
		net := &kupenstackv1.Network{ObjectMeta: objMeta(ns, "net")}
		net.Spec.ResyncPeriod = &kupenstackv1.Duration{Duration: 2 * time.Second}
		sub := kindCaseOf("Subnet").newObj(ns, "sub")
		create(t, net, sub)
		waitReady(t, sub)
		waitReady(t, net)
		oldNet, oldSub := net.Status.ID, sub.GetManagedStatus().ID
		if err := kindCaseOf("Network").remove(ctx, c, oldNet); err != nil {
			t.Fatal(err)
		}
		if err := kindCaseOf("Subnet").get(ctx, c, oldSub); !openstack.IsNotFound(err) {
			t.Fatalf("Neutron kept the subnet of a deleted network: %v", err)
		}
		project := projectID(t, ns)
		expectRecreated(t, c, kindCaseOf("Network"), project, net, oldNet)
		expectRecreated(t, c, kindCaseOf("Subnet"), project, sub, oldSub)
		if got := sub.(*kupenstackv1.Subnet).Status.Resource; got == nil || got.NetworkID != net.Status.ID {
			t.Errorf("subnet re-created in network %+v, want the new network %s", got, net.Status.ID)
		}
		deleteAll(t, ns, false, sub, net)
	})
}

// expectRecreated waits until obj is Ready again with exactly one OpenStack resource (a new one
// unless the kind's IDs are stable, and the old one gone), and checks the DeletedOutOfBand Event.
func expectRecreated(t *testing.T, c osClients, k kindCase, project string, obj generic.Object, old string) {
	t.Helper()
	ctx := env.Ctx
	eventually(t, k.kind+" re-created", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		id := obj.GetManagedStatus().ID
		if id == "" || (id == old && !k.stableID) || eventsFor(t, obj)["DeletedOutOfBand"] == 0 {
			return fmt.Errorf("status.id %q (old %s), events %v", id, old, eventsFor(t, obj))
		}
		found, err := k.find(ctx, c, project, obj)
		if err != nil {
			return err
		}
		if len(found) != 1 || found[0] != id {
			return fmt.Errorf("OpenStack has %v, status.id %q", found, id)
		}
		return nil
	})
	waitReady(t, obj)
	if !k.stableID {
		if err := k.get(ctx, c, old); !openstack.IsNotFound(err) {
			t.Errorf("the deleted %s %s is back (%v)", k.kind, old, err)
		}
	}
}
