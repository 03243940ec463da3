package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"

	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// driftImageSource serves one tiny image for every out-of-band image case, for the whole run.
var driftImageSource = sync.OnceValue(func() *kupenstackv1.ImageSource {
	payload := []byte("kupenstack drift test image\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(payload) }))
	sum := sha256.Sum256(payload)
	return &kupenstackv1.ImageSource{URL: srv.URL + "/drift.raw", SHA256: hex.EncodeToString(sum[:])}
})

// An Image's and a PublicImage's name, visibility, minimum disk and RAM, tags and properties (one
// actuator serves both: the PublicImage's cases check it is public and its shared fields).
func init() {
	content := func() kupenstackv1.ImageContent {
		return kupenstackv1.ImageContent{Source: driftImageSource(), DiskFormat: "raw", MinDiskGiB: 1, MinRAMMiB: 64,
			Tags: []kupenstackv1.NeutronTag{"drift"}, Properties: map[string]string{"os_distro": "cirros"}}
	}
	image := func(ns string) []client.Object {
		return []client.Object{&kupenstackv1.Image{ObjectMeta: objMeta(ns, "tiny"), Spec: kupenstackv1.ImageSpec{ImageContent: content()}}}
	}
	public := func(ns string) []client.Object {
		return []client.Object{&kupenstackv1.PublicImage{ObjectMeta: objMeta("", ns+"-tiny"), Spec: kupenstackv1.PublicImageSpec{ImageContent: content()}}}
	}
	update := func(patch ...images.Patch) func(ctx context.Context, c driftClients, obj generic.Object) error {
		return func(ctx context.Context, c driftClients, obj generic.Object) error {
			_, err := images.Update(ctx, c.glance, obj.GetManagedStatus().ID, images.UpdateOpts(patch)).Extract()
			return err
		}
	}
	check := func(ok func(obj generic.Object, i *images.Image) error) func(ctx context.Context, c driftClients, obj generic.Object) error {
		return func(ctx context.Context, c driftClients, obj generic.Object) error {
			i, err := images.Get(ctx, c.glance, obj.GetManagedStatus().ID).Extract()
			if err != nil {
				return err
			}
			return ok(obj, i)
		}
	}
	name := check(func(obj generic.Object, i *images.Image) error {
		if i.Name != obj.GetName() {
			return fmt.Errorf("name %q", i.Name)
		}
		return nil
	})
	visibility := func(want images.ImageVisibility) func(ctx context.Context, c driftClients, obj generic.Object) error {
		return check(func(_ generic.Object, i *images.Image) error {
			if i.Visibility != want {
				return fmt.Errorf("visibility %q", i.Visibility)
			}
			return nil
		})
	}
	tags := check(func(obj generic.Object, i *images.Image) error {
		if want := []string{"drift", generic.OwnerTag(obj)}; !slices.Equal(slices.Sorted(slices.Values(i.Tags)), want) {
			return fmt.Errorf("tags %v, want %v", i.Tags, want)
		}
		return nil
	})
	properties := check(func(_ generic.Object, i *images.Image) error {
		if _, added := i.Properties["e2e_added"]; added || i.Properties["os_distro"] != "cirros" {
			return fmt.Errorf("properties %v", i.Properties)
		}
		return nil
	})
	minDisk := check(func(_ generic.Object, i *images.Image) error {
		if i.MinDiskGigabytes != 1 {
			return fmt.Errorf("min disk %d", i.MinDiskGigabytes)
		}
		return nil
	})
	minRAM := check(func(_ generic.Object, i *images.Image) error {
		if i.MinRAMMegabytes != 64 {
			return fmt.Errorf("min RAM %d", i.MinRAMMegabytes)
		}
		return nil
	})
	changeProperties := update(images.UpdateImageProperty{Op: images.ReplaceOp, Name: "os_distro", Value: "debian"},
		images.UpdateImageProperty{Op: images.AddOp, Name: "e2e_added", Value: "x"})
	addFieldDrifts(
		fieldDrift{kind: "Image", field: "spec.name", objects: image, change: update(images.ReplaceImageName{NewName: "changed"}), repaired: name},
		fieldDrift{kind: "Image", field: "spec.visibility", objects: image,
			change: update(images.UpdateVisibility{Visibility: images.ImageVisibilityShared}), repaired: visibility(images.ImageVisibilityPrivate)},
		fieldDrift{kind: "Image", field: "spec.minDiskGiB", objects: image, change: update(images.ReplaceImageMinDisk{NewMinDisk: 5}), repaired: minDisk},
		fieldDrift{kind: "Image", field: "spec.minRamMiB", objects: image, change: update(images.ReplaceImageMinRam{NewMinRam: 0}), repaired: minRAM},
		// The owner tag is removed too: it must come back with the user's.
		fieldDrift{kind: "Image", field: "spec.tags", objects: image, change: update(images.ReplaceImageTags{NewTags: []string{"intruder"}}), repaired: tags},
		fieldDrift{kind: "Image", field: "spec.properties", objects: image, change: changeProperties, repaired: properties},
		fieldDrift{kind: "PublicImage", field: "spec.visibility", objects: public,
			change: update(images.UpdateVisibility{Visibility: images.ImageVisibilityCommunity}), repaired: visibility(images.ImageVisibilityPublic)},
		fieldDrift{kind: "PublicImage", field: "spec.tags", objects: public, change: update(images.ReplaceImageTags{NewTags: []string{"intruder"}}), repaired: tags},
		fieldDrift{kind: "PublicImage", field: "spec.properties", objects: public, change: changeProperties, repaired: properties},
		fieldDrift{kind: "PublicImage", field: "spec.name", objects: public, change: update(images.ReplaceImageName{NewName: "changed"}), repaired: name},
		fieldDrift{kind: "PublicImage", field: "spec.minDiskGiB", objects: public, change: update(images.ReplaceImageMinDisk{NewMinDisk: 5}), repaired: minDisk},
		fieldDrift{kind: "PublicImage", field: "spec.minRamMiB", objects: public, change: update(images.ReplaceImageMinRam{NewMinRam: 0}), repaired: minRAM},
	)
}
