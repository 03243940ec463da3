package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kupenstack/kupenstack/internal/testutil/chart"
)

// TestDashboardMetricsExist: every metric the Grafana dashboard queries is registered by the
// operator (this package imports all of it, so every package's metrics are registered), so a
// renamed or removed metric cannot leave an empty panel behind.
func TestDashboardMetricsExist(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chart.Dir(), "dashboards", "kupenstack.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Panels []dashboardPanel `json:"panels"`
	}
	if err := json.Unmarshal(data, &dashboard); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	queried := map[string]bool{}
	var walk func([]dashboardPanel)
	walk = func(panels []dashboardPanel) {
		for _, p := range panels {
			walk(p.Panels)
			for _, target := range p.Targets {
				names := metricNames(target.Expr)
				if len(names) == 0 {
					t.Errorf("panel %q: no metric found in %q", p.Title, target.Expr)
				}
				for _, n := range names {
					queried[n] = true
				}
			}
		}
	}
	walk(dashboard.Panels)
	for name := range queried {
		if !registered(baseName(name)) {
			t.Errorf("the dashboard queries %s, which the operator does not register", name)
		}
	}
	// What the dashboard is for: reconciles, OpenStack API calls, heals, drift repairs,
	// notifications, the cloud life-cycle's components and the validation agent's service health.
	for _, want := range []string{"controller_runtime_reconcile_total", "controller_runtime_reconcile_errors_total",
		"controller_runtime_reconcile_time_seconds_bucket", "kupenstack_openstack_requests_total",
		"kupenstack_openstack_request_duration_seconds_bucket", "kupenstack_heals_total",
		"kupenstack_drift_repairs_total", "kupenstack_notifications_received_total",
		"kupenstack_lcm_component_ready", "kupenstack_lcm_helm_actions_total", "kupenstack_service_healthy",
		"kupenstack_service_probe_duration_seconds_bucket", "kupenstack_service_probe_failures_total"} {
		if !queried[want] {
			t.Errorf("no panel queries %s", want)
		}
	}
}

type dashboardPanel struct {
	Title   string           `json:"title"`
	Panels  []dashboardPanel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// The parts of a PromQL expression that are no metric names: strings, label matchers, range and
// subquery durations, and the label lists of grouping and vector matching.
var (
	promqlStrings   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promqlMatchers  = regexp.MustCompile(`\{[^}]*\}`)
	promqlRanges    = regexp.MustCompile(`\[[^\]]*\]`)
	promqlLabelList = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlName      = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promqlKeywords  = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool",
		"and", "or", "unless", "offset", "atan2", "inf", "nan"}
)

// metricNames returns the metric names an expression selects: the identifiers that are neither
// a function call, a keyword, a number nor inside a string, matcher, duration or label list.
func metricNames(expr string) []string {
	expr = promqlStrings.ReplaceAllString(expr, " ")
	expr = promqlMatchers.ReplaceAllString(expr, " ")
	expr = promqlRanges.ReplaceAllString(expr, " ")
	expr = promqlLabelList.ReplaceAllString(expr, " ")
	var names []string
	for _, loc := range promqlName.FindAllStringIndex(expr, -1) {
		name, rest := expr[loc[0]:loc[1]], strings.TrimLeft(expr[loc[1]:], " \t\n")
		if loc[0] > 0 && strings.ContainsAny(expr[loc[0]-1:loc[0]], "0123456789.$") {
			continue // the unit of a number (1e3, 5m) or a Grafana variable
		}
		if strings.HasPrefix(rest, "(") || slices.Contains(promqlKeywords, strings.ToLower(name)) {
			continue
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// baseName maps the series of a histogram or summary to the name it is registered under.
func baseName(name string) string {
	if registered(name) {
		return name
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && registered(base) {
			return base
		}
	}
	return name
}

// registered tells whether controller-runtime's registry, which the operator serves, holds a
// metric of this name. A vector without observations is not in a scrape yet, so instead of
// gathering, this registers a probe of that name: the registry refuses it exactly when the name
// is taken (a different help text or label set is an inconsistency, the same is a duplicate).
func registered(name string) bool {
	probe := probeCollector{prometheus.NewDesc(name, "probe of the dashboard test", nil, nil)}
	if err := metrics.Registry.Register(probe); err != nil {
		return true
	}
	metrics.Registry.Unregister(probe)
	return false
}

type probeCollector struct{ desc *prometheus.Desc }

func (p probeCollector) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }
func (p probeCollector) Collect(chan<- prometheus.Metric)    {}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (controller, le) (rate(a_bucket{code!~"5..", x="by(y)"}[$__rate_interval]))`:      {"a_bucket"},
		`histogram_quantile(0.95, sum without (pod) (rate(b_bucket[5m]))) / on (service) c_total`: {"b_bucket", "c_total"},
		`max(up) or vector(0)`:              {"up"},
		`rate(d_total[1h] offset 1d) > 1e3`: {"d_total"},
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%q) = %q, want %q", expr, got, want)
		}
	}
	if registered("kupenstack_no_such_metric") {
		t.Error("an unknown name counts as registered")
	}
	if !registered("kupenstack_heals_total") || baseName("controller_runtime_reconcile_time_seconds_count") != "controller_runtime_reconcile_time_seconds" {
		t.Error("registered metrics not found")
	}
}
