package imagebuild

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

func writeRecipe(t *testing.T, dir, body string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, RecipeFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

const okRecipe = "packages: [memcached]\nusers: [{name: svc, uid: 42424}]\nsmoke: |\n  #!/bin/sh\n  true\n"

func TestLoadRecipeRejects(t *testing.T) {
	for name, body := range map[string]string{
		"no smoke test":      "packages: [memcached]\n",
		"no packages":        "smoke: true\n",
		"packages in one":    "packages: [\"a,b\"]\nsmoke: true\n",
		"shared uid":         "packages: [a]\nusers: [{name: a, uid: 999}, {name: b, uid: 999}]\nsmoke: true\n",
		"uid out of range":   "packages: [a]\nusers: [{name: a, uid: 0}]\nsmoke: true\n",
		"unknown field":      "packages: [a]\nsmoke: true\npackage: [b]\n",
		"bad directory name": "",
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "x")
			if body == "" {
				dir, body = filepath.Join(t.TempDir(), "Bad_Name"), okRecipe
			}
			writeRecipe(t, dir, body)
			if _, err := LoadRecipe(dir); err == nil {
				t.Fatal("loaded, want an error")
			}
		})
	}
}

func TestKeyFollowsRecipeBuilderAndSuite(t *testing.T) {
	root := t.TempDir()
	for _, src := range BuilderSource {
		writeFile(t, filepath.Join(root, src, "a.go"), "package a")
	}
	dir := filepath.Join(root, "images", "svc")
	writeRecipe(t, dir, okRecipe)
	recipes, err := LoadRecipes(filepath.Join(root, "images"))
	if err != nil {
		t.Fatal(err)
	}
	rel := &Release{Release: "2025.1", Suite: "trixie", Images: map[string]string{"svc": "kupenstack.local/openstack/svc:2025.1-trixie"}}
	if err := rel.complete(recipes); err != nil {
		t.Fatal(err)
	}
	r := recipes["svc"]
	key := func() string {
		k, err := Key(root, r, rel)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key()
	if key() != k0 {
		t.Fatal("key is not stable")
	}
	seen := map[string]string{k0: "start"}
	for _, change := range []struct {
		name string
		do   func()
	}{
		{"a file under files/", func() { writeFile(t, filepath.Join(dir, "files", "etc", "x.conf"), "x") }},
		{"the recipe", func() { writeRecipe(t, dir, okRecipe+"description: y\n") }},
		{"the builder", func() { writeFile(t, filepath.Join(root, BuilderSource[0], "a.go"), "package a // changed") }},
		{"the suite", func() { rel.Suite = "forky" }},
	} {
		change.do()
		k := key()
		if prev, ok := seen[k]; ok {
			t.Errorf("changing %s left the key as after %s", change.name, prev)
		}
		seen[k] = change.name
	}
	// A test file is not part of the builder.
	k := key()
	writeFile(t, filepath.Join(root, BuilderSource[0], "a_test.go"), "package a")
	if key() != k {
		t.Error("a _test.go file changed the key")
	}
}

func TestReleaseChecks(t *testing.T) {
	recipes := map[string]*Recipe{"a": {Name: "a"}, "b": {Name: "b"}}
	for name, rel := range map[string]*Release{
		"unknown recipe":  {Release: "r", Suite: "s", Images: map[string]string{"c": "x.local/o/c:r-s"}},
		"mixed tags":      {Release: "r", Suite: "s", Images: map[string]string{"a": "x.local/o/a:r-s", "b": "x.local/o/b:other"}},
		"same reference":  {Release: "r", Suite: "s", Images: map[string]string{"a": "x.local/o/a:r-s", "b": "x.local/o/a:r-s"}},
		"not a reference": {Release: "r", Suite: "s", Images: map[string]string{"a": "a"}},
		"chart ref unset": {Release: "r", Suite: "s", Images: map[string]string{"a": "x.local/o/a:r-s"},
			Charts: map[string]map[string]string{"c": {"k": "x.local/o/z:r-s"}}},
	} {
		if err := rel.complete(recipes); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestArchiveRoundTrip(t *testing.T) {
	dir := t.TempDir()
	// A layer as mmdebstrap would give it: a root file system tarball with device nodes.
	rootfs := filepath.Join(dir, "rootfs.tar")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./dev/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./dev/null", Typeflag: tar.TypeChar, Mode: 0o666, Devmajor: 1, Devminor: 3},
		{Name: "./etc/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./etc/hello", Typeflag: tar.TypeReg, Mode: 0o644, Size: 5, Uid: 42424, Gid: 42424},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte("hello"))
		}
	}
	tw.Close()
	writeFile(t, rootfs, buf.String())
	layer := filepath.Join(dir, "layer.tar.gz")
	size, err := writeLayer(rootfs, layer)
	if err != nil || size != 5 {
		t.Fatalf("writeLayer: %d bytes, %v", size, err)
	}
	ref := "kupenstack.local/openstack/svc:2025.1-trixie"
	archive := filepath.Join(dir, "image.tar")
	cfg := Config{Cmd: []string{"svc"}, User: "42424", Env: []string{"PATH=/opt/bin:/usr/bin"}}
	if err := WriteArchive(archive, layer, ref, cfg); err != nil {
		t.Fatal(err)
	}

	img, err := ReadArchive(archive, filepath.Join(dir, "read"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := layout.ImageIndexFromPath(filepath.Join(dir, "read"))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := idx.IndexManifest()
	if got := m.Manifests[0].Annotations[annotationImageName]; got != ref {
		t.Errorf("containerd image name %q, want %q", got, ref)
	}
	if got := m.Manifests[0].Annotations[annotationRefName]; got != "2025.1-trixie" {
		t.Errorf("ref name %q", got)
	}
	if mt := string(m.Manifests[0].MediaType); !strings.Contains(mt, "oci") {
		t.Errorf("manifest media type %s, want OCI", mt)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "42424" || cf.Config.Cmd[0] != "svc" || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("config %+v", cf.Config)
	}
	if strings.Join(cf.Config.Env, " ") != "LANG=C.UTF-8 PATH=/opt/bin:/usr/bin" {
		t.Errorf("env %q: the recipe's PATH must replace the default one", cf.Config.Env)
	}
	names := map[string]*tar.Header{}
	tr := tar.NewReader(mutate.Extract(img))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names[strings.TrimPrefix(h.Name, "./")] = h
	}
	if names["dev/null"] != nil {
		t.Error("device node kept in the layer")
	}
	if h := names["etc/hello"]; h == nil || h.Uid != 42424 {
		t.Errorf("etc/hello: %+v, want it owned by 42424", h)
	}
}

func TestUsersHook(t *testing.T) {
	hook := usersHook([]User{{Name: "keystone", UID: 42424}})
	for _, want := range []string{`'keystone:x:42424:' >> "$1/etc/group"`, `'keystone:x:42424:42424::/var/lib/keystone:/usr/sbin/nologin' >> "$1/etc/passwd"`} {
		if !strings.Contains(hook, want) {
			t.Errorf("hook %q lacks %q", hook, want)
		}
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
