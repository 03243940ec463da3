package generic

import (
	"slices"
	"testing"
)

func TestDiffHelpers(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name string
		diff func(d *Diff)
		want []string
	}{
		{"equal values", func(d *Diff) { Value(d, "spec.a", "x", "x") }, nil},
		{"changed value", func(d *Diff) { Value(d, "spec.a", "x", "y") }, []string{"spec.a"}},
		{"unset optional is OpenStack's", func(d *Diff) { Optional(d, "spec.b", nil, true) }, nil},
		{"set optional differs", func(d *Diff) { Optional(d, "spec.b", &no, true) }, []string{"spec.b"}},
		{"set optional equal", func(d *Diff) { Optional(d, "spec.b", &yes, true) }, nil},
		{"set reordered", func(d *Diff) { Set(d, "spec.c", []string{"1", "2"}, []string{"2", "1"}) }, nil},
		{"set repeats", func(d *Diff) { Set(d, "spec.c", []string{"1", "1"}, []string{"1"}) }, nil},
		{"set added", func(d *Diff) { Set(d, "spec.c", []string{"1"}, []string{"1", "2"}) }, []string{"spec.c"}},
		{"set removed", func(d *Diff) { Set(d, "spec.c", []string{"1", "2"}, []string{"1"}) }, []string{"spec.c"}},
		{"set swapped", func(d *Diff) { Set(d, "spec.c", []string{"1", "2"}, []string{"1", "3"}) }, []string{"spec.c"}},
		{"sequence reordered", func(d *Diff) { Sequence(d, "spec.d", []string{"1", "2"}, []string{"2", "1"}) }, []string{"spec.d"}},
		{"map nil and empty", func(d *Diff) { Map(d, "spec.e", nil, map[string]string{}) }, nil},
		{"map value changed", func(d *Diff) { Map(d, "spec.e", map[string]string{"k": "v"}, map[string]string{"k": "w"}) }, []string{"spec.e"}},
		{"map key added", func(d *Diff) { Map(d, "spec.e", map[string]string{"k": "v"}, map[string]string{"k": "v", "x": ""}) }, []string{"spec.e"}},
		{"map key swapped", func(d *Diff) { Map(d, "spec.e", map[string]string{"k": "v"}, map[string]string{"j": "v"}) }, []string{"spec.e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d Diff
			tc.diff(&d)
			if got := d.Changes().Fields(); !slices.Equal(got, tc.want) && len(got)+len(tc.want) > 0 {
				t.Errorf("changes %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWorkIsNotDrift(t *testing.T) {
	var d Diff
	d.Add("spec.name", "a", "b")
	d.AddWork("spec.source", "uploaded", "queued")
	c := d.Changes()
	if got := c.Drift().Fields(); !slices.Equal(got, []string{"spec.name"}) {
		t.Errorf("drift %v, want only spec.name", got)
	}
	if !c.Has("spec.source") || c.String() != "spec.name, spec.source" {
		t.Errorf("changes %q must still list the work", c)
	}
}

func TestChangesOnly(t *testing.T) {
	tags := Change{Field: "spec.tags"}
	name := Change{Field: "spec.name"}
	for _, tc := range []struct {
		name    string
		changes Changes
		want    bool
	}{
		{"none", nil, false},
		{"the one change", Changes{tags}, true},
		{"another field", Changes{name}, false},
		{"with another", Changes{tags, name}, false},
		{"after another", Changes{name, tags}, false},
	} {
		if got := tc.changes.Only("spec.tags"); got != tc.want {
			t.Errorf("%s: Only(spec.tags) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
