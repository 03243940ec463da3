package project

import (
	"strings"
	"testing"
)

func TestKeystoneName(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, tc := range []struct{ namespace, want string }{
		{"team-a", "kupenstack-team-a"},
		{strings.Repeat("b", 53), "kupenstack-" + strings.Repeat("b", 53)}, // exactly 64
	} {
		if got := KeystoneName(tc.namespace); got != tc.want {
			t.Errorf("KeystoneName(%q) = %q, want %q", tc.namespace, got, tc.want)
		}
	}
	a, b := KeystoneName(long), KeystoneName(long[:62]+"c")
	if len(a) != 64 || len(b) != 64 || a == b || !strings.HasPrefix(a, "kupenstack-aaaa") {
		t.Errorf("long namespaces: %q and %q (must be 64 characters, distinct)", a, b)
	}
	if KeystoneName(long) != a {
		t.Error("not stable")
	}
}
