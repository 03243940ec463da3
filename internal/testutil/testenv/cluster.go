package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Node is a simulated node of WithCluster: kwok plays its kubelet.
type Node struct {
	Name   string
	Labels map[string]string
}

// Loopback only, so nothing the API server or a test might dial (a Service's ClusterIP, a
// node's kubelet, a pod) can leave the machine. EndpointSlices refuse loopback addresses, so
// Services that select simulated pods get no endpoints (the endpoint controllers are not run).
const (
	clusterServiceCIDR = "127.0.96.0/20"
	clusterNodeIP      = "127.0.0.1"
	clusterPodCIDR     = "127.1.0.1/16"
)

// gcControllers make namespace deletion and owner-reference garbage collection work.
var gcControllers = []string{"namespace-controller", "garbage-collector-controller"}

// clusterControllers are what the workloads an OpenStack-Helm chart installs need to roll out
// (Deployments, StatefulSets, DaemonSets, Jobs incl. Helm hooks, CronJobs, PDBs, aggregated
// ClusterRoles), plus the pod garbage collector, which removes the pods of a deleted node. Not
// run: controllers that need a cloud, a volume provisioner, a signing key or non-loopback IPs.
var clusterControllers = append([]string{
	"serviceaccount-controller", "deployment-controller", "replicaset-controller",
	"statefulset-controller", "daemonset-controller", "job-controller", "cronjob-controller",
	"ttl-after-finished-controller", "pod-garbage-collector-controller", "disruption-controller",
	"clusterrole-aggregation-controller",
	// Takes the not-ready taint, which the API server puts on every new node, off once kwok says Ready.
	"node-lifecycle-controller",
}, gcControllers...)

// WithCluster turns the API server into a small cluster whose workloads roll out: it also runs
// kube-controller-manager's workload controllers, kube-scheduler, and kwok, which simulates
// the given nodes and the pods bound to them (pods become Running and Ready, pods of Jobs
// then Succeeded). It implies WithNamespaceDeletion. Pods need their ServiceAccount, as in a
// real cluster (envtest normally disables that admission plugin). The binaries come from
// KUBEBUILDER_ASSETS ('hack/install-test-tools.sh cluster' links them there).
func (e *Env) WithCluster(nodes ...Node) *Env {
	e.cluster, e.nodes, e.withGC = true, nodes, true
	return e
}

var nodeCapacity = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("32"),
	corev1.ResourceMemory: resource.MustParse("256Gi"),
	corev1.ResourcePods:   resource.MustParse("110"),
}

// AddNode creates a simulated node with the given labels (on top of kubernetes.io/hostname,
// os and arch) and waits until kwok has made it Ready and it takes pods.
func (e *Env) AddNode(ctx context.Context, name string, labels map[string]string) error {
	if !e.cluster {
		return fmt.Errorf("AddNode needs WithCluster")
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			// ttl 0: clients need not cache anything about the node (a kubelet's hint).
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake"},
			Labels: map[string]string{
				corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
				"type": "kwok",
			},
		},
		// Room for a whole OpenStack control plane's requests on each node; kwok keeps it.
		Status: corev1.NodeStatus{Capacity: nodeCapacity, Allocatable: nodeCapacity},
	}
	for k, v := range labels {
		node.Labels[k] = v
	}
	if err := e.Client.Create(ctx, node); err != nil {
		return fmt.Errorf("creating node %s: %w", name, err)
	}
	return e.waitNodeReady(ctx, name)
}

func (e *Env) waitNodeReady(ctx context.Context, name string) error {
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var node corev1.Node
		if err := e.Client.Get(ctx, client.ObjectKey{Name: name}, &node); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, taint := range node.Spec.Taints {
			if taint.Key == corev1.TaintNodeNotReady {
				return false, nil // nothing would be scheduled there yet
			}
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("node %s not Ready (is kwok running? logs in %s): %w", name, e.procs.dir, err)
	}
	return nil
}

// LabelNode sets the given labels on a node and removes the labels named in remove.
func (e *Env) LabelNode(ctx context.Context, name string, set map[string]string, remove ...string) error {
	labels := map[string]any{}
	for k, v := range set {
		labels[k] = v
	}
	for _, k := range remove {
		labels[k] = nil // a merge patch deletes a key set to null
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		return err
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return e.Client.Patch(ctx, node, client.RawPatch(types.MergePatchType, patch))
}

// DeleteNode deletes a simulated node. Its pods go as in a real cluster: the pod garbage
// collector deletes the pods of a node that no longer exists once the node has been gone
// for 40 s (the controller's fixed quarantine), checking every 20 s.
func (e *Env) DeleteNode(ctx context.Context, name string) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return client.IgnoreNotFound(e.Client.Delete(ctx, node))
}

// ProcessLogDir is the directory with the logs of the processes the Env runs besides
// kube-apiserver and etcd (kept when a test failed).
func (e *Env) ProcessLogDir() string { return e.procs.dir }

// startCluster starts kube-scheduler and kwok (kube-controller-manager runs already) and
// creates the initial nodes.
func (e *Env) startCluster(ctx context.Context, assets, kubeconfig string) error {
	stages := filepath.Join(assets, "kwok-stages.yaml")
	if _, err := os.Stat(stages); err != nil {
		return fmt.Errorf("%s missing: run 'hack/install-test-tools.sh cluster'", stages)
	}
	if err := e.procs.start(filepath.Join(assets, "kube-scheduler"), "--kubeconfig="+kubeconfig,
		"--leader-elect=false", "--secure-port=0"); err != nil {
		return err
	}
	if err := e.procs.start(filepath.Join(assets, "kwok"), "--kubeconfig="+kubeconfig, "--config="+stages,
		"--manage-all-nodes", "--node-ip="+clusterNodeIP, "--cidr="+clusterPodCIDR,
		"--node-lease-duration-seconds=40"); err != nil {
		return err
	}
	for _, n := range e.nodes {
		if err := e.AddNode(ctx, n.Name, n.Labels); err != nil {
			return err
		}
	}
	// The ServiceAccount admission plugin refuses pods until their namespace's default
	// account exists: proof that the controller manager works, before any test runs.
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := e.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, client.IgnoreNotFound(err)
	})
}

// adminKubeConfig writes a kubeconfig of a cluster admin into the process directory, for the
// control-plane processes the Env runs.
func (e *Env) adminKubeConfig(te *envtest.Environment) (string, error) {
	user, err := te.AddUser(envtest.User{Name: "testenv-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(e.procs.dir, "kubeconfig")
	return path, os.WriteFile(path, kubeconfig, 0o600)
}

// processes are the control-plane binaries an Env runs next to envtest's kube-apiserver and
// etcd, each logging to dir/<name>.log.
type processes struct {
	dir  string
	list []*process
}

type process struct {
	name   string
	cmd    *exec.Cmd
	log    *os.File
	exited chan struct{} // closed when the process has exited, for whatever reason
	err    error
}

func (p *processes) start(bin string, args ...string) error {
	name := filepath.Base(bin)
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s missing: rebuild the test binaries with hack/install-test-tools.sh", bin)
	}
	logFile, err := os.Create(filepath.Join(p.dir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Killed with the test binary too, e.g. when go test's -timeout panics: no orphans.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	proc := &process{name: name, cmd: cmd, log: logFile, exited: make(chan struct{})}
	go func() { proc.err = cmd.Wait(); close(proc.exited) }()
	p.list = append(p.list, proc)
	return nil
}

// stop kills the processes, last started first. The logs are kept, and their ends printed,
// when the tests failed or a process had exited before it was stopped.
func (p *processes) stop(testsFailed bool) {
	if p.dir == "" {
		return // nothing was started
	}
	keep := testsFailed
	for i := len(p.list) - 1; i >= 0; i-- {
		proc := p.list[i]
		select {
		case <-proc.exited:
			keep = true
			fmt.Fprintf(os.Stderr, "testenv: %s had exited during the tests: %v\n", proc.name, proc.err)
		default:
			_ = proc.cmd.Process.Kill()
			<-proc.exited
		}
		_ = proc.log.Close()
	}
	if !keep {
		_ = os.RemoveAll(p.dir)
		return
	}
	fmt.Fprintf(os.Stderr, "testenv: logs of the control-plane processes kept in %s\n", p.dir)
	for _, proc := range p.list {
		fmt.Fprintf(os.Stderr, "--- last lines of %s.log:\n%s", proc.name, tail(filepath.Join(p.dir, proc.name+".log"), 20))
	}
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error() + "\n"
	}
	lines := strings.SplitAfter(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "") + "\n"
}
