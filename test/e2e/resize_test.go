package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// importFlavor is a Flavor object for the cloud's flavor novaName (cluster-scoped).
func importFlavor(t *testing.T, name, novaName string) *kupenstackv1.Flavor {
	t.Helper()
	f := &kupenstackv1.Flavor{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kupenstackv1.FlavorSpec{
		ManagedSpec: kupenstackv1.ManagedSpec{ManagementPolicy: kupenstackv1.ManagementPolicyUnmanaged,
			Import: &kupenstackv1.ImportSpec{Name: novaName}}}}
	create(t, f)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), f) })
	return f
}

// reconciles is how many passes the VirtualMachine controller made, whatever their result.
func reconciles(t *testing.T) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "virtualmachine" {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// TestVirtualMachineResize: a new flavorRef resizes the server in place (same server, port and
// volume); a resize Nova refuses (a smaller disk) leaves the server ACTIVE on its flavor, the VM
// Degraded/ResizeFailed with Nova's message and not retried; another flavor then resizes again.
func TestVirtualMachineResize(t *testing.T) {
	requireCloud(t)
	c := adminClients(t)
	ns := newNamespace(t)
	nano := importFlavor(t, ns+"-nano", "m1.nano")    // 1 GiB disk
	small := importFlavor(t, ns+"-small", "m1.small") // 20 GiB
	// No root disk (boot from volume only): Nova refuses to resize a server with a disk to it.
	zero := &kupenstackv1.Flavor{ObjectMeta: metav1.ObjectMeta{Name: ns + "-zero"}, Spec: kupenstackv1.FlavorSpec{VCPUs: 1, RAMMiB: 128}}
	create(t, zero)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), zero) })
	medium := importFlavor(t, ns+"-medium", "m1.medium") // 40 GiB
	net := &kupenstackv1.Network{ObjectMeta: objMeta(ns, "net")}
	sub := &kupenstackv1.Subnet{ObjectMeta: objMeta(ns, "sub"), Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.78.0.0/24"}}}
	port := &kupenstackv1.Port{ObjectMeta: objMeta(ns, "p"), Spec: kupenstackv1.PortSpec{NetworkRef: "net"}}
	vol := &kupenstackv1.Volume{ObjectMeta: objMeta(ns, "data"), Spec: kupenstackv1.VolumeSpec{SizeGiB: 1}}
	vm := &kupenstackv1.VirtualMachine{ObjectMeta: objMeta(ns, "vm"), Spec: kupenstackv1.VirtualMachineSpec{
		FlavorRef: nano.Name, ImageRef: "tiny",
		Networks: []kupenstackv1.VirtualMachineNIC{{PortRef: "p"}},
		Volumes:  []kupenstackv1.VirtualMachineVolume{{VolumeRef: "data"}},
	}}
	img := publicImage(ns)
	create(t, img, net, sub, port, vol, vm)
	readyOn := func(what, flavor string) {
		t.Helper()
		waitVM(t, vm, what, func(vm *kupenstackv1.VirtualMachine) error {
			r := vm.Status.Resource
			if r == nil || r.Status != "ACTIVE" || r.FlavorName != flavor || len(r.VolumeIDs) != 1 || vm.Status.Resize != nil {
				return fmt.Errorf("resource %+v, resize %+v", r, vm.Status.Resize)
			}
			if c := meta.FindStatusCondition(vm.Status.Conditions, kupenstackv1.ConditionReady); c == nil ||
				c.Status != metav1.ConditionTrue || c.ObservedGeneration != vm.Generation {
				return fmt.Errorf("not ready: %+v", vm.Status.Conditions)
			}
			return nil
		})
	}
	readyOn("VM ready on m1.nano", "m1.nano")
	id := vm.Status.ID
	waitReady(t, port)
	volumeID := readyVolume(t, client.ObjectKeyFromObject(vol)).Status.ID
	// keeps checks that the server is the same one, with its port and volume.
	keeps := func(flavor string) {
		t.Helper()
		if vm.Status.ID != id {
			t.Fatalf("server ID %s, want the same server %s", vm.Status.ID, id)
		}
		srv := server(t, c, id)
		if srv == nil || srv.Flavor["original_name"] != flavor || srv.Status != "ACTIVE" {
			t.Fatalf("server %+v, want ACTIVE on %s", srv, flavor)
		}
		if !slices.ContainsFunc(srv.AttachedVolumes, func(a servers.AttachedVolume) bool { return a.ID == volumeID }) {
			t.Errorf("volume %s no longer attached: %v", volumeID, srv.AttachedVolumes)
		}
		p, err := ports.Get(env.Ctx, c.neutron, port.Status.ID).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if p.DeviceID != id {
			t.Errorf("port %s is on %q, want server %s", p.ID, p.DeviceID, id)
		}
	}

	// A larger flavor: resized in place.
	updateSpec(t, vm, func(vm *kupenstackv1.VirtualMachine) { vm.Spec.FlavorRef = small.Name })
	readyOn("VM ready on m1.small", "m1.small")
	keeps("m1.small")
	if ev := eventsFor(t, vm); ev["Resizing"] == 0 || ev["Resized"] == 0 {
		t.Errorf("events %v, want Resizing and Resized", ev)
	}
	// The old Flavor object is no longer the VM's: its deletion is not held up.
	if err := env.Client.Delete(env.Ctx, nano); err != nil {
		t.Fatal(err)
	}
	waitGone(t, nano)

	// A smaller (no) disk: Nova refuses; the server stays ACTIVE on m1.small.
	updateSpec(t, vm, func(vm *kupenstackv1.VirtualMachine) { vm.Spec.FlavorRef = zero.Name })
	waitVM(t, vm, "VM Degraded/ResizeFailed", func(vm *kupenstackv1.VirtualMachine) error {
		c := meta.FindStatusCondition(vm.Status.Conditions, kupenstackv1.ConditionDegraded)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != kupenstackv1.ReasonResizeFailed || c.ObservedGeneration != vm.Generation {
			return fmt.Errorf("conditions %+v", vm.Status.Conditions)
		}
		return nil
	})
	degraded := meta.FindStatusCondition(vm.Status.Conditions, kupenstackv1.ConditionDegraded)
	if !strings.Contains(degraded.Message, "Resize to zero disk flavor is not allowed") {
		t.Errorf("Degraded message %q does not carry Nova's", degraded.Message)
	}
	if r := vm.Status.Resize; r == nil || r.Phase != kupenstackv1.ResizePhaseFailed || r.FlavorRef != zero.Name {
		t.Errorf("status.resize %+v, want Failed for %s", r, zero.Name)
	}
	if p := meta.FindStatusCondition(vm.Status.Conditions, kupenstackv1.ConditionProgressing); p == nil || p.Status != metav1.ConditionFalse {
		t.Errorf("Progressing %+v, want False (needs a spec change)", p)
	}
	keeps("m1.small")
	// No hot loop: the failed flavor is not tried again, and the VM is left alone.
	before := reconciles(t)
	time.Sleep(15 * time.Second)
	if n := reconciles(t) - before; n > 2 {
		t.Errorf("%v passes in 15 s over a failed resize, want at most 2", n)
	}
	if srv := server(t, c, id); srv.Status != "ACTIVE" || srv.Flavor["original_name"] != "m1.small" {
		t.Errorf("server %s on %v after the refused resize", srv.Status, srv.Flavor["original_name"])
	}
	if ev := eventsFor(t, vm); ev[kupenstackv1.ReasonResizeFailed] == 0 {
		t.Errorf("events %v, want a ResizeFailed warning", ev)
	}

	// Another valid flavor: resized again, Ready.
	updateSpec(t, vm, func(vm *kupenstackv1.VirtualMachine) { vm.Spec.FlavorRef = medium.Name })
	readyOn("VM ready on m1.medium", "m1.medium")
	keeps("m1.medium")
	if d := meta.FindStatusCondition(vm.Status.Conditions, kupenstackv1.ConditionDegraded); d == nil || d.Status != metav1.ConditionFalse {
		t.Errorf("Degraded %+v after the recovery", d)
	}
	t.Logf("resize kept the server's ID %s, port %s and volume %s", id, port.Status.ID, volumeID)

	deleteAll(t, ns, false, vm, port, vol, sub, net, img)
	// The flavor made for the test goes from Nova too.
	if err := env.Client.Delete(env.Ctx, zero); err != nil {
		t.Fatal(err)
	}
	waitGone(t, zero)
}
