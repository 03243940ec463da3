// Package e2e runs KupenStack's end-to-end tests: the real controllers against a real API server
// (envtest) and a real OpenStack, the all-in-one cloud of hack/openstack-aio (make openstack-up),
// named by OS_CLIENT_CONFIG_FILE and OS_CLOUD.
//
// KUPENSTACK_E2E_DNS=host:port sends every name lookup of the test process to that DNS server:
// the cloud the operator deployed on the real cluster names its endpoints in cluster.local, which
// only the cluster's DNS answers (test/realcluster runs this suite against it so).
//
// KUPENSTACK_E2E_VLAN_PHYSNET names the physical network whose VLANs 100-199 the provider
// network tests may take: "public" on the all-in-one (the default), "external" on the deployed cloud.
//
// KUPENSTACK_E2E_COMPUTE_HOST names the cloud's one compute host ("aio" by default).
//
// Without OS_CLIENT_CONFIG_FILE the tests skip, unless KUPENSTACK_E2E=required (make test sets
// it), in which case they fail: CI must never pass by skipping them.
package e2e

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller"
	"github.com/kupenstack/kupenstack/internal/controller/image"
	"github.com/kupenstack/kupenstack/internal/openstack"
	"github.com/kupenstack/kupenstack/internal/openstack/cloudconfig"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

var (
	cloudsPath = os.Getenv("OS_CLIENT_CONFIG_FILE")
	cloudName  = os.Getenv("OS_CLOUD")
	env        = testenv.New(func(mgr ctrl.Manager) error {
		if cloudsPath == "" || cloudName == "" {
			return nil
		}
		return controller.SetupAll(context.Background(), mgr, controller.Options{
			Clients:        openstack.NewClients(openstack.FileSource(cloudsPath), cloudName, 50, 100),
			ResyncPeriod:   10 * time.Minute,
			VMHealthPeriod: vmHealthPeriod,
			Workers:        4,
			// The all-in-one's bus (make test sets it): notifications wake objects at once.
			NotificationsURL: os.Getenv("KUPENSTACK_NOTIFICATIONS_URL"),
			DomainID:         "default",
			MemberRole:       "member",
			// The tests serve images from httptest servers on loopback.
			ImageSources: image.SourcePolicy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		})
	}).WithNamespaceDeletion().
		WithManagerClient(func(c client.Client) client.Client { return crashingClient{c} }).
		WithLogOutput(&operatorLog)
)

// vlanPhysnet is the physical network of the cloud whose VLANs 100-199 are free for the provider
// network tests (its one flat network is the cloud's external network).
func vlanPhysnet() string {
	return cmp.Or(os.Getenv("KUPENSTACK_E2E_VLAN_PHYSNET"), "public")
}

// computeHost is the cloud's one compute host (KUPENSTACK_E2E_COMPUTE_HOST; the all-in-one's,
// "aio", by default).
func computeHost() string {
	return cmp.Or(os.Getenv("KUPENSTACK_E2E_COMPUTE_HOST"), "aio")
}

// vmHealthPeriod: failed VMs are found by the health check (the servers changed since its
// previous list; the full list only every ResyncPeriod), a little more often than the 5 s default.
const vmHealthPeriod = 3 * time.Second

func TestMain(m *testing.M) {
	if server := os.Getenv("KUPENSTACK_E2E_DNS"); server != "" {
		net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, server)
		}}
	}
	leaveToRealCloud()
	atLeastTwoInParallel()
	code := env.Run(m)
	reportSlowest(15)
	os.Exit(code)
}

// parallelTests counts the top-level tests running in parallel, for the credentials scan.
// Go starts parallel top-level tests only once every sequential one has returned, so a scan
// that merely came last in file order would run before them and miss what they wrote; the
// scan is parallel too and waits for these.
var parallelTests sync.WaitGroup

// parallel runs t beside the suite's other parallel tests: for tests that touch nothing
// cloud-wide (their objects in their own namespace, cluster-scoped ones named after it) and
// assert nothing on the operator's global metrics.
func parallel(t *testing.T) {
	parallelTests.Add(1)
	t.Cleanup(parallelTests.Done)
	t.Parallel()
}

// atLeastTwoInParallel raises -test.parallel to 2: the credentials scan holds one slot while it
// waits for the other parallel tests, which need another (1 on a one-core machine would hang).
func atLeastTwoInParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	if n, err := strconv.Atoi(flag.Lookup("test.parallel").Value.String()); err == nil && n < 2 {
		if err := flag.Set("test.parallel", "2"); err != nil {
			panic(err)
		}
	}
}

// testTimes holds each top-level test's time, from its first requireCloud, connect or
// newNamespace to the end of its clean-up (tests that run in parallel overlap): the suite is the
// longest package of make test, and these say where its time goes.
var testTimes sync.Map // test name -> time.Duration

// timeTest starts timing t, once per top-level test.
func timeTest(t *testing.T) {
	if strings.Contains(t.Name(), "/") {
		return
	}
	start := time.Now()
	if _, timed := testTimes.LoadOrStore(t.Name(), time.Duration(0)); timed {
		return
	}
	t.Cleanup(func() { testTimes.Store(t.Name(), time.Since(start)) })
}

// reportSlowest writes the n slowest tests to stderr and, when KUPENSTACK_E2E_TIMES names a file,
// there (go test shows a passing package's output only with -v; make test prints the file).
func reportSlowest(n int) {
	type timed struct {
		name string
		d    time.Duration
	}
	var all []timed
	var total time.Duration
	testTimes.Range(func(k, v any) bool {
		all = append(all, timed{k.(string), v.(time.Duration)})
		total += v.(time.Duration)
		return true
	})
	if len(all) == 0 {
		return
	}
	slices.SortFunc(all, func(a, b timed) int { return cmp.Compare(b.d, a.d) })
	var b strings.Builder
	fmt.Fprintf(&b, "e2e: %d tests, %s in all (overlapping where parallel); the slowest:\n", len(all), total.Round(time.Second))
	for _, x := range all[:min(n, len(all))] {
		fmt.Fprintf(&b, "  %-50s %s\n", x.name, x.d.Round(100*time.Millisecond))
	}
	fmt.Fprint(os.Stderr, b.String())
	if path := os.Getenv("KUPENSTACK_E2E_TIMES"); path != "" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		}
	}
}

// leaveToRealCloud adds OnRealCloud to -test.skip when LeaveToRealCloudEnv is 1.
func leaveToRealCloud() {
	if os.Getenv(LeaveToRealCloudEnv) != "1" {
		return
	}
	// Parsed first, so that a -test.skip of the command line is kept, not overwritten by Parse.
	flag.Parse()
	skip := ExactPattern(OnRealCloud)
	if given := flag.Lookup("test.skip").Value.String(); given != "" {
		skip = given + "|" + skip
	}
	if err := flag.Set("test.skip", skip); err != nil {
		panic(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: %d tests left to the cloud the operator deploys (%s=1): %s\n",
		len(OnRealCloud), LeaveToRealCloudEnv, strings.Join(OnRealCloud, " "))
}

// requireCloud skips (or, with KUPENSTACK_E2E=required, fails) a test when no cloud is configured.
func requireCloud(t *testing.T) {
	t.Helper()
	timeTest(t)
	if testing.Short() {
		t.Skip("end-to-end test; skipped in -short mode")
	}
	if cloudsPath == "" || cloudName == "" {
		if os.Getenv("KUPENSTACK_E2E") == "required" {
			t.Fatal("KUPENSTACK_E2E=required but OS_CLIENT_CONFIG_FILE/OS_CLOUD are not set")
		}
		t.Skip("no OpenStack: set OS_CLIENT_CONFIG_FILE and OS_CLOUD (make openstack-up writes them)")
	}
}

// connect returns an authenticated admin provider client for the test cloud.
func connect(t *testing.T) (*gophercloud.ProviderClient, *cloudconfig.Cloud) {
	t.Helper()
	requireCloud(t)
	data, err := os.ReadFile(cloudsPath)
	if err != nil {
		t.Fatalf("reading clouds.yaml: %v", err)
	}
	cloud, err := cloudconfig.Parse(data, cloudName)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	provider, err := cloud.Connect(ctx)
	if err != nil {
		t.Fatalf("is the cloud up (make openstack-up)? %v", err)
	}
	return provider, cloud
}

var nsCounter atomic.Int32

// newNamespace creates a namespace with a name unique to this test run (Keystone projects of
// earlier runs may linger if a run was killed).
func newNamespace(t *testing.T) string {
	t.Helper()
	timeTest(t)
	env.Require(t)
	name := fmt.Sprintf("e2e-%s-%d-%d", strings.ToLower(t.Name()), time.Now().Unix()%100000, nsCounter.Add(1))
	name = strings.NewReplacer("/", "-", "_", "-", ".", "-", "#", "-").Replace(name)
	// 53: the Keystone project, "kupenstack-" + the namespace, must fit in 64 characters.
	if len(name) > 53 {
		name = strings.TrimLeft(name[len(name)-53:], "-")
	}
	if err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// eventuallyTimeout and eventuallyPoll are eventually's bounds, for the waits that have no
// *testing.T to hand (an out-of-band change's). The timeout only bounds a hang: with make test's
// other suites beside it, the all-in-one's Neutron took 15-38 s a write (2026-11-30), and a Router
// (create, tags, interface) missed a 90 s deadline without anything being wrong; on a cold
// machine (2026-12-02) add_router_interface took up to 118 s and three Routers missed 3 minutes.
const (
	eventuallyTimeout = 6 * time.Minute
	eventuallyPoll    = 200 * time.Millisecond
)

// eventually polls cond until it returns nil; the deadline only bounds how long a broken
// operator makes the test hang, it is not a performance assertion.
func eventually(t *testing.T, what string, cond func() error) {
	testenv.Eventually(t, eventuallyTimeout, eventuallyPoll, what, cond)
}

// deleteProject deletes the namespace's Project (as namespace deletion's garbage collection
// would; envtest runs no namespace controller) and waits until it, and its Keystone project, are gone.
func deleteProject(t *testing.T, ns string) {
	t.Helper()
	var p kupenstackv1.Project
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: ns}, &p); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(env.Ctx, &p); err != nil {
		t.Fatal(err)
	}
	waitGone(t, &p)
}

// waitGone waits until obj (a typed object with its name set) no longer exists in Kubernetes.
func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	probe := obj.DeepCopyObject().(client.Object)
	eventually(t, fmt.Sprintf("%T %s gone", obj, key), func() error {
		if err := env.Client.Get(env.Ctx, key, probe); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
}

// runtimeConvert converts decoded JSON (maps) into a typed value.
func runtimeConvert(in any, out any) error {
	m, ok := in.(map[string]any)
	if !ok {
		return fmt.Errorf("no status yet")
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, out)
}

// projectOf creates a first object (a Network called seed) in namespace ns, which makes the
// namespace's OpenStack project, and returns the Project once it has its ID, with the seed.
func projectOf(t *testing.T, ns string) (*kupenstackv1.Project, *kupenstackv1.Network) {
	t.Helper()
	seed := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "seed", Namespace: ns}}
	if err := env.Client.Create(env.Ctx, seed); err != nil {
		t.Fatal(err)
	}
	projectID(t, ns)
	var proj kupenstackv1.Project
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: ns}, &proj); err != nil {
		t.Fatal(err)
	}
	return &proj, seed
}

// updateSpec changes obj with mutate and updates it, re-reading it when the operator wrote its
// status in between (a conflict).
func updateSpec[O client.Object](t *testing.T, obj O, mutate func(O)) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate(obj)
		return env.Client.Update(env.Ctx, obj)
	}); err != nil {
		t.Fatal(err)
	}
}
