package component

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

// install makes the first revision of the release, then judges it.
type install struct {
	// retry: a retry asked for with the annotation, recorded once made.
	retry bool
}

func (a install) act(ctx context.Context, p *pass, o *observation) outcome {
	comp := p.comp
	p.setPhase(ctx, kupenstackv1.ComponentPhaseInstalling, true)
	rel, err := p.helm.Install(ctx, comp.Name, o.chart, o.values, o.labels, "kupenstack: install")
	countAction(p.r.Component, "install", err)
	p.acted(a.retry)
	if err != nil {
		if stopping(ctx) {
			return interrupted(p, "install", err)
		}
		// Not tried again with the same inputs until a retry is asked for.
		comp.Status.FailedHash, comp.Status.LastError = o.hash, oneLine(err)
		comp.Status.Phase = kupenstackv1.ComponentPhaseFailed
		p.event(corev1.EventTypeWarning, kupenstackv1.ReasonInstallFailed, "Install", "installing chart %s: %s", o.cv.Component.Chart, oneLine(err))
		return outcome{state: conditions.State{Reason: kupenstackv1.ReasonInstallFailed, Message: oneLine(err)}}
	}
	p.event(corev1.EventTypeNormal, "Installed", "Install", "chart %s %s installed as revision %d", o.chart.Name(), o.chart.Metadata.Version, rel.Version)
	p.recordRevision(rel, o.cv)
	return p.judge(ctx, o, rel)
}

// reinstall clears what a failed or interrupted install left (no revision was ever deployed, so
// there is nothing to keep or upgrade from) and installs again. The chart's uninstall hooks are
// not run: they assume an install that finished (a real-cluster run stayed stuck on keystone's
// failing credential cleanup after the operator was killed before keystone's db-sync).
type reinstall struct{ install }

func (a reinstall) act(ctx context.Context, p *pass, o *observation) outcome {
	if err := p.helm.UninstallUnfinished(p.comp.Name); err != nil {
		countAction(p.r.Component, "uninstall", err)
		return outcome{state: transient(err)}
	}
	return a.install.act(ctx, p, o)
}
