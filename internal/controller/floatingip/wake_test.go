package floatingip

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

// TestRouterWakesWaitingAddresses: a Router with an interface wakes its namespace's FloatingIPs
// that name a port they are not associated with yet (Neutron refuses the association until a
// router links the port's subnet to the external network); not the others, and not a Router
// without interfaces. Before, such an address waited for its next poll, seconds later.
func TestRouterWakesWaitingAddresses(t *testing.T) {
	env.Require(t)
	ctx, c := env.Ctx, env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "fip-wake-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "fip-wake-other-"}}
	if err := c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	address := func(namespace, name, portRef, associatedTo string) {
		t.Helper()
		f := &kupenstackv1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: kupenstackv1.FloatingIPSpec{FloatingNetworkRef: "external", PortRef: portRef}}
		if err := c.Create(ctx, f); err != nil {
			t.Fatal(err)
		}
		if associatedTo != "" {
			f.Status.ID = "9f0c4b5e-0000-4000-8000-0000000000a1"
			f.Status.Resource = &kupenstackv1.FloatingIPResourceStatus{FloatingIPAddress: "198.51.100.10", PortID: associatedTo}
			if err := c.Status().Update(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	address(ns.Name, "waiting", "vm-port", "")
	address(ns.Name, "associated", "vm-port-2", "9f0c4b5e-0000-4000-8000-0000000000b1")
	address(ns.Name, "no-port", "", "")
	address(other.Name, "other-namespace", "vm-port", "")

	router := &kupenstackv1.Router{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "router"},
		Spec: kupenstackv1.RouterSpec{Interfaces: []kupenstackv1.RouterInterface{{SubnetRef: "sub"}}}}
	if err := c.Create(ctx, router); err != nil {
		t.Fatal(err)
	}
	woken := func() []string {
		t.Helper()
		var got []string
		for _, r := range addressesAwaitingRouter(c)(context.Background(), router) {
			if r.Namespace != ns.Name {
				t.Errorf("woke %s outside the router's namespace", r)
			}
			got = append(got, r.Name)
		}
		slices.Sort(got)
		return got
	}
	if got := woken(); len(got) != 0 {
		t.Errorf("a router without interfaces woke %v; want none", got)
	}
	router.Status.ID = "9f0c4b5e-0000-4000-8000-0000000000c1"
	router.Status.Resource = &kupenstackv1.RouterResourceStatus{Interfaces: []kupenstackv1.RouterInterfaceStatus{
		{SubnetID: "9f0c4b5e-0000-4000-8000-0000000000d1", PortID: "9f0c4b5e-0000-4000-8000-0000000000e1"}}}
	if err := c.Status().Update(ctx, router); err != nil {
		t.Fatal(err)
	}
	if got, want := woken(), []string{"waiting"}; !slices.Equal(got, want) {
		t.Errorf("the router with an interface woke %v; want %v", got, want)
	}
}
