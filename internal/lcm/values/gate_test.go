package values

import (
	"reflect"
	"testing"
)

func TestWithGate(t *testing.T) {
	comp := Component{Chart: "nova", GateKeys: []string{"api", "compute"}}
	chart := func() map[string]any {
		return map[string]any{"dependencies": map[string]any{"static": map[string]any{
			"api":     map[string]any{"jobs": []any{"nova-db-sync", "nova-ks-user"}},
			"compute": map[string]any{"jobs": []any{"nova-db-sync"}},
			"db_sync": map[string]any{"jobs": []any{"nova-db-init"}},
		}}}
	}
	const gate = "nova-kupenstack-2026-1"
	tests := []struct {
		name string
		vals map[string]any
		want map[string]any // dependencies.static.<key>.jobs after, nil: absent
	}{
		{"chart's lists", map[string]any{}, map[string]any{
			"api": []any{"nova-db-sync", "nova-ks-user", gate}, "compute": []any{"nova-db-sync", gate}, "db_sync": nil}},
		{"the values' own list", map[string]any{"dependencies": map[string]any{"static": map[string]any{
			"api": map[string]any{"jobs": []any{"nova-db-sync"}}}}}, map[string]any{
			"api": []any{"nova-db-sync", gate}, "compute": []any{"nova-db-sync", gate}}},
		{"null and empty lists wait for nothing", map[string]any{"dependencies": map[string]any{"static": map[string]any{
			"api": map[string]any{"jobs": nil}, "compute": map[string]any{"jobs": []any{}}}}}, map[string]any{
			"api": nil, "compute": []any{}}},
		{"objects stay objects", map[string]any{"dependencies": map[string]any{"static": map[string]any{
			"api": map[string]any{"jobs": []any{map[string]any{"labels": map[string]any{"a": "b"}}}}}}}, map[string]any{
			"api": []any{map[string]any{"labels": map[string]any{"a": "b"}}, map[string]any{"name": gate}}}},
		{"named already", map[string]any{"dependencies": map[string]any{"static": map[string]any{
			"api": map[string]any{"jobs": []any{gate, "x"}}}}}, map[string]any{"api": []any{gate, "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cv := chart()
			withGate(comp, "2026.1", cv, tt.vals)
			withGate(comp, "2026.1", cv, tt.vals) // twice: the same
			for key, want := range tt.want {
				got, _ := jobsOf(tt.vals, key)
				if want == nil && got != nil || want != nil && !reflect.DeepEqual(any(got), want) {
					t.Errorf("%s: jobs %#v, want %#v", key, got, want)
				}
			}
			if !reflect.DeepEqual(chart(), cv) {
				t.Errorf("the chart's values changed: %v", cv)
			}
		})
	}
	vals := map[string]any{}
	withGate(comp, "2026.1", chart(), vals)
	if got := Gates("nova", vals); !reflect.DeepEqual(got, []string{gate}) {
		t.Errorf("Gates = %v", got)
	}
	if got := GateAwaits("nova", vals); !reflect.DeepEqual(got, []string{"nova-db-sync", "nova-ks-user"}) {
		t.Errorf("GateAwaits = %v", got)
	}
	if got := Gates("neutron", vals); got != nil {
		t.Errorf("another chart's gates: %v", got)
	}
}
