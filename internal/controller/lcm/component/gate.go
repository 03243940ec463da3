package component

import (
	"context"
	"slices"
	"time"

	"helm.sh/helm/v3/pkg/release"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kupenstack/kupenstack/internal/lcm/gate"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
)

// The gates (values/gate.go) of a component's release: its long-running pods wait for the gate
// of their OpenStack release. The gates that exist are always those the last deployed revision
// waits for, with three moments where that changes:
//   - before a first install, the target's gate is created: no hook Job has run yet, so the pods
//     wait for the real runs anyway, and a hook that waits for the pods (keystone's and cinder's
//     bootstraps wait for their APIs) is not held;
//   - an upgrade within a release keeps the gate: the pods' code does not change release;
//   - an upgrade to another release creates the new gate once every Job the gated pods wait for
//     has run again for it, while Helm is still running the later hooks (cinder's bootstrap waits
//     for the new API pods), and at the latest once Helm succeeded. A rollback takes it away
//     again, so that the next try waits for its own runs.

// gatePoll is how often an upgrade to another release looks at its hook Jobs.
const gatePoll = 2 * time.Second

// syncGates makes the component's gates those the values (of the chart of chartValues) wait for.
func (p *pass) syncGates(ctx context.Context, chart string, chartValues, vals map[string]any) error {
	created, deleted, err := gate.Sync(ctx, p.r.Client, p.r.APIReader, p.comp.Spec.Namespace, p.comp.Name,
		values.Gates(chart, vals), chartValues, vals)
	for _, name := range created {
		p.event(corev1.EventTypeNormal, "GateCreated", "Gate", "gate Job %s created: the release's pods may start", name)
	}
	if len(deleted) > 0 {
		p.log.Info("gate Jobs deleted: the deployed revision does not wait for them", "jobs", deleted)
	}
	return err
}

// syncGatesOf makes the gates those a revision waits for.
func (p *pass) syncGatesOf(ctx context.Context, rel *release.Release) error {
	if rel == nil || rel.Chart == nil || rel.Chart.Metadata == nil {
		return nil
	}
	return p.syncGates(ctx, rel.Chart.Metadata.Name, rel.Chart.Values, rel.Config)
}

// gatesBeforeUpgrade creates the target's gates before an upgrade within a release (or from a
// revision that waits for no gate: made before gates existed); for an upgrade to another release
// it starts watching for the moment the new gate may be created, and returns the stop of that.
func (p *pass) gatesBeforeUpgrade(ctx context.Context, o *observation) (stop func(), err error) {
	chart := o.cv.Component.Chart
	target := values.Gates(chart, o.values)
	if o.deployed == nil {
		return func() {}, p.syncGates(ctx, chart, o.chart.Values, o.values)
	}
	if before := values.Gates(chart, o.deployed.Config); len(before) == 0 || slices.Equal(before, target) {
		return func() {}, p.syncGates(ctx, chart, o.chart.Values, o.values)
	}
	awaits := values.GateAwaits(chart, o.values)
	// The runs that exist now are the previous release's: the new ones have other UIDs.
	old := map[types.UID]bool{}
	have, err := p.hookJobs(ctx, awaits)
	if err != nil {
		return nil, err
	}
	for _, j := range have {
		old[j.UID] = true
	}
	watch, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(gatePoll)
		defer tick.Stop()
		for {
			select {
			case <-watch.Done():
				return
			case <-tick.C:
			}
			jobs, err := p.hookJobs(watch, awaits)
			if err != nil || !ranAgain(jobs, awaits, old) {
				continue
			}
			if err := p.syncGates(watch, chart, o.chart.Values, o.values); err != nil {
				p.log.Info("creating the new release's gate during the upgrade", "error", err.Error())
				continue
			}
			return
		}
	}()
	return func() { cancel(); <-done }, nil
}

// hookJobs reads the component's Jobs named in names.
func (p *pass) hookJobs(ctx context.Context, names []string) ([]batchv1.Job, error) {
	var list batchv1.JobList
	if err := p.r.APIReader.List(ctx, &list, client.InNamespace(p.comp.Spec.Namespace)); err != nil {
		return nil, err
	}
	var out []batchv1.Job
	for _, j := range list.Items {
		if slices.Contains(names, j.Name) {
			out = append(out, j)
		}
	}
	return out, nil
}

// ranAgain: every Job in names exists, is not one of the runs in old, and is Complete.
func ranAgain(jobs []batchv1.Job, names []string, old map[types.UID]bool) bool {
	for _, name := range names {
		i := slices.IndexFunc(jobs, func(j batchv1.Job) bool { return j.Name == name })
		if i < 0 || old[jobs[i].UID] || !complete(&jobs[i]) {
			return false
		}
	}
	return true
}

func complete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
