package realcluster

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// The cloud's external network, as an admin of the one-node cloud declares it: flat, on the
// physical network the profile maps to br-ex (config/samples/lcm/one-node.yaml), in a range
// reserved for documentation (RFC 5737) that routes nowhere. The host's end is br-ex itself: on
// the userspace datapath an OVS bridge's own port is a tap device in the host's network namespace,
// the openvswitch pod running on the host network. The test gives it the subnet's gateway address,
// so the test reaches floating IPs through OVS and the router's namespace as a client outside the
// cloud would, and nothing but this bridge carries that range.
const (
	externalNetwork  = "public"
	externalBridge   = "br-ex"
	externalCIDR     = "198.51.100.0/24"
	externalGateway  = "198.51.100.1"
	externalHostAddr = externalGateway + "/24"
	// vlanPhysnet is the physical network whose VLANs 100-199 the profile lets admins take for
	// provider networks (ml2_type_vlan in one-node.yaml): the resource suite's provider network
	// tests use them.
	vlanPhysnet = "external"
)

// adminNetworking is the cloud admin's external network as code: a flat network on the
// physical network "external" (br-ex) and its subnet, without DHCP, the same shape as the
// all-in-one's (hack/openstack-aio/bootstrap.py).
func adminNetworking() []client.Object {
	return []client.Object{
		&kupenstackv1.ProviderNetwork{ObjectMeta: metav1.ObjectMeta{Name: externalNetwork}, Spec: kupenstackv1.ProviderNetworkSpec{
			NetworkType: "flat", PhysicalNetwork: "external", External: true}},
		&kupenstackv1.ProviderSubnet{ObjectMeta: metav1.ObjectMeta{Name: externalNetwork + "-subnet"}, Spec: kupenstackv1.ProviderSubnetSpec{
			ProviderNetworkRef: externalNetwork,
			SubnetParameters: kupenstackv1.SubnetParameters{CIDR: externalCIDR, GatewayIP: externalGateway, EnableDHCP: ptr.To(false),
				AllocationPools: []kupenstackv1.AllocationPool{{Start: "198.51.100.10", End: "198.51.100.250"}}}}},
	}
}

// hostOnExternalNetwork puts the external subnet's gateway address on the host's br-ex; the
// address goes away with the test (and the bridge with the openvswitch pod).
func hostOnExternalNetwork(t *testing.T) {
	t.Helper()
	if out, err := exec.Command("ip", "addr", "replace", externalHostAddr, "dev", externalBridge).CombinedOutput(); err != nil {
		t.Fatalf("ip addr replace %s dev %s: %v: %s", externalHostAddr, externalBridge, err, out)
	}
	if out, err := exec.Command("ip", "link", "set", externalBridge, "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set %s up: %v: %s", externalBridge, err, out)
	}
	// The host's TCP leaves its checksums to the tap's offload, and OVS reads the tap through a
	// packet socket that forwards them unfinished: the guest would drop every segment from the
	// host (ICMP is unaffected). The bridge goes with the openvswitch pod, nothing to restore.
	if err := txChecksumOff(externalBridge); err != nil {
		t.Fatalf("%s: turning TX checksum offload off: %v", externalBridge, err)
	}
	t.Cleanup(func() {
		// Gone already when the openvswitch pod stopped before this runs.
		_ = exec.Command("ip", "addr", "del", externalHostAddr, "dev", externalBridge).Run()
	})
	// The routers' gateway is the host: whatever a guest sends beyond the cloud (to an address not
	// on this machine) would be forwarded off it. Nothing may leave by br-ex but to the host.
	noForward := []string{"FORWARD", "-i", externalBridge, "-m", "comment", "--comment", "kupenstack test: guests reach nothing beyond the host", "-j", "DROP"}
	if out, err := exec.Command("iptables", append([]string{"-w", "-I"}, noForward...)...).CombinedOutput(); err != nil {
		t.Fatalf("iptables -I %v: %v: %s", noForward, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("iptables", append([]string{"-w", "-D"}, noForward...)...).CombinedOutput(); err != nil {
			t.Errorf("iptables -D %v: %v: %s", noForward, err, out)
		}
	})
}

// txChecksumOff is `ethtool -K iface tx off` (ETHTOOL_STXCSUM through SIOCETHTOOL).
func txChecksumOff(iface string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	value := struct{ cmd, data uint32 }{cmd: unix.ETHTOOL_STXCSUM, data: 0}
	var ifr struct {
		name [unix.IFNAMSIZ]byte
		data uintptr
		_    [16]byte
	}
	copy(ifr.name[:], iface)
	ifr.data = uintptr(unsafe.Pointer(&value))
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); errno != 0 {
		return errno
	}
	runtime.KeepAlive(&value)
	return nil
}

// externalDialer's connections leave by br-ex only (SO_BINDTODEVICE): should the bridge lose its
// address, a connection to the external range fails here instead of taking the default route
// off the machine.
func externalDialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = unix.SetsockoptString(int(fd), unix.SOL_SOCKET, unix.SO_BINDTODEVICE, externalBridge)
		}); err != nil {
			return err
		}
		return serr
	}}
}

// guestKey is a fresh key for the tenant's KeyPair: its authorized_keys line and its signer.
func guestKey(t *testing.T) (string, ssh.Signer) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub))) + " realcluster", signer
}

// hostKeysOf are the SSH host keys the guest printed on its console (one per boot).
func hostKeysOf(console []string) []ssh.PublicKey {
	var keys []ssh.PublicKey
	for _, l := range console {
		if rest, ok := strings.CutPrefix(l, "hostkey "); ok {
			if k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(rest)); err == nil {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// guestSSH logs in as root at addr:22 with signer, accepting only a host key in hostKeys (nil:
// any, recorded into seen), and runs cmd. A refused or unanswered connection is an error
// wrapping the dial's.
func guestSSH(ctx context.Context, addr string, signer ssh.Signer, hostKeys []ssh.PublicKey, seen *ssh.PublicKey, cmd string) (string, error) {
	client, err := dialGuest(ctx, addr, signer, hostKeys, seen, 30*time.Second)
	if err != nil {
		return "", err
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		return "", err
	}
	defer sess.Close()
	out, err := sess.CombinedOutput(cmd)
	return strings.TrimSpace(string(out)), err
}

// dialGuest logs in as root at addr:22 (see guestSSH); the connection ends after within (0:
// once logged in, it lasts until closed).
func dialGuest(ctx context.Context, addr string, signer ssh.Signer, hostKeys []ssh.PublicKey, seen *ssh.PublicKey, within time.Duration) (*ssh.Client, error) {
	cfg := &ssh.ClientConfig{
		User: "root",
		Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		// The guest's dropbear has an ed25519 key only, and closes the connection when offered
		// the client's whole list of host key algorithms (found on the deployed cloud: OpenSSH's
		// client got in, x/crypto/ssh's got EOF until the list was this one).
		HostKeyAlgorithms: []string{ssh.KeyAlgoED25519},
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			if seen != nil {
				*seen = key
			}
			if hostKeys == nil || slices.ContainsFunc(hostKeys, func(k ssh.PublicKey) bool {
				return bytes.Equal(k.Marshal(), key.Marshal())
			}) {
				return nil
			}
			return fmt.Errorf("host key %s is not one the guest printed on its console", ssh.FingerprintSHA256(key))
		},
		Timeout: 5 * time.Second,
	}
	conn, err := externalDialer(5*time.Second).DialContext(ctx, "tcp", net.JoinHostPort(addr, "22"))
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if within > 0 {
		_ = conn.SetDeadline(time.Now().Add(within))
	} else {
		_ = conn.SetDeadline(time.Time{})
	}
	return ssh.NewClient(sc, chans, reqs), nil
}

// pollSSH retries guestSSH until it succeeds or within is over.
func pollSSH(ctx context.Context, addr string, signer ssh.Signer, hostKeys []ssh.PublicKey, seen *ssh.PublicKey, cmd string, within time.Duration) (string, error) {
	deadline := time.Now().Add(within)
	for {
		out, err := guestSSH(ctx, addr, signer, hostKeys, seen, cmd)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return out, err
		}
		time.Sleep(3 * time.Second)
	}
}

// sshBlocked: a TCP connection to addr:22 is not answered (a security group drops the SYN)
// within a few tries, while the caller has shown the address answers on another port.
func sshBlocked(ctx context.Context, addr string) error {
	for range 3 {
		conn, err := externalDialer(4*time.Second).DialContext(ctx, "tcp", net.JoinHostPort(addr, "22"))
		if err == nil {
			conn.Close()
			return errors.New("port 22 answered")
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("port 22 refused (a reset reached the client, not a drop): %w", err)
		}
	}
	return nil
}

// guestHTTP polls the guest's web server (GET / answers the hostname) at addr until it answers
// or within is over.
func guestHTTP(ctx context.Context, addr string, within time.Duration) (string, error) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: externalDialer(5 * time.Second).DialContext}}
	deadline := time.Now().Add(within)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err == nil {
			body, rerr := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if rerr == nil && resp.StatusCode == http.StatusOK {
				return strings.TrimSpace(string(body)), nil
			}
			err = fmt.Errorf("GET /: %s %v", resp.Status, rerr)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", err
		}
		time.Sleep(3 * time.Second)
	}
}

// killQEMU ends, with SIGKILL, the QEMU process of the server (libvirt starts it with
// `-uuid <server ID>`), as a crashed hypervisor process would end: the node's processes are
// the host's, whichever pod started them. It returns the PID.
func killQEMU(t *testing.T, server string) int {
	t.Helper()
	pid := qemuPID(t, server)
	if pid == 0 {
		t.Fatalf("no QEMU process with -uuid %s on the node", server)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d (QEMU of %s): %v", pid, server, err)
	}
	return pid
}

// qemuPID is the process ID of the QEMU running server (its -uuid) on the node, 0 if none.
func qemuPID(t *testing.T, server string) int {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(string(data), "\x00")
		if len(args) == 0 || !strings.Contains(filepath.Base(args[0]), "qemu-system") {
			continue
		}
		if i := slices.Index(args, "-uuid"); i < 0 || i+1 >= len(args) || args[i+1] != server {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	return 0
}

// volumeMarker is what the tenant's guest writes to its volume's first sector.
const volumeMarker = "kupenstack-volume-marker"

// guestFromOutside checks the tenant's VM from outside the cloud, through its floating IP on
// the external network: the web page answers (DNAT through the router); SSH is dropped while the
// security group lacks port 22 and logs in with the KeyPair's key once the rule is added (host key
// pinned to the one the console printed), showing the metadata's hostname, the fixed address and
// the user data's file; the QEMU process killed on the node, the operator starts the server again
// and SSH answers at the same floating IP. It returns the floating IP.
func guestFromOutside(ctx context.Context, t *testing.T, c *cluster, cl client.Client, vm *kupenstackv1.VirtualMachine, fixedIP string, console []string, signer ssh.Signer) string {
	t.Helper()
	hostname := ""
	for _, l := range console {
		if rest, ok := strings.CutPrefix(l, "metadata hostname="); ok {
			hostname, _, _ = strings.Cut(rest, " ")
		}
	}
	start := time.Now()
	var fip kupenstackv1.FloatingIP
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKey{Namespace: vm.Namespace, Name: "vm-ip"}, &fip); err != nil {
			return false, nil
		}
		r := fip.Status.Resource
		return r != nil && r.FloatingIPAddress != "" && r.FixedIPAddress == fixedIP &&
			meta.IsStatusConditionTrue(fip.Status.Conditions, kupenstackv1.ConditionReady), nil
	}); err != nil {
		t.Fatalf("floating IP not Ready on %s: %+v %s", fixedIP, fip.Status.Resource, conditionsOf(&fip))
	}
	addr := fip.Status.Resource.FloatingIPAddress
	body, err := guestHTTP(ctx, addr, 3*time.Minute)
	if err != nil {
		var router kupenstackv1.Router
		_ = cl.Get(ctx, client.ObjectKey{Namespace: vm.Namespace, Name: "router"}, &router)
		out, _ := openstackCLI(ctx, t, c, "ports-external", "port", "list", "--long", "--network", externalNetwork)
		t.Fatalf("http://%s/ (floating IP of %s): %v\nrouter: %+v %s\nexternal ports:\n%s", addr, fixedIP, err,
			router.Status.Resource, conditionsOf(&router), out)
	}
	if body != hostname {
		t.Errorf("http://%s/ answered %q, want the guest's hostname %q", addr, body, hostname)
	}
	t.Logf("tenant: floating IP %s answers HTTP %s after it was Ready", addr, time.Since(start).Round(time.Second))

	// Port 22 is not in the security group: the SYN is dropped by the port's firewall.
	if err := sshBlocked(ctx, addr); err != nil {
		t.Errorf("SSH to %s with no rule for port 22: %v", addr, err)
	}
	var sg kupenstackv1.SecurityGroup
	if err := cl.Get(ctx, client.ObjectKey{Namespace: vm.Namespace, Name: "web"}, &sg); err != nil {
		t.Fatal(err)
	}
	ruleDriftRepaired(ctx, t, c, cl, &sg, addr)
	// The operator has just written the group's status (the drift repair): re-read on a conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(&sg), &sg); err != nil {
			return err
		}
		sg.Spec.Rules = append(sg.Spec.Rules, kupenstackv1.SecurityGroupRule{Direction: "ingress", Ethertype: "IPv4",
			Protocol: "tcp", PortRangeMin: ptr.To(22), PortRangeMax: ptr.To(22)})
		return cl.Update(ctx, &sg)
	}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	// The attached volume (an RBD image QEMU opens through librbd) is a disk: a marker written
	// to it must still be there after the hypervisor's process is killed below.
	out, err := pollSSH(ctx, addr, signer, hostKeysOf(console), nil,
		"hostname; ip -4 -o addr show dev eth0; cat /root/user-data-ran; "+
			"for i in $(seq 60); do [ -b /dev/vdb ] && break; sleep 1; done; echo \"volume $(blockdev --getsize64 /dev/vdb)\"; echo "+volumeMarker+" | dd of=/dev/vdb bs=512 count=1 conv=sync 2>/dev/null; sync",
		2*time.Minute)
	if err != nil {
		t.Fatalf("SSH to %s after the security group allowed port 22: %v", addr, err)
	}
	t.Logf("tenant: SSH to %s answered %s after the rule was added: %q", addr, time.Since(start).Round(time.Second), out)
	for _, want := range []string{hostname, " " + fixedIP + "/24 ", "user data ran on " + hostname, "volume 1073741824"} {
		if hostname == "" || !strings.Contains(out, want) {
			t.Errorf("SSH session on the guest: %q lacks %q", out, want)
		}
	}

	// The hypervisor's process dies; the operator starts the server again, which keeps its port
	// and so its floating IP.
	before := vm.Status.ID
	pid := killQEMU(t, before)
	start = time.Now()
	var seen ssh.PublicKey
	if out, err = pollSSH(ctx, addr, signer, nil, &seen, "hostname", 8*time.Minute); err != nil || out != hostname {
		var got kupenstackv1.VirtualMachine
		_ = cl.Get(ctx, client.ObjectKeyFromObject(vm), &got)
		t.Fatalf("SSH to %s after QEMU (pid %d) was killed: %q %v; VM %+v %s", addr, pid, out, err, got.Status.Resource, conditionsOf(&got))
	}
	t.Logf("tenant: QEMU killed to SSH answering again at %s: %s", addr, time.Since(start).Round(time.Second))
	if out, err := guestSSH(ctx, addr, signer, []ssh.PublicKey{seen}, nil, "dd if=/dev/vdb bs=512 count=1 2>/dev/null | head -n 1"); err != nil || out != volumeMarker {
		t.Errorf("the volume after the restart: %q %v, want the marker %q written before", out, err, volumeMarker)
	}
	var healed kupenstackv1.VirtualMachine
	if err := cl.Get(ctx, client.ObjectKeyFromObject(vm), &healed); err != nil {
		t.Fatal(err)
	}
	if healed.Status.RestartCount < 1 {
		t.Errorf("VM answered again but its restartCount is %d; last failure %q", healed.Status.RestartCount, healed.Status.LastFailureReason)
	}
	// The host key offered after the restart is the one the new boot printed.
	if !slices.ContainsFunc(hostKeysOf(guestConsole(ctx, t, c, healed.Status.ID)), func(k ssh.PublicKey) bool {
		return bytes.Equal(k.Marshal(), seen.Marshal())
	}) {
		t.Errorf("after the restart the guest offered host key %s, which its console did not print", ssh.FingerprintSHA256(seen))
	}
	return addr
}

// ruleDriftRepaired adds a port-22 rule to the security group behind the operator's back, as an
// admin with the openstack CLI would; the operator's drift check (the group's own resyncPeriod)
// removes it, with an Updated event, and SSH to addr is dropped again. Whether SSH answered while
// the rule lived is logged: the window is the drift check's period, too short to assert on.
func ruleDriftRepaired(ctx context.Context, t *testing.T, c *cluster, cl client.Client, sg *kupenstackv1.SecurityGroup, addr string) {
	t.Helper()
	start := time.Now()
	opened := make(chan bool, 1)
	probeCtx, stop := context.WithCancel(ctx)
	go func() {
		for probeCtx.Err() == nil {
			conn, err := externalDialer(2*time.Second).DialContext(probeCtx, "tcp", net.JoinHostPort(addr, "22"))
			if err == nil {
				conn.Close()
				opened <- true
				return
			}
			time.Sleep(time.Second)
		}
		opened <- false
	}()
	out, err := openstackShell(ctx, t, c, "sg-drift", `
id=$(openstack security group rule create --ingress --ethertype IPv4 --protocol tcp --dst-port 22 -f value -c id `+sg.Status.ID+`)
start=$(date +%s)
while openstack security group rule show "$id" >/dev/null 2>&1; do
  if [ $(( $(date +%s) - start )) -ge 90 ]; then
    echo "rule $id still there after 90s"
    openstack security group rule show "$id" -f value -c project_id -c security_group_id
    openstack security group show `+sg.Status.ID+` -f value -c project_id
    exit 1
  fi
  sleep 2
done
echo "rule $id removed after $(( $(date +%s) - start ))s"`)
	stop()
	if err != nil {
		var now kupenstackv1.SecurityGroup
		_ = cl.Get(ctx, client.ObjectKeyFromObject(sg), &now)
		var evs eventsv1.EventList
		_ = cl.List(ctx, &evs, client.InNamespace(sg.Namespace))
		var mine []string
		for _, e := range evs.Items {
			if e.Regarding.Name == sg.Name {
				mine = append(mine, e.Reason+": "+e.Note)
			}
		}
		t.Errorf("security group %s: a port-22 rule added out of band was not removed: %q %v\nstatus rules: %+v\nlast sync %v, conditions %s\nevents: %q",
			sg.Name, out, err, now.Status.Resource, now.Status.LastSyncTime, conditionsOf(&now), mine)
		return
	}
	t.Logf("tenant: %s", out)
	var events eventsv1.EventList
	if err := cl.List(ctx, &events, client.InNamespace(sg.Namespace)); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool {
		return e.Regarding.Kind == "SecurityGroup" && e.Regarding.Name == sg.Name && e.Reason == "DriftRepaired" &&
			(!e.EventTime.Time.Before(start) || e.Series != nil && !e.Series.LastObservedTime.Time.Before(start))
	}) {
		t.Errorf("security group %s: the out-of-band rule went, but no DriftRepaired event says the operator removed it", sg.Name)
	}
	if err := sshBlocked(ctx, addr); err != nil {
		t.Errorf("SSH to %s after the out-of-band rule was removed: %v", addr, err)
	}
	t.Logf("tenant: a port-22 rule added out of band removed by the drift check: %s (SSH answered meanwhile: %v); SSH dropped again",
		time.Since(start).Round(time.Second), <-opened)
}
