//go:build bench

// Package bench measures the operator against the all-in-one cloud: convergence of N VMs versus
// a direct gophercloud program, the OpenStack API cost of idle objects, and self-heal latency.
// It runs the real controllers (controller.SetupAll, real clients) against envtest's API server,
// in this process, and reads the operator's own Prometheus metrics.
//
// It is not part of `make test`: the files carry the `bench` build tag. Run it with `make bench`
// (N=50 VMs by default, `make bench N=200`); it rewrites the generated part of docs/benchmarks.md.
package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kupenstack/kupenstack/internal/controller"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/openstack"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// Settings of one run, from the environment (the Makefile sets them).
var (
	cloudsPath = os.Getenv("OS_CLIENT_CONFIG_FILE")
	cloudName  = os.Getenv("OS_CLOUD")
	// numVMs is N: VMs (each with its own port) in the convergence benchmark.
	numVMs = envInt("BENCH_N", 50)
	// workers is the operator's --workers and the baseline's concurrency.
	workers = envInt("BENCH_WORKERS", 4)
	// heals is how many VMs are forced to ERROR, one after the other.
	heals = envInt("BENCH_HEALS", 10)
	// idleCounts are the object counts of the steady-state benchmark.
	idleCounts = envInts("BENCH_IDLE", []int{100, 1000})
	// resyncPeriod is --resync-period for the whole run: short, so that a few periods fit.
	resyncPeriod = envDuration("BENCH_RESYNC_PERIOD", 10*time.Second)
	// vmHealthPeriod is --vm-health-period; the production default unless overridden.
	vmHealthPeriod = envDuration("BENCH_VM_HEALTH_PERIOD", 5*time.Second)
	// phases selects what runs (all by default): converge, heal, idle.
	phases = os.Getenv("BENCH_PHASES")
	// notificationsURL turns the operator's notification listener on (BENCH_NOTIFICATIONS=1, with
	// KUPENSTACK_NOTIFICATIONS_URL, which the Makefile's test environment sets).
	notificationsURL = func() string {
		if os.Getenv("BENCH_NOTIFICATIONS") == "1" {
			return os.Getenv("KUPENSTACK_NOTIFICATIONS_URL")
		}
		return ""
	}()
)

// Production defaults of cmd/kupenstack for what the benchmark does not change on purpose.
const (
	defaultQPS   = 20
	defaultBurst = 40
)

var env = testenv.New(func(mgr ctrl.Manager) error {
	if cloudsPath == "" || cloudName == "" {
		return nil
	}
	return controller.SetupAll(context.Background(), mgr, controller.Options{
		Clients:        openstack.NewClients(openstack.FileSource(cloudsPath), cloudName, defaultQPS, defaultBurst),
		ResyncPeriod:   resyncPeriod,
		Workers:        workers,
		VMHealthPeriod: vmHealthPeriod,
		// Off unless BENCH_NOTIFICATIONS=1: the self-heal row says which.
		NotificationsURL: notificationsURL,
		DomainID:         "default",
		MemberRole:       "member",
	})
}).WithNamespaceDeletion()

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func envInts(name string, def []int) []int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil && d > 0 {
		return d
	}
	return def
}

func enabled(phase string) bool {
	return phases == "" || chosen(phase)
}

// chosen says whether BENCH_PHASES names phase: the scale phase runs only then (10,000 objects
// take longer than the rest together).
func chosen(phase string) bool { return strings.Contains(","+phases+",", ","+phase+",") }

// runID keeps this run's names (and so its Keystone projects and key pairs, named after them)
// apart from leftovers of a killed run and from a run started in the same second: the process ID
// is part of it.
var runID = strconv.FormatInt(time.Now().Unix()%100000, 10) + strconv.Itoa(os.Getpid()%1000)

// TestBench runs every benchmark in turn and writes the report, also when one of them fails.
func TestBench(t *testing.T) {
	if cloudsPath == "" || cloudName == "" {
		t.Fatal("set OS_CLIENT_CONFIG_FILE and OS_CLOUD (make bench does)")
	}
	env.Require(t)
	cl := connectCloud(t)
	rep := newReport()
	defer rep.finish(t)
	if enabled("converge") || enabled("heal") {
		t.Run("converge", func(t *testing.T) { benchConvergence(t, cl, rep) })
	}
	if enabled("idle") {
		t.Run("idle", func(t *testing.T) { benchIdle(t, cl, rep) })
	}
	if chosen("scale") {
		t.Run("scale", func(t *testing.T) { benchScale(t, cl, rep) })
	}
}

// waitFor polls cond every interval until it returns nil, failing after limit (a hang guard,
// not a performance assertion).
func waitFor(t *testing.T, what string, interval, limit time.Duration, cond func() error) {
	testenv.Eventually(t, limit, interval, fmt.Sprintf("%s: still not done after %s", what, limit), cond)
}

// ready says whether obj is Ready for its current generation.
func ready(obj generic.Object) bool {
	for _, c := range obj.GetManagedStatus().Conditions {
		if c.Type == "Ready" {
			return c.Status == "True" && c.ObservedGeneration == obj.GetGeneration()
		}
	}
	return false
}

// create creates objs, failing the test on the first error.
func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(env.Ctx, o); err != nil {
			t.Fatalf("creating %T %s/%s: %v", o, o.GetNamespace(), o.GetName(), err)
		}
	}
}

func fmtDur(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
