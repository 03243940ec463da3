package component

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

// rollBack returns a failed upgrade (or one not ready within the progress deadline) to the last
// good revision and stops there: the same values are not tried again until they change or a
// retry is asked for.
type rollBack struct {
	target int
	// hash is what failed, cause why (one line).
	hash, cause string
}

func (a rollBack) act(_ context.Context, p *pass, _ *observation) outcome {
	comp := p.comp
	comp.Status.FailedHash, comp.Status.LastError = a.hash, a.cause
	msg := "upgrade failed: " + a.cause
	if err := p.helm.Rollback(comp.Name, a.target); err != nil {
		countAction(p.r.Component, "rollback", err)
		comp.Status.Phase = kupenstackv1.ComponentPhaseFailed
		msg = fmt.Sprintf("%s; rolling back to revision %d failed too: %s", msg, a.target, oneLine(err))
		p.event(corev1.EventTypeWarning, kupenstackv1.ReasonUpgradeFailed, "Rollback", "%s", msg)
		return after(time.Minute, conditions.State{Reason: kupenstackv1.ReasonUpgradeFailed, Message: msg})
	}
	countAction(p.r.Component, "rollback", nil)
	now := metav1.Now()
	comp.Status.LastActionTime = &now // the rolled-back revision gets its own deadline
	comp.Status.Phase = kupenstackv1.ComponentPhaseRolledBack
	msg = fmt.Sprintf("%s; rolled back to revision %d", msg, a.target)
	comp.Status.LastError = msg
	if last, err := p.helm.Last(comp.Name); err == nil && last != nil {
		comp.Status.Revision = int32(last.Version)
	}
	p.event(corev1.EventTypeWarning, kupenstackv1.ReasonUpgradeFailed, "Rollback", "%s", msg)
	return outcome{state: conditions.State{Reason: kupenstackv1.ReasonUpgradeFailed, Message: msg}}
}
