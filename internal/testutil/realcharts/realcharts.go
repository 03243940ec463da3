// Package realcharts gives tests the real OpenStack-Helm charts: the chart repositories of the
// upstream tags kept in ../shared/openstack-helm beside the checkout (index.yaml + packaged
// charts), read as a local directory or served over HTTP on 127.0.0.1 as a chart repository.
// The charts are test data; they are never copied into the project.
package realcharts

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// Tags are the chart tags kept, oldest first; Release maps each to the OpenStack release it is
// written for.
var Tags = []string{"2025.1.0", "2025.2.0", "2026.1.0"}

// Release is the OpenStack release a chart tag targets (2026.1.0 → 2026.1).
func Release(tag string) string { return tag[:len(tag)-2] }

// EnvDir overrides where the tags' directories are.
const EnvDir = "KUPENSTACK_OSH_CHARTS"

// Root is the directory holding one chart repository per tag.
func Root() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	return filepath.Join(testenv.RepoRoot(), "..", "shared", "openstack-helm")
}

// Dir is the chart repository of a tag, as a local directory. A missing directory fails the
// test, except under -short, where it skips it: these charts are what the life-cycle is tested on.
func Dir(t testing.TB, tag string) string {
	t.Helper()
	dir := filepath.Join(Root(), tag)
	if _, err := os.Stat(filepath.Join(dir, "index.yaml")); err != nil {
		if testing.Short() {
			t.Skipf("real OpenStack-Helm charts not found (%v); set %s", err, EnvDir)
		}
		t.Fatalf("real OpenStack-Helm charts not found (%v): they are expected beside the checkout in ../shared/openstack-helm, or in $%s", err, EnvDir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// Serve serves a tag's chart repository over HTTP on 127.0.0.1 for the test's lifetime and
// returns its URL (a Helm repository URL). Requests are counted in *hits when hits is not nil.
func Serve(t testing.TB, tag string, hits *atomic.Int64) string {
	t.Helper()
	return serveDir(t, Dir(t, tag), hits)
}

// ServeAll serves every tag as one chart repository (the indexes merged, as the official
// repository holds every version), so that a configuration's release alone picks the chart
// version, and returns its URL.
func ServeAll(t testing.TB, hits *atomic.Int64) string {
	t.Helper()
	return serveDir(t, MergedDir(t, Tags...), hits)
}

func serveDir(t testing.TB, dir string, hits *atomic.Int64) string {
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits != nil {
			hits.Add(1)
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// MergedDir is one chart repository of the tags in a temporary directory: their indexes merged
// and their archives linked beside it (hard links; copies across file systems). A directory of
// its own, not symbolic links, so that a reader that sees only it (a pod's hostPath) finds
// every file.
func MergedDir(t testing.TB, tags ...string) string {
	t.Helper()
	dst := t.TempDir()
	merged := repo.NewIndexFile()
	for _, tag := range tags {
		src := Dir(t, tag)
		idx, err := repo.LoadIndexFile(filepath.Join(src, "index.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		merged.Merge(idx)
		archives, err := filepath.Glob(filepath.Join(src, "*.tgz"))
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range archives {
			if err := linkOrCopy(a, filepath.Join(dst, filepath.Base(a))); err != nil {
				t.Fatal(err)
			}
		}
	}
	merged.SortEntries()
	if err := merged.WriteFile(filepath.Join(dst, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Readable by the pods' users, whatever the test's umask made of the temporary directory.
	if err := os.Chmod(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// linkOrCopy puts src at dst; a dst that exists is an error (two tags shipping one archive name
// would leave the merged index and the file disagreeing).
func linkOrCopy(src, dst string) error {
	err := os.Link(src, dst)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s: two tags ship it", filepath.Base(dst))
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

// Expand unpacks the charts of a tag into a temporary directory of chart directories (the form
// of a checkout of openstack-helm) and returns it; only names, if given.
func Expand(t testing.TB, tag string, names ...string) string {
	t.Helper()
	src, dst := Dir(t, tag), t.TempDir()
	archives, err := filepath.Glob(filepath.Join(src, "*-"+tag+".tgz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range archives {
		name := strings.TrimSuffix(filepath.Base(a), "-"+tag+".tgz")
		if len(names) > 0 && !slices.Contains(names, name) {
			continue
		}
		if err := chartutil.ExpandFile(dst, a); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
