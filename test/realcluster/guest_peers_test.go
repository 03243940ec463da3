package realcluster

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// The tenant's second network: the router joins it to the first, and nothing else does.
const (
	farNetwork = "net2"
	farSubnet  = "sub2"
	farCIDR    = "10.78.0.0/24"
)

// farNetworkObjects are the tenant's second network and its subnet.
func farNetworkObjects(ns string) []client.Object {
	return []client.Object{
		&kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: farNetwork, Namespace: ns}},
		&kupenstackv1.Subnet{ObjectMeta: metav1.ObjectMeta{Name: farSubnet, Namespace: ns}, Spec: kupenstackv1.SubnetSpec{
			NetworkRef: farNetwork, SubnetParameters: kupenstackv1.SubnetParameters{CIDR: farCIDR}}},
	}
}

// peerVM is one of the tenant's other guests, serving its hostname on port 80 (the "web" group
// lets it in), on network.
func peerVM(ns, name, flavor, network string) *kupenstackv1.VirtualMachine {
	return &kupenstackv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: kupenstackv1.VirtualMachineSpec{
		FlavorRef: flavor, ImageRef: "guest",
		Networks:          []kupenstackv1.VirtualMachineNIC{{NetworkRef: network}},
		SecurityGroupRefs: []string{"web"},
	}}
}

// peer is a booted peer VM as the test sees it.
type peer struct {
	name, ip, hostname string
}

// bootedPeer waits until vm is ACTIVE and Ready and its guest has printed ready, and returns its
// fixed address and the hostname it serves.
func bootedPeer(ctx context.Context, t *testing.T, c *cluster, cl client.Client, vm *kupenstackv1.VirtualMachine) peer {
	t.Helper()
	if err := waitActive(ctx, cl, vm); err != nil {
		t.Fatalf("VM %s not ACTIVE and Ready: resource %+v, conditions %s", vm.Name, vm.Status.Resource, conditionsOf(vm))
	}
	p := peer{name: vm.Name, ip: vm.Status.Resource.Addresses[0].Address}
	for _, l := range guestWithLease(ctx, t, c, cl, vm) {
		if rest, ok := strings.CutPrefix(l, "metadata hostname="); ok {
			p.hostname, _, _ = strings.Cut(rest, " ")
		}
	}
	if p.hostname == "" {
		t.Fatalf("VM %s: its guest printed no hostname from the metadata\n%s", vm.Name, guestNetworkReport(ctx, t, c, cl, vm))
	}
	return p
}

// guestNetworkReport is what a guest without a lease or metadata needs looked at: the ports of its
// first network (the DHCP port's status says whether Open vSwitch had wired it) and the end of the
// DHCP agent's log.
func guestNetworkReport(ctx context.Context, t *testing.T, c *cluster, cl client.Client, vm *kupenstackv1.VirtualMachine) string {
	t.Helper()
	var b strings.Builder
	nic := vm.Spec.Networks[0]
	if nic.NetworkRef != "" {
		var network kupenstackv1.Network
		if err := cl.Get(ctx, client.ObjectKey{Namespace: vm.Namespace, Name: nic.NetworkRef}, &network); err != nil {
			fmt.Fprintf(&b, "network %s: %v\n", nic.NetworkRef, err)
		} else {
			out, err := openstackCLI(ctx, t, c, "ports-"+vm.Name, "port", "list", "--network", network.Status.ID, "--long",
				"-c", "ID", "-c", "Device Owner", "-c", "Status", "-c", "Fixed IP Addresses", "-f", "value")
			fmt.Fprintf(&b, "ports of network %s (%s), at %s (%v):\n%s\n", nic.NetworkRef, network.Status.ID, time.Now().Format(time.TimeOnly), err, out)
		}
	}
	pods, err := c.cs.CoreV1().Pods("openstack").List(ctx, metav1.ListOptions{LabelSelector: "application=neutron,component=dhcp-agent"})
	if err != nil {
		fmt.Fprintf(&b, "DHCP agent pods: %v\n", err)
		return b.String()
	}
	for _, pod := range pods.Items {
		logs, err := c.cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{TailLines: ptr.To[int64](40)}).DoRaw(ctx)
		fmt.Fprintf(&b, "the end of %s's log (%v):\n%s\n", pod.Name, err, logs)
	}
	return b.String()
}

// fetchFromGuest runs, on the guest logged into at addr, a GET of http://ip/ bounded by a few
// seconds, and returns the body, or "" when nothing answered (the guest's wget failed).
func fetchFromGuest(ctx context.Context, addr string, signer ssh.Signer, ip string) (string, error) {
	// The marker tells an unanswered GET (the step's subject) from a failed SSH session.
	out, err := pollSSH(ctx, addr, signer, nil, nil,
		fmt.Sprintf("timeout 8 wget -q -O - http://%s/ || echo UNANSWERED", ip), time.Minute)
	if err != nil {
		return "", fmt.Errorf("SSH to %s: %q %w", addr, out, err)
	}
	if strings.HasSuffix(out, "UNANSWERED") {
		return "", nil
	}
	return out, nil
}

// guestsReachEachOther, from inside the tenant's VM (SSH to its floating IP at addr): the guest
// beside it on the same network answers at its fixed address with its own hostname, and so does
// the guest on the second network, through the router. The router's interface to the second
// network removed from its spec, that guest no longer answers while the one beside still does:
// the router was the only way between the two networks. It returns the near guest's address.
func guestsReachEachOther(ctx context.Context, t *testing.T, c *cluster, cl client.Client, addr string, signer ssh.Signer, near, far *kupenstackv1.VirtualMachine) string {
	t.Helper()
	start := time.Now()
	peers := []peer{bootedPeer(ctx, t, c, cl, near), bootedPeer(ctx, t, c, cl, far)}
	for _, p := range peers {
		var got string
		deadline := time.Now().Add(2 * time.Minute)
		for {
			body, err := fetchFromGuest(ctx, addr, signer, p.ip)
			if err != nil {
				t.Fatal(err)
			}
			if got = body; got == p.hostname || time.Now().After(deadline) {
				break
			}
			time.Sleep(3 * time.Second)
		}
		if got != p.hostname {
			t.Fatalf("from the tenant's VM, http://%s/ (VM %s) answered %q, want its hostname %q", p.ip, p.name, got, p.hostname)
		}
		t.Logf("tenant: the VM reaches %s at %s (%s)", p.name, p.ip, time.Since(start).Round(time.Second))
	}

	var router kupenstackv1.Router
	key := client.ObjectKey{Namespace: near.Namespace, Name: "router"}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cl.Get(ctx, key, &router); err != nil {
			return err
		}
		router.Spec.Interfaces = []kupenstackv1.RouterInterface{{SubnetRef: "sub"}}
		return cl.Update(ctx, &router)
	}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, key, &router); err != nil {
			return false, nil
		}
		return router.Status.ObservedGeneration == router.Generation &&
			meta.IsStatusConditionTrue(router.Status.Conditions, kupenstackv1.ConditionReady), nil
	}); err != nil {
		t.Fatalf("router not Ready without its interface to %s: %s", farSubnet, conditionsOf(&router))
	}
	start = time.Now()
	var got string
	for {
		body, err := fetchFromGuest(ctx, addr, signer, peers[1].ip)
		if err != nil {
			t.Fatal(err)
		}
		if got = body; got == "" || time.Since(start) > time.Minute {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if got != "" {
		t.Fatalf("the router left %s, but VM %s at %s still answered the tenant's VM: %q", farNetwork, peers[1].name, peers[1].ip, got)
	}
	if body, err := fetchFromGuest(ctx, addr, signer, peers[0].ip); err != nil || body != peers[0].hostname {
		t.Errorf("with the router off %s, VM %s on the same network answered %q (%v), want %q", farNetwork, peers[0].name, body, err, peers[0].hostname)
	}
	t.Logf("tenant: %s unreachable %s after the router left it; %s on the same network still answers",
		peers[1].name, time.Since(start).Round(time.Second), peers[0].name)
	return peers[0].ip
}

// guestWithLease is guestConsole for a guest that must have a DHCP lease on every NIC. A guest
// that got none is the cloud's dataplane failing one new port: two of three CI runs on
// 2026-11-29 had one guest of five without a lease, on a network whose DHCP served the guests
// beside it (the ports and the DHCP agent's log are logged, to find out why). That guest is
// hard-rebooted once, which makes Nova plug its port into Open vSwitch again, and the lines of
// its second boot are returned; a second boot without a lease fails the test.
func guestWithLease(ctx context.Context, t *testing.T, c *cluster, cl client.Client, vm *kupenstackv1.VirtualMachine) []string {
	t.Helper()
	lines := guestConsole(ctx, t, c, vm.Status.ID)
	if !withoutLease(lines) {
		return lines
	}
	t.Logf("CLOUD FAULT: VM %s's guest got no DHCP lease (console %q); it is hard-rebooted once\n%s",
		vm.Name, lines, guestNetworkReport(ctx, t, c, cl, vm))
	first := hostKeysOf(lines)
	if out, err := openstackCLI(ctx, t, c, "reboot-"+vm.Name, "server", "reboot", "--hard", "--wait", vm.Status.ID); err != nil {
		t.Fatalf("hard reboot of VM %s (server %s): %v %s", vm.Name, vm.Status.ID, err, out)
	}
	// The console log may keep the first boot's lines: the second boot is the lines from the last
	// "dhcp eth0", with a host key of its own (a guest makes a new one at every boot).
	for i := 0; ; i++ {
		boot := lastBoot(guestConsole(ctx, t, c, vm.Status.ID))
		keys := hostKeysOf(boot)
		if slices.Contains(boot, "ready") && len(keys) > 0 && (len(first) == 0 || !bytes.Equal(keys[0].Marshal(), first[0].Marshal())) {
			if withoutLease(boot) {
				t.Fatalf("VM %s: its guest got no DHCP lease in a second boot either: %q\n%s", vm.Name, boot, guestNetworkReport(ctx, t, c, cl, vm))
			}
			t.Logf("VM %s: the guest's second boot got its lease: %q", vm.Name, boot)
			return boot
		}
		if i >= 30 {
			t.Fatalf("VM %s: no second boot on its console after the hard reboot: %q", vm.Name, boot)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(10 * time.Second):
		}
	}
}

// withoutLease says whether a guest's console lines say a NIC got no DHCP lease.
func withoutLease(lines []string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "dhcp ") && strings.HasSuffix(l, " none") })
}

// lastBoot is the console lines of the guest's last boot: from its last "dhcp eth0" line on.
func lastBoot(lines []string) []string {
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "dhcp eth0 ") {
			return lines[i:]
		}
	}
	return lines
}
