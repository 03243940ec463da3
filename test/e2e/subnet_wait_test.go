package e2e

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// TestVMWaitsForTheSubnetOfItsNetwork: a VM applied with its Network and Subnet at once can be
// created before the Subnet, and Nova refuses a server on a network without one (400 "requires a
// subnet"). The VM must wait for the subnet, as a short Progressing wait that says so, not fail
// with an error left to the long error backoff (which made VMs of the samples take minutes).
func TestVMWaitsForTheSubnetOfItsNetwork(t *testing.T) {
	parallel(t)
	requireCloud(t)
	ns := newNamespace(t)
	flavor := vmFlavor(t, ns+"-nano")
	img := publicImage(ns)
	net := &kupenstackv1.Network{ObjectMeta: objMeta(ns, "net")}
	vm := &kupenstackv1.VirtualMachine{ObjectMeta: objMeta(ns, "web"), Spec: kupenstackv1.VirtualMachineSpec{
		FlavorRef: flavor.Name, ImageRef: "tiny", Networks: []kupenstackv1.VirtualMachineNIC{{NetworkRef: "net"}}}}
	create(t, img, net, vm)
	eventually(t, "the VM waiting for a subnet", func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(vm), vm); err != nil {
			return err
		}
		if d := meta.FindStatusCondition(vm.Status.Conditions, kupenstackv1.ConditionDegraded); d != nil && d.Status == "True" {
			t.Fatalf("the VM is Degraded (%s: %s) instead of waiting for the subnet", d.Reason, d.Message)
		}
		p := meta.FindStatusCondition(vm.Status.Conditions, kupenstackv1.ConditionProgressing)
		if p == nil || !strings.Contains(p.Message, "waiting for a subnet") {
			return fmt.Errorf("Progressing = %+v", p)
		}
		return nil
	})
	sub := &kupenstackv1.Subnet{ObjectMeta: objMeta(ns, "net-v4"), Spec: kupenstackv1.SubnetSpec{
		NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: fmt.Sprintf("10.64.%d.0/24", cidrCounter.Add(1)%250)},
	}}
	create(t, sub)
	waitReady(t, vm)
	id := vm.Status.ID
	deleteAll(t, ns, false, vm, sub, net, img)
	requireServerGone(t, adminClients(t), id)
}
