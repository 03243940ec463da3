package virtualmachine

import (
	"testing"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// TestAwaitsSubnet: a Subnet that has its ID wakes the VMs with a NIC on its network and no server
// yet (Nova refuses them until the network has a subnet: networkWithoutSubnet); not a VM with a
// server, one on another network or only on a Port, and nothing before the Subnet has an ID.
func TestAwaitsSubnet(t *testing.T) {
	subnet := func(id string) *kupenstackv1.Subnet {
		s := &kupenstackv1.Subnet{Spec: kupenstackv1.SubnetSpec{NetworkRef: "net"}}
		s.Status.ID = id
		return s
	}
	vm := func(id string, nics ...kupenstackv1.VirtualMachineNIC) *kupenstackv1.VirtualMachine {
		v := &kupenstackv1.VirtualMachine{Spec: kupenstackv1.VirtualMachineSpec{Networks: nics}}
		v.Status.ID = id
		return v
	}
	on := func(network string) kupenstackv1.VirtualMachineNIC {
		return kupenstackv1.VirtualMachineNIC{NetworkRef: network}
	}
	port := kupenstackv1.VirtualMachineNIC{PortRef: "p"}
	for _, tc := range []struct {
		name   string
		subnet *kupenstackv1.Subnet
		vm     *kupenstackv1.VirtualMachine
		want   bool
	}{
		{"on the subnet's network", subnet("s1"), vm("", on("net")), true},
		{"its second NIC", subnet("s1"), vm("", port, on("net")), true},
		{"the subnet has no ID yet", subnet(""), vm("", on("net")), false},
		{"has a server", subnet("s1"), vm("srv1", on("net")), false},
		{"another network", subnet("s1"), vm("", on("net2")), false},
		{"only on a port", subnet("s1"), vm("", port), false},
	} {
		if got := awaitsSubnet(tc.subnet, tc.vm); got != tc.want {
			t.Errorf("%s: awaitsSubnet = %v, want %v", tc.name, got, tc.want)
		}
	}
}
