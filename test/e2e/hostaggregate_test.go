package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/aggregates"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// TestHostAggregatePlacement: node labels select the aggregate's hosts, a VM naming the
// aggregate lands in its zone, and label changes move hosts in and out. The cloud's compute host
// (computeHost) gets a Kubernetes node of the same name.
func TestHostAggregatePlacement(t *testing.T) {
	requireCloud(t)
	c := adminClients(t)
	ns := newNamespace(t)
	label := "e2e.kupenstack.io/" + ns
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: computeHost()}}
	if err := env.Client.Create(env.Ctx, node); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	// A selected node that runs no nova-compute is reported, not an error.
	other := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-no-compute", Labels: map[string]string{label: "fast"}}}
	create(t, other)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), other) })
	setLabel := func(value string) {
		t.Helper()
		var n corev1.Node
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: computeHost()}, &n); err != nil {
			t.Fatal(err)
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		if value == "" {
			delete(n.Labels, label)
		} else {
			n.Labels[label] = value
		}
		if err := env.Client.Update(env.Ctx, &n); err != nil {
			t.Fatal(err)
		}
	}
	setLabel("fast")
	t.Cleanup(func() { setLabel("") })

	agg := &kupenstackv1.HostAggregate{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: kupenstackv1.HostAggregateSpec{
		NodeSelector: map[string]kupenstackv1.LabelValue{label: "fast"}, Metadata: map[string]string{"disk": "ssd"}}}
	flavor := vmFlavor(t, ns+"-nano")
	img := publicImage(ns)
	vm := &kupenstackv1.VirtualMachine{ObjectMeta: objMeta(ns, "placed"), Spec: kupenstackv1.VirtualMachineSpec{
		FlavorRef: flavor.Name, ImageRef: "tiny", HostAggregateRef: agg.Name}}
	// The same placement by node labels: the aggregate whose selector includes them.
	bySelector := &kupenstackv1.VirtualMachine{ObjectMeta: objMeta(ns, "selected"), Spec: kupenstackv1.VirtualMachineSpec{
		FlavorRef: flavor.Name, ImageRef: "tiny", NodeSelector: map[string]kupenstackv1.LabelValue{label: "fast"}}}
	create(t, agg, img, vm, bySelector)
	waitReady(t, agg)
	id, err := strconv.Atoi(agg.Status.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := aggregates.Get(env.Ctx, c.nova, id).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if got.AvailabilityZone != ns || !slices.Equal(got.Hosts, []string{computeHost()}) || got.Metadata["disk"] != "ssd" {
		t.Errorf("aggregate %+v", got)
	}
	if !slices.Equal(agg.Status.NodesWithoutCompute, []string{other.Name}) {
		t.Errorf("nodes without compute %v", agg.Status.NodesWithoutCompute)
	}
	for _, v := range []*kupenstackv1.VirtualMachine{vm, bySelector} {
		waitReady(t, v)
		if r := v.Status.Resource; r == nil || r.AvailabilityZone != ns || r.Host != computeHost() {
			t.Errorf("VM %s placed in %+v", v.Name, r)
		}
	}
	// The VMs are in the zone, so the host cannot leave it yet: delete them first.
	deleteAll(t, ns, false, vm, bySelector, img)

	setLabel("slow")
	eventually(t, "host leaves the aggregate", func() error {
		got, err := aggregates.Get(env.Ctx, c.nova, id).Extract()
		if err != nil {
			return err
		}
		if len(got.Hosts) != 0 {
			return fmt.Errorf("hosts %v", got.Hosts)
		}
		return nil
	})

	if err := env.Client.Delete(env.Ctx, agg); err != nil {
		t.Fatal(err)
	}
	waitGone(t, agg)
	if _, err := aggregates.Get(env.Ctx, c.nova, id).Extract(); !openstack.IsNotFound(err) {
		t.Errorf("aggregate %d left behind (%v)", id, err)
	}
}

// TestServerGroupPlacement: a VM naming a ServerGroup is a member of its Nova group; the group
// waits for its VMs before it is deleted.
func TestServerGroupPlacement(t *testing.T) {
	parallel(t)
	requireCloud(t)
	c := adminClients(t)
	ns := newNamespace(t)
	flavor := vmFlavor(t, ns+"-nano")
	img := publicImage(ns)
	group := &kupenstackv1.ServerGroup{ObjectMeta: objMeta(ns, "together"), Spec: kupenstackv1.ServerGroupSpec{Policy: "affinity"}}
	vm := &kupenstackv1.VirtualMachine{ObjectMeta: objMeta(ns, "member"), Spec: kupenstackv1.VirtualMachineSpec{
		FlavorRef: flavor.Name, ImageRef: "tiny", ServerGroupRef: group.Name}}
	create(t, vm, group, img)
	waitReady(t, vm)
	waitReady(t, group)
	got, err := servergroups.Get(env.Ctx, c.nova, group.Status.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Members, []string{vm.Status.ID}) || got.Name != group.Name {
		t.Errorf("server group %+v, want member %s", got, vm.Status.ID)
	}
	// Deleting the group first: it waits until the VM is gone.
	if err := env.Client.Delete(env.Ctx, group); err != nil {
		t.Fatal(err)
	}
	deleteAll(t, ns, false, vm, img, group)
	if _, err := servergroups.Get(env.Ctx, c.nova, group.Status.ID).Extract(); !openstack.IsNotFound(err) {
		t.Errorf("server group left behind (%v)", err)
	}
}
