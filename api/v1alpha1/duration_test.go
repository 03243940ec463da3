package v1alpha1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestDurationDecodesAnyStoredValue(t *testing.T) {
	for _, tt := range []struct {
		stored string
		want   time.Duration
		bad    bool
	}{
		{`"10m"`, 10 * time.Minute, false},
		{`"1h30m"`, 90 * time.Minute, false},
		{`"0"`, 0, false},
		{`"every hour"`, 0, true},
		{`"10"`, 0, true},
		{`""`, 0, true},
		{`42`, 0, true},
		{`{"a":1}`, 0, true},
		{`"9999999999999999999h"`, 0, true},
	} {
		var d Duration
		if err := json.Unmarshal([]byte(tt.stored), &d); err != nil {
			t.Fatalf("%s: decoding failed: %v", tt.stored, err)
		}
		if d.Duration != tt.want || (d.Err() != nil) != tt.bad {
			t.Errorf("%s: got %v err %v", tt.stored, d.Duration, d.Err())
		}
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if tt.bad && string(out) != tt.stored {
			t.Errorf("%s written back as %s", tt.stored, out)
		}
	}
	var nilDuration *Duration
	if nilDuration.Err() != nil {
		t.Fatal("a missing duration is not an error")
	}
	// Inside an object, as the informer decodes it.
	var spec NetworkSpec
	if err := json.Unmarshal([]byte(`{"resyncPeriod":"soon","description":"x"}`), &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Description != "x" || spec.ResyncPeriod.Err() == nil ||
		spec.ResyncPeriod.Err().Error() != `"soon" is not a duration such as 30s, 10m or 1h30m` {
		t.Fatalf("spec = %+v, err %v", spec, spec.ResyncPeriod.Err())
	}
}

func TestDurationPattern(t *testing.T) {
	re := regexp.MustCompile(DurationPattern)
	for _, s := range []string{"0", "10m", "1h30m", "1.5h", ".5s", "300ms", "10us", "10µs", "1h2m3s4ms", "99999h", "99999.999999999h99999h99999h99999h"} {
		if !re.MatchString(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range []string{"", "10", "-5m", "+5m", "1d", "10 m", "1h2m3s4ms5us", "100000h", "999999h", ".s", "m", "0.0"} {
		if re.MatchString(s) {
			t.Errorf("%q accepted", s)
		}
	}
}

// FuzzDurationPattern: whatever admission's pattern accepts, Go (and CEL, which calls the same
// time.ParseDuration) parses without error or overflow; decoding never fails.
func FuzzDurationPattern(f *testing.F) {
	for _, s := range []string{"10m", "1h30m", "0", "999999h999999m", ".5s", "1.s", "every hour", "9223372036854775807ns", "999999h999999h999999h"} {
		f.Add(s)
	}
	re := regexp.MustCompile(DurationPattern)
	f.Fuzz(func(t *testing.T, s string) {
		if re.MatchString(s) {
			d, err := time.ParseDuration(s)
			if err != nil || d < 0 {
				t.Fatalf("pattern accepts %q, Go says %v, %v", s, d, err)
			}
		}
		b, _ := json.Marshal(s)
		var d Duration
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		if _, err := time.ParseDuration(s); (err == nil) != (d.Err() == nil) {
			t.Fatalf("%q: decoded %v, Err %v", s, d.Duration, d.Err())
		}
	})
}

// TestCRDsUseDurationPattern: the markers repeat DurationPattern; every rule of the generated
// CRDs that checks a duration uses it unchanged.
func TestCRDsUseDurationPattern(t *testing.T) {
	files, err := filepath.Glob("../../config/crd/bases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs: %v", err)
	}
	uses := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`matches\('+(\^\(0\|[^']*)'`).FindAllStringSubmatch(string(b), -1) {
			uses++
			if m[1] != DurationPattern {
				t.Errorf("%s: duration pattern %q differs from DurationPattern", f, m[1])
			}
		}
	}
	if uses == 0 || !strings.Contains(DurationPattern, "ms") {
		t.Fatal("no duration rule found in the CRDs")
	}
}

// TestDurationInvalidValueRoundTrips: an invalid stored value is kept in the form JSON encoders
// and the unstructured converter write back, so that an object read, written and read again (or
// converted to unstructured and back) is the same object. Found by FuzzDecodeEveryKind: whitespace
// and HTML characters came back compacted and escaped, numbers and strings rewritten, each time
// another invalid value.
func TestDurationInvalidValueRoundTrips(t *testing.T) {
	for _, stored := range []string{
		`{"a": [1, "<b>"]}`, `"\u003c\u2028\u00e9\ud800"`, `" \"x\" "`, `99999999999999999999`, `1.50`, `[ ]`, `"a&b>"`,
	} {
		var d Duration
		if err := d.UnmarshalJSON([]byte(stored)); err != nil || d.Err() == nil {
			t.Fatalf("%s: %v, Err %v", stored, err, d.Err())
		}
		// Inside an object, through encoding/json (which compacts and escapes MarshalJSON's output).
		b, err := json.Marshal(NetworkSpec{ManagedSpec: ManagedSpec{ResyncPeriod: &d}})
		if err != nil {
			t.Fatal(err)
		}
		var back NetworkSpec
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if *back.ResyncPeriod != d {
			t.Errorf("%s: kept as %s, read back as %s", stored, d.invalid, back.ResyncPeriod.invalid)
		}
		// Through the unstructured form.
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&back)
		if err != nil {
			t.Fatal(err)
		}
		var fromU NetworkSpec
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, &fromU); err != nil {
			t.Fatal(err)
		}
		if fromU.ResyncPeriod == nil || *fromU.ResyncPeriod != d {
			t.Errorf("%s: kept as %s, back from unstructured as %v", stored, d.invalid, fromU.ResyncPeriod)
		}
	}
	// null is no value, as for any JSON field.
	d := Duration{Duration: time.Minute}
	if err := d.UnmarshalJSON([]byte("null")); err != nil || d.Duration != time.Minute || d.Err() != nil {
		t.Fatalf("null changed %v (Err %v)", d.Duration, d.Err())
	}
}

// TestDurationSemanticEqual: apimachinery's semantic equality, which controllers use to compare
// specs, panicked on Duration's unexported field; it compares values now.
func TestDurationSemanticEqual(t *testing.T) {
	spec := func(stored string) NetworkSpec {
		var s NetworkSpec
		if err := json.Unmarshal([]byte(`{"resyncPeriod":`+stored+`}`), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{`"10m"`, `"600s"`, true},
		{`"10m"`, `"11m"`, false},
		{`"soon"`, `"soon"`, true},
		{`"soon"`, `"later"`, false},
		{`"0"`, `"zero"`, false},
	} {
		if got := equality.Semantic.DeepEqual(spec(tt.a), spec(tt.b)); got != tt.want {
			t.Errorf("%s == %s: %v", tt.a, tt.b, got)
		}
	}
}
