package port

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

// TestSubnetWakesItsWaitingPorts: a Subnet with an ID wakes the Ports of its network that are not
// created yet and name no subnet (they wait for one); no other Port, and nothing before it has
// an ID. Before, such a Port learnt of its subnet only at its wait's next poll, seconds later on
// the way to every VM booted on it.
func TestSubnetWakesItsWaitingPorts(t *testing.T) {
	env.Require(t)
	ctx, c := env.Ctx, env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "port-wake-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "port-wake-other-"}}
	if err := c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	port := func(namespace, name, network string, fixedIPs []kupenstackv1.PortFixedIP, id string) {
		t.Helper()
		p := &kupenstackv1.Port{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: kupenstackv1.PortSpec{NetworkRef: network, FixedIPs: fixedIPs}}
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		if id != "" {
			p.Status.ID = id
			if err := c.Status().Update(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	port(ns.Name, "waiting", "net", nil, "")
	port(ns.Name, "waiting-too", "net", nil, "")
	port(ns.Name, "created", "net", nil, "9f0c4b5e-0000-4000-8000-000000000001")
	port(ns.Name, "names-its-subnet", "net", []kupenstackv1.PortFixedIP{{SubnetRef: "sub"}}, "")
	port(ns.Name, "other-network", "net2", nil, "")
	port(other.Name, "other-namespace", "net", nil, "")

	subnet := &kupenstackv1.Subnet{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "sub"},
		Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.0.0.0/24"}}}
	if err := c.Create(ctx, subnet); err != nil {
		t.Fatal(err)
	}
	woken := func() []string {
		t.Helper()
		var got []string
		for _, r := range portsAwaitingSubnet(c)(context.Background(), subnet) {
			if r.Namespace != ns.Name {
				t.Errorf("woke %s outside the subnet's namespace", r)
			}
			got = append(got, r.Name)
		}
		slices.Sort(got)
		return got
	}
	if got := woken(); len(got) != 0 {
		t.Errorf("a subnet without an ID woke %v; want none", got)
	}
	subnet.Status.ID = "9f0c4b5e-0000-4000-8000-000000000002"
	if err := c.Status().Update(ctx, subnet); err != nil {
		t.Fatal(err)
	}
	if got, want := woken(), []string{"waiting", "waiting-too"}; !slices.Equal(got, want) {
		t.Errorf("the subnet with an ID woke %v; want %v", got, want)
	}
}
