package render

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

// realCloud is a cloud of every component on three nodes: node-1 (control) and node-3
// (compute) have their own profile, which configures every component with per-node DaemonSets.
func realCloud(release, extra string) string {
	return fmt.Sprintf(`apiVersion: kupenstack.io/v1alpha1
kind: OpenstackCloudConfigurationProfile
metadata: {name: default, namespace: ks}
spec:
  replicas: 1
%s---
apiVersion: kupenstack.io/v1alpha1
kind: OpenstackCloudConfigurationProfile
metadata: {name: pernode, namespace: ks}
spec:
  components:
    nova:
      conf: {nova: {DEFAULT: {cpu_allocation_ratio: 16}}}
    neutron:
      conf: {plugins: {openvswitch_agent: {ovs: {bridge_mappings: "physnet2:br-ex2"}}}, dhcp_agent: {DEFAULT: {num_sync_threads: 8}}}
    libvirt:
      conf: {libvirt: {log_level: "1"}}
---
apiVersion: kupenstack.io/v1alpha1
kind: KupenstackConfiguration
metadata: {name: kupenstack}
spec:
  release: %q
  namespace: openstack
  charts: {localPath: /charts}
  defaultProfile: {name: default, namespace: ks}
  optionalComponents: [cinder, horizon]
  nodes:
  - {name: node-1, type: control, profile: {name: pernode, namespace: ks}}
  - {name: node-2, type: compute}
  - {name: node-3, type: compute, profile: {name: pernode, namespace: ks}}
`, extra, release)
}

// renderRealCloud renders every component of the cloud with the real charts of a tag.
func renderRealCloud(t *testing.T, tag, extraProfile string) map[string]Component {
	t.Helper()
	docs, err := Parse(strings.NewReader(realCloud(realcharts.Release(tag), extraProfile)))
	if err != nil {
		t.Fatal(err)
	}
	comps, err := Run(docs, Options{Charts: realcharts.Dir(t, tag)})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Component{}
	for _, c := range comps {
		out[c.Name] = c
	}
	return out
}

// document is one manifest document with what the tests read.
type document struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	doc string
}

func documents(t *testing.T, manifest string) []document {
	t.Helper()
	var out []document
	for _, doc := range releaseutil.SplitManifests(manifest) {
		var o document
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		if o.Kind != "" {
			o.doc = doc
			out = append(out, o)
		}
	}
	return out
}

func daemonSets(t *testing.T, manifest string) []appsv1.DaemonSet {
	t.Helper()
	var out []appsv1.DaemonSet
	for _, o := range documents(t, manifest) {
		if o.Kind != "DaemonSet" {
			continue
		}
		var ds appsv1.DaemonSet
		if err := yaml.Unmarshal([]byte(o.doc), &ds); err != nil {
			t.Fatal(err)
		}
		out = append(out, ds)
	}
	return out
}

// hostnameRule is the DaemonSet's required node affinity on kubernetes.io/hostname: the
// operator and the node names (helm-toolkit writes one NotIn per excluded node).
func hostnameRule(ds appsv1.DaemonSet) (corev1.NodeSelectorOperator, []string) {
	a := ds.Spec.Template.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return "", nil
	}
	var op corev1.NodeSelectorOperator
	var nodes []string
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if e.Key == values.LabelHostname && (op == "" || op == e.Operator) {
				op = e.Operator
				nodes = append(nodes, e.Values...)
			}
		}
	}
	return op, nodes
}

// A node with its own profile gets, for every per-node DaemonSet KupenStack declares (nova
// compute, libvirt, each neutron agent), a DaemonSet of the real chart pinned to it, and the
// chart's default DaemonSet leaves it out; the table's keys are those the chart's templates
// pass to helm-toolkit.
func TestRealChartsNodeOverrides(t *testing.T) {
	nodesWith := map[string][]string{ // node label → nodes with a profile carrying it
		values.LabelComputeNode:  {"node-3"},
		values.LabelOpenvswitch:  {"node-1", "node-3"},
		values.LabelControlPlane: {"node-1"},
	}
	for _, tag := range realcharts.Tags {
		t.Run(tag, func(t *testing.T) {
			comps := renderRealCloud(t, tag, "")
			loader := &helm.ChartLoader{}
			checked := 0
			for _, c := range values.Components {
				if len(c.NodeDaemonSets) == 0 {
					continue
				}
				ch, err := loader.Load(helm.Source{LocalPath: realcharts.Dir(t, tag)}, c.Chart, tag)
				if err != nil {
					t.Fatal(err)
				}
				chartKeys := helm.NodeDaemonSets(ch)
				if err := c.CheckNodeDaemonSets(chartKeys); err != nil {
					t.Errorf("%s: %v", c.Name, err)
				}
				all := daemonSets(t, comps[c.Name].Manifest)
				for _, nds := range c.NodeDaemonSets {
					prefix := strings.ReplaceAll(nds.Key, "_", "-") + "-"
					var pinned, excluded []string
					for _, ds := range all {
						if !strings.HasPrefix(ds.Name, prefix) {
							continue
						}
						op, nodes := hostnameRule(ds)
						switch op {
						case corev1.NodeSelectorOpIn:
							if len(nodes) == 1 {
								pinned = append(pinned, nodes[0])
							}
						case corev1.NodeSelectorOpNotIn:
							if strings.Contains(ds.Name, "-default") {
								excluded = append(excluded, nodes...)
							}
						}
					}
					slices.Sort(pinned)
					slices.Sort(excluded)
					want := nodesWith[nds.Label]
					if !slices.Equal(pinned, want) {
						t.Errorf("%s %s: DaemonSets pinned to %v, want %v", c.Name, nds.Key, pinned, want)
					}
					if !slices.Equal(excluded, want) {
						t.Errorf("%s %s: the default DaemonSet excludes %v, want %v", c.Name, nds.Key, excluded, want)
					}
					checked++
				}
			}
			if checked != 6 {
				t.Errorf("checked %d per-node DaemonSets, want 6 (nova compute, libvirt, 4 neutron agents)", checked)
			}
		})
	}
}

// podSpec is the part of a workload the dependency test reads.
type workload struct {
	Metadata struct {
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Template struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Spec corev1.PodSpec `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

// needs is everything a component's install waits for: its dependencies, theirs, and so on.
func needs(name string) map[string]bool {
	out := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		c, _ := values.ComponentByName(n)
		for _, d := range c.DependsOn {
			if !out[d] {
				out[d] = true
				walk(d)
			}
		}
	}
	walk(name)
	return out
}

// The install order includes every wait the real charts' pods declare on another component
// (kubernetes-entrypoint's DEPENDENCY_SERVICE, DEPENDENCY_JOBS, DEPENDENCY_DAEMONSET and
// DEPENDENCY_POD_JSON): each is on a component the waiting one depends on, directly or not, or
// is one of its documented WaitsFor — a component of the same phase, installed side by side,
// that never itself waits to be installed after the waiting one, waited for by no Helm hook
// (a hook would hold the install).
func TestRealChartsDependencies(t *testing.T) {
	for _, tag := range realcharts.Tags {
		t.Run(tag, func(t *testing.T) {
			comps := renderRealCloud(t, tag, "")
			// Who creates what.
			owner := map[string]string{} // "Service/x", "Job/x", "DaemonSet/x" → component
			type podOwner struct {
				labels    map[string]string
				component string
			}
			var pods []podOwner
			type wait struct{ component, object, hook, kind, value string }
			var waits []wait
			for name, c := range comps {
				for _, o := range documents(t, c.Manifest) {
					owner[o.Kind+"/"+o.Metadata.Name] = name
					switch o.Kind {
					case "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob":
					default:
						continue
					}
					var w workload
					if err := yaml.Unmarshal([]byte(o.doc), &w); err != nil {
						t.Fatal(err)
					}
					pods = append(pods, podOwner{w.Spec.Template.Metadata.Labels, name})
					for _, ic := range w.Spec.Template.Spec.InitContainers {
						for _, e := range ic.Env {
							if strings.HasPrefix(e.Name, "DEPENDENCY_") && e.Value != "" {
								waits = append(waits, wait{name, o.Kind + "/" + o.Metadata.Name, o.Metadata.Annotations["helm.sh/hook"], e.Name, e.Value})
							}
						}
					}
				}
			}
			podsOf := func(labels map[string]string) []string {
				var out []string
				for _, p := range pods {
					match := len(labels) > 0
					for k, v := range labels {
						if p.labels[k] != v {
							match = false
						}
					}
					if match && !slices.Contains(out, p.component) {
						out = append(out, p.component)
					}
				}
				return out
			}
			cross := 0
			for _, w := range waits {
				var targets []string // components the wait is on
				switch w.kind {
				case "DEPENDENCY_SERVICE":
					for _, s := range strings.Split(w.value, ",") {
						_, name, _ := strings.Cut(s, ":")
						targets = append(targets, owner["Service/"+name]+"|Service/"+name)
					}
				case "DEPENDENCY_JOBS":
					for _, j := range strings.Split(w.value, ",") {
						targets = append(targets, owner["Job/"+j]+"|Job/"+j)
					}
				case "DEPENDENCY_DAEMONSET":
					for _, d := range strings.Split(w.value, ",") {
						targets = append(targets, owner["DaemonSet/"+d]+"|DaemonSet/"+d)
					}
				case "DEPENDENCY_POD_JSON", "DEPENDENCY_JOBS_JSON":
					var sel []struct {
						Labels map[string]string `json:"labels"`
					}
					if err := yaml.Unmarshal([]byte(w.value), &sel); err != nil {
						t.Fatalf("%s %s: %v", w.object, w.kind, err)
					}
					for _, s := range sel {
						found := podsOf(s.Labels)
						if len(found) == 0 {
							found = []string{""}
						}
						for _, f := range found {
							targets = append(targets, fmt.Sprintf("%s|pod %v", f, s.Labels))
						}
					}
				default:
					t.Errorf("%s %s: %s=%s is a kind of dependency this test does not know", w.component, w.object, w.kind, w.value)
				}
				me, _ := values.ComponentByName(w.component)
				for _, tg := range targets {
					on, what, _ := strings.Cut(tg, "|")
					switch {
					case on == "":
						t.Errorf("%s %s waits for %s, which no component creates", w.component, w.object, what)
					case on == w.component:
					case needs(w.component)[on]:
						cross++
					case slices.Contains(me.WaitsFor, on):
						cross++
						other, _ := values.ComponentByName(on)
						if other.Phase > me.Phase || needs(on)[w.component] {
							t.Errorf("%s waits for %s at run time: it must not be of a later phase nor installed after %s", w.component, on, w.component)
						}
						if w.hook != "" {
							t.Errorf("%s: hook %s waits for %s (%s), which is installed side by side: the install would hang", w.component, w.object, what, on)
						}
					default:
						t.Errorf("%s %s waits for %s of %s, which it neither depends on nor documents in WaitsFor", w.component, w.object, what, on)
					}
				}
			}
			if cross == 0 {
				t.Error("no cross-component dependency found: the test reads nothing")
			}
		})
	}
}

// The profile's knobs reach the real charts: debug turns horizon's Django DEBUG on (and
// oslo.config's debug of the services), resources land on every container of every long-running
// pod (Deployments, StatefulSets, DaemonSets; Jobs keep the charts' defaults).
func TestRealChartsKnobs(t *testing.T) {
	const knobs = `  debug: true
  resources: {requests: {cpu: 123m, memory: 77Mi}, limits: {cpu: 1234m, memory: 777Mi}}
`
	for _, tag := range realcharts.Tags {
		t.Run(tag, func(t *testing.T) {
			comps := renderRealCloud(t, tag, knobs)
			if m := withSecrets(t, comps["horizon"].Manifest); !strings.Contains(m, "DEBUG = True") {
				t.Errorf("horizon: local_settings without DEBUG = True")
			}
			if m := withSecrets(t, comps["nova"].Manifest); !strings.Contains(m, "debug = true") {
				t.Errorf("nova: nova.conf without debug = true")
			}
			for name, c := range comps {
				for _, o := range documents(t, c.Manifest) {
					switch o.Kind {
					case "Deployment", "StatefulSet", "DaemonSet":
					default:
						continue
					}
					var w workload
					if err := yaml.Unmarshal([]byte(o.doc), &w); err != nil {
						t.Fatal(err)
					}
					for _, ctr := range w.Spec.Template.Spec.Containers {
						r := ctr.Resources
						if r.Requests.Cpu().String() != "123m" || r.Limits.Memory().String() != "777Mi" {
							t.Errorf("%s %s/%s container %s: resources %v", name, o.Kind, o.Metadata.Name, ctr.Name, r)
						}
					}
				}
			}
		})
	}
}

// withSecrets is the manifest followed by the decoded data of its Secrets (the charts' rendered
// configuration files).
func withSecrets(t *testing.T, manifest string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(manifest)
	for _, o := range documents(t, manifest) {
		if o.Kind != "Secret" {
			continue
		}
		var sec corev1.Secret
		if err := yaml.Unmarshal([]byte(o.doc), &sec); err != nil {
			t.Fatal(err)
		}
		for _, v := range sec.Data {
			b.Write(v)
			b.WriteString("\n")
		}
		for _, v := range sec.StringData {
			b.WriteString(v + "\n")
		}
	}
	return b.String()
}
