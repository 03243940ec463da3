package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

// The quickstart sample, a Namespace included, renders: the Namespace is skipped with a note.
func TestRenderQuickstartSample(t *testing.T) {
	var stdout, stderr strings.Builder
	err := runRender([]string{"-f", "../../config/samples/quickstart/cloud.yaml", "--charts", realcharts.Dir(t, "2026.1.0")}, nil, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), `skipped document 1 (v1 Namespace "openstack")`) {
		t.Errorf("stderr does not note the skipped Namespace:\n%s", stderr.String())
	}
	if n := strings.Count(stdout.String(), "# component "); n != 10 {
		t.Errorf("%d components on stdout, want 10", n)
	}
}

// Every failing component is reported, not only the first, and the others are still written;
// a chart whose version is not the release's gets a warning.
func TestRenderReportsEveryFailure(t *testing.T) {
	// Chart directories (not versioned archives) of another version than the release's.
	charts := realcharts.Expand(t, "2026.1.0", "mariadb", "rabbitmq", "memcached", "openvswitch", "keystone", "placement", "neutron", "libvirt")
	cfg := filepath.Join(t.TempDir(), "cloud.yaml")
	b, err := os.ReadFile("../../config/samples/lcm/cloud.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), `release: "2026.1"`, `release: "2025.2"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, stderr strings.Builder
	err = runRender([]string{"-f", cfg, "--charts", charts, "--out", out}, nil, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "2 of 10 components failed") {
		t.Fatalf("err = %v, want 2 of 10 failed (glance and nova have no chart)\n%s", err, stderr.String())
	}
	summary := stderr.String()
	for _, want := range []string{"glance", "nova"} {
		if !strings.Contains(summary, "FAILED: no chart "+want) {
			t.Errorf("summary does not report %s:\n%s", want, summary)
		}
	}
	if n := strings.Count(summary, "warning: chart keystone is version 2026.1.0; release 2025.2 is made of version 2025.2.0"); n != 1 {
		t.Errorf("summary without the version warning:\n%s", summary)
	}
	if _, err := os.Stat(filepath.Join(out, "neutron.manifest.yaml")); err != nil {
		t.Errorf("neutron, after nova's failure: %v", err)
	}
}
