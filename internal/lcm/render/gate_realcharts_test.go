package render

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kupenstack/kupenstack/internal/depcheck"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

// With every real chart version, in the whole cloud's rendering (control plane and compute
// nodes, cinder and horizon): every long-running pod that waits for its chart's db-sync waits
// for the release's gate too, in a DEPENDENCY_JOBS list kubernetes-entrypoint parses, and no
// Helm hook or CronJob does (the gate is created after the hooks ran; a hook waiting for it
// would hold the upgrade for ever).
func TestRealChartsGate(t *testing.T) {
	for _, tag := range realcharts.Tags {
		t.Run(tag, func(t *testing.T) {
			release := realcharts.Release(tag)
			for name, c := range renderRealCloud(t, tag, "") {
				comp, _ := values.ComponentByName(name)
				gate := values.GateName(c.Chart, release)
				if got := values.Gates(c.Chart, c.Values); len(comp.GateKeys) == 0 && len(got) > 0 ||
					len(comp.GateKeys) > 0 && !slices.Equal(got, []string{gate}) {
					t.Errorf("%s: values name the gates %v, want [%s] (gate keys %v)", name, got, gate, comp.GateKeys)
				}
				gated := 0
				for _, o := range documents(t, c.Manifest) {
					switch o.Kind {
					case "Deployment", "StatefulSet", "DaemonSet", "Job":
					default:
						continue
					}
					var w workload
					if err := yaml.Unmarshal([]byte(o.doc), &w); err != nil {
						t.Fatal(err)
					}
					hook := o.Metadata.Annotations["helm.sh/hook"]
					for _, ic := range w.Spec.Template.Spec.InitContainers {
						env := map[string]string{}
						for _, e := range ic.Env {
							env[e.Name] = e.Value
						}
						jobs := strings.Split(env["DEPENDENCY_JOBS"], ",")
						waitsGate, waitsSync := slices.Contains(jobs, gate), slices.Contains(jobs, c.Chart+"-db-sync")
						where := name + " " + o.Kind + "/" + o.Metadata.Name
						switch {
						case waitsGate && (hook != "" || o.Kind == "Job"):
							t.Errorf("%s (hook %q) waits for the gate %s", where, hook, gate)
						case waitsSync && !waitsGate && o.Kind != "Job" && len(comp.GateKeys) > 0:
							t.Errorf("%s waits for %s-db-sync but not for the gate %s", where, c.Chart, gate)
						case waitsGate:
							gated++
							read, err := depcheck.ParseJobs(env["DEPENDENCY_JOBS"], env["DEPENDENCY_JOBS_JSON"], "openstack", nil)
							if err != nil {
								t.Errorf("%s: kubernetes-entrypoint cannot read its Jobs: %v", where, err)
							} else if !slices.ContainsFunc(read, func(j depcheck.JobSelector) bool { return j.Name == gate }) {
								t.Errorf("%s: kubernetes-entrypoint reads %+v, without the gate", where, read)
							}
						}
					}
				}
				if len(comp.GateKeys) > 0 && gated == 0 {
					t.Errorf("%s: no pod waits for the gate %s", name, gate)
				}
			}
		})
	}
}
