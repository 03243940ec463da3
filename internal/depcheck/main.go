package depcheck

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// EnvPollInterval sets the default of -poll-interval (a Go duration).
const EnvPollInterval = "DEPENDENCY_POLL_INTERVAL"

// DefaultPollInterval is upstream's resolver sleep.
const DefaultPollInterval = 2 * time.Second

// Main is the kubernetes-entrypoint program: read the environment, wait for every dependency,
// then exec COMMAND (or exit 0 when it is empty). It returns the exit code when it does not exec.
func Main(args []string, getenv func(string) string, stderr io.Writer) int {
	logger := log.New(stderr, "kubernetes-entrypoint: ", log.LstdFlags|log.Lmsgprefix)
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	interval := DefaultPollInterval
	if v := getenv(EnvPollInterval); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			logger.Printf("%s=%q: want a positive duration such as 2s", EnvPollInterval, v)
			return 2
		}
		interval = d
	}
	fs.DurationVar(&interval, "poll-interval", interval, "how often unresolved dependencies are checked (env "+EnvPollInterval+")")
	repeat := fs.Duration("log-repeat", time.Minute, "repeat the log line of a dependency still waiting for the same thing this often")
	timeout := fs.Duration("timeout", 0, "give up (exit 1) after this long; 0 waits forever, as upstream")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if interval <= 0 {
		logger.Printf("-poll-interval must be positive")
		return 2
	}

	cfg, err := FromEnv(getenv, logger.Printf)
	if err != nil {
		logger.Printf("invalid dependencies: %v", err)
		return 1
	}
	if len(cfg.Deps) > 0 {
		e := &Env{Namespace: cfg.Namespace, PodName: cfg.PodName}
		if e.Kube, e.Dynamic, err = clients(getenv); err != nil {
			logger.Printf("Kubernetes API client: %v", err)
			return 1
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		if *timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, *timeout)
			defer cancel()
		}
		logger.Printf("pod %s in namespace %s: %d dependencies, checked every %s", cfg.PodName, cfg.Namespace, len(cfg.Deps), interval)
		if err := Resolve(ctx, e, cfg.Deps, interval, *repeat, logger); err != nil {
			logger.Printf("stopped before every dependency was resolved: %v", err)
			return 1
		}
		logger.Printf("all dependencies resolved")
	}
	if len(cfg.Command) == 0 {
		logger.Printf("%s is empty: nothing to run, exiting", EnvCommand)
		return 0
	}
	logger.Printf("running %q", cfg.Command)
	err = execCommand(cfg.Command)
	logger.Printf("cannot run %q: %v", cfg.Command, err)
	return 1
}

// execCommand replaces this process with the command; it returns only on failure.
func execCommand(argv []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, argv, os.Environ())
}

// clients uses KUBECONFIG when set (tests, running outside a cluster), else the in-cluster config.
func clients(getenv func(string) string) (kubernetes.Interface, dynamic.Interface, error) {
	var cfg *rest.Config
	var err error
	if path := getenv("KUBECONFIG"); path != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", path)
	} else {
		cfg, err = rest.InClusterConfig()
		if errors.Is(err, rest.ErrNotInCluster) {
			err = fmt.Errorf("%w (set KUBECONFIG to run outside a cluster)", err)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	cfg.UserAgent = "kubernetes-entrypoint"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return kube, dyn, nil
}
