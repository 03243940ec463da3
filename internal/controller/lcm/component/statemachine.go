package component

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
)

// A pass is an explicit state machine, in the spirit of Flux helm-controller's release loop:
//
//	observe (observe.go)  configuration, values, chart, credentials, Helm history (unlocked)
//	decide  (decide.go)   pure: observation + component status + now -> exactly one action
//	act     (one file per action: install.go, upgrade.go, rollback.go, repair.go, judge.go, ...)
//
// An action that leaves a revision to look at (install, upgrade, or none when the release is in
// sync) ends by judging it: the revision's objects are observed (workloads, drift) and decide
// is asked again, now for a verdict (ready, deploying, repair, roll back, degraded). Judging never
// leads to another judgement, so a pass makes at most two decisions and two Helm actions (an
// upgrade and its rollback, or an install after clearing a failed one).

// pass is one reconciliation of one component.
type pass struct {
	// services is the validation agent's report, from the configuration's status.
	services []kupenstackv1.ServiceHealth
	r        *Reconciler
	comp     *kupenstackv1.OpenstackComponent
	helm     *helm.Client
	log      logr.Logger
	// chartVersion is the version of the chart loaded, wantVersion the release table's.
	chartVersion, wantVersion string
}

// outcome ends a pass: when to look again, and where the component stands.
type outcome struct {
	result ctrl.Result
	state  conditions.State
}

func after(d time.Duration, s conditions.State) outcome {
	return outcome{result: ctrl.Result{RequeueAfter: d}, state: s}
}

// action is one step of the state machine; each one is small and lives in its own file.
type action interface {
	act(ctx context.Context, p *pass, o *observation) outcome
}

func (p *pass) sync(ctx context.Context) (ctrl.Result, conditions.State) {
	p.comp.Status.HelmRelease = p.comp.Spec.Namespace + "/" + p.comp.Name
	o, failed := p.observe(ctx)
	if failed != nil {
		return failed.result, failed.state
	}
	out := p.step(ctx, o)
	return out.result, out.state
}

// step decides on what is observed and acts on it.
func (p *pass) step(ctx context.Context, o *observation) outcome {
	a := decide(o, p.comp, time.Now())
	p.log.V(1).Info("acting", "action", fmt.Sprintf("%T", a))
	return a.act(ctx, p, o)
}

func (p *pass) event(kind, reason, action, format string, args ...any) {
	p.r.Recorder.Eventf(p.comp, nil, kind, reason, action, format, args...)
}

// setPhase records the phase and, before a long Helm action, shows it at once.
func (p *pass) setPhase(ctx context.Context, phase string, persist bool) {
	if p.comp.Status.Phase == phase {
		return
	}
	before := p.comp.DeepCopy()
	p.comp.Status.Phase = phase
	if persist {
		if err := p.r.Client.Status().Patch(ctx, p.comp, client.MergeFrom(before)); err != nil {
			p.log.V(1).Info("showing the phase", "phase", phase, "error", err.Error())
		}
	}
}

// acted records that a Helm action was made now (a new revision's deadline starts), and that a
// retry asked for with the annotation was made.
func (p *pass) acted(retry bool) {
	now := metav1.Now()
	p.comp.Status.LastActionTime = &now
	if retry {
		p.comp.Status.RetriedWith = p.comp.Annotations[kupenstackv1.AnnotationRetry]
	}
}

func (p *pass) recordRevision(rel *release.Release, cv *values.ComponentValues) {
	st := &p.comp.Status
	st.Revision = int32(rel.Version)
	st.AppliedHash = rel.Labels[labelHash]
	st.Release = rel.Labels[labelRelease]
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		st.ChartVersion = rel.Chart.Metadata.Version
	}
	// Every caller passes a revision made from cv: just installed or upgraded, or unchanged.
	st.Images = cv.ImageTags
}
