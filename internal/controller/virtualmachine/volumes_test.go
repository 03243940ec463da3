package virtualmachine

import (
	"fmt"
	"testing"
)

// TestVolumeBusy: attach and detach wait while Cinder moves the volume, and a detach also while
// Cinder already freed a volume Nova still lists on the server.
func TestVolumeBusy(t *testing.T) {
	for _, tc := range []struct {
		status    string
		detaching bool
		wait      bool
	}{
		{"in-use", true, false},
		{"available", true, true},
		{"detaching", true, true},
		{"attaching", true, true},
		{"reserved", true, true},
		{"error_detaching", true, false},
		{"available", false, false},
		{"attaching", false, true},
		{"reserved", false, true},
		{"in-use", false, false},
	} {
		err := volumeBusy("v", tc.status, tc.detaching)
		// The engine's wait (generic.WaitFor): the object stays Progressing and is looked at again.
		if waits := fmt.Sprintf("%T", err) == "generic.waitError"; waits != tc.wait || (err != nil && !waits) {
			t.Errorf("status %s, detaching %v: %v, want a wait %v", tc.status, tc.detaching, err, tc.wait)
		}
	}
}
