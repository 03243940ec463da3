package imagebuild

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// annotationImageName is the annotation `ctr images import` names the image after.
	annotationImageName = "io.containerd.image.name"
	// annotationRefName is the OCI layout's own name of a manifest (its tag).
	annotationRefName = "org.opencontainers.image.ref.name"
)

// defaultPath is the PATH of every image.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// WriteArchive writes a one-layer OCI image (linux/amd64) named ref as an OCI layout tar at out.
// layerPath is a gzip-compressed layer tarball.
func WriteArchive(out, layerPath, ref string, c Config) error {
	layer, err := tarball.LayerFromFile(layerPath, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.OCIConfigJSON), types.OCIManifestSchema1), layer)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Config = v1.Config{
		Entrypoint: c.Entrypoint, Cmd: c.Cmd, User: c.User, WorkingDir: c.WorkingDir,
		Env:    imageEnv(c.Env),
		Labels: map[string]string{"org.opencontainers.image.ref.name": ref},
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}

	dir, err := os.MkdirTemp(filepath.Dir(out), ".layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	tag := ref[strings.LastIndex(ref, ":")+1:]
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{annotationImageName: ref, annotationRefName: tag})); err != nil {
		return err
	}
	return tarDir(dir, out)
}

// tarDir writes the files under dir into a tar at out (paths relative to dir).
func tarDir(dir, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			h.Name += "/"
		}
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
		// The same image gives the same archive, byte for byte.
		h.ModTime, h.AccessTime, h.ChangeTime = epoch, time.Time{}, time.Time{}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// ReadArchive opens the image of an archive written by WriteArchive, unpacking the layout into
// dir (the image's blobs are read from there).
func ReadArchive(archive, dir string) (v1.Image, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		name := filepath.Clean(h.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			return nil, fmt.Errorf("%s: unsafe path %q", archive, h.Name)
		}
		target := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return nil, err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return nil, err
			}
			out, err := os.Create(target)
			if err != nil {
				return nil, err
			}
			if _, err := io.Copy(out, tr); err != nil {
				out.Close()
				return nil, err
			}
			if err := out.Close(); err != nil {
				return nil, err
			}
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("%s: %d manifests, want 1", archive, len(m.Manifests))
	}
	return idx.Image(m.Manifests[0].Digest)
}

// imageEnv is PATH and LANG, unless the recipe sets them, then the recipe's variables.
func imageEnv(env []string) []string {
	out := []string{}
	for _, def := range []string{defaultPath, "LANG=C.UTF-8"} {
		name := def[:strings.Index(def, "=")+1]
		if !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, name) }) {
			out = append(out, def)
		}
	}
	return append(out, env...)
}
