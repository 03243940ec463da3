// Package testenv starts one real kube-apiserver + etcd (envtest) per test package, with the
// project's CRDs installed, and optionally a controller manager running the package's
// controllers against it.
//
// Use it from TestMain:
//
//	var env *testenv.Env
//	func TestMain(m *testing.M) { env = testenv.New(setupControllers); os.Exit(env.Run(m)) }
//
// and call env.Require(t) at the top of each test that needs the API server: in -short mode
// (make test-unit) the server is never started and those tests are skipped.
package testenv

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kupenstack/kupenstack/internal/scheme"
)

// Env is a running API server (and manager, when controllers were given) shared by a package's tests.
type Env struct {
	// Client talks to the API server directly (not through a cache), so reads see every write at once.
	Client client.Client
	Config *rest.Config
	// Ctx is cancelled when the package's tests are done.
	Ctx context.Context

	setup   func(ctrl.Manager) error
	started bool
	// withGC also runs kube-controller-manager's namespace and garbage-collector controllers,
	// which envtest lacks, so that deleting a namespace really cascades.
	withGC bool
	// cluster also runs the workload controllers, kube-scheduler and kwok (WithCluster).
	cluster bool
	// aggregate also runs the ClusterRole aggregation controller (WithRoleAggregation).
	aggregate bool
	nodes     []Node
	procs     processes
	// wrapClient, if set, wraps the manager's client (fault injection).
	wrapClient func(client.Client) client.Client
	// logOut, if set, also receives the log.
	logOut io.Writer
	te     *envtest.Environment
}

// KubeConfig returns a kubeconfig of a new user of the API server (with the given groups; none
// means only what RBAC grants it), for a process a test starts.
func (e *Env) KubeConfig(name string, groups ...string) ([]byte, error) {
	user, err := e.te.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, err
	}
	return user.KubeConfig()
}

// WithManagerClient wraps the client the manager's controllers use, e.g. to inject faults into
// some of their writes; env.Client is not wrapped.
func (e *Env) WithManagerClient(wrap func(client.Client) client.Client) *Env {
	e.wrapClient = wrap
	return e
}

// WithLogOutput copies the log (the manager's included) to w as well as to stderr; w must be
// safe for concurrent writes.
func (e *Env) WithLogOutput(w io.Writer) *Env {
	e.logOut = w
	return e
}

// WithNamespaceDeletion makes namespace deletion and owner-reference garbage collection work as in
// a real cluster, by running those two controllers of kube-controller-manager.
func (e *Env) WithNamespaceDeletion() *Env {
	e.withGC = true
	return e
}

// WithRoleAggregation also runs kube-controller-manager's ClusterRole aggregation controller (and
// what WithNamespaceDeletion runs), so that roles labelled aggregate-to-view, -edit or -admin
// reach Kubernetes' view, edit and admin roles as in a real cluster.
func (e *Env) WithRoleAggregation() *Env {
	e.withGC, e.aggregate = true, true
	return e
}

// New prepares an Env; setup, if not nil, registers the controllers under test with the manager.
func New(setup func(ctrl.Manager) error) *Env { return &Env{setup: setup} }

// Run starts the API server (unless -short), runs the tests and stops everything. Use it as
// os.Exit(env.Run(m)).
func (e *Env) Run(m *testing.M) int {
	// Not again if TestMain parsed already: a second Parse would undo what it set since.
	if !flag.Parsed() {
		flag.Parse()
	}
	if testing.Short() {
		return m.Run()
	}
	var logTo io.Writer = os.Stderr
	if e.logOut != nil {
		logTo = io.MultiWriter(os.Stderr, e.logOut)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logTo), zap.UseDevMode(true)))
	stop, err := e.start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	code := m.Run()
	stop(code != 0)
	return code
}

// Require skips a test in -short mode, where no API server runs.
func (e *Env) Require(t testing.TB) {
	t.Helper()
	if !e.started {
		t.Skip("needs the envtest API server; not started in -short mode (make test runs it)")
	}
}

// start starts everything; the returned stop is told whether the tests failed, to keep logs.
func (e *Env) start() (func(testsFailed bool), error) {
	root := RepoRoot()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the tests with 'make test', or build the " +
			"binaries with hack/install-test-tools.sh and point KUBEBUILDER_ASSETS at bin/envtest-<version>")
	}
	te := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
		Scheme:                scheme.New(),
		// A loaded machine (several suites at once) takes longer than the default 10 s.
		CRDInstallOptions: envtest.CRDInstallOptions{MaxTime: 2 * time.Minute},
	}
	// Keep the API server on loopback: hosts without a default route have no other address, and
	// Kubernetes refuses a loopback advertise address unless the endpoint reconciler is off.
	// A loaded machine starts kube-apiserver and etcd slowly too (the default allows 20 s).
	te.ControlPlane.GetAPIServer().StartTimeout = 3 * time.Minute
	te.ControlPlane.Etcd = &envtest.Etcd{StartTimeout: 3 * time.Minute}
	te.ControlPlane.GetAPIServer().Configure().
		Set("advertise-address", "127.0.0.1").
		Set("endpoint-reconciler-type", "none")
	if e.cluster {
		te.ControlPlane.GetAPIServer().Configure().
			Set("service-cluster-ip-range", clusterServiceCIDR).
			Set("disable-admission-plugins", "") // envtest's default turns off ServiceAccount
	}
	cfg, err := te.Start()
	if err != nil {
		_ = te.Stop() // never leave a half-started kube-apiserver and etcd behind
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := func(testsFailed bool) {
		cancel()
		e.procs.stop(testsFailed)
		if err := te.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "testenv: stopping:", err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: te.Scheme})
	if err != nil {
		stop(true)
		return nil, err
	}
	e.Client, e.Config, e.Ctx, e.started, e.te = c, cfg, ctx, true, te
	if e.withGC {
		if err := e.startControllerManager(ctx, te, assets); err != nil {
			stop(true)
			return nil, err
		}
	}
	if e.setup == nil {
		return stop, nil
	}
	opts := ctrl.Options{
		Scheme:  te.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// Several managers (one per test package) may run at once: no fixed ports.
		HealthProbeBindAddress: "0",
	}
	if wrap := e.wrapClient; wrap != nil {
		opts.NewClient = func(cfg *rest.Config, o client.Options) (client.Client, error) {
			c, err := client.New(cfg, o)
			if err != nil {
				return nil, err
			}
			return wrap(c), nil
		}
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		stop(true)
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := e.setup(mgr); err != nil {
		stop(true)
		return nil, fmt.Errorf("setting up controllers: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func(testsFailed bool) {
		stop(testsFailed)
		waitManager(done, managerStopTimeout)
	}, nil
}

// managerStopTimeout bounds the wait for the manager after its context ended. A manager still
// waiting for its caches' first sync when the tests end (a quick -run on a loaded machine) never
// returns once the API server is gone: controller-runtime's startup wait does not watch the
// context. The package's tests are over by then, so the process may exit without it.
const managerStopTimeout = time.Minute

// waitManager waits for the manager's Start to return, at most timeout.
func waitManager(done <-chan error, timeout time.Duration) {
	select {
	case err := <-done:
		if err != nil {
			fmt.Fprintln(os.Stderr, "testenv: manager:", err)
		}
	case <-time.After(timeout):
		fmt.Fprintf(os.Stderr, "testenv: the manager had not stopped %s after the tests ended; exiting without it\n", timeout)
	}
}

// RepoRoot is the checkout's top directory, found from this source file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// startControllerManager runs kube-controller-manager's namespace and garbage-collector
// controllers against the envtest API server, as a cluster admin, serving nothing; with
// WithCluster also the workload controllers, kube-scheduler and kwok.
func (e *Env) startControllerManager(ctx context.Context, te *envtest.Environment, assets string) error {
	dir, err := os.MkdirTemp("", "kupenstack-testenv-")
	if err != nil {
		return err
	}
	e.procs.dir = dir
	kubeconfig, err := e.adminKubeConfig(te)
	if err != nil {
		return err
	}
	controllers := gcControllers
	if e.cluster {
		controllers = clusterControllers
	} else if e.aggregate {
		controllers = append([]string{"clusterrole-aggregation-controller"}, gcControllers...)
	}
	if err := e.procs.start(filepath.Join(assets, "kube-controller-manager"), "--kubeconfig="+kubeconfig,
		"--controllers="+strings.Join(controllers, ","),
		"--leader-elect=false", "--secure-port=0", "--use-service-account-credentials=false"); err != nil {
		return err
	}
	if !e.cluster {
		return nil
	}
	return e.startCluster(ctx, assets, kubeconfig)
}

// Eventually polls cond every interval until it returns nil, and fails the test with what and
// cond's last error once limit has passed. The limit only bounds how long a broken controller
// makes a test hang; it is not a performance assertion.
func Eventually(t testing.TB, limit, interval time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			if what == "" {
				t.Fatal(err)
			}
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(interval)
	}
}
