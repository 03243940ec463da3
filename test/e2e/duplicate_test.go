package e2e

import (
	"fmt"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/nova"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// TestDuplicateServerOfAVMIsDeleted: two operators reconciling one cluster (no leader election:
// the quickstart once started a second one beside the first) both find no server for a new VM and
// both create one; so can a create that outlives an operator restart. The VM's status keeps one
// ID, and the other server would be nobody's, keeping its port, whose IP allocation makes Neutron
// refuse to delete the subnet (409 "One or more ports have an IP allocation from this subnet"):
// the namespace's deletion hung on Network -> Subnet. The VM health check's list finds the
// second server (it carries the VM's owner tag) and the VM's next pass deletes it, while the VM
// keeps its own; deleting the VM would also take any still there (OwnedLister).
func TestDuplicateServerOfAVMIsDeleted(t *testing.T) {
	parallel(t)
	requireCloud(t)
	c := adminClients(t)
	ns := newNamespace(t)
	flavor := vmFlavor(t, ns+"-nano")
	net := &kupenstackv1.Network{ObjectMeta: objMeta(ns, "net")}
	sub := &kupenstackv1.Subnet{ObjectMeta: objMeta(ns, "net-v4"), Spec: kupenstackv1.SubnetSpec{
		NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: fmt.Sprintf("10.63.%d.0/24", cidrCounter.Add(1)%250)},
	}}
	vm := &kupenstackv1.VirtualMachine{ObjectMeta: objMeta(ns, "web"), Spec: kupenstackv1.VirtualMachineSpec{
		FlavorRef: flavor.Name, ImageRef: "tiny", Networks: []kupenstackv1.VirtualMachineNIC{{NetworkRef: "net"}}}}
	img := publicImage(ns)
	create(t, img, net, sub)
	waitReady(t, sub) // Nova boots on a network only once it has a subnet
	create(t, vm)
	waitReady(t, vm)
	waitReady(t, net)
	waitReady(t, flavor)
	waitReady(t, img)
	project := projectID(t, ns)

	// The second operator's create: the same request, in the namespace's project, with the VM's
	// owner tag, on its network (so Nova gives it a port of its own).
	second := openstack.NewClients(openstack.FileSource(cloudsPath), cloudName, 50, 100)
	sc, err := nova.Client(env.Ctx, generic.Scope{Clients: second, ProjectID: project}, "2.71")
	if err != nil {
		t.Fatal(err)
	}
	dup, err := servers.Create(env.Ctx, sc, servers.CreateOpts{
		Name: vm.Name, FlavorRef: flavor.Status.ID, ImageRef: img.Status.ID,
		Networks: []servers.Network{{UUID: net.Status.ID}}, Tags: []string{generic.OwnerTag(vm)},
	}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the duplicate server deleted while the VM lives", func() error {
		if srv := server(t, c, dup.ID); srv != nil && !gone(srv) && srv.TaskState != "deleting" {
			return fmt.Errorf("%s %s/%s", srv.ID, srv.Status, srv.TaskState)
		}
		return nil
	})
	own := vm.Status.ID
	if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(vm), vm); err != nil {
		t.Fatal(err)
	}
	if vm.Status.ID != own || vm.Status.RestartCount != 0 {
		t.Errorf("the VM's server changed from %s to %s (restarts %d): only the duplicate should go", own, vm.Status.ID, vm.Status.RestartCount)
	}
	if srv := server(t, c, own); srv == nil || srv.Status != "ACTIVE" {
		t.Errorf("the VM's own server: %+v", srv)
	}
	if err := env.Client.Delete(env.Ctx, vm); err != nil {
		t.Fatal(err)
	}
	waitGone(t, vm)
	owned := func() []string {
		t.Helper()
		pages, err := servers.List(c.nova, servers.ListOpts{AllTenants: true, TenantID: project, Tags: generic.OwnerTag(vm)}).AllPages(env.Ctx)
		if err != nil {
			t.Fatal(err)
		}
		all, err := servers.ExtractServers(pages)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, srv := range all {
			if !gone(&srv) {
				out = append(out, srv.ID+" "+srv.Status+"/"+srv.TaskState)
			}
		}
		return out
	}
	if left := owned(); len(left) > 0 {
		// The VM object is gone: nothing deletes these any more. Clean up, then see the subnet go.
		t.Errorf("the VM is gone but servers created for it are left in OpenStack: %v", left)
		for _, id := range []string{vm.Status.ID, dup.ID} {
			_ = servers.Delete(env.Ctx, c.nova, id).ExtractErr()
		}
		eventually(t, "left-over servers deleted by the test", func() error {
			if left := owned(); len(left) > 0 {
				return fmt.Errorf("%v", left)
			}
			return nil
		})
	}
	// With no server left on it, the subnet and the network can go.
	deleteAll(t, ns, false, []client.Object{sub, net, img}...)
}

// TestDeletedPortTakesItsLateDuplicate: Zed's Neutron tags a port only after creating it, so a
// create in flight when the operator is SIGKILLed can land, untagged, after the restarted operator
// made and tagged its own (the reliability suite's crash test found two ports of one object).
// Deleting the Port object must delete that one too, or it keeps the network and subnet alive.
func TestDeletedPortTakesItsLateDuplicate(t *testing.T) {
	parallel(t)
	requireCloud(t)
	c := adminClients(t)
	ns := newNamespace(t)
	net := &kupenstackv1.Network{ObjectMeta: objMeta(ns, "net")}
	sub := &kupenstackv1.Subnet{ObjectMeta: objMeta(ns, "net-v4"), Spec: kupenstackv1.SubnetSpec{
		NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: fmt.Sprintf("10.65.%d.0/24", cidrCounter.Add(1)%250)},
	}}
	port := &kupenstackv1.Port{ObjectMeta: objMeta(ns, "p"), Spec: kupenstackv1.PortSpec{NetworkRef: "net"}}
	create(t, net, sub)
	waitReady(t, sub)
	waitReady(t, net)
	create(t, port)
	waitReady(t, port)
	// The late create: same name, same project, no tag.
	late, err := ports.Create(env.Ctx, c.neutron, ports.CreateOpts{Name: port.Name, NetworkID: net.Status.ID,
		ProjectID: projectID(t, ns)}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(env.Ctx, port); err != nil {
		t.Fatal(err)
	}
	waitGone(t, port)
	if err := ports.Get(env.Ctx, c.neutron, late.ID).Err; !gophercloud.ResponseCodeIs(err, 404) {
		_ = ports.Delete(env.Ctx, c.neutron, late.ID).ExtractErr()
		t.Errorf("the Port object is gone but its late duplicate %s is left (%v)", late.ID, err)
	}
	if ev := eventsFor(t, port); ev["DeletingDuplicate"] != 1 {
		t.Errorf("events %v: want one DeletingDuplicate", ev)
	}
	deleteAll(t, ns, false, sub, net)
}
