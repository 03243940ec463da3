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

// TestConcurrentBuildsShareOneArchive: two builders of the same recipe into one cache at once (make
// test's background prebuild and the real cluster test's own build) build it once; the second
// waits and takes the first one's archive.
func TestConcurrentBuildsShareOneArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a program")
	}
	root, recipes, rel := goRepo(t)
	cache := Cache{Dir: filepath.Join(t.TempDir(), "cache")}
	type result struct {
		rec    *Record
		cached bool
		err    error
	}
	results := make(chan result, 2)
	var logs [2]strings.Builder
	for i := range 2 {
		b := &Builder{RepoRoot: root, Release: rel, Cache: cache, Log: &logs[i], SkipSmoke: true}
		go func() {
			rec, cached, err := b.Build(context.Background(), recipes["hello"])
			results <- result{rec, cached, err}
		}()
	}
	built, fromCache := 0, 0
	var archives []string
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		archives = append(archives, r.rec.Archive)
		if r.cached {
			fromCache++
		} else {
			built++
		}
	}
	if built != 1 || fromCache != 1 || archives[0] != archives[1] {
		t.Errorf("built %d, from the cache %d, archives %q: want one build the other waited for", built, fromCache, archives)
	}
	if !strings.Contains(logs[0].String()+logs[1].String(), "being built by another process") {
		t.Errorf("the waiting builder did not say so: %q / %q", logs[0].String(), logs[1].String())
	}
}

func TestCacheLockWaitsAndHonoursCancellation(t *testing.T) {
	cache := Cache{Dir: t.TempDir()}
	unlock, waited, err := cache.lock(context.Background(), "x", "trixie", io.Discard)
	if err != nil || waited {
		t.Fatalf("first lock: waited=%v %v", waited, err)
	}
	// Held: a second taker gives up with its context.
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if _, waited, err := cache.lock(ctx, "x", "trixie", io.Discard); err == nil || !waited {
		t.Fatalf("second lock while held: waited=%v err=%v, want the context's error", waited, err)
	}
	// Another image is not held up by it.
	u2, waited, err := cache.lock(context.Background(), "y", "trixie", io.Discard)
	if err != nil || waited {
		t.Fatalf("other image: waited=%v %v", waited, err)
	}
	u2()
	// Released: taken again, after waiting for it.
	go func() { time.Sleep(300 * time.Millisecond); unlock() }()
	u3, waited, err := cache.lock(context.Background(), "x", "trixie", io.Discard)
	if err != nil || !waited {
		t.Fatalf("after release: waited=%v %v", waited, err)
	}
	u3()
}
