package generic

import (
	"testing"
	"time"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// TestResyncAfterBounds: an object's own resyncPeriod sets its drift check; one below the
// admission minimum (stored before the rule existed) is raised to it rather than looping.
func TestResyncAfterBounds(t *testing.T) {
	r := &Reconciler[*kupenstackv1.KeyPair, string]{}
	for _, tc := range []struct {
		period   time.Duration
		min, max time.Duration
	}{
		{period: time.Nanosecond, min: time.Second, max: 1100 * time.Millisecond},
		{period: 500 * time.Millisecond, min: time.Second, max: 1100 * time.Millisecond},
		{period: time.Minute, min: time.Minute, max: 66 * time.Second},
		{period: 0, min: 0, max: 0},
	} {
		k := &kupenstackv1.KeyPair{}
		k.Spec.ResyncPeriod = &kupenstackv1.Duration{Duration: tc.period}
		for range 20 {
			if got := r.resyncAfter(k); got < tc.min || got > tc.max {
				t.Errorf("resyncPeriod %s: next check in %s, want within [%s, %s]", tc.period, got, tc.min, tc.max)
				break
			}
		}
	}
}
