package values

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	m, err := ParseObject([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

func TestMerge(t *testing.T) {
	for _, tt := range []struct{ name, base, over, want string }{
		{"empty", `{}`, `{}`, `{}`},
		{"add key", `{"a":1}`, `{"b":2}`, `{"a":1,"b":2}`},
		{"scalar replaces", `{"a":1}`, `{"a":"x"}`, `{"a":"x"}`},
		{"maps merge", `{"conf":{"nova":{"DEFAULT":{"debug":false,"x":1}}}}`, `{"conf":{"nova":{"DEFAULT":{"debug":true}}}}`,
			`{"conf":{"nova":{"DEFAULT":{"debug":true,"x":1}}}}`},
		{"list replaces", `{"l":[1,2,3]}`, `{"l":[4]}`, `{"l":[4]}`},
		{"map replaces scalar", `{"a":1}`, `{"a":{"b":1}}`, `{"a":{"b":1}}`},
		{"scalar replaces map", `{"a":{"b":1}}`, `{"a":2}`, `{"a":2}`},
		{"null removes", `{"a":1,"b":{"c":1,"d":2}}`, `{"a":null,"b":{"c":null}}`, `{"b":{"d":2}}`},
		{"null of a missing key", `{}`, `{"a":null}`, `{}`},
		{"null inside a new map is dropped", `{}`, `{"a":{"b":null,"c":1}}`, `{"a":{"c":1}}`},
		{"big number kept exactly", `{}`, `{"n":12345678901234567890}`, `{"n":12345678901234567890}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base, over := obj(t, tt.base), obj(t, tt.over)
			baseJSON, overJSON := mustJSON(t, base), mustJSON(t, over)
			got, err := Merge(base, over)
			if err != nil {
				t.Fatal(err)
			}
			if g := mustJSON(t, got); g != mustJSON(t, obj(t, tt.want)) {
				t.Errorf("Merge = %s, want %s", g, tt.want)
			}
			if mustJSON(t, base) != baseJSON || mustJSON(t, over) != overJSON {
				t.Error("Merge changed its inputs")
			}
		})
	}
}

func TestMergeDoesNotShare(t *testing.T) {
	base := obj(t, `{"a":{"b":[1,{"c":1}]}}`)
	got, err := Merge(base, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	got["a"].(map[string]any)["b"].([]any)[1].(map[string]any)["c"] = 2
	if mustJSON(t, base) != `{"a":{"b":[1,{"c":1}]}}` {
		t.Fatalf("the result shares memory with the input: %s", mustJSON(t, base))
	}
}

func TestMergeDepthLimit(t *testing.T) {
	deep := strings.Repeat(`{"a":`, MaxDepth+2) + "1" + strings.Repeat("}", MaxDepth+2)
	if _, err := ParseObject([]byte(deep)); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Fatalf("ParseObject of %d levels: %v", MaxDepth+2, err)
	}
	m := map[string]any{}
	cur := m
	for range MaxDepth + 2 {
		next := map[string]any{}
		cur["a"] = next
		cur = next
	}
	if _, err := Merge(map[string]any{}, m); err == nil {
		t.Fatal("Merge accepted values nested too deeply")
	}
}

func TestParseObject(t *testing.T) {
	for _, tt := range []struct {
		in      string
		wantErr string
	}{
		{``, ""}, {`null`, ""}, {`{"a":1}`, ""},
		{`[1]`, "must be an object"}, {`"x"`, "must be an object"}, {`{`, "not valid JSON"}, {`{} {}`, "more than one"},
	} {
		_, err := ParseObject([]byte(tt.in))
		if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("ParseObject(%q) = %v, want %q", tt.in, err, tt.wantErr)
		}
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzMerge: for any two user-supplied objects, Merge never panics, never changes its inputs,
// keeps every leaf of the override (except nulls, which remove), keeps what the override does
// not mention, and is idempotent.
func FuzzMerge(f *testing.F) {
	f.Add(`{"a":1}`, `{"b":2}`)
	f.Add(`{"conf":{"nova":{"DEFAULT":{"debug":false}}}}`, `{"conf":{"nova":{"DEFAULT":{"debug":true}}}}`)
	f.Add(`{"a":{"b":1}}`, `{"a":null}`)
	f.Add(`{"l":[1,{"x":null}]}`, `{"l":{"k":[null]}}`)
	f.Add(`{}`, `{"a":{"b":{"c":{"d":null}}}}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		base, err1 := ParseObject([]byte(a))
		over, err2 := ParseObject([]byte(b))
		if err1 != nil || err2 != nil {
			return
		}
		baseJSON, overJSON := mustJSON(t, base), mustJSON(t, over)
		got, err := Merge(base, over)
		if err != nil {
			return // too deep: rejected, not crashed
		}
		if mustJSON(t, base) != baseJSON || mustJSON(t, over) != overJSON {
			t.Fatal("Merge changed its inputs")
		}
		checkOver(t, got, over, "")
		for k, v := range base {
			if _, mentioned := over[k]; !mentioned && !reflect.DeepEqual(got[k], v) {
				t.Fatalf("key %q not in the override changed: %v -> %v", k, v, got[k])
			}
		}
		again, err := Merge(got, over)
		if err != nil {
			t.Fatal(err)
		}
		if mustJSON(t, again) != mustJSON(t, got) {
			t.Fatalf("not idempotent: %s then %s", mustJSON(t, got), mustJSON(t, again))
		}
		if Hash(got) != Hash(again) {
			t.Fatal("equal values, different hashes")
		}
	})
}

// checkOver asserts that every non-null leaf of over is in got at the same path.
func checkOver(t *testing.T, got, over map[string]any, path string) {
	for k, v := range over {
		g, ok := got[k]
		switch {
		case v == nil:
			if ok {
				t.Fatalf("%s.%s: null must remove the key, got %v", path, k, g)
			}
		case !ok:
			t.Fatalf("%s.%s missing from the result", path, k)
		default:
			if vm, isMap := v.(map[string]any); isMap {
				gm, gIsMap := g.(map[string]any)
				if !gIsMap {
					t.Fatalf("%s.%s: want a map, got %T", path, k, g)
				}
				checkOver(t, gm, vm, path+"."+k)
				continue
			}
			if mustJSON(t, dropNulls(mustCopy(t, v))) != mustJSON(t, g) {
				t.Fatalf("%s.%s = %s, want %s", path, k, mustJSON(t, g), mustJSON(t, v))
			}
		}
	}
}

func mustCopy(t *testing.T, v any) any {
	c, err := deepCopy(v, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
