package render

import (
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

const (
	sample        = "../../../config/samples/lcm/cloud.yaml"
	oneNodeSample = "../../../config/samples/lcm/one-node.yaml"
)

func parseSample(t *testing.T) *Documents { return parseFile(t, sample) }

// parseFile parses the documents of the file at path.
func parseFile(t *testing.T, path string) *Documents {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	docs, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// The sample configuration renders every core component through the real charts of its
// release, and the node with its own profile gets its pinned nova-compute DaemonSet.
func TestRenderSampleWithCharts(t *testing.T) {
	comps, err := Run(parseSample(t), Options{Charts: realcharts.Dir(t, "2026.1.0")})
	if err != nil {
		t.Fatal(err)
	}
	if len(comps) != 10 {
		t.Fatalf("%d components, want the 10 core ones", len(comps))
	}
	for _, c := range comps {
		if len(c.Kinds) == 0 || c.Manifest == "" {
			t.Errorf("%s: no manifest", c.Name)
		}
		if c.Name == "nova" && !strings.Contains(c.Manifest, "name: nova-compute-node-3") {
			t.Errorf("nova: no DaemonSet pinned to node-3 (its own profile)")
		}
		if strings.Contains(c.Manifest, "password:") && !strings.Contains(c.Manifest, Placeholder) {
			t.Errorf("%s: passwords rendered without the placeholder", c.Name)
		}
	}
}

func TestRenderOneComponent(t *testing.T) {
	comps, err := Run(parseSample(t), Options{Only: "keystone"})
	if err != nil || len(comps) != 1 || comps[0].Name != "keystone" {
		t.Fatalf("comps %v, err %v", comps, err)
	}
	if _, err := Run(parseSample(t), Options{Only: "horizon"}); err == nil || !strings.Contains(err.Error(), "not enabled") {
		t.Fatalf("horizon (optional, not enabled): err = %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	const cfg = "apiVersion: kupenstack.io/v1alpha1\nkind: KupenstackConfiguration\nmetadata: {name: kupenstack}\nspec:\n  release: \"2026.1\"\n  charts: {localPath: /c}\n  defaultProfile: {name: p, namespace: ns1}\n"
	for _, tc := range []struct{ name, input, want string }{
		{"no configuration", "", "no KupenstackConfiguration"},
		{"unknown field", cfg + "  colour: blue\n", "unknown field"},
		{"two configurations", cfg + "---\n" + cfg, "a second KupenstackConfiguration"},
		{"not YAML", "{[", "document 1"},
	} {
		_, err := Parse(strings.NewReader(tc.input))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	// Other kinds are skipped with a note (a Namespace beside the configuration).
	docs, err := Parse(strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata: {name: openstack}\n---\n" + cfg +
		"---\napiVersion: kupenstack.io/v1alpha1\nkind: Network\nmetadata: {name: net}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs.Skipped) != 2 || !strings.Contains(docs.Skipped[0], `document 1 (v1 Namespace "openstack")`) || !strings.Contains(docs.Skipped[1], `document 3 (kupenstack.io/v1alpha1 Network "net")`) {
		t.Errorf("skipped = %q", docs.Skipped)
	}
	if _, err := Run(docs, Options{}); err == nil || !strings.Contains(err.Error(), "profile ns1/p not found") {
		t.Errorf("missing profile: err = %v", err)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct{ name, manifest, want string }{
		{"unknown field of a built-in kind", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replica: 1}\n", "unknown field"},
		{"wrong type", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: [1]\n", "ConfigMap c"},
		{"no name", "apiVersion: v1\nkind: Secret\nmetadata: {}\n", "metadata.name"},
	} {
		if _, err := Validate(tc.manifest); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	kinds, err := Validate("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {anything: 1}\n")
	if err != nil || kinds["ConfigMap"] != 1 || kinds["Widget"] != 1 {
		t.Errorf("kinds %v, err %v", kinds, err)
	}
}

// FuzzParse: any input is either parsed or refused with an error, never a panic.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile(sample); err == nil {
		f.Add(string(b))
	}
	f.Add("apiVersion: kupenstack.io/v1alpha1\nkind: KupenstackConfiguration\n")
	f.Add("---\n---\n# only comments\n")
	f.Fuzz(func(t *testing.T, input string) {
		docs, err := Parse(strings.NewReader(input))
		if err != nil {
			return
		}
		if docs.Config == nil {
			t.Fatal("parsed without a configuration")
		}
		_, _ = docs.Values() // must not panic on any parsed input
	})
}

// Every component is rendered even after failures, and every failure is reported; a chart of
// another version than the release's gets a warning.
func TestRenderReportsEveryFailure(t *testing.T) {
	docs := parseSample(t)
	docs.Config.Spec.Release = "2025.2" // the chart directories below are 2026.1.0
	for _, p := range docs.Profiles {
		if p.Components == nil {
			p.Components = map[string]kupenstackv1.ComponentProfile{}
		}
		for _, name := range []string{"glance", "nova"} {
			cp := p.Components[name]
			cp.Values = &runtime.RawExtension{Raw: []byte(`{"pod": "not a map"}`)} // the chart's templates fail on it
			p.Components[name] = cp
		}
	}
	comps, err := Run(docs, Options{Charts: realcharts.Expand(t, "2026.1.0")})
	if err == nil || !strings.Contains(err.Error(), "glance: rendering chart glance") || !strings.Contains(err.Error(), "nova: rendering chart nova") {
		t.Fatalf("err = %v, want both glance's and nova's failures", err)
	}
	if len(comps) != 10 {
		t.Fatalf("%d components, want all 10", len(comps))
	}
	for _, c := range comps {
		if failed := c.Name == "glance" || c.Name == "nova"; failed != (c.Err != nil) || failed == (c.Manifest != "") {
			t.Errorf("%s: err %v, manifest %d bytes", c.Name, c.Err, len(c.Manifest))
		}
		if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "is version 2026.1.0; release 2025.2 is made of version 2025.2.0") {
			t.Errorf("%s: warnings %q", c.Name, c.Warnings)
		}
	}
	var b strings.Builder
	Summary(&b, comps)
	if out := b.String(); strings.Count(out, "FAILED:") != 2 || strings.Count(out, "warning: chart") != 10 {
		t.Errorf("summary:\n%s", out)
	}
}
