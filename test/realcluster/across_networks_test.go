package realcluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// otherNetwork is a second tenant network with one VM, not on the router at first. Its objects
// are created with the tenant's others, so the VM boots while the first one is checked.
func otherNetwork(ns string) []client.Object {
	inNS := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }
	return []client.Object{
		&kupenstackv1.Network{ObjectMeta: inNS("net-b")},
		&kupenstackv1.Subnet{ObjectMeta: inNS("sub-b"), Spec: kupenstackv1.SubnetSpec{NetworkRef: "net-b", CIDR: "10.78.0.0/24"}},
		&kupenstackv1.VirtualMachine{ObjectMeta: inNS("vm-b"), Spec: kupenstackv1.VirtualMachineSpec{
			FlavorRef: "rc-nano", ImageRef: "guest", KeyPairRef: "key",
			Networks: []kupenstackv1.VirtualMachineNIC{{NetworkRef: "net-b"}}, SecurityGroupRefs: []string{"web"}}},
	}
}

// throughTheRouter: from the tenant's first VM (the probe), the web server of vm-b on the other
// network does not answer while only the first network is on the router (the router's default
// route leads to the external network, where the host forwards nothing); once the tenant adds
// sub-b to the router's interfaces, it answers with vm-b's hostname.
func throughTheRouter(ctx context.Context, t *testing.T, c *cluster, cl client.Client, ns string, probe *guestProbe) {
	t.Helper()
	vm := &kupenstackv1.VirtualMachine{}
	if err := wait.PollUntilContextTimeout(ctx, 3*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "vm-b"}, vm); err != nil {
			return false, nil
		}
		r := vm.Status.Resource
		return r != nil && r.Status == "ACTIVE" && len(r.Addresses) > 0 &&
			meta.IsStatusConditionTrue(vm.Status.Conditions, kupenstackv1.ConditionReady), nil
	}); err != nil {
		t.Fatalf("vm-b not ACTIVE and Ready: %+v %s", vm.Status.Resource, conditionsOf(vm))
	}
	ip := vm.Status.Resource.Addresses[0].Address
	// Its console says when its web server is up (guestConsole waits for that): only the route
	// can then be missing.
	var hostname string
	for _, l := range guestConsole(ctx, t, c, vm.Status.ID) {
		if rest, ok := strings.CutPrefix(l, "metadata hostname="); ok {
			hostname, _, _ = strings.Cut(rest, " ")
		}
	}
	if hostname == "" {
		t.Fatalf("vm-b (%s): no hostname on its console", ip)
	}
	fetch := "timeout 3 wget -q -Y off -O - http://" + ip + "/ 2>/dev/null"
	for range 3 {
		if out, err := probe.run(ctx, fetch, 20*time.Second); err != nil {
			t.Fatalf("the probe: %v", err)
		} else if out != "" {
			t.Fatalf("vm-b (%s, on a network the router does not serve) answered %q", ip, out)
		}
	}

	start := time.Now()
	router := &kupenstackv1.Router{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "router"}, router); err != nil {
		t.Fatal(err)
	}
	router.Spec.Interfaces = append(router.Spec.Interfaces, kupenstackv1.RouterInterface{SubnetRef: "sub-b"})
	if err := cl.Update(ctx, router); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		out, err := probe.run(ctx, fetch, 20*time.Second)
		got = strings.TrimSpace(out)
		return err == nil && got != "", nil
	}); err != nil || got != hostname {
		_ = cl.Get(ctx, client.ObjectKeyFromObject(router), router)
		t.Fatalf("vm-b (%s) through the router: %q, want its hostname %q; router %+v %s", ip, got, hostname, router.Status.Resource, conditionsOf(router))
	}
	t.Logf("tenant: vm-b on the other network answered through the router %s after sub-b was added to it (and not before)",
		time.Since(start).Round(time.Second))
}
