package floatingip

import (
	"testing"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// TestAwaitsRouter: a Router with an interface wakes the FloatingIPs that name a port they are not
// associated with yet (Neutron refuses the association until a router links the port's subnet to
// the external network: Update); not the others, and not for a Router without interfaces.
// Before, such an address waited for its next poll, seconds later.
func TestAwaitsRouter(t *testing.T) {
	withInterface := &kupenstackv1.Router{Status: kupenstackv1.RouterStatus{Resource: &kupenstackv1.RouterResourceStatus{
		Interfaces: []kupenstackv1.RouterInterfaceStatus{{SubnetID: "s1", PortID: "rp1"}}}}}
	bare := &kupenstackv1.Router{Status: kupenstackv1.RouterStatus{Resource: &kupenstackv1.RouterResourceStatus{}}}
	address := func(portRef, associatedTo string) *kupenstackv1.FloatingIP {
		f := &kupenstackv1.FloatingIP{Spec: kupenstackv1.FloatingIPSpec{FloatingNetworkRef: "external", PortRef: portRef}}
		if associatedTo != "" {
			f.Status.Resource = &kupenstackv1.FloatingIPResourceStatus{PortID: associatedTo}
		}
		return f
	}
	for _, tc := range []struct {
		name    string
		router  *kupenstackv1.Router
		address *kupenstackv1.FloatingIP
		want    bool
	}{
		{"names a port, not associated", withInterface, address("vm-port", ""), true},
		{"associated already", withInterface, address("vm-port", "p1"), false},
		{"names no port", withInterface, address("", ""), false},
		{"the router has no interface", bare, address("vm-port", ""), false},
		{"the router not created yet", &kupenstackv1.Router{}, address("vm-port", ""), false},
	} {
		if got := awaitsRouter(tc.router, tc.address); got != tc.want {
			t.Errorf("%s: awaitsRouter = %v, want %v", tc.name, got, tc.want)
		}
	}
}
