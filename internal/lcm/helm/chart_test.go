package helm

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
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

// The real OpenStack-Helm charts load from a chart repository directory (packaged charts, the
// helm-toolkit dependency embedded) and from the same repository served over HTTP, with the
// same content; a second load from the repository comes from memory.
func TestRealChartsLoadLocalAndRemote(t *testing.T) {
	charts := []string{"mariadb", "rabbitmq", "memcached", "openvswitch", "libvirt", "keystone",
		"glance", "cinder", "placement", "nova", "neutron", "horizon"}
	for _, tag := range realcharts.Tags {
		t.Run(tag, func(t *testing.T) {
			// As in the operator's pod: no writable home, no Helm directories set.
			t.Setenv("HOME", "/proc/kupenstack-no-home")
			for _, v := range []string{"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
				t.Setenv(v, "")
			}
			var hits atomic.Int64
			url := realcharts.Serve(t, tag, &hits)
			l := &ChartLoader{CacheDir: t.TempDir()}
			for _, name := range charts {
				local, err := l.Load(Source{LocalPath: realcharts.Dir(t, tag)}, name, tag)
				if err != nil {
					t.Fatal(err)
				}
				remote, err := l.Load(Source{Repository: url}, name, tag)
				if err != nil {
					t.Fatal(err)
				}
				if local.Metadata.Version != tag || Digest(local) != Digest(remote) {
					t.Errorf("%s: local %s %s, remote %s %s", name, local.Metadata.Version, Digest(local), remote.Metadata.Version, Digest(remote))
				}
				if len(local.Dependencies()) != 1 || local.Dependencies()[0].Name() != "helm-toolkit" {
					t.Errorf("%s: dependencies %v, want helm-toolkit", name, local.Dependencies())
				}
			}
			before := hits.Load()
			if _, err := l.Load(Source{Repository: url}, "nova", tag); err != nil {
				t.Fatal(err)
			}
			if hits.Load() != before {
				t.Errorf("a second load of nova %s went to the repository", tag)
			}
			if _, err := l.Load(Source{LocalPath: realcharts.Dir(t, tag)}, "nova", "1.2.3"); err == nil || !strings.Contains(err.Error(), "nova-1.2.3.tgz") {
				t.Errorf("a version the directory lacks: err = %v", err)
			}
			if _, err := l.Load(Source{Repository: url}, "nova", "1.2.3"); err == nil {
				t.Error("a version the repository lacks loaded")
			}
		})
	}
}

// A chart from a repository is loaded once, but Helm's install changes the chart it is given
// (it coalesces the values into the chart's own, dependencies included): each Load must give a
// chart as published, or the next pass sees another chart and upgrades a release that was just
// installed (every real component went to revision 2 at once).
func TestRemoteChartUnchangedByRendering(t *testing.T) {
	url := realcharts.Serve(t, "2025.1.0", nil)
	l := &ChartLoader{CacheDir: t.TempDir()}
	for _, name := range []string{"keystone", "nova"} {
		ch, err := l.Load(Source{Repository: url}, name, "2025.1.0")
		if err != nil {
			t.Fatal(err)
		}
		before := Digest(ch)
		if _, err := Render(ch, name, "openstack", map[string]any{"pod": map[string]any{"replicas": map[string]any{"api": 2}}}); err != nil {
			t.Fatal(err)
		}
		again, err := l.Load(Source{Repository: url}, name, "2025.1.0")
		if err != nil {
			t.Fatal(err)
		}
		if after := Digest(again); after != before {
			t.Errorf("%s: digest %s after a rendering, %s before: the loader handed out a chart Helm changed", name, after, before)
		}
	}
}
