// Package helm installs, upgrades, rolls back and uninstalls the Helm releases of the cloud's
// components with the Helm SDK, and loads their charts from a directory, a chart repository or an
// OCI registry.
package helm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// MaxHistory is how many revisions of a release Helm keeps: enough to roll back a few times.
const MaxHistory = 10

// Client acts on the Helm releases of one namespace.
type Client struct {
	cfg       *action.Configuration
	jobs      kubernetes.Interface
	namespace string
	// HookTimeout bounds how long Helm waits for a release's hook Jobs (database creation,
	// endpoints...) during an action; Helm itself never waits for the workloads here.
	HookTimeout time.Duration
	// DisableHooks leaves out the releases' hooks in every action: only for tests against an
	// API server that runs no pods, where a hook Job would never complete.
	DisableHooks bool
	// WaitReady makes Install wait, as `helm install --wait --wait-for-jobs` does, until the
	// release's workloads are ready and its Jobs complete (within HookTimeout). The life-cycle
	// never sets it (it judges readiness itself); the deploy benchmark compares against it.
	WaitReady bool
}

// NewClient returns a client for the releases in namespace, stored as Secrets like the helm CLI
// stores them (so `helm list -n <namespace>` shows them).
func NewClient(config *rest.Config, namespace string, log logr.Logger) (*Client, error) {
	cfg := new(action.Configuration)
	debug := func(format string, v ...any) { log.V(1).Info(fmt.Sprintf(format, v...)) }
	if err := cfg.Init(newRESTGetter(config, namespace), namespace, "secret", debug); err != nil {
		return nil, fmt.Errorf("helm: %w", err)
	}
	cs, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("helm: %w", err)
	}
	return &Client{cfg: cfg, jobs: cs, namespace: namespace, HookTimeout: 10 * time.Minute}, nil
}

// Last returns the latest revision of release name, or nil when there is none.
func (c *Client) Last(name string) (*release.Release, error) {
	rel, err := c.cfg.Releases.Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	return rel, err
}

// History returns every stored revision of release name, oldest first.
func (c *Client) History(name string) ([]*release.Release, error) {
	h, err := c.cfg.Releases.History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sortByRevision(h)
	return h, nil
}

func sortByRevision(h []*release.Release) {
	slices.SortFunc(h, func(a, b *release.Release) int { return a.Version - b.Version })
}

// Install installs release name. Helm does not wait for the workloads (readiness is judged by
// the caller from the release's objects), only for its hooks.
func (c *Client) Install(ctx context.Context, name string, ch *chart.Chart, values map[string]any, labels map[string]string, description string) (*release.Release, error) {
	in := action.NewInstall(c.cfg)
	in.Labels = labels
	in.ReleaseName = name
	in.Namespace = c.namespace
	in.CreateNamespace = true
	in.Timeout = c.HookTimeout
	in.Description = description
	in.DisableHooks = c.DisableHooks
	in.Wait, in.WaitForJobs = c.WaitReady, c.WaitReady
	return in.RunWithContext(ctx, ch, values)
}

// Upgrade upgrades release name to the chart and values.
func (c *Client) Upgrade(ctx context.Context, name string, ch *chart.Chart, values map[string]any, labels map[string]string, description string) (*release.Release, error) {
	if err := c.deleteFinishedJobs(ctx, name); err != nil {
		return nil, err
	}
	up := action.NewUpgrade(c.cfg)
	up.Labels = labels
	up.Namespace = c.namespace
	up.Timeout = c.HookTimeout
	up.MaxHistory = MaxHistory
	up.Description = description
	up.DisableHooks = c.DisableHooks
	return up.RunWithContext(ctx, name, ch, values)
}

// Rollback makes revision the content of a new revision of release name.
func (c *Client) Rollback(name string, revision int) error {
	if err := c.deleteFinishedJobs(context.Background(), name); err != nil {
		return err
	}
	rb := action.NewRollback(c.cfg)
	rb.Version = revision
	rb.Timeout = c.HookTimeout
	rb.MaxHistory = MaxHistory
	rb.DisableHooks = c.DisableHooks
	return rb.Run(name)
}

// deleteFinishedJobs deletes the finished Jobs of the release's manifest (not its hooks, which
// Helm replaces itself) before an action changes them: a Job's pod template cannot be changed,
// so Helm's patch of, say, nova-bootstrap with a new release's image fails the whole upgrade.
// The next revision creates them again; OpenStack-Helm writes these Jobs (nova's bootstrap and
// cell setup) to be run again after a change. A Job still running is left to finish.
func (c *Client) deleteFinishedJobs(ctx context.Context, name string) error {
	last, err := c.Last(name)
	if err != nil || last == nil {
		return err
	}
	objs, err := Objects(last.Manifest, c.namespace)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.GVK.Group != "batch" || o.GVK.Kind != "Job" {
			continue
		}
		job, err := c.jobs.BatchV1().Jobs(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading Job %s: %w", o, err)
		}
		if !jobFinished(job) {
			continue
		}
		background := metav1.DeletePropagationBackground
		err = c.jobs.BatchV1().Jobs(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{PropagationPolicy: &background,
			Preconditions: &metav1.Preconditions{UID: &job.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting finished Job %s: %w", o, err)
		}
	}
	return nil
}

func jobFinished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// Uninstall removes release name and its objects; a release that does not exist is not an error.
func (c *Client) Uninstall(name string) error { return c.uninstall(name, c.DisableHooks) }

func (c *Client) uninstall(name string, disableHooks bool) error {
	un := action.NewUninstall(c.cfg)
	un.IgnoreNotFound = true
	un.Timeout = c.HookTimeout
	un.DisableHooks = disableHooks
	_, err := un.Run(name)
	return err
}

// UninstallUnfinished uninstalls a release no revision of which was ever deployed, without its
// hooks: its pre-delete hooks clean up after a cloud that an unfinished install never made, and
// can fail for ever (keystone's credential cleanup needs the tables its db-sync, not yet run,
// creates; Helm then retries that uninstall hook by hook timeout, and the install never comes).
func (c *Client) UninstallUnfinished(name string) error { return c.uninstall(name, true) }

// UnlockPending marks a release left in pending-install/upgrade/rollback as failed. Helm refuses
// any action on a pending release; one is only left pending when the process acting on it died
// (the caller is the only one acting on its releases), so the action is known to be interrupted.
// It returns whether it changed anything.
func (c *Client) UnlockPending(rel *release.Release) (bool, error) {
	if rel == nil || !rel.Info.Status.IsPending() {
		return false, nil
	}
	rel.SetStatus(release.StatusFailed, fmt.Sprintf("interrupted while %s: the operator stopped during the action", rel.Info.Status))
	return true, c.cfg.Releases.Update(rel)
}

// LastDeployed returns the newest revision that was ever deployed successfully (status deployed
// or superseded), or nil.
func LastDeployed(history []*release.Release) *release.Release {
	for i := len(history) - 1; i >= 0; i-- {
		switch history[i].Info.Status {
		case release.StatusDeployed, release.StatusSuperseded:
			return history[i]
		}
	}
	return nil
}

// Render renders a chart with values client-side (no cluster needed) and returns the manifest,
// hooks included; used by `kupenstack render` and to validate values before an action.
func Render(ch *chart.Chart, name, namespace string, values map[string]any) (string, error) {
	in := action.NewInstall(&action.Configuration{})
	in.ReleaseName = name
	in.Namespace = namespace
	in.DryRun = true
	in.ClientOnly = true
	in.Replace = true
	rel, err := in.Run(ch, values)
	if err != nil {
		return "", err
	}
	out := rel.Manifest
	for _, h := range rel.Hooks {
		out += "\n---\n# Source: " + h.Path + "\n" + h.Manifest
	}
	return out, nil
}
