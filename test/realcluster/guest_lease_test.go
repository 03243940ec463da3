package realcluster

import (
	"slices"
	"testing"
)

func TestLastBootAndLease(t *testing.T) {
	first := []string{"dhcp eth0 none", "metadata unreachable", "hostkey ssh-ed25519 AAAA1", "ready"}
	second := []string{"dhcp eth0 10.77.0.9/24 gw 10.77.0.1", "metadata hostname=web.novalocal keys=0", "hostkey ssh-ed25519 AAAA2", "ready"}
	for _, tt := range []struct {
		name         string
		lines, boot  []string
		withoutLease bool
	}{
		{"one boot with a lease", second, second, false},
		{"one boot without", first, first, true},
		{"the console keeps both boots", slices.Concat(first, second), second, false},
		{"the second boot still coming", slices.Concat(first, []string{"dhcp eth0 none"}), []string{"dhcp eth0 none"}, true},
		{"two NICs, the second without", []string{"dhcp eth0 10.0.0.2/24 gw none", "dhcp eth1 none", "ready"}, []string{"dhcp eth0 10.0.0.2/24 gw none", "dhcp eth1 none", "ready"}, true},
		{"nothing yet", nil, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			boot := lastBoot(tt.lines)
			if !slices.Equal(boot, tt.boot) {
				t.Errorf("lastBoot = %q, want %q", boot, tt.boot)
			}
			if got := withoutLease(boot); got != tt.withoutLease {
				t.Errorf("withoutLease(%q) = %v, want %v", boot, got, tt.withoutLease)
			}
		})
	}
}
