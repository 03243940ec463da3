package conditions

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

func TestSet(t *testing.T) {
	type want struct{ ready, progressing, degraded metav1.ConditionStatus }
	T, F := metav1.ConditionTrue, metav1.ConditionFalse
	for _, tt := range []struct {
		name   string
		state  State
		want   want
		reason string
	}{
		{"ready", State{Ready: true}, want{T, F, F}, kupenstackv1.ReasonSuccess},
		{"waiting", State{Waiting: "waiting for Network/a to be ready"}, want{F, T, F}, kupenstackv1.ReasonProgressing},
		{"deletion blocked", State{Waiting: "Port/p refers to it", WaitReason: kupenstackv1.ReasonDeletionBlocked}, want{F, T, F}, kupenstackv1.ReasonDeletionBlocked},
		{"transient", State{Reason: kupenstackv1.ReasonTransientError, Message: "503"}, want{F, T, T}, kupenstackv1.ReasonTransientError},
		{"invalid", State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: "bad CIDR"}, want{F, F, T}, kupenstackv1.ReasonInvalidConfiguration},
		{"ready but degraded", State{Ready: true, Reason: kupenstackv1.ReasonInvalidConfiguration}, want{T, F, T}, kupenstackv1.ReasonInvalidConfiguration},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var conds []metav1.Condition
			Set(&conds, 3, tt.state)
			for typ, w := range map[string]metav1.ConditionStatus{
				kupenstackv1.ConditionReady: tt.want.ready, kupenstackv1.ConditionProgressing: tt.want.progressing,
				kupenstackv1.ConditionDegraded: tt.want.degraded,
			} {
				c := meta.FindStatusCondition(conds, typ)
				if c == nil || c.Status != w || c.ObservedGeneration != 3 {
					t.Errorf("%s = %+v, want status %s at generation 3", typ, c, w)
				}
			}
			if r := meta.FindStatusCondition(conds, kupenstackv1.ConditionReady).Reason; r != tt.reason {
				t.Errorf("Ready reason = %s, want %s", r, tt.reason)
			}
			if got := IsReady(conds, 3); got != (tt.want.ready == T) {
				t.Errorf("IsReady = %v", got)
			}
			if IsReady(conds, 4) {
				t.Error("IsReady must be false for a newer generation")
			}
		})
	}
}

func TestSetKeepsTransitionTime(t *testing.T) {
	var conds []metav1.Condition
	Set(&conds, 1, State{Ready: true})
	first := meta.FindStatusCondition(conds, kupenstackv1.ConditionReady).LastTransitionTime
	first.Time = first.Add(-3600e9)
	meta.FindStatusCondition(conds, kupenstackv1.ConditionReady).LastTransitionTime = first
	Set(&conds, 2, State{Ready: true})
	if got := meta.FindStatusCondition(conds, kupenstackv1.ConditionReady).LastTransitionTime; !got.Equal(&first) {
		t.Fatalf("LastTransitionTime changed without a transition: %v -> %v", first, got)
	}
}
