package reliability

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/openstack/cloudconfig"
	"github.com/kupenstack/kupenstack/internal/testutil/operator"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// faultyServices are where the proxy injects faults: Keystone stays healthy, so that the
// namespaces' projects and their tokens can be had.
var faultyServices = []string{"compute", "network"}

// startOperator runs the operator binary with the given clouds.yaml (in its own Secret) and
// returns it; the test's cleanup stops it and shows its log when the test failed.
func startOperator(t *testing.T, clouds []byte, name string, extraArgs ...string) *operator.Process {
	t.Helper()
	secret := "kupenstack-cloud-" + name
	args := append([]string{"--cloud-secret=kupenstack-system/" + secret, "--cloud=" + os.Getenv("OS_CLOUD"),
		"--health-probe-bind-address=0", "--resync-period=20s"}, extraArgs...)
	if !strings.Contains(strings.Join(extraArgs, " "), "--metrics-bind-address") {
		args = append(args, "--metrics-bind-address=0")
	}
	op := operator.New(t, env, args...)
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kupenstack-system"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kupenstack-system", Name: secret},
			Data: map[string][]byte{"clouds.yaml": clouds}},
	} {
		if err := env.Client.Create(env.Ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	return op
}

// faultObjects are one step's objects: a Network with a Subnet, and a KeyPair (Neutron and Nova).
func faultObjects(ns, prefix string, k int) []generic.Object {
	return []generic.Object{
		&kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: prefix + "-net"}},
		&kupenstackv1.Subnet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: prefix + "-sub"},
			Spec: kupenstackv1.SubnetSpec{NetworkRef: prefix + "-net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: fmt.Sprintf("10.96.%d.0/24", k)}}},
		&kupenstackv1.KeyPair{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: prefix + "-key"},
			Spec: kupenstackv1.KeyPairSpec{PublicKey: publicKey}},
	}
}

// callsOpenStack: the objects whose first pass reaches OpenStack (a Subnet waits for its Network).
func callsOpenStack(objs []generic.Object) []generic.Object {
	var out []generic.Object
	for _, o := range objs {
		if _, waits := o.(*kupenstackv1.Subnet); !waits {
			out = append(out, o)
		}
	}
	return out
}

// waitForReason waits until each object says, in its Degraded condition, that a transient error
// happened, with OpenStack's (or the connection's) words in the message.
func waitForReason(t *testing.T, objs []generic.Object, words ...string) {
	t.Helper()
	waitUntil(t, 5*time.Minute, "conditions naming the fault", func() error {
		for _, o := range objs {
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return err
			}
			c := meta.FindStatusCondition(o.GetManagedStatus().Conditions, kupenstackv1.ConditionDegraded)
			if c == nil || c.Status != metav1.ConditionTrue || c.Reason != kupenstackv1.ReasonTransientError || !containsAny(c.Message, words) {
				return fmt.Errorf("%T %s: Degraded condition %+v, want reason %s and one of %q", o, o.GetName(), c, kupenstackv1.ReasonTransientError, words)
			}
			if r := meta.FindStatusCondition(o.GetManagedStatus().Conditions, kupenstackv1.ConditionReady); r == nil || r.Status == metav1.ConditionTrue {
				return fmt.Errorf("%T %s: Ready %+v while failing", o, o.GetName(), r)
			}
		}
		return nil
	})
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func waitReady(t *testing.T, limit time.Duration, objs []generic.Object) {
	t.Helper()
	waitUntil(t, limit, "every object Ready", func() error {
		for _, o := range objs {
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return err
			}
			if st := o.GetManagedStatus(); st.ID == "" || !conditions.IsReady(st.Conditions, o.GetGeneration()) {
				return fmt.Errorf("%T %s not ready: id %q, conditions %+v", o, o.GetName(), st.ID, st.Conditions)
			}
		}
		return nil
	})
}

// checkCount asserts that each object has exactly want OpenStack resources (1, or 0 after deletion).
func checkCount(t *testing.T, c cloud, project string, objs []generic.Object, want int) {
	t.Helper()
	for _, o := range objs {
		n, err := inCloud(env.Ctx, c, project, o)
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("%T %s: %d OpenStack resources, want %d", o, o.GetName(), n, want)
		}
	}
}

// deleteAll deletes objs, waiting until all are gone.
func deleteAll(t *testing.T, objs []generic.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Delete(env.Ctx, o); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, 10*time.Minute, "every object deleted", func() error {
		for _, o := range objs {
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%T %s still there (%v)", o, o.GetName(), err)
			}
		}
		return nil
	})
}

func deleteProject(t *testing.T, ns string) {
	t.Helper()
	p := &kupenstackv1.Project{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := env.Client.Delete(env.Ctx, p); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Minute, "project deleted", func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: ns}, p); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
}

// newTestNamespace creates a namespace whose Project (and so Keystone project) is made by its
// first object, and, if the test fails, leaves nothing behind in the cloud.
func newTestNamespace(t *testing.T, c cloud, prefix string, op *operator.Process) string {
	t.Helper()
	ns := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1000000)
	if err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			op.Kill()
			cleanupCloud(c, ns)
		}
	})
	return ns
}

// projectReady creates a first object in ns and waits until it is Ready: the namespace's
// project exists, so that later faults hit the objects, not the project's creation.
func projectReady(t *testing.T, ns string) (string, generic.Object) {
	t.Helper()
	first := &kupenstackv1.KeyPair{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first-key"},
		Spec: kupenstackv1.KeyPairSpec{PublicKey: publicKey}}
	if err := env.Client.Create(env.Ctx, first); err != nil {
		t.Fatal(err)
	}
	waitReady(t, 5*time.Minute, []generic.Object{first})
	var p kupenstackv1.Project
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: ns}, &p); err != nil {
		t.Fatal(err)
	}
	return p.Status.ID, first
}

// TestOpenStackFaults: the operator's OpenStack calls (Nova's and Neutron's) go through a proxy
// that fails them in turn with 500, 429 + Retry-After, connection resets, slow answers and lost
// answers (the write took effect), while new objects are created at each step. Each failing
// object must say what is wrong; the operator must not crash nor retry in a hot loop; once the
// faults stop everything converges, with no duplicate and, after deletion, nothing left.
func TestOpenStackFaults(t *testing.T) {
	c, clouds := connect(t)
	env.Require(t)
	cc, err := cloudconfig.Parse(clouds, os.Getenv("OS_CLOUD"))
	if err != nil {
		t.Fatal(err)
	}
	proxy, authURL := newFaultProxy(t, cc.Auth.IdentityEndpoint)
	op := startOperator(t, proxiedClouds(clouds, cc.Auth.IdentityEndpoint, authURL), "faults")
	ns := newTestNamespace(t, c, "faults", op)
	project, first := projectReady(t, ns)
	all := []generic.Object{first}

	// The words a condition must show: OpenStack's status code, or what happened to the connection.
	resetWords := []string{"connection reset", "EOF"}
	steps := []struct {
		name  string
		fault fault
		words []string // nil: the objects converge despite the fault
	}{
		{"e500", fault{status: 500}, []string{"got 500"}},
		{"e429", fault{status: 429, retryAfter: "2"}, []string{"got 429"}},
		{"reset", fault{reset: true}, resetWords},
		// The writes take effect: the next pass finds what the lost answer would have named.
		{"lost", fault{loseAnswer: true}, nil},
		{"slow", fault{delay: 2 * time.Second}, nil},
	}
	// A hot loop would retry at the clients' rate limit (20 requests/s); each failing object
	// may retry about once a second at most once its backoff has grown (or as Retry-After says),
	// plus the periodic drift-check lists.
	for k, step := range steps {
		proxy.inject(step.fault, faultyServices...)
		objs := faultObjects(ns, step.name, k)
		all = append(all, objs...)
		for _, o := range objs {
			if err := env.Client.Create(env.Ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		if step.words == nil {
			waitReady(t, 10*time.Minute, objs)
			t.Logf("fault %s: the step's objects converged", step.fault)
			continue
		}
		waitForReason(t, callsOpenStack(objs), step.words...)
		// Backoff settles within seconds; then count over a window.
		time.Sleep(10 * time.Second)
		from := time.Now()
		time.Sleep(20 * time.Second)
		total, peak := proxy.requests(from, faultyServices...)
		failing := len(all) - 1
		rate := float64(total) / time.Since(from).Seconds()
		t.Logf("fault %s: %d requests in %s (%.1f/s, at most %d in one second) with %d objects failing", step.fault, total,
			time.Since(from).Round(time.Second), rate, peak, failing)
		if rate > float64(failing) || peak > 2*failing+10 {
			t.Errorf("fault %s: %.1f requests/s (peak %d in one second) for %d failing objects: a hot loop", step.fault, rate, peak, failing)
		}
	}
	proxy.inject(fault{})
	if exits := op.Crashed(); len(exits) > 0 {
		t.Fatalf("the operator died under the faults: %v", exits)
	}
	stopped := time.Now()
	// No time limit of substance: the retries back off exponentially, up to the engine's cap.
	waitReady(t, 15*time.Minute, all)
	t.Logf("everything Ready %s after the faults stopped", time.Since(stopped).Round(time.Second))
	checkCount(t, c, project, all, 1)
	deleteAll(t, all)
	checkCount(t, c, project, all, 0)
	deleteProject(t, ns)
	if exits := op.Crashed(); len(exits) > 0 {
		t.Fatalf("the operator died: %v", exits)
	}
}

// TestNeutronDown stops neutron-server for 60 s while Networks, Subnets and KeyPairs are created:
// the Neutron objects say that Neutron cannot be reached, the KeyPairs (Nova) converge meanwhile,
// requests stay bounded, and everything converges once Neutron is back. Neutron is restarted by
// the test's cleanup whatever happens.
func TestNeutronDown(t *testing.T) {
	c, clouds := connect(t)
	env.Require(t)
	cc, err := cloudconfig.Parse(clouds, os.Getenv("OS_CLOUD"))
	if err != nil {
		t.Fatal(err)
	}
	// The proxy injects nothing here; it counts the operator's requests.
	proxy, authURL := newFaultProxy(t, cc.Auth.IdentityEndpoint)
	op := startOperator(t, proxiedClouds(clouds, cc.Auth.IdentityEndpoint, authURL), "neutron-down")
	ns := newTestNamespace(t, c, "neutron-down", op)
	project, first := projectReady(t, ns)

	aio := filepath.Join(testenv.RepoRoot(), "hack", "openstack-aio")
	start := func() error {
		out, err := exec.Command(filepath.Join(aio, "start.sh"), "neutron").CombinedOutput()
		if err != nil {
			return fmt.Errorf("start.sh neutron: %v\n%s", err, out)
		}
		return nil
	}
	// Registered before the stop: Neutron comes back even if the test dies half-way.
	t.Cleanup(func() {
		if err := start(); err != nil {
			t.Error(err)
		}
	})
	if out, err := exec.Command(filepath.Join(aio, "stop.sh"), "neutron").CombinedOutput(); err != nil {
		t.Fatalf("stop.sh neutron: %v\n%s", err, out)
	}
	stopped := time.Now()
	var objs []generic.Object
	for k := range 3 {
		objs = append(objs, faultObjects(ns, fmt.Sprintf("down%d", k), 50+k)...)
	}
	for _, o := range objs {
		if err := env.Client.Create(env.Ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	var networks, keys []generic.Object
	for _, o := range objs {
		switch o.(type) {
		case *kupenstackv1.Network:
			networks = append(networks, o)
		case *kupenstackv1.KeyPair:
			keys = append(keys, o)
		}
	}
	waitForReason(t, networks, "connection reset", "connection refused", "EOF")
	waitReady(t, 5*time.Minute, keys)
	// Count over the rest of the 60 s, and at least 20 s.
	from := time.Now()
	time.Sleep(max(time.Until(stopped.Add(60*time.Second)), 20*time.Second))
	total, peak := proxy.requests(from, "network")
	rate := float64(total) / time.Since(from).Seconds()
	t.Logf("Neutron down: %d Neutron requests in %s (%.1f/s, at most %d in one second) for %d Networks", total,
		time.Since(from).Round(time.Second), rate, peak, len(networks))
	if rate > float64(len(objs)) || peak > 2*len(objs)+10 {
		t.Errorf("%.1f Neutron requests/s (peak %d) while it was down: a hot loop", rate, peak)
	}
	if err := start(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	t.Logf("Neutron back after %s", back.Sub(stopped).Round(time.Second))
	all := append([]generic.Object{first}, objs...)
	waitReady(t, 15*time.Minute, all)
	t.Logf("everything Ready %s after Neutron came back", time.Since(back).Round(time.Second))
	checkCount(t, c, project, all, 1)
	deleteAll(t, all)
	checkCount(t, c, project, all, 0)
	deleteProject(t, ns)
	if exits := op.Crashed(); len(exits) > 0 {
		t.Fatalf("the operator died: %v", exits)
	}
}
