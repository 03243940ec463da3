package imagebuild

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Cache is the directory the image archives are kept in, outside any clone
// (~/.cache/kupenstack/images): <name>-<suite>-<key>.tar with a .json record beside it.
type Cache struct{ Dir string }

// DefaultCacheDir is ~/.cache/kupenstack/images, or $KUPENSTACK_IMAGE_CACHE.
func DefaultCacheDir() (string, error) {
	if d := os.Getenv("KUPENSTACK_IMAGE_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "kupenstack", "images"), nil
}

// Record is what the cache knows about one archive (the .json beside it).
type Record struct {
	Name    string    `json:"name"`
	Ref     string    `json:"ref"`
	Suite   string    `json:"suite"`
	Key     string    `json:"key"`
	Archive string    `json:"archive"`
	Built   time.Time `json:"built"`
	// BuildSeconds: mmdebstrap, layer and archive (cold build); SmokeSeconds: the smoke test.
	BuildSeconds float64 `json:"buildSeconds"`
	SmokeSeconds float64 `json:"smokeSeconds"`
	// ArchiveBytes is the archive's size (gzip layer); RootfsBytes the unpacked file sizes.
	ArchiveBytes int64 `json:"archiveBytes"`
	RootfsBytes  int64 `json:"rootfsBytes"`
	// Packages: "name version" of every installed package.
	Packages []string `json:"packages"`
}

func (c Cache) base(name, suite, key string) string {
	return filepath.Join(c.Dir, fmt.Sprintf("%s-%s-%s", name, suite, key))
}

// lock takes the exclusive lock of one image and suite (a .lock file beside the archives, held
// with flock, so a builder that dies releases it), polling until ctx ends. waited says another
// builder held it first.
func (c Cache) lock(ctx context.Context, name, suite string, log io.Writer) (unlock func(), waited bool, err error) {
	f, err := os.OpenFile(filepath.Join(c.Dir, fmt.Sprintf(".%s-%s.lock", name, suite)), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, waited, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, false, fmt.Errorf("locking %s: %w", f.Name(), err)
		}
		if !waited && log != nil {
			fmt.Fprintf(log, "[imagebuild] %s (%s) is being built by another process; waiting for it\n", name, suite)
		}
		waited = true
		select {
		case <-ctx.Done():
			f.Close()
			return nil, true, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// Lookup returns the record of a cached archive, or nil.
func (c Cache) Lookup(name, suite, key string) (*Record, error) {
	data, err := os.ReadFile(c.base(name, suite, key) + ".json")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rec := &Record{}
	if err := json.Unmarshal(data, rec); err != nil {
		return nil, err
	}
	if _, err := os.Stat(rec.Archive); err != nil {
		return nil, nil
	}
	return rec, nil
}

// Builder builds recipes of one release into a cache.
type Builder struct {
	RepoRoot string
	Release  *Release
	Cache    Cache
	// Log receives mmdebstrap's output and progress lines.
	Log io.Writer
	// SkipSmoke caches an image without running its smoke test.
	SkipSmoke bool
}

// Cached returns r's archive in the cache for b's release (nil when it is not built) and its
// cache key.
func (b *Builder) Cached(r *Recipe) (*Record, string, error) {
	key, err := Key(b.RepoRoot, r, b.Release)
	if err != nil {
		return nil, "", err
	}
	rec, err := b.Cache.Lookup(r.Name, Suite(r, b.Release), key)
	return rec, key, err
}

// Build returns the cached archive of r, building (and smoke-testing) it when the cache has none.
func (b *Builder) Build(ctx context.Context, r *Recipe) (*Record, bool, error) {
	cached, key, err := b.Cached(r)
	if err != nil {
		return nil, false, err
	}
	if cached != nil {
		return cached, true, nil
	}
	suite := Suite(r, b.Release)
	if err := os.MkdirAll(b.Cache.Dir, 0o755); err != nil {
		return nil, false, err
	}
	// Another builder (make test's background prebuild, a second shell) may be making the same
	// archive: wait for it, then take its result rather than build it twice.
	unlock, waited, err := b.Cache.lock(ctx, r.Name, suite, b.Log)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	if waited {
		if rec, err := b.Cache.Lookup(r.Name, suite, key); err != nil || rec != nil {
			return rec, true, err
		}
	}
	work, err := os.MkdirTemp(b.Cache.Dir, ".build-"+r.Name+"-")
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(work)

	start := time.Now()
	pkgList := filepath.Join(work, "packages.txt")
	var layer string
	var rootfsBytes int64
	if r.Go != nil {
		if layer, rootfsBytes, err = b.buildGo(ctx, r, work); err != nil {
			return nil, false, err
		}
	} else {
		rootfs := filepath.Join(work, "rootfs.tar")
		if err := b.mmdebstrap(ctx, r, work, rootfs, pkgList); err != nil {
			return nil, false, err
		}
		layer = filepath.Join(work, "layer.tar.gz")
		if rootfsBytes, err = writeLayer(rootfs, layer); err != nil {
			return nil, false, fmt.Errorf("layer: %w", err)
		}
	}
	rec := &Record{Name: r.Name, Ref: b.Release.Ref(r.Name), Suite: suite, Key: key, RootfsBytes: rootfsBytes}
	base := b.Cache.base(r.Name, suite, key)
	rec.Archive = base + ".tar"
	tmpArchive := filepath.Join(work, "image.tar")
	if err := WriteArchive(tmpArchive, layer, rec.Ref, r.Config); err != nil {
		return nil, false, fmt.Errorf("archive: %w", err)
	}
	rec.BuildSeconds = time.Since(start).Seconds()
	if pk, err := os.ReadFile(pkgList); err == nil {
		rec.Packages = strings.Split(strings.TrimSpace(string(pk)), "\n")
	}

	if !b.SkipSmoke {
		smokeStart := time.Now()
		if err := Smoke(ctx, r, tmpArchive, filepath.Join(work, "smoke"), b.Log); err != nil {
			return nil, false, fmt.Errorf("%s: smoke test failed, not cached: %w", r.Name, err)
		}
		rec.SmokeSeconds = time.Since(smokeStart).Seconds()
	}

	fi, err := os.Stat(tmpArchive)
	if err != nil {
		return nil, false, err
	}
	rec.ArchiveBytes = fi.Size()
	rec.Built = time.Now().UTC().Truncate(time.Second)
	if err := os.Rename(tmpArchive, rec.Archive); err != nil {
		return nil, false, err
	}
	data, _ := json.MarshalIndent(rec, "", "  ")
	if err := os.WriteFile(base+".json", append(data, '\n'), 0o644); err != nil {
		return nil, false, err
	}
	b.prune(r.Name, suite, key)
	return rec, false, nil
}

// prune removes the older archives of the same image and suite.
func (b *Builder) prune(name, suite, key string) {
	old, _ := filepath.Glob(b.Cache.base(name, suite, "*"))
	for _, f := range old {
		if !strings.HasPrefix(filepath.Base(f), filepath.Base(b.Cache.base(name, suite, key))) {
			os.Remove(f)
		}
	}
}

// mmdebstrap makes the root file system tarball of r. Service users are written into the
// essential packages' passwd and group before apt unpacks anything else, the recipe's files/
// tree is copied onto /, then its customize script runs inside the tree.
func (b *Builder) mmdebstrap(ctx context.Context, r *Recipe, work, out, pkgList string) error {
	args := []string{
		"--variant=minbase",
		"--include=" + strings.Join(r.PackagesFor(b.Release.Suite), ","),
		`--aptopt=Acquire::Retries "3"`,
		`--aptopt=APT::Install-Recommends "false"`,
		"--dpkgopt=path-exclude=/usr/share/man/*",
		"--dpkgopt=path-exclude=/usr/share/info/*",
		"--dpkgopt=path-exclude=/usr/share/doc/*",
		"--dpkgopt=path-include=/usr/share/doc/*/copyright",
		"--dpkgopt=path-exclude=/usr/share/locale/*",
		"--dpkgopt=path-include=/usr/share/locale/locale.alias",
	}
	if len(r.Users) > 0 {
		args = append(args, "--essential-hook="+usersHook(r.Users))
	}
	if fi, err := os.Stat(r.FilesDir()); err == nil && fi.IsDir() {
		args = append(args, "--customize-hook=sync-in "+r.FilesDir()+" /")
	}
	if strings.TrimSpace(r.Customize) != "" {
		script := filepath.Join(work, "customize.sh")
		if err := os.WriteFile(script, []byte(r.Customize), 0o644); err != nil {
			return err
		}
		args = append(args,
			"--customize-hook=upload "+script+" /kupenstack-customize.sh",
			`--customize-hook=chroot "$1" /bin/sh -eu /kupenstack-customize.sh && rm -f "$1/kupenstack-customize.sh"`)
	}
	args = append(args,
		`--customize-hook=chroot "$1" dpkg-query -W -f='${Package} ${Version}\n' > `+pkgList,
		`--customize-hook=rm -rf "$1"/var/log/apt/* "$1"/var/log/dpkg.log "$1"/var/cache/debconf/*-old "$1"/var/lib/dpkg/*-old`,
		b.Release.Suite, out)
	args = append(args, b.Release.Sources...)
	cmd := exec.CommandContext(ctx, "nice", append([]string{"-n", "10", "mmdebstrap"}, args...)...)
	cmd.Stdout, cmd.Stderr = b.Log, b.Log
	fmt.Fprintf(b.Log, "+ mmdebstrap %s\n", strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("mmdebstrap %s: %w", r.Name, err)
	}
	return nil
}

// usersHook is an essential hook adding users and their groups at fixed IDs.
func usersHook(users []User) string {
	var sb strings.Builder
	sb.WriteString("set -e; ")
	for _, u := range users {
		home := u.Home
		if home == "" {
			home = "/var/lib/" + u.Name
		}
		fmt.Fprintf(&sb, `echo '%s:x:%d:' >> "$1/etc/group"; `, u.Name, u.UID)
		fmt.Fprintf(&sb, `echo '%s:!::' >> "$1/etc/gshadow"; `, u.Name)
		fmt.Fprintf(&sb, `echo '%s:x:%d:%d::%s:/usr/sbin/nologin' >> "$1/etc/passwd"; `, u.Name, u.UID, u.UID, home)
		fmt.Fprintf(&sb, `echo '%s:*:20000:0:99999:7:::' >> "$1/etc/shadow"; `, u.Name)
		fmt.Fprintf(&sb, `mkdir -p "$1%s" && chown %d:%d "$1%s"; `, home, u.UID, u.UID, home)
	}
	return sb.String()
}

// writeLayer copies the root file system tarball into a gzip layer, without the device nodes
// mmdebstrap puts under /dev (the runtime provides /dev). It returns the files' total size.
func writeLayer(rootfs, layer string) (int64, error) {
	in, err := os.Open(rootfs)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.Create(layer)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	zw, err := gzip.NewWriterLevel(out, gzip.BestSpeed)
	if err != nil {
		return 0, err
	}
	tr, tw := tar.NewReader(in), tar.NewWriter(zw)
	var total int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		name := strings.TrimPrefix(h.Name, "./")
		if strings.HasPrefix(name, "dev/") && name != "dev/" {
			continue
		}
		total += h.Size
		if err := tw.WriteHeader(h); err != nil {
			return 0, err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return 0, err
		}
	}
	if err := tw.Close(); err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return total, out.Close()
}
