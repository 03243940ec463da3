// Package images checks KupenStack's OpenStack images (images/, built by hack/images.sh).
//
// TestReleaseFilesMatchCharts always runs: every images.tags key a release file maps must exist
// in that release's real chart. TestImagesSmoke runs each cached image's smoke test again (the
// build already ran it once); it needs root and KUPENSTACK_IMAGES=1 (or =required, which also
// fails on an image that is not built), and skips otherwise. IMAGES_RELEASE limits it to one set.
package images

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/kupenstack/kupenstack/internal/imagebuild"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// EnvImages turns the smoke tests on: 1 runs those of the built images, required fails on the
// others.
const EnvImages = "KUPENSTACK_IMAGES"

func loadAll(t *testing.T) (string, map[string]*imagebuild.Recipe, []*imagebuild.Release) {
	t.Helper()
	root := testenv.RepoRoot()
	dir := filepath.Join(root, "images")
	recipes, err := imagebuild.LoadRecipes(dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "release-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no images/release-*.yaml (%v)", err)
	}
	var rels []*imagebuild.Release
	for _, f := range files {
		rel, err := imagebuild.LoadRelease(f, recipes)
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, rel)
	}
	return root, recipes, rels
}

func TestReleaseFilesMatchCharts(t *testing.T) {
	_, recipes, rels := loadAll(t)
	used := map[string]bool{}
	for _, rel := range rels {
		// From the release file itself: the subtest may be skipped without the charts (-short).
		for _, n := range rel.Names() {
			used[n] = true
		}
		t.Run(rel.Release, func(t *testing.T) {
			tag := rel.Release + ".0"
			dir := realcharts.Dir(t, tag)
			for _, chart := range sortedKeys(rel.Charts) {
				c, err := loader.Load(filepath.Join(dir, chart+"-"+tag+".tgz"))
				if err != nil {
					t.Errorf("chart %s: %v", chart, err)
					continue
				}
				tags, _ := c.Values["images"].(map[string]any)["tags"].(map[string]any)
				for _, key := range sortedKeys(rel.Charts[chart]) {
					if _, ok := tags[key]; !ok {
						t.Errorf("charts.%s.%s: the %s chart %s has no images.tags.%s", chart, key, chart, tag, key)
					}
				}
			}
		})
	}
	for n, r := range recipes {
		if !used[n] && r.Ref == "" { // an image with its own ref (the operator's) is in no release set
			t.Errorf("recipe images/%s is in no release file", n)
		}
	}
}

func TestImagesSmoke(t *testing.T) {
	mode := os.Getenv(EnvImages)
	if mode == "" {
		t.Skipf("set %s=1 to smoke-test the built images (%s=required: every image must be built)", EnvImages, EnvImages)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("%s needs root (unshare, chroot)", EnvImages)
	}
	root, recipes, rels := loadAll(t)
	cacheDir, err := imagebuild.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	cache := imagebuild.Cache{Dir: cacheDir}
	only := os.Getenv("IMAGES_RELEASE")
	for _, rel := range rels {
		if only != "" && rel.Release != only {
			continue
		}
		for _, name := range rel.Names() {
			t.Run(rel.Release+"/"+name, func(t *testing.T) {
				r := recipes[name]
				key, err := imagebuild.Key(root, r, rel)
				if err != nil {
					t.Fatal(err)
				}
				rec, err := cache.Lookup(name, imagebuild.Suite(r, rel), key)
				if err != nil {
					t.Fatal(err)
				}
				if rec == nil {
					msg := "not built: IMAGES_RELEASE=" + rel.Release + " hack/images.sh build " + name
					if mode == "required" {
						t.Fatal(msg)
					}
					t.Skip(msg)
				}
				// Not t.TempDir: Smoke removes its directory itself, and only once nothing is
				// mounted under it.
				work, err := os.MkdirTemp("", "kupenstack-smoke-"+name+"-")
				if err != nil {
					t.Fatal(err)
				}
				var log strings.Builder
				if err := imagebuild.Smoke(context.Background(), r, rec.Archive, work, &log); err != nil {
					t.Fatalf("%s: %v\n%s", rec.Ref, err, log.String())
				}
				t.Logf("%s: smoke ok", rec.Ref)
			})
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
