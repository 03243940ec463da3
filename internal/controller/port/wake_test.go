package port

import (
	"testing"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// TestAwaitsSubnet: a Subnet that has its ID wakes the Ports of its network not created yet that
// name no subnet (they wait for one: Create); no other Port, and nothing before it has an ID.
// Before, such a Port learnt of its subnet only at its wait's next poll, seconds later on the way
// to every VM booted on it.
func TestAwaitsSubnet(t *testing.T) {
	subnet := func(id string) *kupenstackv1.Subnet {
		s := &kupenstackv1.Subnet{Spec: kupenstackv1.SubnetSpec{NetworkRef: "net"}}
		s.Status.ID = id
		return s
	}
	port := func(network, id string, fixedIPs ...kupenstackv1.PortFixedIP) *kupenstackv1.Port {
		p := &kupenstackv1.Port{Spec: kupenstackv1.PortSpec{NetworkRef: network, FixedIPs: fixedIPs}}
		p.Status.ID = id
		return p
	}
	for _, tc := range []struct {
		name   string
		subnet *kupenstackv1.Subnet
		port   *kupenstackv1.Port
		want   bool
	}{
		{"waiting on the subnet's network", subnet("s1"), port("net", ""), true},
		{"the subnet has no ID yet", subnet(""), port("net", ""), false},
		{"the port exists already", subnet("s1"), port("net", "p1"), false},
		{"the port names its subnet", subnet("s1"), port("net", "", kupenstackv1.PortFixedIP{SubnetRef: "other"}), false},
		{"another network", subnet("s1"), port("net2", ""), false},
	} {
		if got := awaitsSubnet(tc.subnet, tc.port); got != tc.want {
			t.Errorf("%s: awaitsSubnet = %v, want %v", tc.name, got, tc.want)
		}
	}
}
