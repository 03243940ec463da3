package realcluster

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

const tenantNamespace = "tenant-a"

// tenantOnCloud is a tenant on the cloud the operator deployed: a namespace becomes a Keystone
// project, and its flavor, image (the test guest, downloaded by the operator from a pod and
// uploaded to glance), network, subnet, router to the admin's external network, security group,
// port, key pair and floating IP become Ready; the VM made of them reaches ACTIVE on the node's
// libvirt with an address from neutron, and the guest really boots: its console shows that
// address taken by DHCP, the metadata service's answer with the key pair, and its user data run.
// From outside the cloud (the host, through br-ex), the floating IP answers HTTP; SSH is dropped
// until the security group allows port 22 (a port-22 rule added out of band is removed by the
// drift check first), then the test logs in with the KeyPair's key and finds the guest's
// hostname, fixed address and user data's work. The QEMU process killed on the node, the
// operator restarts the server (restartPolicy Always) and SSH answers again at the same floating
// IP. From inside it, two more guests answer: one beside it on its network, one on a second
// network through the router, until the router leaves that network; and a VirtualMachineSet of
// web servers rolled to a new template never has fewer members answering than its strategy
// allows, by a probe from inside that VM. A VM with its own network, router, security group, key
// pair, port and floating IP is timed to SSH as KupenStack objects and as direct OpenStack calls,
// in turn (bootBenchmark). Deleting the namespace deletes the server and the project: nothing is
// left in the cloud.
func tenantOnCloud(ctx context.Context, t *testing.T, c *cluster, cl client.Client, payload []byte) {
	t.Helper()
	start := time.Now()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "guest.raw"), payload, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	serveFiles(ctx, t, c, "images", dir, "/guest.raw")
	hostOnExternalNetwork(t)
	authorizedKey, signer := guestKey(t)

	ns := tenantNamespace
	inNS := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }
	flavor := &kupenstackv1.Flavor{ObjectMeta: metav1.ObjectMeta{Name: "rc-nano"},
		Spec: kupenstackv1.FlavorSpec{VCPUs: 1, RAMMiB: 128, DiskGiB: 1}}
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"kupenstack.io/project": "enabled"}}},
		flavor,
		&kupenstackv1.Image{ObjectMeta: inNS("guest"), Spec: kupenstackv1.ImageSpec{ImageContent: kupenstackv1.ImageContent{DiskFormat: "raw",
			Source: &kupenstackv1.ImageSource{URL: "http://images." + chartsNamespace + ".svc.cluster.local/guest.raw",
				SHA256: fmt.Sprintf("%x", sha256.Sum256(payload))}}}},
		&kupenstackv1.Network{ObjectMeta: inNS("net")},
		&kupenstackv1.Subnet{ObjectMeta: inNS("sub"), Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.77.0.0/24"}}},
		// The tenant refers to the admin's external network (adminNetworking) by name.
		&kupenstackv1.Router{ObjectMeta: inNS("router"), Spec: kupenstackv1.RouterSpec{
			ExternalGateway: &kupenstackv1.RouterGateway{ProviderNetworkRef: externalNetwork},
			Interfaces:      []kupenstackv1.RouterInterface{{SubnetRef: "sub"}, {SubnetRef: farSubnet}}}},
		// Egress (DHCP, metadata) and the web page; SSH is added later, to see it blocked first.
		// Its own drift check every 15s repairs the rule added out of band (ruleDriftRepaired).
		&kupenstackv1.SecurityGroup{ObjectMeta: inNS("web"), Spec: kupenstackv1.SecurityGroupSpec{
			ManagedSpec: kupenstackv1.ManagedSpec{ResyncPeriod: &kupenstackv1.Duration{Duration: 15 * time.Second}},
			Rules: []kupenstackv1.SecurityGroupRule{
				{Direction: "egress", Ethertype: "IPv4"},
				{Direction: "ingress", Ethertype: "IPv4", Protocol: "tcp", PortRangeMin: ptr.To(80), PortRangeMax: ptr.To(80)},
				{Direction: "ingress", Ethertype: "IPv4", Protocol: "icmp"},
			}}},
		&kupenstackv1.Port{ObjectMeta: inNS("vm-port"), Spec: kupenstackv1.PortSpec{NetworkRef: "net", SecurityGroupRefs: []string{"web"}}},
		&kupenstackv1.FloatingIP{ObjectMeta: inNS("vm-ip"), Spec: kupenstackv1.FloatingIPSpec{ProviderNetworkRef: externalNetwork, PortRef: "vm-port"}},
		&kupenstackv1.KeyPair{ObjectMeta: inNS("key"), Spec: kupenstackv1.KeyPairSpec{PublicKey: authorizedKey}},
		// On the cloud's Ceph: the guest writes to it and reads it back after its QEMU is killed.
		&kupenstackv1.Volume{ObjectMeta: inNS("data"), Spec: kupenstackv1.VolumeSpec{SizeGiB: 1}},
		&corev1.Secret{ObjectMeta: inNS("user-data"), StringData: map[string]string{"script": "#!/bin/sh\n" +
			"echo \"user data ran on $(hostname)\" | tee /root/user-data-ran\n"}},
	}
	vm := &kupenstackv1.VirtualMachine{ObjectMeta: inNS("vm"), Spec: kupenstackv1.VirtualMachineSpec{
		FlavorRef: flavor.Name, ImageRef: "guest", KeyPairRef: "key",
		UserData:      &kupenstackv1.SecretKeyRef{Name: "user-data", Key: "script"},
		Networks:      []kupenstackv1.VirtualMachineNIC{{PortRef: "vm-port"}},
		Volumes:       []kupenstackv1.VirtualMachineVolume{{VolumeRef: "data"}},
		RestartPolicy: kupenstackv1.RestartPolicyAlways,
	}}
	objects = slices.Concat(objects, farNetworkObjects(ns))
	near, far := peerVM(ns, "near", flavor.Name, "net"), peerVM(ns, "far", flavor.Name, farNetwork)
	set := webSet(ns, flavor.Name)
	admin := adminNetworking()
	for _, o := range slices.Concat(admin, objects, []client.Object{vm, near, far, set}) {
		if err := cl.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}

	var project kupenstackv1.Project
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		return cl.Get(ctx, client.ObjectKey{Name: ns}, &project) == nil && project.Status.ID != "", nil
	}); err != nil {
		t.Fatalf("namespace %s: no Keystone project: %+v", ns, project.Status)
	}
	if err := waitActive(ctx, cl, vm); err != nil {
		for _, o := range slices.Concat(admin, objects[1:]) {
			_ = cl.Get(ctx, client.ObjectKeyFromObject(o), o)
			t.Logf("%T %s: %s", o, o.GetName(), conditionsOf(o))
		}
		out, _ := openstackCLI(ctx, t, c, "server-list", "server", "list", "--all-projects", "--long")
		t.Fatalf("VM not ACTIVE and Ready: resource %+v, conditions %s\nservers:\n%s", vm.Status.Resource, conditionsOf(vm), out)
	}
	t.Logf("tenant: namespace to VM ACTIVE on %s with %v: %s", vm.Status.Resource.Host, vm.Status.Resource.Addresses,
		time.Since(start).Round(time.Second))
	server := vm.Status.ID

	// The server, seen by the cloud's admin, is in the namespace's project.
	out, err := openstackCLI(ctx, t, c, "server-show", "server", "show", server, "-f", "value", "-c", "project_id", "-c", "status")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, project.Status.ID) || !strings.Contains(out, "ACTIVE") {
		t.Errorf("server %s: %q, want ACTIVE in project %s", server, out, project.Status.ID)
	}

	// The guest really boots: its console shows the address neutron's DHCP gave it, the metadata
	// service's answer (through the DHCP namespace's proxy) with the key pair, and its user data run.
	ip := vm.Status.Resource.Addresses[0].Address
	console := guestWithLease(ctx, t, c, cl, vm)
	for _, want := range []string{"dhcp eth0 " + ip + "/24 gw 10.77.0.1", "userdata exit=0", "ready"} {
		if !slices.Contains(console, want) {
			t.Errorf("guest console lacks %q; its lines: %q", want, console)
		}
	}
	if !slices.ContainsFunc(console, func(l string) bool {
		return strings.HasPrefix(l, "metadata hostname=") && strings.HasSuffix(l, " keys=1")
	}) {
		t.Errorf("guest console lacks the metadata with one key; its lines: %q", console)
	}
	t.Logf("tenant: the guest's console: %q", console)
	t.Logf("tenant: namespace to guest ready: %s", time.Since(start).Round(time.Second))
	addr := guestFromOutside(ctx, t, c, cl, vm, ip, console, signer)
	nearIP := guestsReachEachOther(ctx, t, c, cl, addr, signer, near, far)
	rolloutUnderTraffic(ctx, t, c, cl, addr, signer, set, nearIP)
	bootBenchmark(ctx, t, c, cl, project.Status.ID, flavor, authorizedKey, signer)

	// Deleting the namespace deletes its resources, then the project.
	start = time.Now()
	if err := cl.Delete(ctx, objects[0]); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(cl.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})) &&
			apierrors.IsNotFound(cl.Get(ctx, client.ObjectKey{Name: ns}, &kupenstackv1.Project{})), nil
	}); err != nil {
		t.Fatalf("namespace %s not deleted: %v", ns, err)
	}
	t.Logf("tenant: namespace deleted with its project: %s", time.Since(start).Round(time.Second))
	if err := cl.Delete(ctx, flavor); err != nil {
		t.Fatal(err)
	}
	// With no tenant left on it, the admin's external network goes too, from Neutron as well.
	networkID := admin[0].(*kupenstackv1.ProviderNetwork)
	if err := cl.Get(ctx, client.ObjectKeyFromObject(networkID), networkID); err != nil {
		t.Fatal(err)
	}
	for _, o := range admin {
		if err := cl.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(cl.Get(ctx, client.ObjectKeyFromObject(networkID), &kupenstackv1.ProviderNetwork{})), nil
	}); err != nil {
		t.Errorf("ProviderNetwork %s not deleted: %s", externalNetwork, conditionsOf(networkID))
	}
	if _, err := openstackCLI(ctx, t, c, "network-show", "network", "show", networkID.Status.ID); err == nil {
		t.Errorf("network %s still in neutron after its ProviderNetwork was deleted", networkID.Status.ID)
	}
	if _, err := openstackCLI(ctx, t, c, "project-show", "project", "show", project.Status.ID); err == nil {
		t.Errorf("project %s still in keystone after its namespace was deleted", project.Status.ID)
	}
	if out, err := openstackCLI(ctx, t, c, "servers-left", "server", "list", "--all-projects", "-f", "value", "-c", "ID"); err != nil || out != "" {
		t.Errorf("servers left after the namespace was deleted: %q %v", out, err)
	}
}

// waitActive waits (10 minutes at most) until vm is Ready with its server ACTIVE and an address.
func waitActive(ctx context.Context, cl client.Client, vm *kupenstackv1.VirtualMachine) error {
	return wait.PollUntilContextTimeout(ctx, 3*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(vm), vm); err != nil {
			return false, nil
		}
		r := vm.Status.Resource
		return r != nil && r.Status == "ACTIVE" && len(r.Addresses) > 0 &&
			meta.IsStatusConditionTrue(vm.Status.Conditions, kupenstackv1.ConditionReady), nil
	})
}

// guestImage builds the project's test guest (hack/guest-image.sh, docs/guest-image.md), which
// boots in seconds under QEMU and reports DHCP, metadata and user data on its serial console, and
// returns the disk. Called before the host's snapshot: the build installs its tools from apt.
func guestImage(t *testing.T) []byte {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command(filepath.Join(root, "hack", "guest-image.sh"), "build")
	build.Stderr = os.Stderr
	path, err := build.Output()
	if err != nil {
		t.Fatalf("hack/guest-image.sh build: %v", err)
	}
	disk, err := os.ReadFile(strings.TrimSpace(string(path)))
	if err != nil {
		t.Fatal(err)
	}
	return disk
}

// conditionsOf prints an object's conditions (the OpenStack kinds' managed status has them).
func conditionsOf(o client.Object) string {
	m, ok := o.(interface {
		GetManagedStatus() *kupenstackv1.ManagedStatus
	})
	if !ok {
		return ""
	}
	conds := m.GetManagedStatus().Conditions
	var b strings.Builder
	for _, c := range conds {
		fmt.Fprintf(&b, "%s=%s (%s: %s) ", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

// guestConsole polls the server's console log until the test guest prints ready (at most five
// minutes: QEMU emulates, the node has no usable KVM) and returns its KUPENSTACK-GUEST lines,
// without the prefix (docs/guest-image.md, "The console contract").
func guestConsole(ctx context.Context, t *testing.T, c *cluster, server string) []string {
	t.Helper()
	var lines []string
	var last string
	for i := 0; ; i++ {
		out, err := openstackCLI(ctx, t, c, fmt.Sprintf("console-%d", i), "console", "log", "show", server)
		if err == nil {
			last = out
			lines = lines[:0]
			for _, l := range strings.Split(strings.ReplaceAll(out, "\r", ""), "\n") {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "KUPENSTACK-GUEST "); ok {
					lines = append(lines, rest)
				}
			}
			if slices.Contains(lines, "ready") {
				return lines
			}
		}
		if i >= 30 {
			t.Errorf("the guest did not print ready; console log (%v):\n%s", err, last)
			return lines
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(10 * time.Second):
		}
	}
}
