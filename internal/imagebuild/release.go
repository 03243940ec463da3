package imagebuild

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// Release is one image set (images/release-<release>.yaml): which Debian suite the images are
// built from, the reference each recipe gets, and, per chart, which image every images.tags key
// uses. The life-cycle's release table reads Charts.
type Release struct {
	Release string `json:"release"`
	// Suite is the Debian suite (codename) every image of the set is built from.
	Suite string `json:"suite"`
	// Sources are the apt source lines; default: <suite>, <suite>-updates and <suite>-security.
	Sources []string `json:"sources,omitempty"`
	// Versions records what the suite carried when the set was last checked (documentation: the
	// build takes whatever the mirror serves).
	Versions map[string]string `json:"versions,omitempty"`
	// Images: recipe name -> image reference.
	Images map[string]string `json:"images"`
	// Charts: chart -> images.tags key -> image reference (one of Images). Keys the set has no
	// image for are left out; the chart's default stays, so set pull_policy Never.
	Charts map[string]map[string]string `json:"charts"`

	// Mirror and Tag are derived: the first source's URI and the tag all images share.
	Mirror string `json:"-"`
	Tag    string `json:"-"`
	Path   string `json:"-"`
	// standalone are the refs of recipes outside the set (Recipe.Ref), by name.
	standalone map[string]string
}

var refPattern = regexp.MustCompile(`^[a-z0-9.-]+(/[a-z0-9._-]+)+:[A-Za-z0-9._-]+$`)

// LoadRelease reads a release file and checks it against the recipes.
func LoadRelease(path string, recipes map[string]*Recipe) (*Release, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rel := &Release{Path: path}
	if err := yaml.UnmarshalStrict(data, rel); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := rel.complete(recipes); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rel, nil
}

func (rel *Release) complete(recipes map[string]*Recipe) error {
	if rel.Release == "" || rel.Suite == "" {
		return fmt.Errorf("release and suite are required")
	}
	if len(rel.Sources) == 0 {
		rel.Sources = []string{
			"deb http://deb.debian.org/debian " + rel.Suite + " main",
			"deb http://deb.debian.org/debian " + rel.Suite + "-updates main",
			"deb http://deb.debian.org/debian-security " + rel.Suite + "-security main",
		}
	}
	if f := strings.Fields(rel.Sources[0]); len(f) >= 2 {
		rel.Mirror = f[1]
	}
	refs := map[string]bool{}
	rel.standalone = map[string]string{}
	for name, r := range recipes {
		if _, inSet := rel.Images[name]; !inSet && r.Ref != "" {
			rel.standalone[name] = r.Ref
		}
	}
	for _, name := range sortedKeys(rel.Images) {
		ref := rel.Images[name]
		if _, ok := recipes[name]; !ok {
			return fmt.Errorf("images.%s: no recipe images/%s/%s", name, name, RecipeFile)
		}
		if !refPattern.MatchString(ref) {
			return fmt.Errorf("images.%s: %q is not a registry/path:tag reference", name, ref)
		}
		tag := ref[strings.LastIndex(ref, ":")+1:]
		if rel.Tag == "" {
			rel.Tag = tag
		} else if tag != rel.Tag {
			return fmt.Errorf("images.%s: tag %q, want the set's tag %q", name, tag, rel.Tag)
		}
		if refs[ref] {
			return fmt.Errorf("images.%s: reference %s used twice", name, ref)
		}
		refs[ref] = true
	}
	for _, chart := range sortedKeys(rel.Charts) {
		for _, key := range sortedKeys(rel.Charts[chart]) {
			if ref := rel.Charts[chart][key]; !refs[ref] {
				return fmt.Errorf("charts.%s.%s: %s is none of the set's images", chart, key, ref)
			}
		}
	}
	return nil
}

// Ref is the reference of recipe name in this set, or its own reference (Recipe.Ref) when it
// belongs to no set.
func (rel *Release) Ref(name string) string {
	if ref, ok := rel.Images[name]; ok {
		return ref
	}
	return rel.standalone[name]
}

// Repository is Ref without its tag.
func (rel *Release) Repository(name string) string {
	ref := rel.Ref(name)
	return ref[:strings.LastIndex(ref, ":")]
}

// Names are the set's recipe names, sorted.
func (rel *Release) Names() []string { return sortedKeys(rel.Images) }

// ReleaseFile is the path of a release's file under imagesDir.
func ReleaseFile(imagesDir, release string) string {
	return filepath.Join(imagesDir, "release-"+release+".yaml")
}
