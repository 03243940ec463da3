package render

import (
	"testing"

	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

// TestOneNodeSampleProbes renders the shipped one-node sample with the real 2025.1.0 charts
// and checks the probes it tunes for a small node reach the pods. RabbitMQ's probes run
// `rabbitmqctl ping`, an Erlang VM booted per call (about 1 s of CPU): at the chart's 10 s
// each they took a fifth of a core, the idle cloud's largest consumer on a 2-core node.
func TestOneNodeSampleProbes(t *testing.T) {
	docs := parseFile(t, oneNodeSample)
	const tag = "2025.1.0"
	docs.Config.Spec.Release = realcharts.Release(tag)
	comps, err := Run(docs, Options{Charts: realcharts.Dir(t, tag)})
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ period, timeout int32 }
	for _, tc := range []struct {
		component, container   string
		readiness, liveness    want
		livenessFailuresAtMost int32
	}{
		{"rabbitmq", "StatefulSet rabbitmq-rabbitmq/rabbitmq", want{30, 20}, want{60, 20}, 3},
		{"nova", "Deployment nova-api-osapi/nova-osapi", want{10, 15}, want{20, 15}, 0},
	} {
		var found bool
		for _, c := range comps {
			if c.Name != tc.component {
				continue
			}
			ctr, ok := containers(t, c)[tc.container]
			if !ok {
				t.Fatalf("%s: no %s", tc.component, tc.container)
			}
			found = true
			r, l := ctr.ReadinessProbe, ctr.LivenessProbe
			if r == nil || l == nil {
				t.Fatalf("%s: readiness %v, liveness %v", tc.container, r, l)
			}
			if r.PeriodSeconds < tc.readiness.period || r.TimeoutSeconds < tc.readiness.timeout {
				t.Errorf("%s readiness: every %d s, timeout %d s; want at least %d s and %d s",
					tc.container, r.PeriodSeconds, r.TimeoutSeconds, tc.readiness.period, tc.readiness.timeout)
			}
			if l.PeriodSeconds < tc.liveness.period || l.TimeoutSeconds < tc.liveness.timeout {
				t.Errorf("%s liveness: every %d s, timeout %d s; want at least %d s and %d s",
					tc.container, l.PeriodSeconds, l.TimeoutSeconds, tc.liveness.period, tc.liveness.timeout)
			}
			if tc.livenessFailuresAtMost > 0 && l.FailureThreshold > tc.livenessFailuresAtMost {
				t.Errorf("%s liveness: restarted after %d failures, want at most %d (a dead broker found within minutes)",
					tc.container, l.FailureThreshold, tc.livenessFailuresAtMost)
			}
		}
		if !found {
			t.Errorf("component %s not rendered", tc.component)
		}
	}
}
