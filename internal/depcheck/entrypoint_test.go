package depcheck

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// asProgram makes the test binary run Main instead of the tests: the envtest tests start it as
// a child process, the way the init container runs, so that COMMAND really replaces it.
const asProgram = "KUPENSTACK_TEST_AS_KUBERNETES_ENTRYPOINT"

var env *testenv.Env

func TestMain(m *testing.M) {
	if os.Getenv(asProgram) == "1" {
		os.Exit(Main(os.Args[:1], os.Getenv, os.Stderr))
	}
	// Fuzzing (make fuzz) needs no API server, and each fuzz worker runs TestMain again.
	flag.Parse()
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run())
	}
	env = testenv.New(nil)
	os.Exit(env.Run(m))
}

const poll = 100 * time.Millisecond

// program is one run of kubernetes-entrypoint whose COMMAND touches marker.
type program struct {
	cmd    *exec.Cmd
	out    syncBuffer
	done   chan struct{}
	err    error
	marker string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs the program with these variables (and KUBECONFIG, when a server runs), polling every
// 100ms, COMMAND "touch <marker>" unless vars set COMMAND.
func start(t *testing.T, vars map[string]string) *program {
	t.Helper()
	return startAs(t, "kubernetes-entrypoint", []string{"system:masters"}, vars)
}

// startAs is start as an API user with these groups (none: only what RBAC grants the user).
func startAs(t *testing.T, user string, groups []string, vars map[string]string) *program {
	t.Helper()
	dir := t.TempDir()
	p := &program{marker: filepath.Join(dir, "command-ran"), done: make(chan struct{})}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DEPENDENCY_") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			environ = append(environ, kv)
		}
	}
	environ = append(environ, asProgram+"=1", EnvPollInterval+"="+poll.String(), EnvCommand+"=touch "+p.marker)
	if env.Config != nil {
		kc, err := env.KubeConfig(user, groups...)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "kubeconfig")
		if err := os.WriteFile(path, kc, 0o600); err != nil {
			t.Fatal(err)
		}
		environ = append(environ, "KUBECONFIG="+path)
	}
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	p.cmd = exec.Command(self)
	p.cmd.Env, p.cmd.Stdout, p.cmd.Stderr = environ, &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("kubernetes-entrypoint output:\n%s", p.out.String())
		}
	})
	return p
}

// waiting checks the program is still waiting (not exited, COMMAND not run) after several polls,
// and, when logged is given, that it said so.
func (p *program) waiting(t *testing.T, step string, logged ...string) {
	t.Helper()
	select {
	case <-p.done:
		t.Fatalf("%s: exited (%v) while a dependency was not satisfied", step, p.err)
	case <-time.After(8 * poll):
	}
	if _, err := os.Stat(p.marker); err == nil {
		t.Fatalf("%s: COMMAND ran while a dependency was not satisfied", step)
	}
	for _, want := range logged {
		testenv.Eventually(t, 10*time.Second, poll, step+": log line "+want, func() error {
			if !strings.Contains(p.out.String(), want) {
				return fmt.Errorf("not in the output")
			}
			return nil
		})
	}
}

// notResolved checks that none of deps was logged as resolved (so far).
func (p *program) notResolved(t *testing.T, step string, deps ...string) {
	t.Helper()
	for _, d := range deps {
		if strings.Contains(p.out.String(), "resolved: "+d) {
			t.Errorf("%s: %s was resolved too early", step, d)
		}
	}
}

// ran checks the program exits 0 and COMMAND ran.
func (p *program) ran(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("still waiting 30s after every dependency was satisfied")
	}
	if p.err != nil {
		t.Fatalf("exited with %v", p.err)
	}
	if _, err := os.Stat(p.marker); err != nil {
		t.Fatalf("COMMAND did not run: %v", err)
	}
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "depcheck-"}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// setStatus writes obj's status after mutate (the status subresource; no controller runs here).
func setStatus[T client.Object](t *testing.T, obj T, mutate func(T)) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	mutate(obj)
	if err := env.Client.Status().Update(ctx, obj); err != nil {
		t.Fatalf("status of %s: %v", obj.GetName(), err)
	}
}

func update[T client.Object](t *testing.T, obj T, mutate func(T)) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	mutate(obj)
	if err := env.Client.Update(ctx, obj); err != nil {
		t.Fatalf("updating %s: %v", obj.GetName(), err)
	}
}

func TestNoDependenciesRunsCommand(t *testing.T) {
	// As helm-toolkit renders a component without dependencies; no API server is needed.
	p := start(t, map[string]string{EnvService: "", EnvDaemonSet: "", EnvContainer: "", EnvPodJSON: "", EnvCustomResource: "", "KUBECONFIG": ""})
	p.ran(t)
}

func TestEmptyCommandExitsZero(t *testing.T) {
	p := start(t, map[string]string{EnvCommand: ""})
	p.exitedZero(t)
}

// exitedZero checks the program exits 0 without COMMAND, saying so.
func (p *program) exitedZero(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("did not exit")
	}
	if p.err != nil {
		t.Fatalf("exited with %v", p.err)
	}
	if !strings.Contains(p.out.String(), "COMMAND is empty") {
		t.Fatalf("no log line about the empty COMMAND")
	}
}

func TestInvalidDependencyFailsAtOnce(t *testing.T) {
	p := start(t, map[string]string{EnvPodJSON: `[{"labels":`, EnvService: "a:b:c"})
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("still running with invalid dependencies")
	}
	if p.err == nil {
		t.Fatal("exited 0 with invalid dependencies")
	}
	if _, err := os.Stat(p.marker); err == nil {
		t.Fatal("COMMAND ran with invalid dependencies")
	}
	for _, want := range []string{EnvPodJSON, `DEPENDENCY_SERVICE: "a:b:c"`} {
		if !strings.Contains(p.out.String(), want) {
			t.Errorf("output does not mention %s", want)
		}
	}
}

func TestService(t *testing.T) {
	env.Require(t)
	ns, other := newNamespace(t), newNamespace(t)
	p := start(t, map[string]string{EnvNamespace: ns, EnvService: "db," + other + ":cache"})
	p.waiting(t, "nothing exists", "waiting for Service "+ns+"/db: no ready endpoint address",
		"waiting for Service "+other+"/cache: no ready endpoint address")

	port := []corev1.ServicePort{{Port: 3306}}
	create(t, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, Spec: corev1.ServiceSpec{Ports: port}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "cache"}, Spec: corev1.ServiceSpec{Ports: port}})
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: "db-abc", Labels: map[string]string{discoveryv1.LabelServiceName: "db"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.5"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}}},
	}
	// A slice of another Service, ready, must not count.
	decoy := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: "dbx-abc", Labels: map[string]string{discoveryv1.LabelServiceName: "dbx"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.0.6"}}},
	}
	//nolint:staticcheck // the legacy Endpoints fallback is what is tested
	eps := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "cache"},
		Subsets: []corev1.EndpointSubset{{NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.1.0.7"}}, Ports: []corev1.EndpointPort{{Port: 11211}}}}}
	create(t, slice, decoy, eps)
	p.waiting(t, "endpoints not ready")
	p.notResolved(t, "endpoints not ready", "Service "+ns+"/db", "Service "+other+"/cache")

	update(t, slice, func(s *discoveryv1.EndpointSlice) { s.Endpoints[0].Conditions.Ready = ptr.To(true) })
	p.waiting(t, "db ready, cache not", "resolved: Service "+ns+"/db")
	p.notResolved(t, "db ready, cache not", "Service "+other+"/cache")

	update(t, eps, func(e *corev1.Endpoints) { //nolint:staticcheck
		e.Subsets[0].Addresses, e.Subsets[0].NotReadyAddresses = e.Subsets[0].NotReadyAddresses, nil
	})
	p.ran(t)
}

// The 2025.1 charts' kubernetes_pod_rbac_roles grant get/list on services and endpoints only, in
// the pod's namespace: the EndpointSlice list is forbidden and Endpoints must carry it.
func TestServiceWithChartRBAC(t *testing.T) {
	env.Require(t)
	ns := newNamespace(t)
	user := "system:serviceaccount:" + ns + ":nova-api"
	create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nova-api"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"", "extensions", "batch", "apps"}, Verbs: []string{"get", "list"},
			Resources: []string{"services", "endpoints"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nova-api"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "nova-api"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}})
	p := startAs(t, user, nil, map[string]string{EnvNamespace: ns, EnvService: "keystone-api"})
	p.waiting(t, "no endpoints", "waiting for Service "+ns+"/keystone-api: no ready endpoint address")
	//nolint:staticcheck // the legacy Endpoints object is what these charts can read
	create(t, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone-api"},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.1.0.9"}}, Ports: []corev1.EndpointPort{{Port: 5000}}}}})
	p.ran(t)
}

func TestJobs(t *testing.T) {
	env.Require(t)
	ns := newNamespace(t)
	job := func(name string, labels map[string]string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "x"}}}}}}
	}
	succeed := func(j *batchv1.Job) {
		setStatus(t, j, func(j *batchv1.Job) {
			now := metav1.Now()
			j.Status.StartTime, j.Status.CompletionTime, j.Status.Succeeded = &now, &now, 1
			j.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}
		})
	}

	t.Run("names", func(t *testing.T) {
		p := start(t, map[string]string{EnvNamespace: ns, EnvJobs: "db-sync,ks-user"})
		p.waiting(t, "no jobs", "waiting for Job "+ns+"/db-sync: not found")
		dbSync, ksUser := job("db-sync", nil), job("ks-user", nil)
		create(t, dbSync, ksUser)
		p.waiting(t, "jobs running", "waiting for Job "+ns+"/db-sync: db-sync not completed")
		p.notResolved(t, "jobs running", "Job "+ns+"/db-sync")
		succeed(dbSync)
		p.waiting(t, "one job done", "resolved: Job "+ns+"/db-sync")
		p.notResolved(t, "one job done", "Job "+ns+"/ks-user")
		succeed(ksUser)
		p.ran(t)
	})

	t.Run("json with labels", func(t *testing.T) {
		// JSON wins over the plain list, which names a job that never exists.
		p := start(t, map[string]string{EnvNamespace: ns, EnvJobs: "never",
			EnvJobsJSON: `[{"labels":{"initializes":"neutron"}},{"namespace":"` + ns + `","name":"db-sync"}]`})
		p.waiting(t, "no labelled job", "waiting for Jobs in "+ns+" with labels initializes=neutron: no Job with these labels")
		a, b := job("init-a", map[string]string{"initializes": "neutron"}), job("init-b", map[string]string{"initializes": "neutron"})
		create(t, a, b)
		succeed(a)
		p.waiting(t, "one of two labelled jobs done", "initializes=neutron: init-b not completed")
		p.notResolved(t, "one of two labelled jobs done", "Jobs in "+ns+" with labels initializes=neutron")
		succeed(b)
		p.ran(t)
	})
}

func TestDaemonSetPodsContainers(t *testing.T) {
	env.Require(t)
	ns, agents := newNamespace(t), newNamespace(t)
	containers := []corev1.Container{{Name: "main", Image: "x"}, {Name: "sidecar", Image: "x"}}
	pod := func(ns, name, node string, labels map[string]string, owner *appsv1.DaemonSet) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: corev1.PodSpec{NodeName: node, Containers: containers}}
		if owner != nil {
			p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))}
		}
		return p
	}
	ready := func(p *corev1.Pod, isReady bool) {
		setStatus(t, p, func(p *corev1.Pod) {
			s := corev1.ConditionFalse
			if isReady {
				s = corev1.ConditionTrue
			}
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: s}}
		})
	}
	daemonSet := func(name string) *appsv1.DaemonSet {
		l := map[string]string{"app": name}
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: l},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: corev1.PodSpec{Containers: containers}}}}
	}

	me := pod(ns, "nova-compute-x", "node-a", nil, nil)
	create(t, me)
	ovs, other := daemonSet("ovs"), daemonSet("other")
	create(t, ovs, other)
	// other runs only on node-b, so it does not hold this pod up (upstream's rule).
	otherB := pod(ns, "other-b", "node-b", map[string]string{"app": "other"}, other)
	// ovs: ready on the wrong node, a ready pod on this node that the DaemonSet does not own, and
	// its own pod on this node, not ready.
	ovsB, stray, ovsA := pod(ns, "ovs-b", "node-b", ovs.Spec.Template.Labels, ovs),
		pod(ns, "ovs-stray", "node-a", ovs.Spec.Template.Labels, nil), pod(ns, "ovs-a", "node-a", ovs.Spec.Template.Labels, ovs)
	create(t, otherB, ovsB, stray, ovsA)
	ready(ovsB, true)
	ready(stray, true)
	ready(ovsA, false)

	p := start(t, map[string]string{EnvNamespace: ns, EnvPodName: me.Name,
		EnvDaemonSet:     "ovs,other",
		EnvContainer:     "sidecar",
		EnvPodJSON:       `[{"labels":{"app":"agent"},"requireSameNode":true},{"namespace":"` + agents + `","labels":{"app":"api","tier":"x"}}]`,
		EnvConfig:        "",
		EnvSocket:        "",
		EnvInterfaceName: "eth0"})
	p.waiting(t, "nothing ready", "resolved: DaemonSet "+ns+"/other",
		"waiting for DaemonSet "+ns+"/ovs: its pod on node node-a is not ready",
		"waiting for Container sidecar: no status for it in pod nova-compute-x yet",
		"waiting for Pod in "+ns+" with labels app=agent on this node: no such pod on node node-a",
		"waiting for Pod in "+agents+" with labels app=api,tier=x: no such pod")

	// agent: ready on the wrong node only; api: present, not ready.
	agentB, api := pod(ns, "agent-b", "node-b", map[string]string{"app": "agent"}, nil),
		pod(agents, "api-1", "node-c", map[string]string{"app": "api", "tier": "x"}, nil)
	create(t, agentB, api)
	ready(agentB, true)
	ready(api, false)
	setStatus(t, me, func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{
			{Name: "main", Image: "x", ImageID: "x", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}},
			{Name: "sidecar", Image: "x", ImageID: "x", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	})
	p.waiting(t, "nothing ready where it counts", "waiting for Container sidecar: running, not ready",
		"with labels app=agent on this node: no such pod on node node-a",
		"with labels app=api,tier=x: 1 such pods, none ready")

	p.notResolved(t, "nothing ready where it counts", "DaemonSet "+ns+"/ovs", "Container sidecar", "Pod in "+ns, "Pod in "+agents)
	ready(ovsA, true)
	setStatus(t, me, func(p *corev1.Pod) { p.Status.ContainerStatuses[1].Ready = true })
	ready(api, true)
	p.waiting(t, "only the same-node agent missing", "resolved: DaemonSet "+ns+"/ovs", "resolved: Container sidecar",
		"resolved: Pod in "+agents)
	p.notResolved(t, "only the same-node agent missing", "Pod in "+ns)

	agentA := pod(ns, "agent-a", "node-a", map[string]string{"app": "agent"}, nil)
	create(t, agentA)
	ready(agentA, true)
	p.ran(t)
}

func TestCustomResource(t *testing.T) {
	env.Require(t)
	ns := newNamespace(t)
	const group = "depcheck.test.kupenstack.io"
	// Started before the CRD exists: the kind is found once it is served.
	p := start(t, map[string]string{EnvNamespace: ns, EnvCustomResource: `[
		{"apiVersion":"` + group + `/v1","kind":"Workflow","name":"wf","fields":[{"key":"status.phase","value":"Succeeded"},{"key":"spec.enabled","value":"true"}],"conditions":[{"type":"Ready"}]},
		{"apiVersion":"` + group + `/v1","kind":"Gadget","namespace":"ignored","name":"g","fields":[{"key":"status.replicas","value":"3"}]}]`})
	p.waiting(t, "no CRD", "waiting for Workflow "+ns+"/wf ("+group+"/v1): API "+group+"/v1 is not served")

	crd := func(kind, plural, scope string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": plural + "." + group},
			"spec": map[string]any{"group": group, "scope": scope,
				"names": map[string]any{"kind": kind, "plural": plural, "singular": strings.ToLower(kind), "listKind": kind + "List"},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}}
		return u
	}
	wfCRD := crd("Workflow", "workflows", "Namespaced")
	create(t, wfCRD)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), wfCRD) })
	p.waiting(t, "no object", "waiting for Workflow "+ns+"/wf ("+group+"/v1): not found",
		"waiting for Gadget ignored/g ("+group+"/v1): kind Gadget is not served by "+group+"/v1")

	gadgetCRD := crd("Gadget", "gadgets", "Cluster")
	create(t, gadgetCRD)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), gadgetCRD) })
	obj := func(kind, ns, name string, content map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: content}
		u.SetAPIVersion(group + "/v1")
		u.SetKind(kind)
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	wf := obj("Workflow", ns, "wf", map[string]any{"spec": map[string]any{"enabled": true}, "status": map[string]any{"phase": "Running"}})
	// A Workflow of the right name in another namespace must not count.
	otherNS := newNamespace(t)
	decoy := obj("Workflow", otherNS, "wf", map[string]any{"spec": map[string]any{"enabled": true},
		"status": map[string]any{"phase": "Succeeded", "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}})
	gadget := obj("Gadget", "", "g", map[string]any{"status": map[string]any{"replicas": int64(2)}})
	testenv.Eventually(t, 30*time.Second, poll, "creating the custom resources", func() error {
		for _, o := range []*unstructured.Unstructured{wf, decoy, gadget} {
			if o.GetResourceVersion() == "" {
				if err := env.Client.Create(context.Background(), o); err != nil {
					return err // the new CRD may not be served yet
				}
			}
		}
		return nil
	})
	p.waiting(t, "objects not there yet",
		`waiting for Workflow `+ns+`/wf (`+group+`/v1): status.phase is "Running", want "Succeeded"; condition Ready is missing, want True`,
		`waiting for Gadget ignored/g (`+group+`/v1): status.replicas is "2", want "3"`)

	update(t, wf, func(u *unstructured.Unstructured) {
		u.Object["status"] = map[string]any{"phase": "Succeeded", "conditions": []any{map[string]any{"type": "Ready", "status": "False"}}}
	})
	update(t, gadget, func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"replicas": int64(3)} })
	p.waiting(t, "condition false", "condition Ready is False, want True", "resolved: Gadget")
	p.notResolved(t, "condition false", "Workflow")

	update(t, wf, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": "True"}}, "status", "conditions")
	})
	p.ran(t)
}
