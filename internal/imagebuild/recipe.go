// Package imagebuild builds KupenStack's OpenStack images from Debian packages without a container
// engine: mmdebstrap makes the root file system, go-containerregistry writes it as a one-layer OCI
// image archive that `ctr images import` loads. Recipes live in images/<name>/image.yaml, release
// sets (suite, tag, which chart image key gets which image) in images/release-<release>.yaml.
package imagebuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// RecipeFile is the file that makes a directory under images/ a recipe.
const RecipeFile = "image.yaml"

// Recipe is one image: Debian packages, service users at the charts' fixed UIDs, extra files
// (the recipe's files/ directory, copied onto /), a final shell step and the image config; or,
// with go set, a static Go program of this repository on no base at all (see GoBinary).
type Recipe struct {
	// Name is the directory name; it is also the last path element of the image's repository.
	Name string `json:"-"`
	// Dir is the recipe directory.
	Dir string `json:"-"`

	Description string `json:"description"`
	// Go builds the image from a Go package of this repository instead of Debian packages;
	// packages, suitePackages, users, customize, files/ and smoke must then be empty.
	Go *GoBinary `json:"go,omitempty"`
	// Ref is the image's reference when it belongs to no release set (the operator's own image);
	// a release's images entry takes precedence.
	Ref string `json:"ref,omitempty"`
	// Packages are installed with apt on top of the minbase variant.
	Packages []string `json:"packages"`
	// SuitePackages are added to Packages on one suite only (a package renamed between suites).
	SuitePackages map[string][]string `json:"suitePackages,omitempty"`
	// Users are created before any package is unpacked, so that postinst scripts find them and
	// files they own get the UID the charts' runAsUser expects.
	Users []User `json:"users,omitempty"`
	// Customize is a shell script run by /bin/sh inside the finished root file system.
	Customize string `json:"customize,omitempty"`
	// Smoke is the smoke test, a shell script run inside the unpacked image (see Sandbox).
	Smoke string `json:"smoke"`
	// Config is the image's default process; the charts always give their own command.
	Config Config `json:"config"`
}

// User is a system user and its group, both with ID UID.
type User struct {
	Name string `json:"name"`
	UID  int    `json:"uid"`
	Home string `json:"home,omitempty"`
}

// Config is the part of the OCI image config a recipe sets.
type Config struct {
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	Env        []string `json:"env,omitempty"`
	User       string   `json:"user,omitempty"`
	WorkingDir string   `json:"workingDir,omitempty"`
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// LoadRecipe reads images/<name>/image.yaml.
func LoadRecipe(dir string) (*Recipe, error) {
	data, err := os.ReadFile(filepath.Join(dir, RecipeFile))
	if err != nil {
		return nil, err
	}
	r := &Recipe{Name: filepath.Base(dir), Dir: dir}
	if err := yaml.UnmarshalStrict(data, r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, RecipeFile), err)
	}
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, RecipeFile), err)
	}
	return r, nil
}

func (r *Recipe) validate() error {
	if !namePattern.MatchString(r.Name) {
		return fmt.Errorf("recipe name %q: want lower-case letters, digits and dashes", r.Name)
	}
	if r.Ref != "" && !refPattern.MatchString(r.Ref) {
		return fmt.Errorf("ref %q is not a registry/path:tag reference", r.Ref)
	}
	if r.Go != nil {
		if len(r.Packages) > 0 || len(r.SuitePackages) > 0 || len(r.Users) > 0 || r.Customize != "" || r.Smoke != "" {
			return fmt.Errorf("a go recipe has no packages, suitePackages, users, customize or smoke (go.smokeArgs is its smoke test)")
		}
		if _, err := os.Stat(r.FilesDir()); err == nil {
			return fmt.Errorf("a go recipe has no files/ directory")
		}
		return r.Go.validate()
	}
	if len(r.Packages) == 0 {
		return fmt.Errorf("no packages")
	}
	for _, p := range r.Packages {
		if strings.ContainsAny(p, ", \t") {
			return fmt.Errorf("package %q: one package per entry", p)
		}
	}
	if strings.TrimSpace(r.Smoke) == "" {
		return fmt.Errorf("no smoke test: every image says how to check that it starts its service")
	}
	seen := map[int]string{}
	for _, u := range r.Users {
		if !namePattern.MatchString(u.Name) || u.UID <= 0 || u.UID >= 65534 {
			return fmt.Errorf("user %q uid %d: want a name and 0 < uid < 65534", u.Name, u.UID)
		}
		if other, ok := seen[u.UID]; ok {
			return fmt.Errorf("users %q and %q share uid %d", other, u.Name, u.UID)
		}
		seen[u.UID] = u.Name
	}
	return nil
}

// PackagesFor is the package list on suite.
func (r *Recipe) PackagesFor(suite string) []string {
	return append(append([]string(nil), r.Packages...), r.SuitePackages[suite]...)
}

// FilesDir is the recipe's tree of extra files, copied onto / (may not exist).
func (r *Recipe) FilesDir() string { return filepath.Join(r.Dir, "files") }

// LoadRecipes reads every recipe under imagesDir, sorted by name.
func LoadRecipes(imagesDir string) (map[string]*Recipe, error) {
	entries, err := os.ReadDir(imagesDir)
	if err != nil {
		return nil, err
	}
	out := map[string]*Recipe{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(imagesDir, e.Name(), RecipeFile)); err != nil {
			continue
		}
		r, err := LoadRecipe(filepath.Join(imagesDir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[r.Name] = r
	}
	return out, nil
}

// HashTree adds every regular file under dir (path relative to dir, mode and content) to h, in
// lexical order, so that the same tree always hashes the same.
func HashTree(h io.Writer, dir string, keep func(rel string) bool) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() || (keep != nil && !keep(rel)) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "link %s %s\n", filepath.ToSlash(rel), target)
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "file %s %o %x\n", filepath.ToSlash(rel), info.Mode().Perm(), sum)
		return nil
	})
}

// BuilderSource is the builder's own code (this package and its command, no tests): a change to
// either makes every image stale.
var BuilderSource = []string{"internal/imagebuild", "hack/imagebuild"}

// Suite is the suite recipe r is built from in rel: rel's, or GoSuite for a Go recipe.
func Suite(r *Recipe, rel *Release) string {
	if r.Go != nil {
		return GoSuite
	}
	return rel.Suite
}

// Key is the cache key of recipe r built for rel (a Go recipe: see goKey): a hash of the recipe directory, the builder's
// source under repoRoot and the suite, shortened to 16 hex digits.
func Key(repoRoot string, r *Recipe, rel *Release) (string, error) {
	if r.Go != nil {
		return goKey(context.Background(), repoRoot, r, rel.Ref(r.Name))
	}
	h := sha256.New()
	fmt.Fprintf(h, "suite %s\nmirror %s\ntag %s\nrepository %s\n", rel.Suite, rel.Mirror, rel.Tag, rel.Repository(r.Name))
	if err := HashTree(h, r.Dir, nil); err != nil {
		return "", err
	}
	for _, src := range BuilderSource {
		err := HashTree(h, filepath.Join(repoRoot, src), func(rel string) bool {
			return strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go")
		})
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
