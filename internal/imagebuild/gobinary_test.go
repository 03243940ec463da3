package imagebuild

import (
	"archive/tar"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// goRepo is a repository with one main package and the builder's source directories.
func goRepo(t *testing.T) (root string, recipes map[string]*Recipe, rel *Release) {
	t.Helper()
	root = t.TempDir()
	for _, src := range BuilderSource {
		writeFile(t, filepath.Join(root, src, "a.go"), "package a")
	}
	writeFile(t, filepath.Join(root, "go.mod"), "module example.com/x\n\ngo 1.24\n")
	writeFile(t, filepath.Join(root, "cmd", "hello", "main.go"), "package main\n\nfunc main() { println(\"hello\") }\n")
	writeRecipe(t, filepath.Join(root, "images", "hello"), "ref: kupenstack.local/kupenstack/hello:dev\n"+
		"go: {package: ./cmd/hello, path: /usr/local/bin/hello}\nconfig: {entrypoint: [/usr/local/bin/hello], user: \"65532:65532\"}\n")
	recipes, err := LoadRecipes(filepath.Join(root, "images"))
	if err != nil {
		t.Fatal(err)
	}
	rel = &Release{Release: "2025.1", Suite: "trixie"}
	if err := rel.complete(recipes); err != nil {
		t.Fatal(err)
	}
	return root, recipes, rel
}

func TestGoImageIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a program")
	}
	root, recipes, rel := goRepo(t)
	r := recipes["hello"]
	if got := rel.Ref("hello"); got != "kupenstack.local/kupenstack/hello:dev" {
		t.Fatalf("ref %q: a recipe outside the set keeps its own", got)
	}
	digests := map[string]bool{}
	var rec *Record
	for i := range 2 {
		cache := Cache{Dir: filepath.Join(t.TempDir(), "cache")}
		b := &Builder{RepoRoot: root, Release: rel, Cache: cache, Log: io.Discard, SkipSmoke: true}
		var err error
		if rec, _, err = b.Build(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if rec.Suite != GoSuite {
			t.Errorf("suite %q, want %q", rec.Suite, GoSuite)
		}
		img, err := ReadArchive(rec.Archive, filepath.Join(t.TempDir(), "read"))
		if err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		digests[d.String()] = true
		if i == 0 {
			checkGoImage(t, mutate.Extract(img))
			cf, _ := img.ConfigFile()
			if cf.Config.User != "65532:65532" || !cf.Created.IsZero() {
				t.Errorf("config user %q created %v", cf.Config.User, cf.Created)
			}
		}
		// The binary's mtime must not leak into the image.
		time.Sleep(1100 * time.Millisecond)
	}
	if len(digests) != 1 {
		t.Errorf("two builds gave %d digests: %v", len(digests), digests)
	}

	// The key follows the program's own source, not other packages'.
	k0, err := Key(root, r, rel)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "cmd", "other", "main.go"), "package main\n\nfunc main() {}\n")
	if k, _ := Key(root, r, rel); k != k0 {
		t.Error("a package the binary does not use changed the key")
	}
	writeFile(t, filepath.Join(root, "cmd", "hello", "main.go"), "package main\n\nfunc main() { println(\"hi\") }\n")
	if k, _ := Key(root, r, rel); k == k0 {
		t.Error("changing the program left the key")
	}
}

func checkGoImage(t *testing.T, rc io.ReadCloser) {
	t.Helper()
	defer rc.Close()
	files := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(h.Name, "/")] = h
		if !h.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s: mtime %v, want the epoch", h.Name, h.ModTime)
		}
	}
	for name, want := range map[string]int64{"usr/local/bin/hello": 0o755, "etc/passwd": 0o644, "tmp": 0o1777} {
		h := files[name]
		if h == nil || h.Mode != want || h.Uid != 0 {
			t.Errorf("%s: %+v, want mode %o owned by root", name, h, want)
		}
	}
	if files["etc/ssl/certs/ca-certificates.crt"] != nil {
		t.Error("CA bundle without caCertificates")
	}
}

func TestGoRecipeRejects(t *testing.T) {
	for name, body := range map[string]string{
		"packages too":    "go: {package: ./cmd/x, path: /x}\npackages: [a]\n",
		"shell smoke":     "go: {package: ./cmd/x, path: /x}\nsmoke: true\n",
		"relative path":   "go: {package: ./cmd/x, path: x}\n",
		"package outside": "go: {package: ../x, path: /x}\n",
		"bad ref":         "ref: x\ngo: {package: ./cmd/x, path: /x}\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "x")
			writeRecipe(t, dir, body)
			if _, err := LoadRecipe(dir); err == nil {
				t.Fatal("loaded, want an error")
			}
		})
	}
}
