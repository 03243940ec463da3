package virtualmachine

import (
	"context"
	"os"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

var env = testenv.New(nil)

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// TestSubnetWakesItsWaitingVMs: a Subnet with an ID wakes the VMs with a NIC on its network and
// no server yet (Nova refuses them until the network has a subnet); not a VM with a server, one on
// another network or only on a Port, and nothing before the Subnet has an ID. Before, such a VM
// learnt of the subnet only at its wait's next poll.
func TestSubnetWakesItsWaitingVMs(t *testing.T) {
	env.Require(t)
	ctx, c := env.Ctx, env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vm-wake-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	vm := func(name, id string, nics ...kupenstackv1.VirtualMachineNIC) {
		t.Helper()
		v := &kupenstackv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name},
			Spec: kupenstackv1.VirtualMachineSpec{FlavorRef: "small", ImageRef: "image", Networks: nics}}
		if err := c.Create(ctx, v); err != nil {
			t.Fatal(err)
		}
		if id != "" {
			v.Status.ID = id
			if err := c.Status().Update(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	vm("waiting", "", kupenstackv1.VirtualMachineNIC{NetworkRef: "net"})
	vm("second-nic", "", kupenstackv1.VirtualMachineNIC{PortRef: "p"}, kupenstackv1.VirtualMachineNIC{NetworkRef: "net"})
	vm("has-a-server", "9f0c4b5e-0000-4000-8000-000000000011", kupenstackv1.VirtualMachineNIC{NetworkRef: "net"})
	vm("other-network", "", kupenstackv1.VirtualMachineNIC{NetworkRef: "net2"})
	vm("on-a-port", "", kupenstackv1.VirtualMachineNIC{PortRef: "p"})

	subnet := &kupenstackv1.Subnet{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "sub"},
		Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.0.0.0/24"}}}
	if err := c.Create(ctx, subnet); err != nil {
		t.Fatal(err)
	}
	woken := func() []string {
		t.Helper()
		var got []string
		for _, r := range vmsAwaitingSubnet(c)(context.Background(), subnet) {
			got = append(got, r.Name)
		}
		slices.Sort(got)
		return got
	}
	if got := woken(); len(got) != 0 {
		t.Errorf("a subnet without an ID woke %v; want none", got)
	}
	subnet.Status.ID = "9f0c4b5e-0000-4000-8000-000000000012"
	if err := c.Status().Update(ctx, subnet); err != nil {
		t.Fatal(err)
	}
	if got, want := woken(), []string{"second-nic", "waiting"}; !slices.Equal(got, want) {
		t.Errorf("the subnet with an ID woke %v; want %v", got, want)
	}
}
