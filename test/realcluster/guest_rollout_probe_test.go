package realcluster

import (
	"slices"
	"testing"
)

// TestProbeAnswering: the rollout probe's counting, without a cluster: rounds the control guest
// missed are the probe's own blindness and left out; a single round missed between two answered
// is a lost GET, not an outage; two in a row, or a member gone for good, are counted as down.
func TestProbeAnswering(t *testing.T) {
	const control = "10.0.0.9"
	r := func(ok ...string) map[string]bool {
		m := map[string]bool{"10.0.0.1": false, "10.0.0.2": false, "10.0.0.3": false, control: false}
		for _, ip := range ok {
			m[ip] = true
		}
		return m
	}
	p := &rolloutProbe{rounds: []map[string]bool{
		r(control, "10.0.0.1", "10.0.0.2"),
		r(control, "10.0.0.1"),             // .2 missed once: still counted
		r(control, "10.0.0.1", "10.0.0.2"), //
		r("10.0.0.1"),                      // blind: control missed
		r(control, "10.0.0.1", "10.0.0.3"), // .2 gone...
		r(control, "10.0.0.3"),             // ...and .1 too: down
		r(control, "10.0.0.3"),
	}}
	counts, blind := p.answering(control)
	if want := []int{2, 2, 2, 2, 1, 1}; !slices.Equal(counts, want) || blind != 1 {
		t.Errorf("answering = %v, blind %d; want %v, blind 1", counts, blind, want)
	}
}
