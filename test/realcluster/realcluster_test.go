package realcluster

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	agentImage = "localhost/kupenstack/realcluster-agent:test"
	nodeIP     = "198.18.0.1" // hack/real-cluster.sh: the bridge's address
	dnsIP      = "198.19.0.10"
)

// env is how the test calls hack/real-cluster.sh: its own state directory and port base unless
// the caller sets them.
type env struct {
	root, script, state string
	portBase            int
}

func newEnv(t *testing.T) env {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	e := env{root: root, script: filepath.Join(root, "hack", "real-cluster.sh"),
		state: os.Getenv("REAL_CLUSTER_STATE_DIR"), portBase: 20000}
	if e.state == "" {
		e.state = "/var/lib/kupenstack/real-cluster-test"
	}
	if v := os.Getenv("REAL_CLUSTER_PORT_BASE"); v != "" {
		if e.portBase, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// run runs hack/real-cluster.sh ARGS and returns its output; the test fails when it fails.
// importAgent builds the test's agent image (static, in an OCI archive) and imports it into the
// cluster's containerd.
func (e env) importAgent(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "agent"), "./testdata/agent")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build agent: %v\n%s", err, out)
	}
	archive := filepath.Join(dir, "agent.tar")
	if err := writeOCIArchive(archive, agentImage, "agent", filepath.Join(dir, "agent")); err != nil {
		t.Fatal(err)
	}
	e.run(t, "ctr", "images", "import", archive)
}

func (e env) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(e.script, args...)
	cmd.Env = append(os.Environ(), "REAL_CLUSTER_STATE_DIR="+e.state, "REAL_CLUSTER_PORT_BASE="+strconv.Itoa(e.portBase))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("hack/real-cluster.sh %s: %s\n%s", strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond), out.String())
	if err != nil {
		t.Fatalf("hack/real-cluster.sh %s: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

func TestRealCluster(t *testing.T) {
	if os.Getenv("KUPENSTACK_REAL_CLUSTER") != "1" {
		t.Skip("changes the host while it runs: set KUPENSTACK_REAL_CLUSTER=1 (as root; make test-real-cluster)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("KUPENSTACK_REAL_CLUSTER=1 needs root")
	}
	skipUnlessWithinBudget(t, realClusterNeeds)
	e := newEnv(t)
	e.run(t, "deps") // installed packages are meant to stay: not part of the comparison
	if strings.Contains(e.run(t, "status"), ": running") {
		t.Fatalf("a cluster of %s is running: stop it first (%s down)", e.state, e.script)
	}
	before := snapshotHost(t)

	stopped := false
	t.Cleanup(func() {
		if !stopped {
			e.run(t, "down")
		}
	})
	e.run(t, "up")
	t.Logf("cluster processes: %s", clusterMemory(t, e))
	strictPKI(t, filepath.Join(e.state, "pki"))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(e.state, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)

	// The image: the agent, built static, in an OCI archive imported into the cluster's containerd.
	e.importAgent(t)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "realcluster-"}}
	if ns, err = cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The default ServiceAccount appears shortly after the namespace; pods need it.
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatal("no default ServiceAccount:", err)
	}

	web := agentPod("web", corev1.RestartPolicyAlways, "serve", ":8080")
	web.Labels = map[string]string{"app": "web"}
	web.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 1,
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}}}
	if _, err := cs.CoreV1().Pods(ns.Name).Create(ctx, web, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services(ns.Name).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waitPod(ctx, t, cs, ns.Name, "web", podReady)
	t.Logf("pod web Ready in %s", time.Since(start).Round(100*time.Millisecond))

	// A listener on every host address: pods must not reach it, through the bridge's address or
	// the host's others.
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var reached atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			c.Close()
		}
	}()
	hostPort := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	checks := []string{
		"get=http://web/",                        // the Service by its short name (CoreDNS search path)
		"get=http://" + svc.Spec.ClusterIP + "/", // the ClusterIP (kube-proxy)
		"resolve=web." + ns.Name + ".svc.cluster.local=" + svc.Spec.ClusterIP,
		"resolve=kube-dns.kube-system.svc.cluster.local=" + dnsIP,
		"tcp=kubernetes.default.svc:443",                                  // the API server: the one host service pods reach
		"notcp=" + net.JoinHostPort(nodeIP, hostPort),                     // any other host service, on the bridge address
		"notcp=" + net.JoinHostPort(nodeIP, strconv.Itoa(e.portBase+250)), // the kubelet
		"notcp=192.0.2.1:80",    // outside (TEST-NET-1)
		"noresolve=example.com", // no upstream DNS
	}
	for _, a := range hostAddrs(t) {
		checks = append(checks, "notcp="+net.JoinHostPort(a, hostPort)) // the host's other addresses
	}
	runChecks(ctx, t, cs, ns.Name, "client", false, checks...)
	// A pod that adds itself a default route through the host (NET_ADMIN) still gets nowhere: the
	// host forwards nothing off the bridge and answers nothing but the API server.
	escape := []string{"defaultroute=" + nodeIP, "notcp=192.0.2.1:80", "tcp=kubernetes.default.svc:443"}
	for _, a := range hostAddrs(t) {
		escape = append(escape, "notcp="+net.JoinHostPort(a, hostPort))
	}
	runChecks(ctx, t, cs, ns.Name, "escape", true, escape...)
	// 192.0.2.1 might just not answer: the forward chain's DROP must have counted the attempt.
	if n := droppedPackets(t, "KUPENSTACK-RC-FWD"); n == 0 {
		t.Errorf("the packets to 192.0.2.1 were not dropped by KUPENSTACK-RC-FWD")
	} else {
		t.Logf("KUPENSTACK-RC-FWD dropped %d packets", n)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("pods reached a host listener %d times", n)
	}

	// A missing image is an error at once, never a registry lookup.
	for _, c := range []struct {
		policy corev1.PullPolicy
		reason string
	}{{corev1.PullNever, "ErrImageNeverPull"}, {corev1.PullIfNotPresent, "ErrImagePull"}} {
		name := "missing-" + strings.ToLower(string(c.policy))
		pod := agentPod(name, corev1.RestartPolicyNever, "serve", ":8080")
		pod.Spec.Containers[0].Image = "registry.example/kupenstack/missing:1"
		pod.Spec.Containers[0].ImagePullPolicy = c.policy
		if _, err := cs.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var msg string
		waitPod(ctx, t, cs, ns.Name, name, func(p *corev1.Pod) bool {
			for _, s := range p.Status.ContainerStatuses {
				if w := s.State.Waiting; w != nil && (w.Reason == c.reason || w.Reason == "ImagePullBackOff") {
					msg = w.Reason + ": " + w.Message
					return true
				}
			}
			return false
		})
		t.Logf("pull policy %s: %s", c.policy, msg)
		if c.policy == corev1.PullIfNotPresent && !strings.Contains(msg, "127.0.0.1:9") {
			t.Errorf("the pull did not stop at the proxy 127.0.0.1:9: %s", msg)
		}
	}

	stopped = true
	e.run(t, "down")
	if left := clusterProcesses(t, e); len(left) > 0 {
		t.Errorf("processes left after down: %v", left)
	}
	if d := before.diff(snapshotHost(t)); d != "" {
		t.Errorf("the host differs after down from before up:\n%s", d)
	}
}

// runChecks runs `agent check CHECKS...` in a pod and fails the test when a check fails.
func runChecks(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, netAdmin bool, checks ...string) {
	t.Helper()
	pod := agentPod(name, corev1.RestartPolicyNever, append([]string{"check"}, checks...)...)
	if netAdmin {
		pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(ctx, t, cs, ns, name, func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	})
	logs, err := cs.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal("logs through the kubelet:", err)
	}
	t.Logf("checks from pod %s:\n%s", name, logs)
	if p.Status.Phase != corev1.PodSucceeded {
		t.Errorf("a check from pod %s failed (phase %s)", name, p.Status.Phase)
	}
}

func agentPod(name string, restart corev1.RestartPolicy, args ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			RestartPolicy:                 restart,
			TerminationGracePeriodSeconds: new(int64),
			Containers: []corev1.Container{{
				Name: "agent", Image: agentImage, ImagePullPolicy: corev1.PullNever, Args: args,
			}},
		},
	}
}

// containerReady: a container of the pod is Ready (for waitPod).
func containerReady(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Ready {
			return true
		}
	}
	return false
}

func waitPod(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		return done(p), nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s: %v; last status: %+v", ns, name, err, last.Status)
	}
	return last
}

// hostAddrs: the host's IPv4 addresses outside loopback and the cluster's bridge.
func hostAddrs(t *testing.T) []string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range addrs {
		ip, _, _ := net.ParseCIDR(a.String())
		if ip.To4() != nil && !ip.IsLoopback() && !strings.HasPrefix(ip.String(), "198.18.") {
			out = append(out, ip.String())
		}
	}
	return out
}

// clusterProcesses: pid -> executable of every process of the cluster: those whose executable is
// one of its binaries, containerd's shims for its socket, and their descendants (the pods).
func clusterProcesses(t *testing.T, e env) map[int]string {
	t.Helper()
	version := os.Getenv("K8S_VERSION")
	if version == "" {
		version = "v1.37.2" // as in the Makefile and hack/install-test-tools.sh
	}
	tools := filepath.Join(e.root, "bin", "envtest-"+version)
	ours := map[string]bool{}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy"} {
		if p, err := filepath.EvalSymlinks(filepath.Join(tools, b)); err == nil {
			ours[p] = true
		}
	}
	sock := filepath.Join(e.state, "containerd", "containerd.sock")
	conf := filepath.Join(e.state, "conf", "containerd.toml")
	procs := map[int]string{}
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		args := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
				f := strings.Fields(string(stat)[i+1:])
				parent[pid], _ = strconv.Atoi(f[1])
			}
		}
		if clusterProcess(exe, args, ours, e.state, sock, conf) {
			procs[pid] = exe
		}
	}
	for pid := range parent { // descendants of the shims: the pods' processes
		for p := parent[pid]; p > 1; p = parent[p] {
			if _, ok := procs[p]; ok && strings.Contains(procs[p], "shim") {
				exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
				procs[pid] = exe
				break
			}
		}
	}
	return procs
}

// clusterProcess says whether the process of that executable and command line is the real
// cluster's: one of its Kubernetes binaries started on its state directory, or anything naming
// its containerd (the shims). The binary alone does not say it: make test runs envtest suites
// beside this one, whose etcd and kube-apiserver are the same files (TestRealCluster counted an
// envtest's as left behind by down, 2026-11-30).
func clusterProcess(exe, args string, ours map[string]bool, state, sock, conf string) bool {
	return (ours[exe] && strings.Contains(args, strings.TrimSuffix(state, "/")+"/")) ||
		strings.Contains(args, sock) || strings.Contains(args, conf)
}

// clusterMemory sums the resident memory of the cluster's processes.
func clusterMemory(t *testing.T, e env) string {
	var total int64
	procs := clusterProcesses(t, e)
	for pid := range procs {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(status), "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				total += kb
			}
		}
	}
	return fmt.Sprintf("%d processes, %d MiB resident", len(procs), total/1024)
}

// droppedPackets: the packet count of the DROP rules of an iptables mangle chain.
func droppedPackets(t *testing.T, chain string) int {
	t.Helper()
	n := 0
	for _, l := range lines(t, "iptables", "-w", "5", "-t", "mangle", "-L", chain, "-v", "-x", "-n") {
		if f := strings.Fields(l); len(f) > 2 && f[2] == "DROP" {
			p, _ := strconv.Atoi(f[0])
			n += p
		}
	}
	return n
}

// strictPKI: the cluster's certificates pass a strict X.509 verification, as Python 3.13+'s
// default TLS context does it in the pods' clients (the 2026.1 images' MariaDB start script
// talks to the API server that way). Before the CA had keyUsage, every one failed: "CA cert
// does not include key usage extension".
func strictPKI(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"apiserver", "kubelet", "admin"} {
		out, err := exec.Command("openssl", "verify", "-x509_strict", "-CAfile", filepath.Join(dir, "ca.crt"),
			filepath.Join(dir, name+".crt")).CombinedOutput()
		if err != nil {
			t.Errorf("strict verification of %s.crt: %v\n%s", name, err, out)
		}
	}
}
