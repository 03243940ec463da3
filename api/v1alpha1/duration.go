package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// DurationPattern is what admission accepts as a duration: Go's time.ParseDuration syntax
// (300ms, 1.5h, 2h45m), or 0, with at most four parts of at most five integer digits each, so
// that every accepted value parses in Go and in CEL without overflow (four parts of 99999.9h are
// 1.4e18 ns of the 9.2e18 an int64 holds; six digits let three parts of 999999h overflow, and
// CEL's duration() then failed with its own text instead of the rule's message). The markers of Duration
// repeat it (they cannot name a constant); a test holds the generated CRDs to it.
const DurationPattern = `^(0|(([0-9]{1,5}([.][0-9]{0,9})?|[.][0-9]{1,9})(ns|us|µs|μs|ms|s|m|h)){1,4})$`

// Duration is a length of time written as Go writes it: 30s, 10m, 1h30m. Unlike metav1.Duration
// it decodes any stored value: an object written before admission checked the field (or by
// a client that went around it) must not stop the operator from reading every other object of
// its kind. Such a value is kept as it was, round-trips unchanged, and Err says what is wrong
// with it, for the object's Degraded condition.
// +kubebuilder:validation:Type=string
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:XValidation:rule="self.matches('^(0|(([0-9]{1,5}([.][0-9]{0,9})?|[.][0-9]{1,9})(ns|us|µs|μs|ms|s|m|h)){1,4})$')",message="must be a duration such as 30s, 10m or 1h30m (units h, m, s, ms, us, ns)"
type Duration struct {
	time.Duration `json:"-"`
	// invalid is the stored JSON of a value that is not a duration; empty when it is one.
	invalid string
}

// apimachinery's semantic equality (equality.Semantic.DeepEqual, which controllers use to compare
// specs) panics on an unexported field it has no function for: Duration gets one, comparing the
// value and what an invalid value was stored as.
func init() {
	if err := equality.Semantic.AddFunc(func(a, b Duration) bool {
		return a.Duration == b.Duration && a.invalid == b.invalid
	}); err != nil {
		panic(err)
	}
}

// Err is nil for a duration, or says why the stored value is not one.
func (d *Duration) Err() error {
	if d == nil || len(d.invalid) == 0 {
		return nil
	}
	return fmt.Errorf("%s is not a duration such as 30s, 10m or 1h30m", d.invalid)
}

// UnmarshalJSON never fails: a value time.ParseDuration refuses is kept for Err, in the form
// that every later encoding reproduces byte for byte (see canonicalJSON). null, as for any JSON
// value, leaves d as it is.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	d.Duration, d.invalid = 0, ""
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if v, err := time.ParseDuration(s); err == nil {
			d.Duration = v
			return nil
		}
	}
	d.invalid = canonicalJSON(b)
	return nil
}

// canonicalJSON is b as the API machinery writes it back: compact, HTML characters escaped,
// numbers as int64 or float64 (utiljson, as the API server and unstructured objects hold them),
// invalid UTF-8 replaced. Keeping the stored form would not round-trip: JSON encoders compact and
// escape what MarshalJSON returns, and the unstructured converter rewrites numbers and strings, so
// a value such as { "a": "<" } would come back as another invalid value, and an object would not
// equal its own copy read back. What is not JSON at all is kept as a JSON string.
func canonicalJSON(b []byte) string {
	var v any
	if err := utiljson.Unmarshal(b, &v); err == nil {
		if out, err := json.Marshal(v); err == nil {
			return string(out)
		}
	}
	out, _ := json.Marshal(string(b))
	return string(out)
}

// MarshalJSON writes a duration as metav1.Duration does, and an invalid value as it was stored.
func (d Duration) MarshalJSON() ([]byte, error) {
	if len(d.invalid) > 0 {
		return []byte(d.invalid), nil
	}
	return json.Marshal(d.Duration.String())
}

// ToUnstructured: what the API machinery's unstructured converter writes (as MarshalJSON).
func (d Duration) ToUnstructured() any {
	if len(d.invalid) > 0 {
		var v any
		if utiljson.Unmarshal([]byte(d.invalid), &v) == nil {
			return v
		}
		return d.invalid
	}
	return d.Duration.String()
}

// OpenAPISchemaType and OpenAPISchemaFormat describe Duration to OpenAPI generators as a string.
func (Duration) OpenAPISchemaType() []string { return []string{"string"} }

// OpenAPISchemaFormat is empty: the pattern in the CRD, not a format, checks the value.
func (Duration) OpenAPISchemaFormat() string { return "" }
