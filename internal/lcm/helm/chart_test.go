package helm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fixtureCharts = "../../../test/fixtures/charts"

func fixtureNames(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(fixtureCharts)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "toolkit" {
			names = append(names, e.Name())
		}
	}
	return names
}

// Every fixture chart loads with its file:// library dependency resolved and renders.
func TestFixtureChartsRender(t *testing.T) {
	l := &ChartLoader{}
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			ch, err := l.Load(Source{LocalPath: fixtureCharts}, name, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(ch.Dependencies()) != 1 || ch.Dependencies()[0].Name() != "toolkit" {
				t.Fatalf("dependencies = %v, want the toolkit library", ch.Dependencies())
			}
			manifest, err := Render(ch, name, "openstack", nil)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := Objects(manifest, "openstack")
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for _, o := range objs {
				kinds[o.GVK.Kind]++
				if o.Namespace != "openstack" {
					t.Errorf("%s: namespace %q", o, o.Namespace)
				}
			}
			if kinds["Secret"] != 1 || kinds["Deployment"]+kinds["StatefulSet"]+kinds["DaemonSet"] == 0 {
				t.Errorf("kinds = %v", kinds)
			}
		})
	}
}

// A per-node override renders a DaemonSet pinned to the node and excludes it from the default one.
func TestFixtureChartPerNodeOverride(t *testing.T) {
	ch, err := (&ChartLoader{}).Load(Source{LocalPath: fixtureCharts}, "nova", "")
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{"conf": map[string]any{"overrides": map[string]any{"nova_compute": map[string]any{
		"hosts": []any{map[string]any{"name": "node-b", "conf": map[string]any{"nova": map[string]any{"DEFAULT": map[string]any{"debug": true}}}}},
	}}}}
	manifest, err := Render(ch, "nova", "openstack", values)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: nova-compute-node-b", "name: nova-compute-default", "operator: NotIn", "operator: In"} {
		if !strings.Contains(manifest, want) {
			t.Errorf("manifest lacks %q", want)
		}
	}
}

func TestMissingLocalChart(t *testing.T) {
	_, err := (&ChartLoader{}).Load(Source{LocalPath: t.TempDir()}, "nova", "")
	if err == nil || !strings.Contains(err.Error(), filepath.Join("nova")) {
		t.Fatalf("err = %v, want one naming the chart", err)
	}
}
