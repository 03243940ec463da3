package computeservice

import (
	"testing"
	"time"
)

func TestHostOf(t *testing.T) {
	for _, tt := range []struct {
		name  string
		hosts []string
		node  string
		want  int
	}{
		{"exact name", []string{"node-1", "node-2"}, "node-2", 1},
		{"FQDN in Nova, short node name", []string{"node-1.cloud.example", "node-2.cloud.example"}, "node-2", 1},
		{"FQDN node name, short in Nova", []string{"node-1", "node-2"}, "node-2.cloud.example", 1},
		{"exact name wins over a short-name match", []string{"node-2.other.example", "node-2"}, "node-2", 1},
		{"two hosts with the node's short name: none", []string{"node-2.a.example", "node-2.b.example"}, "node-2", -1},
		{"another host's name is no match", []string{"node-10", "node-1x"}, "node-1", -1},
		{"no hosts", nil, "node-1", -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := HostOf(tt.hosts, tt.node); got != tt.want {
				t.Errorf("HostOf(%v, %q) = %d, want %d", tt.hosts, tt.node, got, tt.want)
			}
		})
	}
}

func TestUpOnlyFromBefore(t *testing.T) {
	labelled := time.Date(2026, 11, 28, 17, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		state string
		heard time.Time
		want  bool
	}{
		{"up, heard after the label: the new nova-compute", "up", labelled.Add(3 * time.Second), false},
		{"up, heard at the label's second", "up", labelled, false},
		{"up from a heartbeat before the label: the one that left", "up", labelled.Add(-5 * time.Second), true},
		{"down, whatever its last heartbeat", "down", labelled.Add(-5 * time.Second), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := Service{State: tt.state, UpdatedAt: tt.heard}
			if got := s.UpOnlyFromBefore(labelled); got != tt.want {
				t.Errorf("UpOnlyFromBefore = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUpButSilent(t *testing.T) {
	now := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	const silent, limit = 30 * time.Second, 2 * time.Minute
	for _, tt := range []struct {
		name  string
		state string
		heard time.Time
		want  bool
	}{
		{"up, heard 5 s ago: heartbeating", "up", now.Add(-5 * time.Second), false},
		{"up, heard 30 s ago: a late heartbeat, not yet silence", "up", now.Add(-silent), false},
		{"up, heard 45 s ago: silent, Nova not counting it down yet", "up", now.Add(-45 * time.Second), true},
		{"up, heard 3 min ago: a clock apart from Nova's, not waited on", "up", now.Add(-3 * time.Minute), false},
		{"up, heard in the future (a clock behind Nova's)", "up", now.Add(time.Minute), false},
		{"down, heard 45 s ago", "down", now.Add(-45 * time.Second), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := Service{State: tt.state, UpdatedAt: tt.heard}
			if got := s.UpButSilent(now, silent, limit); got != tt.want {
				t.Errorf("UpButSilent = %v, want %v", got, tt.want)
			}
		})
	}
}
