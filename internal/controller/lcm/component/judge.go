package component

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

// judge makes no Helm action: the release is in sync, its newest revision is judged.
type judge struct{}

func (judge) act(ctx context.Context, p *pass, o *observation) outcome {
	p.recordRevision(o.last, o.cv)
	return p.judge(ctx, o, o.last)
}

// judge looks at a revision's objects and decides again, now on them: missing or changed ones
// are restored (drift), then the workloads decide between Deploying, Failed and Ready.
func (p *pass) judge(ctx context.Context, o *observation, rel *release.Release) outcome {
	if err := p.observeWorkloads(ctx, o, rel); err != nil {
		return outcome{state: transient(err)}
	}
	return p.step(ctx, o)
}

// ready: every object of the judged revision is there, as its manifest says, and ready.
type ready struct{}

func (ready) act(ctx context.Context, p *pass, o *observation) outcome {
	comp := p.comp
	if comp.Status.Phase != kupenstackv1.ComponentPhaseReady {
		p.event(corev1.EventTypeNormal, "Ready", "Deploy", "revision %d ready: %s workloads", o.judged.Version, comp.Status.Workloads)
	}
	comp.Status.Phase = kupenstackv1.ComponentPhaseReady
	comp.Status.LastGoodRevision = int32(o.judged.Version)
	comp.Status.LastError = ""
	if p.r.Publisher != nil && comp.Name == "keystone" {
		if err := p.r.Publisher.Publish(ctx, comp.Spec.Namespace); err != nil {
			return after(waitingPeriod, transient(fmt.Errorf("publishing the admin clouds.yaml: %w", err)))
		}
	}
	if p.r.Publisher != nil && comp.Name == notificationsComponent {
		if err := p.r.Publisher.PublishNotifications(ctx, o.chart, o.values, comp.Spec.Namespace); err != nil {
			return after(waitingPeriod, transient(fmt.Errorf("publishing the notification bus's URL: %w", err)))
		}
	}
	return after(p.r.ReadyPeriod, conditions.State{Ready: true})
}
