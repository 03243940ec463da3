package component

import (
	"context"

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
		return rollBack{target: a.rollbackTo, hash: o.hash, cause: oneLine(err)}.act(ctx, p, o)
	}
	p.event(corev1.EventTypeNormal, "Upgraded", "Upgrade", "upgraded to revision %d (chart %s %s, release %s)", rel.Version, o.chart.Name(), o.chart.Metadata.Version, comp.Spec.Release)
	p.recordRevision(rel, o.cv)
	return p.judge(ctx, o, rel)
}
