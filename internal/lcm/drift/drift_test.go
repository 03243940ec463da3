package drift

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kupenstack/kupenstack/internal/lcm/helm"
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

func TestRuntimeFieldsMatchOnlyTheirObjects(t *testing.T) {
	ref := func(group, kind, name string) helm.ObjectRef {
		return helm.ObjectRef{GVK: schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind}, Namespace: "openstack", Name: name}
	}
	for _, tc := range []struct {
		ref  helm.ObjectRef
		want int
	}{
		{ref("", "Service", "mariadb"), 1},
		{ref("", "Service", "mariadb-discovery"), 0},
		{ref("", "Service", "keystone-api"), 0},
		{ref("", "ConfigMap", "mariadb"), 0},
		{ref("example.org", "Service", "mariadb"), 0},
	} {
		n := 0
		for _, f := range RuntimeFields {
			if f.Reason == "" || len(f.Path) == 0 {
				t.Errorf("%s %s: a runtime field needs a path and a reason", f.Kind, f.Name)
			}
			if f.Matches(tc.ref) {
				n++
			}
		}
		if n != tc.want {
			t.Errorf("%s: %d runtime fields match, want %d", tc.ref, n, tc.want)
		}
	}
}
