// Package conditions sets the Ready / Progressing / Degraded conditions every KupenStack object
// carries, from one description of where its reconciliation stands.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// State is where the reconciliation of one generation stands.
type State struct {
	// Ready: the declared thing exists and works.
	Ready bool
	// Waiting, when not empty, says what the operator is waiting for (still progressing, no error).
	Waiting string
	// WaitReason is the reason of a wait that users should tell apart from ordinary progress
	// (kupenstackv1.ReasonDeletionBlocked); ReasonProgressing when empty.
	WaitReason string
	// Reason and Message describe an error; Reason is one of the kupenstackv1.Reason* values.
	Reason, Message string
}

// Set writes the three conditions for generation. Conditions whose status, reason and message do
// not change keep their LastTransitionTime, so a steady object causes no status churn.
func Set(conds *[]metav1.Condition, generation int64, s State) {
	set := func(t string, ok bool, reason, msg string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(conds, metav1.Condition{
			Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: generation,
		})
	}
	switch {
	case s.Reason != "":
		set(kupenstackv1.ConditionReady, s.Ready, s.Reason, s.Message)
		// A transient error is still progress towards the goal; anything else needs a human.
		set(kupenstackv1.ConditionProgressing, s.Reason == kupenstackv1.ReasonTransientError, s.Reason, s.Message)
		set(kupenstackv1.ConditionDegraded, true, s.Reason, s.Message)
	case s.Waiting != "":
		reason := s.WaitReason
		if reason == "" {
			reason = kupenstackv1.ReasonProgressing
		}
		set(kupenstackv1.ConditionReady, s.Ready, reason, s.Waiting)
		set(kupenstackv1.ConditionProgressing, true, reason, s.Waiting)
		set(kupenstackv1.ConditionDegraded, false, kupenstackv1.ReasonSuccess, "")
	default:
		msg := "OpenStack resource is ready"
		if !s.Ready {
			msg = "OpenStack resource is not ready"
		}
		reason := kupenstackv1.ReasonSuccess
		set(kupenstackv1.ConditionReady, s.Ready, reason, msg)
		set(kupenstackv1.ConditionProgressing, false, reason, "")
		set(kupenstackv1.ConditionDegraded, false, reason, "")
	}
}

// IsReady says whether the Ready condition is True for the object's current generation.
func IsReady(conds []metav1.Condition, generation int64) bool {
	c := meta.FindStatusCondition(conds, kupenstackv1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == generation
}

// SetUnknownIfNew gives conditions that have no Ready condition yet a Ready Unknown one (reason
// Progressing) and says whether it did: what a controller writes at once on an object it sees
// for the first time, so that kubectl get shows Unknown rather than a blank while the first pass
// works (a printer column cannot default).
func SetUnknownIfNew(conds *[]metav1.Condition, generation int64) bool {
	if meta.FindStatusCondition(*conds, kupenstackv1.ConditionReady) != nil {
		return false
	}
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: kupenstackv1.ConditionReady, Status: metav1.ConditionUnknown, Reason: kupenstackv1.ReasonProgressing,
		Message: "the operator is looking at it", ObservedGeneration: generation,
	})
	return true
}
