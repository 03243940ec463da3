// Command kupenstack is the KupenStack operator: it runs every controller of both flows (the
// cloud's life-cycle and the OpenStack resources) in one manager.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller"
	"github.com/kupenstack/kupenstack/internal/controller/image"
	"github.com/kupenstack/kupenstack/internal/controller/lcm"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/lcm/validation"
	"github.com/kupenstack/kupenstack/internal/openstack"
	"github.com/kupenstack/kupenstack/internal/scheme"
)

// options are the manager's settings; each flag can also come from the environment variable
// named beside it, which is how the Helm chart and the quickstart pass them.
type options struct {
	metricsAddr, probeAddr string
	leaderElect            bool
	leaderElectionNS       string
	cloudSecret, cloudName string
	resyncPeriod           time.Duration
	vmHealthPeriod         time.Duration
	validationPeriod       time.Duration
	workers                int
	notificationsURL       string
	lcm                    string
	chartCacheDir          string
	domainID, memberRole   string
	apiQPS                 float64
	apiBurst               int
	imageSourcesAllowed    string
	imageSourcesBlocked    string
	chartLocalPaths        string
}

func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) (options, *zap.Options, error) {
	var o options
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	// A bad environment value is an error at start-up, naming the variable, even when a flag
	// overrides it: it used to fall back to the default without a word.
	var envErrs []error
	envDuration := func(name string, def time.Duration) time.Duration {
		d, err := parseEnvDuration(getenv, name, def)
		if err != nil {
			envErrs = append(envErrs, err)
		}
		return d
	}
	envBool := func(name string, def bool) bool {
		b, err := parseEnvBool(getenv, name, def)
		if err != nil {
			envErrs = append(envErrs, err)
		}
		return b
	}
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", env("KUPENSTACK_METRICS_ADDR", ":8080"),
		"address of the Prometheus metrics endpoint; 0 turns it off [KUPENSTACK_METRICS_ADDR]")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", env("KUPENSTACK_PROBE_ADDR", ":8081"),
		"address of the /healthz and /readyz endpoints [KUPENSTACK_PROBE_ADDR]")
	fs.BoolVar(&o.leaderElect, "leader-elect", envBool("KUPENSTACK_LEADER_ELECT", false),
		"elect a leader so that only one replica reconciles [KUPENSTACK_LEADER_ELECT]")
	fs.StringVar(&o.leaderElectionNS, "leader-election-namespace", env("KUPENSTACK_NAMESPACE", ""),
		"namespace of the leader-election Lease; defaults to the pod's namespace [KUPENSTACK_NAMESPACE]")
	fs.StringVar(&o.cloudSecret, "cloud-secret", env("KUPENSTACK_CLOUD_SECRET", "kupenstack-system/kupenstack-cloud"),
		"namespace/name of the Secret whose clouds.yaml key holds the admin credentials [KUPENSTACK_CLOUD_SECRET]")
	fs.StringVar(&o.cloudName, "cloud", env("KUPENSTACK_CLOUD", "openstack"),
		"which cloud of that clouds.yaml to manage [KUPENSTACK_CLOUD]")
	periodVar(fs, &o.resyncPeriod, "resync-period", envDuration("KUPENSTACK_RESYNC_PERIOD", 10*time.Minute),
		"default period of the drift check of OpenStack resources: 0 turns it off, otherwise at least 1s [KUPENSTACK_RESYNC_PERIOD]")
	periodVar(fs, &o.vmHealthPeriod, "vm-health-period", envDuration("KUPENSTACK_VM_HEALTH_PERIOD", 5*time.Second),
		"how often each project's servers are checked for failed or vanished VMs: one list of the servers changed since the previous check, a full list every --resync-period; at least 1s [KUPENSTACK_VM_HEALTH_PERIOD]")
	periodVar(fs, &o.validationPeriod, "validation-period", envDuration("KUPENSTACK_VALIDATION_PERIOD", time.Minute),
		"how often the validation agent probes each OpenStack service: 0 turns it off, otherwise at least 1s [KUPENSTACK_VALIDATION_PERIOD]")
	fs.StringVar(&o.domainID, "project-domain", env("KUPENSTACK_PROJECT_DOMAIN", "default"),
		"ID of the Keystone domain in which namespaces' projects are created [KUPENSTACK_PROJECT_DOMAIN]")
	fs.StringVar(&o.memberRole, "project-role", env("KUPENSTACK_PROJECT_ROLE", "member"),
		"Keystone role the operator's user gets in every namespace's project [KUPENSTACK_PROJECT_ROLE]")
	fs.StringVar(&o.lcm, "lcm", env("KUPENSTACK_LCM", controller.LCMAuto),
		"cloud life-cycle controllers (KupenstackConfiguration, OpenstackNode, one per OpenstackComponent): auto (on once a KupenstackConfiguration exists: at start-up or when the first one is created), on or off [KUPENSTACK_LCM]")
	fs.StringVar(&o.chartCacheDir, "chart-cache-dir", env("KUPENSTACK_CHART_CACHE_DIR", filepath.Join(os.TempDir(), "kupenstack-charts")),
		"where charts downloaded from a repository or registry are kept [KUPENSTACK_CHART_CACHE_DIR]")
	fs.StringVar(&o.notificationsURL, "notifications-url", env("KUPENSTACK_NOTIFICATIONS_URL", ""),
		"AMQP URL of the cloud's notification bus (amqp://user:password@host:5672/); empty: with the life-cycle on, the URL of Nova's bus it publishes in the Secret kupenstack-notifications beside --cloud-secret, otherwise off (changes are found by polling). Prefer the environment variable, from a Secret [KUPENSTACK_NOTIFICATIONS_URL]")
	fs.IntVar(&o.workers, "workers", 4, "objects of each kind reconciled at once")
	fs.Float64Var(&o.apiQPS, "openstack-qps", 20, "average OpenStack API requests per second the operator may send")
	fs.IntVar(&o.apiBurst, "openstack-burst", 40, "burst of OpenStack API requests above --openstack-qps")
	fs.StringVar(&o.imageSourcesAllowed, "image-source-allowed-cidrs", env("KUPENSTACK_IMAGE_SOURCE_ALLOWED_CIDRS", ""),
		"comma-separated CIDRs that Image downloads may reach although they are loopback, link-local, private or otherwise not public (a mirror on an internal network; the HTTP proxy's address); default none [KUPENSTACK_IMAGE_SOURCE_ALLOWED_CIDRS]")
	fs.StringVar(&o.imageSourcesBlocked, "image-source-blocked-cidrs", env("KUPENSTACK_IMAGE_SOURCE_BLOCKED_CIDRS", ""),
		"comma-separated CIDRs that Image downloads may never reach, even when --image-source-allowed-cidrs includes them: the cluster's Service and pod ranges when they are public addresses; default none [KUPENSTACK_IMAGE_SOURCE_BLOCKED_CIDRS]")
	fs.StringVar(&o.chartLocalPaths, "chart-local-path-prefixes", env("KUPENSTACK_CHART_LOCAL_PATH_PREFIXES", strings.Join(helm.DefaultLocalPathPrefixes, ",")),
		"comma-separated absolute directories under which a KupenstackConfiguration's charts.localPath may lie (symbolic links resolved); / allows any, an empty value none [KUPENSTACK_CHART_LOCAL_PATH_PREFIXES]")
	zapOpts := &zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, nil, err
	}
	if err := errors.Join(append(envErrs, o.checkBounds())...); err != nil {
		return o, nil, err // every mistake at once, one per line
	}
	if _, err := o.cloudSecretKey(); err != nil {
		return o, nil, err
	}
	if _, err := o.imageSources(); err != nil {
		return o, nil, err
	}
	if _, err := helm.ParseLocalPathPrefixes(o.chartLocalPaths); err != nil {
		return o, nil, fmt.Errorf("--chart-local-path-prefixes: %w", err)
	}
	return o, zapOpts, nil
}

// parseEnvDuration reads a period from the environment variable name: def when it is unset or
// empty, an error naming the variable when it is not a duration (parsePeriod).
func parseEnvDuration(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := parsePeriod(v)
	if err != nil {
		return def, fmt.Errorf("environment variable %s=%q is not a duration (like 90s, 10m or 1h)", name, v)
	}
	return d, nil
}

// periodSyntax is the CRDs' duration syntax (kupenstackv1.DurationPattern): Go's, without a sign,
// in at most four parts of at most five integer digits. The chart's schema holds its period
// values to the same pattern, so the two take the same values.
var periodSyntax = regexp.MustCompile(kupenstackv1.DurationPattern)

// parsePeriod reads a period flag's value: time.ParseDuration, for values of periodSyntax only.
func parsePeriod(s string) (time.Duration, error) {
	if !periodSyntax.MatchString(s) {
		return 0, fmt.Errorf("%q is not a duration such as 90s, 10m or 1h30m (units h, m, s, ms, us, ns; at most four parts of at most five digits before the point)", s)
	}
	return time.ParseDuration(s)
}

// periodValue is a flag.Value of parsePeriod.
type periodValue struct{ d *time.Duration }

func (p periodValue) String() string {
	if p.d == nil {
		return ""
	}
	return p.d.String()
}

func (p periodValue) Set(s string) error {
	d, err := parsePeriod(s)
	if err != nil {
		return err
	}
	*p.d = d
	return nil
}

// periodVar is flag.DurationVar with parsePeriod's syntax.
func periodVar(fs *flag.FlagSet, d *time.Duration, name string, def time.Duration, usage string) {
	*d = def
	fs.Var(periodValue{d}, name, usage)
}

// parseEnvBool reads a boolean from the environment variable name as a bool flag would
// (strconv.ParseBool): def when it is unset or empty, an error naming the variable when it is
// not a boolean (anything but "true" used to mean false: "yes" turned leader election off).
func parseEnvBool(getenv func(string) string, name string, def bool) (bool, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, fmt.Errorf("environment variable %s=%q is not a boolean (true or false)", name, v)
	}
	return b, nil
}

// minPeriod is the shortest period the operator accepts: shorter ones are a hot loop against the
// OpenStack APIs, not a setting.
const minPeriod = time.Second

// checkBounds refuses settings that would make the operator spin or stop: periods below
// minPeriod (where 0 does not mean off), no workers, no OpenStack request rate.
func (o options) checkBounds() error {
	var errs []error
	period := func(flag, env string, d time.Duration, zeroIsOff bool) {
		switch {
		case d == 0 && zeroIsOff:
		case d < minPeriod && zeroIsOff:
			errs = append(errs, fmt.Errorf("--%s (%s) %v: must be 0 (off) or at least %v", flag, env, d, minPeriod))
		case d < minPeriod:
			errs = append(errs, fmt.Errorf("--%s (%s) %v: must be at least %v", flag, env, d, minPeriod))
		}
	}
	period("resync-period", "KUPENSTACK_RESYNC_PERIOD", o.resyncPeriod, true)
	period("vm-health-period", "KUPENSTACK_VM_HEALTH_PERIOD", o.vmHealthPeriod, false)
	period("validation-period", "KUPENSTACK_VALIDATION_PERIOD", o.validationPeriod, true)
	if o.workers < 1 {
		errs = append(errs, fmt.Errorf("--workers %d: must be at least 1", o.workers))
	}
	if !(o.apiQPS > 0) { // NaN too
		errs = append(errs, fmt.Errorf("--openstack-qps %v: must be more than 0 (0 would block every OpenStack request)", o.apiQPS))
	}
	if o.apiBurst < 1 {
		errs = append(errs, fmt.Errorf("--openstack-burst %d: must be at least 1", o.apiBurst))
	}
	return errors.Join(errs...)
}

// imageSources is the policy of Image downloads the image-source flags give.
func (o options) imageSources() (image.SourcePolicy, error) {
	allowed, err := image.ParseCIDRs(o.imageSourcesAllowed)
	if err != nil {
		return image.SourcePolicy{}, fmt.Errorf("--image-source-allowed-cidrs: %w", err)
	}
	blocked, err := image.ParseCIDRs(o.imageSourcesBlocked)
	if err != nil {
		return image.SourcePolicy{}, fmt.Errorf("--image-source-blocked-cidrs: %w", err)
	}
	return image.SourcePolicy{Allowed: allowed, Blocked: blocked}, nil
}

func (o options) cloudSecretKey() (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(o.cloudSecret, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("--cloud-secret %q: want namespace/name", o.cloudSecret)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "render" {
		if err := runRender(os.Args[2:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return
			}
			fmt.Fprintln(os.Stderr, "kupenstack:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kupenstack:", err)
		os.Exit(1)
	}
}

func run() error {
	// controller-runtime registers --kubeconfig on the default flag set; KUBECONFIG works too.
	opts, zapOpts, err := parseFlags(flag.CommandLine, os.Args[1:], os.Getenv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(zapOpts)))
	log := ctrl.Log.WithName("setup")
	imageSources, _ := opts.imageSources()                                  // checked by parseFlags
	chartLocalPaths, _ := helm.ParseLocalPathPrefixes(opts.chartLocalPaths) // checked by parseFlags

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("finding the Kubernetes API: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme.New(),
		Metrics:                 metricsserver.Options{BindAddress: opts.metricsAddr},
		HealthProbeBindAddress:  opts.probeAddr,
		LeaderElection:          opts.leaderElect,
		LeaderElectionID:        "kupenstack.kupenstack.io",
		LeaderElectionNamespace: opts.leaderElectionNS,
		// A new leader starts at once when the old one exits cleanly.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	key, _ := opts.cloudSecretKey()
	clients := openstack.NewClients(openstack.SecretSource(mgr.GetAPIReader(), key, time.Minute),
		opts.cloudName, opts.apiQPS, opts.apiBurst)
	ctx := ctrl.SetupSignalHandler()
	if err := controller.SetupAll(ctx, mgr, controller.Options{
		Clients: clients, ResyncPeriod: opts.resyncPeriod, VMHealthPeriod: opts.vmHealthPeriod, Workers: opts.workers, NotificationsURL: opts.notificationsURL, DomainID: opts.domainID, MemberRole: opts.memberRole, LCM: opts.lcm, ImageSources: imageSources,
		LCMOptions: lcm.Options{CloudSecret: key, CloudName: opts.cloudName, ChartCacheDir: opts.chartCacheDir, ChartLocalPathPrefixes: chartLocalPaths},
	}); err != nil {
		return err
	}
	if opts.validationPeriod > 0 {
		// With or without the life-cycle controllers: an existing cloud is probed too.
		if err := mgr.Add(&validation.Agent{
			Clients: clients, Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(),
			Recorder: mgr.GetEventRecorder(validation.Name), Period: opts.validationPeriod,
			Log: ctrl.Log.WithName(validation.Name),
		}); err != nil {
			return fmt.Errorf("adding the validation agent: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	log.Info("starting manager", "cloudSecret", key.String(), "cloud", opts.cloudName)
	return mgr.Start(ctx)
}
