package realcluster

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// writeOCIArchive writes an OCI image layout archive (what `ctr images import` loads) of one
// uncompressed layer holding the executable bin as /name, its entrypoint, tagged ref.
func writeOCIArchive(out, ref, name, bin string) error {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	var layer bytes.Buffer
	lw := tar.NewWriter(&layer)
	if err := lw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(exe)), ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	if _, err := lw.Write(exe); err != nil {
		return err
	}
	if err := lw.Close(); err != nil {
		return err
	}
	blobs := map[string][]byte{}
	add := func(b []byte) map[string]any {
		sum := sha256.Sum256(b)
		d := "sha256:" + hex.EncodeToString(sum[:])
		blobs[hex.EncodeToString(sum[:])] = b
		return map[string]any{"digest": d, "size": len(b)}
	}
	layerDesc := add(layer.Bytes())
	config, _ := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Entrypoint": []string{"/" + name}},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []any{layerDesc["digest"]}},
	})
	configDesc := add(config)
	configDesc["mediaType"] = "application/vnd.oci.image.config.v1+json"
	layerDesc["mediaType"] = "application/vnd.oci.image.layer.v1.tar"
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": configDesc, "layers": []any{layerDesc},
	})
	manifestDesc := add(manifest)
	manifestDesc["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
	manifestDesc["annotations"] = map[string]string{"io.containerd.image.name": ref}
	index, _ := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []any{manifestDesc}})

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	w := tar.NewWriter(f)
	file := func(name string, b []byte) error {
		if err := w.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		_, err := w.Write(b)
		return err
	}
	if err := file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := file("index.json", index); err != nil {
		return err
	}
	for d, b := range blobs {
		if err := file("blobs/sha256/"+d, b); err != nil {
			return fmt.Errorf("blob %s: %w", d, err)
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}
