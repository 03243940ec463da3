package imagebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// GoBinary makes a recipe a static Go program of this repository instead of a Debian root file
// system: the image holds the binary, /etc/passwd and /etc/group with root and the non-root user,
// an empty /tmp and, when asked, the CA certificates. No shell, no package manager.
type GoBinary struct {
	// Package is the main package, relative to the repository root (./cmd/kupenstack).
	Package string `json:"package"`
	// Path is where the binary goes in the image (/kupenstack).
	Path string `json:"path"`
	// CACertificates copies the build host's CA bundle (/etc/ssl/certs/ca-certificates.crt, from
	// Debian's ca-certificates) to the same path, for programs that talk TLS to other servers.
	CACertificates bool `json:"caCertificates,omitempty"`
	// SmokeArgs: the smoke test runs the binary with these arguments, as the image's user, in a
	// chroot of the unpacked image; it must exit 0.
	SmokeArgs []string `json:"smokeArgs,omitempty"`
}

// GoSuite stands for the Debian suite in a Go image's cache file name: it has none.
const GoSuite = "static"

// NonRootUID is the user (and group) Go images run as, distroless' "nonroot".
const NonRootUID = 65532

// hostCABundle is Debian's CA bundle.
const hostCABundle = "/etc/ssl/certs/ca-certificates.crt"

// epoch is every file's modification time in a Go image, so that the same inputs give the same
// layer digest.
var epoch = time.Unix(0, 0).UTC()

// goEnv is the build environment: static, for the image's platform, whatever the host sets.
func goEnv() []string {
	return append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=-mod=readonly")
}

// goBuildArgs are the flags of a reproducible build: no paths, no build ID, no VCS stamp.
var goBuildArgs = []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid="}

func (g *GoBinary) validate() error {
	if !strings.HasPrefix(g.Package, "./") || strings.Contains(g.Package, "..") {
		return fmt.Errorf("go.package %q: want a ./path inside the repository", g.Package)
	}
	if !strings.HasPrefix(g.Path, "/") || strings.HasSuffix(g.Path, "/") {
		return fmt.Errorf("go.path %q: want an absolute file path", g.Path)
	}
	return nil
}

// goKey is the cache key of a Go recipe: the recipe, the builder, the reference, the Go version
// and build flags, go.mod and go.sum (every dependency) and every file of the repository's own
// packages the binary is built from, plus the CA bundle when the image carries it.
func goKey(ctx context.Context, repoRoot string, r *Recipe, ref string) (string, error) {
	h := sha256.New()
	version, err := goOutput(ctx, repoRoot, "env", "GOVERSION")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "go %s\nflags %q\nref %s\n", strings.TrimSpace(version), goBuildArgs, ref)
	if err := HashTree(h, r.Dir, nil); err != nil {
		return "", err
	}
	for _, src := range BuilderSource {
		if err := HashTree(h, filepath.Join(repoRoot, src), func(rel string) bool {
			return strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go")
		}); err != nil {
			return "", err
		}
	}
	files := []string{"go.mod", "go.sum"}
	out, err := goOutput(ctx, repoRoot, "list", "-deps",
		"-f", `{{if .Module}}{{if .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}{{end}}`,
		r.Go.Package)
	if err != nil {
		return "", err
	}
	for _, f := range strings.Fields(out) {
		rel, err := filepath.Rel(repoRoot, f)
		if err != nil {
			return "", err
		}
		files = append(files, rel)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if errors.Is(err, os.ErrNotExist) && f == "go.sum" {
			continue // a module without dependencies
		}
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "file %s %x\n", filepath.ToSlash(f), sha256.Sum256(data))
	}
	if r.Go.CACertificates {
		data, err := os.ReadFile(hostCABundle)
		if err != nil {
			return "", fmt.Errorf("%s: %w (install ca-certificates)", hostCABundle, err)
		}
		fmt.Fprintf(h, "ca %x\n", sha256.Sum256(data))
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func goOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = dir, goEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// buildGo compiles the binary into work and writes the image's layer; it returns the layer and
// the files' total size.
func (b *Builder) buildGo(ctx context.Context, r *Recipe, work string) (string, int64, error) {
	bin := filepath.Join(work, "binary")
	args := append(append([]string(nil), goBuildArgs...), "-o", bin, r.Go.Package)
	cmd := exec.CommandContext(ctx, "nice", append([]string{"-n", "10", "go"}, args...)...)
	cmd.Dir, cmd.Env = b.RepoRoot, goEnv()
	cmd.Stdout, cmd.Stderr = b.Log, b.Log
	fmt.Fprintf(b.Log, "+ go %s\n", strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		return "", 0, fmt.Errorf("go build %s: %w", r.Go.Package, err)
	}
	layer := filepath.Join(work, "layer.tar.gz")
	size, err := writeGoLayer(layer, bin, r.Go)
	return layer, size, err
}

// goFile is one entry of a Go image's layer.
type goFile struct {
	name     string
	mode     int64
	uid      int
	data     []byte
	dataFrom string
}

// writeGoLayer writes the layer of a Go image: directories, passwd and group, CA bundle and the
// binary, owned by root (the binary cannot be changed by the user it runs as), every time the
// epoch.
func writeGoLayer(layer, bin string, g *GoBinary) (int64, error) {
	// nobody (65534) is who helm-toolkit runs the dep_check init containers as.
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n"+
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n", NonRootUID, NonRootUID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\nnogroup:x:65534:\n", NonRootUID)
	entries := []goFile{
		{name: "etc/", mode: 0o755}, {name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "home/", mode: 0o755}, {name: "home/nonroot/", mode: 0o700, uid: NonRootUID},
		{name: "root/", mode: 0o700}, {name: "tmp/", mode: 0o1777},
	}
	if g.CACertificates {
		entries = append(entries, goFile{name: "etc/ssl/", mode: 0o755}, goFile{name: "etc/ssl/certs/", mode: 0o755},
			goFile{name: strings.TrimPrefix(hostCABundle, "/"), mode: 0o644, dataFrom: hostCABundle})
	}
	dir := strings.TrimPrefix(filepath.Dir(g.Path), "/")
	if dir != "" {
		var parent string
		for _, part := range strings.Split(dir, "/") {
			parent += part + "/"
			if parent != "etc/" && parent != "home/" && parent != "tmp/" && parent != "root/" {
				entries = append(entries, goFile{name: parent, mode: 0o755})
			}
		}
	}
	entries = append(entries, goFile{name: strings.TrimPrefix(g.Path, "/"), mode: 0o755, dataFrom: bin})

	out, err := os.Create(layer)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	// No name and a zero time in the gzip header: the compressed layer is reproducible too.
	zw, err := gzip.NewWriterLevel(out, gzip.BestSpeed)
	if err != nil {
		return 0, err
	}
	tw := tar.NewWriter(zw)
	var total int64
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: epoch, Format: tar.FormatPAX, Typeflag: tar.TypeReg}
		if strings.HasSuffix(e.name, "/") {
			h.Typeflag = tar.TypeDir
		}
		var src io.Reader
		switch {
		case e.dataFrom != "":
			f, err := os.Open(e.dataFrom)
			if err != nil {
				return 0, err
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return 0, err
			}
			h.Size, src = fi.Size(), f
		case h.Typeflag == tar.TypeReg:
			h.Size, src = int64(len(e.data)), bytes.NewReader(e.data)
		}
		if err := tw.WriteHeader(h); err != nil {
			return 0, err
		}
		if src != nil {
			if _, err := io.Copy(tw, src); err != nil {
				return 0, err
			}
		}
		total += h.Size
	}
	if err := tw.Close(); err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return total, out.Close()
}

// smokeGo runs the binary of the unpacked image with its smoke arguments as the non-root user,
// chrooted into the image, in new mount, PID, IPC, UTS and network namespaces (it needs none of
// the host's services).
func smokeGo(ctx context.Context, r *Recipe, rootfs string, log io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, SmokeTimeout)
	defer cancel()
	uid := fmt.Sprintf("%d:%d", NonRootUID, NonRootUID)
	args := append([]string{"--mount", "--pid", "--ipc", "--uts", "--net", "--fork", "--kill-child",
		"chroot", "--userspec=" + uid, rootfs, r.Go.Path}, r.Go.SmokeArgs...)
	cmd := exec.CommandContext(ctx, "unshare", args...)
	cmd.Env = []string{"HOME=/home/nonroot", "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}
	var tail tailBuffer
	out := io.MultiWriter(log, &tail)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err := cmd.Run()
	fmt.Fprintf(log, "smoke %s: %s in %.1fs\n", r.Name, result(err), time.Since(start).Seconds())
	if err != nil {
		return fmt.Errorf("%s %s: %w; last output:\n%s", r.Go.Path, strings.Join(r.Go.SmokeArgs, " "), err, tail.String())
	}
	return nil
}
