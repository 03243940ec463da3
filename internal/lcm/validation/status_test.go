package validation

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

func result(name, reason, message string, at time.Time) Result {
	for _, s := range Services {
		if s.Name == name {
			return Result{Service: s, Healthy: reason == ReasonHealthy, Reason: reason, Message: message, Time: at, Latency: 42 * time.Millisecond}
		}
	}
	panic("unknown service " + name)
}

func TestServicesStatus(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	refresh := 10 * time.Minute
	first := ServicesStatus(nil, []Result{result("glance", ReasonHealthy, "ok", t0)}, refresh)
	if len(first) != 1 || !first[0].Healthy || !first[0].LastTransitionTime.Time.Equal(t0) || first[0].LatencyMilliseconds != 42 {
		t.Fatalf("first verdict: %+v", first)
	}

	same := ServicesStatus(first, []Result{result("glance", ReasonHealthy, "ok", t0.Add(time.Minute))}, refresh)
	if same[0] != first[0] {
		t.Errorf("an unchanged verdict must be kept as it is (no write): %+v -> %+v", first[0], same[0])
	}

	refreshed := ServicesStatus(first, []Result{result("glance", ReasonHealthy, "ok", t0.Add(refresh))}, refresh)
	if !refreshed[0].LastProbeTime.Time.Equal(t0.Add(refresh)) || !refreshed[0].LastTransitionTime.Time.Equal(t0) {
		t.Errorf("after the refresh interval lastProbeTime moves and lastTransitionTime stays: %+v", refreshed[0])
	}

	newMessage := ServicesStatus(first, []Result{result("glance", ReasonHealthy, "ok at another host", t0.Add(time.Minute))}, refresh)
	if newMessage[0].Message != "ok at another host" || !newMessage[0].LastTransitionTime.Time.Equal(t0) {
		t.Errorf("a new message with the same verdict is written without a transition: %+v", newMessage[0])
	}

	down := ServicesStatus(first, []Result{result("glance", ReasonUnavailable, "HTTP 503", t0.Add(time.Minute))}, refresh)
	if down[0].Healthy || !down[0].LastTransitionTime.Time.Equal(t0.Add(time.Minute)) {
		t.Errorf("a transition must move lastTransitionTime: %+v", down[0])
	}
}

func TestServicesCondition(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		name    string
		results []Result
		status  metav1.ConditionStatus
		reason  string
		names   []string
	}{
		{"all healthy, cinder not deployed", []Result{
			result("keystone", ReasonHealthy, "", now), result("cinder", ReasonNotDeployed, "", now),
		}, metav1.ConditionTrue, ReasonHealthy, []string{"keystone"}},
		{"one unhealthy", []Result{
			result("keystone", ReasonHealthy, "", now), result("glance", ReasonUnavailable, "glance (image) at h: HTTP 503", now),
		}, metav1.ConditionFalse, ReasonUnavailable, []string{"glance"}},
		{"two with the same reason", []Result{
			result("nova", ReasonTimeout, "nova (compute) at h: no answer", now), result("glance", ReasonTimeout, "glance (image) at h: no answer", now),
		}, metav1.ConditionFalse, ReasonTimeout, []string{"nova", "glance"}},
		{"two with different reasons", []Result{
			result("nova", ReasonTimeout, "nova (compute) at h: no answer", now), result("cinder", ReasonNotInCatalog, "cinder (block-storage) is expected", now),
		}, metav1.ConditionFalse, "ServicesUnhealthy", []string{"nova", "cinder"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := ServicesCondition(tt.results, 7)
			if c.Type != kupenstackv1.ConditionServicesHealthy || c.Status != tt.status || c.Reason != tt.reason || c.ObservedGeneration != 7 {
				t.Errorf("condition = %+v, want %s %s", c, tt.status, tt.reason)
			}
			for _, n := range tt.names {
				if !strings.Contains(c.Message, n) {
					t.Errorf("message %q does not name %s", c.Message, n)
				}
			}
		})
	}
}

// TestAnnounceTransitions: Events only when a verdict changes; a NotDeployed service is silent.
func TestAnnounceTransitions(t *testing.T) {
	rec := events.NewFakeRecorder(20)
	a := &Agent{Recorder: rec, Log: logr.Discard()}
	cfg := &kupenstackv1.KupenstackConfiguration{}
	now := time.Now()
	round := func(rs ...Result) []string {
		a.announce(cfg, rs)
		a.last = map[string]Result{}
		for _, r := range rs {
			a.last[r.Service.Name] = r
		}
		var got []string
		for len(rec.Events) > 0 {
			got = append(got, <-rec.Events)
		}
		return got
	}
	steps := []struct {
		results []Result
		want    []string // event prefixes: "<type> <reason>"
	}{
		{[]Result{result("glance", ReasonHealthy, "", now), result("cinder", ReasonNotDeployed, "", now)}, nil},
		{[]Result{result("glance", ReasonUnavailable, "HTTP 503", now), result("cinder", ReasonNotDeployed, "", now)}, []string{"Warning ServiceUnhealthy"}},
		{[]Result{result("glance", ReasonUnavailable, "HTTP 503", now)}, nil},
		{[]Result{result("glance", ReasonTimeout, "no answer", now)}, []string{"Warning ServiceUnhealthy"}},
		{[]Result{result("glance", ReasonHealthy, "", now)}, []string{"Normal ServiceHealthy"}},
		{[]Result{result("glance", ReasonHealthy, "", now)}, nil},
	}
	for i, s := range steps {
		got := round(s.results...)
		if len(got) != len(s.want) {
			t.Fatalf("step %d: events %q, want %q", i, got, s.want)
		}
		for j := range got {
			if !strings.HasPrefix(got[j], s.want[j]) {
				t.Errorf("step %d: event %q, want %q", i, got[j], s.want[j])
			}
		}
	}
}
