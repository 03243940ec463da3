//go:build bench

// Package lcm measures the cloud life-cycle on the real OpenStack-Helm charts: for each release,
// the whole cloud installed on kwok-simulated nodes from the charts served over HTTP on 127.0.0.1
// (Helm actions per component, time until every component is Ready), then one component's
// setting changed (Helm actions per component again). The Helm actions are read from the
// operator's own kupenstack_lcm_helm_actions_total. Not part of `make test`: `make bench` runs it.
package lcm

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/lcm"
	"github.com/kupenstack/kupenstack/internal/testutil/lcmtest"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

var env = testenv.New(func(mgr ctrl.Manager) error {
	return lcm.Setup(mgr, lcm.Options{CloudName: "openstack", ReadyPeriod: 2 * time.Second})
}).WithCluster(testenv.Node{Name: "node-a"}, testenv.Node{Name: "node-b"})

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

const profilesNS = "bench-profiles"

// helmActions reads kupenstack_lcm_helm_actions_total: component -> "action result" -> count.
func helmActions(t *testing.T) map[string]map[string]float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for _, f := range families {
		if f.GetName() != "kupenstack_lcm_helm_actions_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := labels(m)
			if out[l["component"]] == nil {
				out[l["component"]] = map[string]float64{}
			}
			out[l["component"]][l["action"]+" "+l["result"]] += m.GetCounter().GetValue()
		}
	}
	return out
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, p := range m.GetLabel() {
		out[p.GetName()] = p.GetValue()
	}
	return out
}

// since is what each component did between two readings of helmActions, as "install 1" lines.
func since(before, after map[string]map[string]float64) map[string]string {
	out := map[string]string{}
	for comp, actions := range after {
		var parts []string
		for a, n := range actions {
			if d := n - before[comp][a]; d > 0 {
				parts = append(parts, fmt.Sprintf("%s %.0f", strings.TrimSuffix(a, " success"), d))
			}
		}
		sort.Strings(parts)
		out[comp] = strings.Join(parts, ", ")
	}
	return out
}

func allReady(t *testing.T, n int) bool {
	t.Helper()
	var list kupenstackv1.OpenstackComponentList
	if err := env.Client.List(env.Ctx, &list); err != nil {
		t.Fatal(err)
	}
	ready := 0
	for _, c := range list.Items {
		for _, cond := range c.Status.Conditions {
			if cond.Type == kupenstackv1.ConditionReady && cond.Status == metav1.ConditionTrue &&
				cond.ObservedGeneration == c.Generation && c.Status.Phase == kupenstackv1.ComponentPhaseReady {
				ready++
			}
		}
	}
	return len(list.Items) == n && ready == n
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return time.Since(start)
}

// TestBenchLCM prints, per release, the Helm actions of the install and of a one-component
// change; the goals are exactly one install per component and no repair, then exactly one
// upgrade, of that component.
func TestBenchLCM(t *testing.T) {
	env.Require(t)
	repository := realcharts.ServeAll(t, nil)
	lcmtest.EnsureNamespace(t, env.Ctx, env.Client, profilesNS)
	var report strings.Builder
	fmt.Fprintln(&report, "| release (charts) | components | all Ready after | Helm actions at install | goal met | one-setting change (glance) | goal met |")
	fmt.Fprintln(&report, "| --- | ---: | ---: | --- | --- | --- | --- |")
	for _, tag := range realcharts.Tags {
		release := realcharts.Release(tag)
		lcmtest.ApplyProfile(t, env.Ctx, env.Client, profilesNS, "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{})
		cfg := &kupenstackv1.KupenstackConfiguration{ObjectMeta: metav1.ObjectMeta{Name: kupenstackv1.KupenstackConfigurationName},
			Spec: kupenstackv1.KupenstackConfigurationSpec{
				Release: release, Namespace: "openstack", OptionalComponents: []string{"cinder", "horizon"},
				Charts:         kupenstackv1.ChartSource{Repository: repository},
				DefaultProfile: kupenstackv1.ProfileReference{Name: "default", Namespace: profilesNS},
				Nodes:          []kupenstackv1.ConfiguredNode{{Name: "node-a", Type: "control"}, {Name: "node-b", Type: "compute"}},
			}}
		before := helmActions(t)
		if err := env.Client.Create(env.Ctx, cfg); err != nil {
			t.Fatal(err)
		}
		took := waitFor(t, release+" installed", 10*time.Minute, func() bool { return allReady(t, 12) })
		time.Sleep(10 * time.Second) // a few ready periods: a repair would show now
		install := since(before, helmActions(t))
		installOK := len(install) == 12
		var summary []string
		for comp, a := range install {
			if a != "install 1" {
				installOK = false
				summary = append(summary, comp+": "+a)
			}
		}
		if len(summary) == 0 {
			summary = []string{fmt.Sprintf("install 1 each (%d components)", len(install))}
		}
		sort.Strings(summary)

		before = helmActions(t)
		lcmtest.ApplyProfile(t, env.Ctx, env.Client, profilesNS, "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{
			Components: map[string]kupenstackv1.ComponentProfile{"glance": {Conf: lcmtest.Raw(t, map[string]any{"glance": map[string]any{"DEFAULT": map[string]any{"workers": 3}}})}}})
		waitFor(t, release+" glance upgraded", 5*time.Minute, func() bool { return since(before, helmActions(t))["glance"] != "" && allReady(t, 12) })
		time.Sleep(10 * time.Second)
		change := since(before, helmActions(t))
		var changed []string
		for comp, a := range change {
			if a != "" {
				changed = append(changed, comp+": "+a)
			}
		}
		sort.Strings(changed)
		changeOK := len(changed) == 1 && changed[0] == "glance: upgrade 1"
		fmt.Fprintf(&report, "| %s (%s) | 12 | %.0f s | %s | %v | %s | %v |\n", release, tag, took.Seconds(),
			strings.Join(summary, "; "), installOK, strings.Join(changed, "; "), changeOK)

		if err := env.Client.Delete(env.Ctx, cfg); err != nil {
			t.Fatal(err)
		}
		waitFor(t, release+" removed", 10*time.Minute, func() bool {
			var list kupenstackv1.OpenstackComponentList
			var cfgs kupenstackv1.KupenstackConfigurationList
			return env.Client.List(env.Ctx, &list) == nil && len(list.Items) == 0 &&
				env.Client.List(env.Ctx, &cfgs) == nil && len(cfgs.Items) == 0
		})
	}
	t.Logf("\n%s", report.String())
	if out := os.Getenv("BENCH_LCM_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(report.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
