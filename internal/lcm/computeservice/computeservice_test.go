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
