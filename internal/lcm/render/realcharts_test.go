package render

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kupenstack/kupenstack/internal/lcm/values"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

// realSample is the lcm sample for a release, with cinder and horizon too, so that every chart
// of the component table renders; edit changes its default profile.
func realSample(t *testing.T, release string, edit func(p *Documents)) *Documents {
	t.Helper()
	docs := parseSample(t)
	docs.Config.Spec.Release = release
	docs.Config.Spec.OptionalComponents = []string{"cinder", "horizon"}
	if edit != nil {
		edit(docs)
	}
	return docs
}

// withoutUndeclaredIdentityUsers drops the endpoints.identity.auth users the chart does not
// declare. Until the credentials give each chart only its own users (defect 1 of the real-chart
// study), nova, neutron and cinder do not render with them.
func withoutUndeclaredIdentityUsers(chartValues, vals map[string]any) map[string]any {
	declared := nested(chartValues, "endpoints", "identity", "auth")
	auth := nested(vals, "endpoints", "identity", "auth")
	for user := range auth {
		if _, ok := declared[user]; !ok {
			delete(auth, user)
		}
	}
	return vals
}

func nested(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		next, _ := m[p].(map[string]any)
		m = next
	}
	return m
}

// renderReal renders every component of docs with the real charts of tag.
func renderReal(t *testing.T, docs *Documents, tag string) []Component {
	t.Helper()
	comps, err := Run(docs, Options{Charts: realcharts.Dir(t, tag), adjust: withoutUndeclaredIdentityUsers})
	if err != nil {
		t.Fatalf("charts %s: %v", tag, err)
	}
	if len(comps) != len(values.Components) {
		t.Fatalf("charts %s: %d components rendered, want all %d", tag, len(comps), len(values.Components))
	}
	return comps
}

// object is one manifest object, as much of it as the cross-checks read.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec map[string]any `json:"spec"`
}

func objects(t *testing.T, c Component) []object {
	t.Helper()
	var out []object
	for _, doc := range releaseutil.SplitManifests(c.Manifest) {
		var o object
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if o.Kind != "" {
			out = append(out, o)
		}
	}
	return out
}

// podSpec is the pod template of a workload (or the spec of a Pod); nil for other kinds.
func podSpec(t *testing.T, o object) *corev1.PodSpec {
	t.Helper()
	var raw any
	switch o.Kind {
	case "Deployment", "StatefulSet", "DaemonSet", "Job":
		raw = nested(o.Spec, "template")["spec"]
	case "CronJob":
		raw = nested(o.Spec, "jobTemplate", "spec", "template")["spec"]
	case "Pod":
		raw = o.Spec
	default:
		return nil
	}
	b, err := yaml.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var ps corev1.PodSpec
	if err := yaml.Unmarshal(b, &ps); err != nil {
		t.Fatalf("%s %s: %v", o.Kind, o.Metadata.Name, err)
	}
	return &ps
}

// containers are every container and init container of every workload and Pod of c.
func containers(t *testing.T, c Component) map[string]corev1.Container {
	t.Helper()
	out := map[string]corev1.Container{}
	for _, o := range objects(t, c) {
		ps := podSpec(t, o)
		if ps == nil {
			continue
		}
		for _, ctr := range append(append([]corev1.Container{}, ps.InitContainers...), ps.Containers...) {
			out[fmt.Sprintf("%s %s/%s", o.Kind, o.Metadata.Name, ctr.Name)] = ctr
		}
	}
	return out
}

// tableImages are the images the release table gives, moved to registry: its infrastructure
// images and the OpenStack images tagged with the release.
func tableImages(t *testing.T, release, registry string) map[string]bool {
	t.Helper()
	rel, err := values.LookupRelease(release)
	if err != nil {
		t.Fatal(err)
	}
	move := func(ref string) string {
		if registry == "" {
			return ref
		}
		_, rest, _ := strings.Cut(ref, "/")
		return registry + "/" + rest
	}
	out := map[string]bool{}
	for _, ref := range rel.Infra {
		out[move(ref)] = true
	}
	for _, name := range []string{"keystone", "glance", "cinder", "placement", "nova", "neutron", "horizon", "openstack-client"} {
		ref, err := rel.Image(name)
		if err != nil {
			t.Fatal(err)
		}
		out[move(ref)] = true
	}
	return out
}

// Every container of every component, for every release on the charts written for it, runs an
// image the release table or the profile decides: none falls back to a chart default, which
// belongs to another release (the 2026.1.0 charts default to 2025.1 images). With imageRegistry
// set, every image comes from that registry, and imagePullPolicy reaches every container.
func TestRealChartsEveryImageDecided(t *testing.T) {
	for _, tag := range realcharts.Tags {
		release := realcharts.Release(tag)
		t.Run(tag, func(t *testing.T) {
			const mine = "registry.example/mine/entrypoint:1"
			plain := renderReal(t, realSample(t, release, func(d *Documents) {
				for _, p := range d.Profiles {
					p.Images = map[string]string{"dep_check": mine}
				}
			}), tag)
			allowed := tableImages(t, release, "")
			allowed[mine] = true
			mineSeen := false
			for _, c := range plain {
				for where, ctr := range containers(t, c) {
					if !allowed[ctr.Image] {
						t.Errorf("%s: %s runs %s, which neither the release table nor the profile gives", c.Name, where, ctr.Image)
					}
					mineSeen = mineSeen || ctr.Image == mine
				}
			}
			if !mineSeen {
				t.Errorf("the profile's dep_check image runs nowhere")
			}

			const registry = "registry.local:5000"
			moved := renderReal(t, realSample(t, release, func(d *Documents) {
				for _, p := range d.Profiles {
					p.ImageRegistry, p.ImagePullPolicy = registry, corev1.PullAlways
				}
			}), tag)
			allowed = tableImages(t, release, registry)
			var wrong []string
			for _, c := range moved {
				for where, ctr := range containers(t, c) {
					if !strings.HasPrefix(ctr.Image, registry+"/") || !allowed[ctr.Image] {
						wrong = append(wrong, fmt.Sprintf("%s: %s runs %s", c.Name, where, ctr.Image))
					}
					if ctr.ImagePullPolicy != corev1.PullAlways {
						t.Errorf("%s: %s pulls %q, want Always", c.Name, where, ctr.ImagePullPolicy)
					}
				}
			}
			sort.Strings(wrong)
			if len(wrong) > 0 {
				t.Errorf("with imageRegistry %s, %d containers run another image:\n%s", registry, len(wrong), strings.Join(wrong, "\n"))
			}
		})
	}
}
