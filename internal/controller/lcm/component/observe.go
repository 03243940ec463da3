package component

import (
	"context"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/lcm/credentials"
	"github.com/kupenstack/kupenstack/internal/lcm/desired"
	"github.com/kupenstack/kupenstack/internal/lcm/drift"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
	"github.com/kupenstack/kupenstack/internal/lcm/workloads"
)

// observation is everything a decision is made from, read before any action. Observing stops
// early at a gate (suspended, no configuration, not enabled, stale spec): the fields after it
// stay empty, and decide looks at the gates first.
type observation struct {
	suspended  bool
	noConfig   bool
	notEnabled bool
	// stale: the component's spec does not say yet what the configuration says.
	stale bool

	cv     *values.ComponentValues
	chart  *chart.Chart
	values map[string]any
	// hash identifies what a revision made now would be made of; labels go on that revision.
	hash   string
	labels map[string]string
	// history of the release before this pass's action, oldest first (a pending revision already
	// marked failed); last is its newest revision, deployed the newest ever deployed (or nil).
	history        []*release.Release
	last, deployed *release.Release
	// deadline is the configuration's progress deadline (0: none).
	deadline time.Duration
	// components are all the components (dependencies and release upgrade phases), or the
	// error listing them.
	components    []kupenstackv1.OpenstackComponent
	componentsErr error
	// missing says which prerequisite of the values (an object of the cloud's namespace the
	// pods mount) does not exist; empty when all do.
	missing string

	// Filled when a revision is judged: the revision, its objects in the cluster, and what the
	// recent drift repairs were.
	judged      *release.Release
	workloads   *workloads.Summary
	repair      repairMemory
	readyPeriod time.Duration
}

// repairMemory is what the last drift repairs restored, how many in a row, since when.
type repairMemory struct {
	what  string
	count int
	since time.Time
}

// fail ends a pass while observing, with the error classified: transient (retried) or
// InvalidConfiguration (waits for a new configuration).
func fail(d time.Duration, s conditions.State) (*observation, *outcome) {
	out := after(d, s)
	return nil, &out
}

func (p *pass) observe(ctx context.Context) (*observation, *outcome) {
	comp := p.comp
	o := &observation{readyPeriod: p.r.ReadyPeriod}
	if comp.Spec.Suspend {
		o.suspended = true
		return o, nil
	}
	var cfg kupenstackv1.KupenstackConfiguration
	if err := p.r.Client.Get(ctx, types.NamespacedName{Name: kupenstackv1.KupenstackConfigurationName}, &cfg); err != nil {
		if apierrors.IsNotFound(err) {
			o.noConfig = true
			return o, nil
		}
		return fail(0, transient(err))
	}
	p.services = cfg.Status.Services
	if d := cfg.Spec.ProgressDeadline; d != nil {
		if err := d.Err(); err != nil { // stored before admission checked it
			return fail(0, invalid(fmt.Errorf("spec.progressDeadline: %w", err)))
		}
		o.deadline = d.Duration
	}
	out, err := desired.Render(ctx, p.r.Client, &cfg)
	if err != nil {
		return fail(0, invalid(err))
	}
	for i := range out.Components {
		if out.Components[i].Component.Name == comp.Name {
			o.cv = &out.Components[i]
		}
	}
	if o.cv == nil {
		o.notEnabled = true
		return o, nil
	}
	cv := o.cv
	// Act only on a consistent picture: the release gating reads the other components' specs,
	// which the configuration controller writes, so this component's spec must already say what
	// the configuration says (a loop woken by the configuration itself can run first).
	if comp.Spec.Release != cfg.Spec.Release || comp.Spec.ValuesHash != cv.Hash {
		o.stale = true
		return o, nil
	}
	src := chartSource(cfg.Spec.Charts)
	ch, err := p.r.Charts.Load(src, cv.Component.Chart, cv.ChartVersion)
	if err != nil {
		reason := kupenstackv1.ReasonTransientError
		if src.LocalPath != "" {
			reason = kupenstackv1.ReasonInvalidConfiguration // a missing directory does not fix itself
		}
		return fail(time.Minute, conditions.State{Reason: reason, Message: err.Error()})
	}
	o.chart = ch
	p.chartVersion, p.wantVersion = ch.Metadata.Version, cv.ChartVersion
	// Per-node overrides under a key the chart does not have would be silently ignored.
	if err := cv.Component.CheckNodeDaemonSets(helm.NodeDaemonSets(ch)); err != nil {
		return fail(0, invalid(err))
	}
	// Exactly the secrets this chart declares, generated once for the whole cloud.
	pw, err := credentials.Ensure(ctx, p.r.Client, comp.Spec.Namespace, desired.SecretKeys(cv, ch.Values))
	if err != nil {
		return fail(0, transient(err))
	}
	if o.values, err = desired.ChartValues(cv, ch.Values, pw); err != nil {
		return fail(0, invalid(err))
	}
	// The OpenStack release is part of what a revision is made from even when the component's
	// values do not change with it (infrastructure images), so that a release upgrade moves
	// every component, phase after phase.
	o.hash = values.Hash(map[string]any{"values": o.values, "chart": helm.Digest(ch), "release": comp.Spec.Release})
	o.labels = map[string]string{labelHash: o.hash, labelRelease: comp.Spec.Release}

	if o.history, err = p.helm.History(comp.Name); err != nil {
		return fail(0, transient(err))
	}
	if len(o.history) > 0 {
		o.last = o.history[len(o.history)-1]
	}
	// Helm refuses any action on a pending revision, and only a process that died leaves one:
	// marked failed (in place, so last says so), it is then upgraded or reinstalled like any
	// failed revision.
	if unlocked, err := p.helm.UnlockPending(o.last); err != nil {
		return fail(0, transient(err))
	} else if unlocked {
		p.event(corev1.EventTypeWarning, "ReleaseUnlocked", "Recover", "revision %d was left %s by an interrupted action; marked failed to carry on", o.last.Version, "pending")
	}
	o.deployed = helm.LastDeployed(o.history)
	if o.missing, err = p.missingPrerequisite(ctx, cv.Prerequisites); err != nil {
		return fail(0, transient(err))
	}
	var all kupenstackv1.OpenstackComponentList
	if o.componentsErr = p.r.Client.List(ctx, &all); o.componentsErr == nil {
		o.components = all.Items
	}
	return o, nil
}

// observeWorkloads reads the objects of the revision to judge into the observation: their
// workloads and, when all are ready, whether any field was changed by hand.
func (p *pass) observeWorkloads(ctx context.Context, o *observation, rel *release.Release) error {
	objs, err := helm.Objects(rel.Manifest, p.comp.Spec.Namespace)
	if err != nil {
		return err
	}
	sum, err := workloads.Check(ctx, p.r.APIReader, objs)
	if err != nil {
		return err
	}
	p.comp.Status.Workloads = fmt.Sprintf("%d/%d", sum.Ready, sum.Total)
	if sum.AllReady() {
		// Everything else is fine: look for fields changed by hand in any object (cheap for
		// objects unchanged since they last matched).
		if p.r.drift == nil {
			p.r.drift = &drift.Checker{Client: p.r.Client, Reader: p.r.APIReader}
		}
		changed, err := p.r.drift.Check(ctx, rel.Version, objs, sum.Versions)
		if err != nil {
			return err
		}
		sum.Modified = changed
	}
	o.judged, o.workloads = rel, &sum
	o.repair = repairMemory{what: p.r.lastRepair, count: p.r.repairs, since: p.r.firstRepairAt}
	return nil
}

// missingPrerequisite describes the first prerequisite that does not exist in the cloud's
// namespace ("" when all do). Only metadata is read, through the API reader: no cache of every
// Secret, and no key in memory.
func (p *pass) missingPrerequisite(ctx context.Context, needs []values.Prerequisite) (string, error) {
	for _, n := range needs {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(n.Kind))
		err := p.r.APIReader.Get(ctx, types.NamespacedName{Namespace: p.comp.Spec.Namespace, Name: n.Name}, obj)
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Sprintf("waiting for the %s %s/%s (%s)", n.Kind, p.comp.Spec.Namespace, n.Name, n.Why), nil
		case err != nil:
			return "", err
		}
	}
	return "", nil
}
