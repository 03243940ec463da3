package cloudsample

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/imagebuild"
)

// The shipped one-node sample takes the 2025.1 images: every chart of the release file gets its
// images, pull policy Never, the node and the charts asked for; parsing its output again gives
// the same objects (what the quickstart applies is what the test deploys).
func TestOneNodeSampleUsesTheReleaseImages(t *testing.T) {
	root := filepath.Join("..", "..")
	s := oneNodeSample(t)
	recipes, err := imagebuild.LoadRecipes(filepath.Join(root, "images"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := imagebuild.LoadRelease(imagebuild.ReleaseFile(filepath.Join(root, "images"), "2025.1"), recipes)
	if err != nil {
		t.Fatal(err)
	}
	charts := kupenstackv1.ChartSource{LocalPath: "/charts/2025.1.0"}
	if err := s.UseImages(rel, "kupenstack-system", "node-a", charts); err != nil {
		t.Fatal(err)
	}
	again := roundTrip(t, s)
	p, cfg := again.Profile, again.Configuration
	if p.Namespace != "kupenstack-system" || p.Spec.ImagePullPolicy != corev1.PullNever {
		t.Errorf("profile %s/%s pull policy %q", p.Namespace, p.Name, p.Spec.ImagePullPolicy)
	}
	for chart, images := range rel.Charts {
		if got := p.Spec.Components[chart].Images; len(got) != len(images) {
			t.Errorf("chart %s: %d images, want %d", chart, len(got), len(images))
		}
	}
	if p.Spec.Components["neutron"].Values == nil {
		t.Error("the sample's own neutron values were lost")
	}
	if cfg.Spec.Nodes[0].Name != "node-a" || cfg.Spec.Charts != charts ||
		cfg.Spec.DefaultProfile != (kupenstackv1.ProfileReference{Name: p.Name, Namespace: p.Namespace}) {
		t.Errorf("configuration: nodes %+v charts %+v profile %+v", cfg.Spec.Nodes, cfg.Spec.Charts, cfg.Spec.DefaultProfile)
	}
}

func TestCloudSampleRejects(t *testing.T) {
	const profile = "apiVersion: kupenstack.io/v1alpha1\nkind: OpenstackCloudConfigurationProfile\nmetadata: {name: p}\n"
	const config = "apiVersion: kupenstack.io/v1alpha1\nkind: KupenstackConfiguration\nmetadata: {name: c}\nspec:\n  release: \"2026.1\"\n  nodes: [{name: n, roles: [control]}]\n"
	for name, tc := range map[string]struct{ doc, want string }{
		"no configuration":  {profile, "want a profile and a configuration"},
		"no profile":        {config, "want a profile and a configuration"},
		"another kind":      {profile + "---\nkind: Namespace\n", `unexpected kind "Namespace"`},
		"an unknown field":  {profile + "spec: {replica: 1}\n---\n" + config, "unknown field"},
		"two nodes":         {profile + "---\n" + strings.Replace(config, "[{name: n, roles: [control]}]", "[{name: a}, {name: b}]", 1), "want one node, have 2"},
		"the wrong release": {profile + "---\n" + config, `asks for release "2026.1"`},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Parse([]byte(tc.doc))
			if err == nil {
				err = s.UseImages(&imagebuild.Release{Release: "2025.1"}, "ns", "n", kupenstackv1.ChartSource{})
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// UseCeph asks for cinder once, however often it is called, keeps the other optional components,
// and the profile's spec.ceph survives the YAML the quickstart applies.
func TestUseCeph(t *testing.T) {
	s := oneNodeSample(t)
	before := slices.Clone(s.Configuration.Spec.OptionalComponents)
	s.UseCeph(1)
	s.UseCeph(1)
	again := roundTrip(t, s)
	if got, want := again.Configuration.Spec.OptionalComponents, append(before, "cinder"); !slices.Equal(got, want) {
		t.Errorf("optional components %v, want %v", got, want)
	}
	if c := again.Profile.Spec.Ceph; c == nil || c.PoolReplicas != 1 {
		t.Errorf("profile's ceph %+v, want poolReplicas 1", c)
	}
}

// oneNodeSample parses the shipped config/samples/lcm/one-node.yaml.
func oneNodeSample(t *testing.T) *Sample {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", "lcm", "one-node.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// roundTrip parses what s writes: what the quickstart applies.
func roundTrip(t *testing.T, s *Sample) *Sample {
	t.Helper()
	out, err := s.YAML()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return again
}
