package component

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// upgrade makes a new revision from what is wanted now, then judges it; a failed upgrade is
// rolled back at once.
type upgrade struct {
	retry bool
	// rollbackTo is the revision a failed upgrade goes back to: the last good one.
	rollbackTo int
}

func (a upgrade) act(ctx context.Context, p *pass, o *observation) outcome {
	comp := p.comp
	p.setPhase(ctx, kupenstackv1.ComponentPhaseUpgrading, true)
	rel, err := p.helm.Upgrade(ctx, comp.Name, o.chart, o.values, o.labels, "kupenstack: upgrade")
	countAction(p.r.Component, "upgrade", err)
	p.acted(a.retry)
	if err != nil {
		if stopping(ctx) {
			return interrupted(p, "upgrade", err)
		}
		return rollBack{target: a.rollbackTo, hash: o.hash, cause: oneLine(err)}.act(ctx, p, o)
	}
	p.event(corev1.EventTypeNormal, "Upgraded", "Upgrade", "upgraded to revision %d (chart %s %s, release %s)", rel.Version, o.chart.Name(), o.chart.Metadata.Version, comp.Spec.Release)
	p.recordRevision(rel, o.cv)
	return p.judge(ctx, o, rel)
}

// stopping says whether the pass's context was cancelled: the operator is shutting down (its
// pod deleted, a new leader elected), which makes Helm give up an action half done.
func stopping(ctx context.Context) bool { return ctx.Err() != nil }

// interrupted ends a pass whose Helm action the operator's own shutdown cut short. That is no
// verdict on the chart or the values: nothing is rolled back (a rollback would deploy the old
// revision's pods again, only for the next leader to upgrade once more) and nothing is recorded
// as failed (the same inputs would otherwise wait for a retry annotation). The revision Helm
// left failed or pending is taken up by the next pass, after the restart.
func interrupted(p *pass, action string, err error) outcome {
	p.log.Info("Helm action interrupted by the operator's shutdown; the next leader takes it up", "action", action, "error", oneLine(err))
	return outcome{state: transient(fmt.Errorf("%s interrupted by the operator's shutdown: %w", action, err))}
}
