package drift

import (
	"slices"
	"testing"
)

func TestDiff(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": "glance-etc", "resourceVersion": "7", "generation": int64(1),
				"managedFields": []any{map[string]any{"manager": "helm"}}},
			"data":   map[string]any{"a": "x", "b": "y"},
			"status": map[string]any{"replicas": int64(1)},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(live map[string]any)
		want   []string
	}{
		{"identical", func(map[string]any) {}, nil},
		{"bookkeeping and status only", func(l map[string]any) {
			m := l["metadata"].(map[string]any)
			m["resourceVersion"], m["generation"], m["managedFields"] = "9", int64(2), nil
			l["status"] = map[string]any{"replicas": int64(3)}
		}, nil},
		{"a value changed", func(l map[string]any) { l["data"].(map[string]any)["a"] = "edited" }, []string{"data.a"}},
		{"a key added", func(l map[string]any) { l["data"].(map[string]any)["c"] = "new" }, []string{"data.c"}},
		{"a map replaced by a scalar", func(l map[string]any) { l["data"] = "flat" }, []string{"data"}},
		{"many differences are cut short", func(l map[string]any) {
			l["data"] = map[string]any{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}
		}, []string{"data.a", "data.b", "data.c", "2 more"}},
	} {
		live := base()
		tc.change(live)
		if got := Diff(base(), live); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Diff = %q, want %q", tc.name, got, tc.want)
		}
	}
}
