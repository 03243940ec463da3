// Package values renders the Helm values of every OpenStack-Helm component of a cloud from its
// KupenstackConfiguration and profiles, and the per-node entries of each node. It is pure: no
// API server, no Helm, so the same code serves the operator and a client-side render.
package values

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
)

// MaxDepth bounds how deeply nested user-supplied values may be.
const MaxDepth = 64

// Merge returns base with over merged on top, without changing either: maps merge key by key,
// any other value (scalars, lists) in over replaces the one in base, and a nil (JSON null) in
// over removes the key. The result shares no map or slice with the inputs.
func Merge(base, over map[string]any) (map[string]any, error) {
	return merge(base, over, 0, false)
}

// MergeKeepNull is Merge for values that go to Helm over a chart's defaults: a nil in over is
// kept as nil, which Helm reads as "remove the chart's default here" (a profile dropping an entry
// the chart declares), instead of only removing what base had.
func MergeKeepNull(base, over map[string]any) (map[string]any, error) {
	return merge(base, over, 0, true)
}

func merge(base, over map[string]any, depth int, keepNull bool) (map[string]any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("values are nested more than %d levels deep", MaxDepth)
	}
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		c, err := deepCopy(v, depth+1)
		if err != nil {
			return nil, err
		}
		out[k] = c
	}
	for k, v := range over {
		if v == nil {
			if keepNull {
				out[k] = nil
			} else {
				delete(out, k)
			}
			continue
		}
		if om, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				m, err := merge(bm, om, depth+1, keepNull)
				if err != nil {
					return nil, err
				}
				out[k] = m
				continue
			}
		}
		c, err := deepCopy(v, depth+1)
		if err != nil {
			return nil, err
		}
		if keepNull {
			out[k] = c
		} else {
			out[k] = dropNulls(c)
		}
	}
	return out, nil
}

// dropNulls removes null map entries from a value that replaces (rather than merges with)
// whatever was there: a null there means "nothing", as it does when merging.
func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
			} else {
				t[k] = dropNulls(e)
			}
		}
	case []any:
		for i, e := range t {
			t[i] = dropNulls(e)
		}
	}
	return v
}

func deepCopy(v any, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("values are nested more than %d levels deep", MaxDepth)
	}
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			c, err := deepCopy(e, depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = c
		}
		return m, nil
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			c, err := deepCopy(e, depth+1)
			if err != nil {
				return nil, err
			}
			l[i] = c
		}
		return l, nil
	default:
		return v, nil
	}
}

// ParseObject decodes user-supplied JSON that must be an object (nil or empty input is an empty
// object). Numbers keep their exact text.
func ParseObject(raw []byte) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be an object, not %T", v)
	}
	if _, err := deepCopy(m, 0); err != nil {
		return nil, err
	}
	return m, nil
}

// Hash is a short, stable digest of values (maps are hashed in key order).
func Hash(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		// Values come from JSON or from this package; neither holds unmarshalable types.
		panic(fmt.Sprintf("values: hashing: %v", err))
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// set stores v at path in m, creating maps on the way (and replacing non-maps in the way).
func set(m map[string]any, v any, path ...string) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

// Set stores v at path in m, creating maps on the way.
func Set(m map[string]any, v any, path ...string) { set(m, v, path...) }

// Get reads the value at path, if any (a nil value is there, set to null).
func Get(m map[string]any, path ...string) (any, bool) { return get(m, path...) }

// get reads the value at path, if any.
func get(m map[string]any, path ...string) (any, bool) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
