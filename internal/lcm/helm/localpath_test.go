package helm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalPathPolicy: a local chart directory is read only under an allowed prefix, as written
// and with symbolic links resolved; "." and ".." cannot lead out, nor can a link.
func TestLocalPathPolicy(t *testing.T) {
	root := t.TempDir()
	allowed := filepath.Join(root, "charts")
	outside := filepath.Join(root, "secrets")
	for _, d := range []string{filepath.Join(allowed, "osh"), outside} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(allowed, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(allowed, filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	p := LocalPathPolicy{Prefixes: []string{allowed, "/opt/openstack-helm"}}
	for _, tt := range []struct {
		path string
		ok   bool
	}{
		{allowed, true},
		{filepath.Join(allowed, "osh"), true},
		{filepath.Join(allowed, "osh") + "/", true},
		{"/opt/openstack-helm/2026.1.0", true},
		{filepath.Join(root, "alias", "osh"), false}, // written outside, though it resolves inside
		{allowed + "x", false},
		{filepath.Join(allowed, "..", "secrets"), false},
		{filepath.Join(allowed, "link"), false},
		{outside, false},
		{"/", false},
		{"relative/charts", false},
	} {
		err := p.Check(tt.path)
		if tt.ok != (err == nil) {
			t.Errorf("Check(%s) = %v, want allowed %v", tt.path, err, tt.ok)
		}
		var lp *LocalPathError
		if err != nil && (!errors.As(err, &lp) || !strings.Contains(err.Error(), "--chart-local-path-prefixes")) {
			t.Errorf("Check(%s): %v does not name the rule", tt.path, err)
		}
	}
	if err := (LocalPathPolicy{Prefixes: []string{"/"}}).Check(outside); err != nil {
		t.Errorf("/ allows every directory: %v", err)
	}
	if err := (LocalPathPolicy{}).Check(allowed); err == nil || !strings.Contains(err.Error(), "(none)") {
		t.Errorf("no prefix allows nothing: %v", err)
	}
}

// TestLoaderRefusesDisallowedDirectories: the loader applies the policy to the chart directory
// and to every file:// dependency, so ../ in a chart's dependencies cannot lead out either.
func TestLoaderRefusesDisallowedDirectories(t *testing.T) {
	l := &ChartLoader{LocalPaths: &LocalPathPolicy{Prefixes: []string{"/nowhere"}}}
	if _, err := l.Load(Source{LocalPath: fixtureCharts}, "nova", ""); err == nil || !strings.Contains(err.Error(), "--chart-local-path-prefixes") {
		t.Fatalf("loading outside the allowed directories: %v", err)
	}
	abs, err := filepath.Abs(fixtureCharts)
	if err != nil {
		t.Fatal(err)
	}
	l.LocalPaths.Prefixes = []string{abs}
	if _, err := l.Load(Source{LocalPath: abs}, "nova", ""); err != nil {
		t.Fatalf("loading from an allowed directory: %v", err)
	}
	// The chart allowed, its file:// dependency outside: refused.
	root := t.TempDir()
	write := func(path, content string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "allowed", "app", "Chart.yaml"), "apiVersion: v2\nname: app\nversion: 0.1.0\n"+
		"dependencies:\n- name: lib\n  version: 0.1.0\n  repository: file://../../outside/lib\n")
	write(filepath.Join(root, "outside", "lib", "Chart.yaml"), "apiVersion: v2\nname: lib\nversion: 0.1.0\n")
	l.LocalPaths.Prefixes = []string{filepath.Join(root, "allowed")}
	if _, err := l.Load(Source{LocalPath: filepath.Join(root, "allowed")}, "app", ""); err == nil || !strings.Contains(err.Error(), "outside/lib is not under one of them") {
		t.Fatalf("a dependency outside the allowed directories: %v", err)
	}
	l.LocalPaths = nil
	if _, err := l.Load(Source{LocalPath: filepath.Join(root, "allowed")}, "app", ""); err != nil {
		t.Fatalf("without a policy the same chart loads: %v", err)
	}
}
