package realcluster

import (
	"testing"
	"time"
)

// TestBootBenchSummary: the boot benchmark's report, without a cluster: medians of odd and even
// counts, the ratio as the goal writes it, and the line with each round's times.
func TestBootBenchSummary(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name       string
		ds         []time.Duration
		wantMedian time.Duration
	}{
		{"none", nil, 0},
		{"one", []time.Duration{7 * s}, 7 * s},
		{"odd, unsorted", []time.Duration{9 * s, 1 * s, 4 * s}, 4 * s},
		{"even: the mean of the middle two", []time.Duration{60 * s, 50 * s, 10 * s, 100 * s}, 55 * s},
	} {
		if got := medianDuration(tc.ds); got != tc.wantMedian {
			t.Errorf("%s: medianDuration(%v) = %v, want %v", tc.name, tc.ds, got, tc.wantMedian)
		}
	}
	for _, tc := range []struct {
		a, b time.Duration
		want string
	}{
		{103 * s, 100 * s, "1.03×"},
		{95 * s, 100 * s, "0.95×"},
		{60 * s, 60 * s, "1.00×"},
		{10 * s, 0, "n/a"},
	} {
		if got := bootRatio(tc.a, tc.b); got != tc.want {
			t.Errorf("bootRatio(%v, %v) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name   string
		rounds []bootRound
		want   string
	}{
		{"two rounds", []bootRound{
			{kupenstack: 62*s + 340*time.Millisecond, direct: 60 * s},
			{kupenstack: 58 * s, direct: 57 * s, directFirst: true},
		}, "round 1 (kupenstack first): kupenstack 1m2.3s, direct 1m0s; " +
			"round 2 (direct first): kupenstack 58s, direct 57s; " +
			"median kupenstack 1m0.2s, direct 58.5s: kupenstack/direct 1.03× (goal ≤ 1.05×)"},
		{"no round", nil, "median kupenstack 0s, direct 0s: kupenstack/direct n/a (goal ≤ 1.05×)"},
	} {
		if got := bootBenchSummary(tc.rounds); got != tc.want {
			t.Errorf("%s: bootBenchSummary =\n%q, want\n%q", tc.name, got, tc.want)
		}
	}
}
