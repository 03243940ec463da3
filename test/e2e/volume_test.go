package e2e

import (
	"crypto/rand"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/controller/volume"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

func cinderClient(t *testing.T) *gophercloud.ServiceClient {
	t.Helper()
	provider, cloud := connect(t)
	sc, err := gcopenstack.NewBlockStorageV3(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// readyVolume waits until the Volume is Ready for its generation with nothing left to do, and
// returns it.
func readyVolume(t *testing.T, key client.ObjectKey) *kupenstackv1.Volume {
	t.Helper()
	var v kupenstackv1.Volume
	eventually(t, "volume "+key.Name+" ready", func() error {
		if err := env.Client.Get(env.Ctx, key, &v); err != nil {
			return err
		}
		p := meta.FindStatusCondition(v.Status.Conditions, kupenstackv1.ConditionProgressing)
		if !conditions.IsReady(v.Status.Conditions, v.Generation) || p == nil || p.Status != metav1.ConditionFalse {
			return fmt.Errorf("not ready: %+v", v.Status.Conditions)
		}
		return nil
	})
	return &v
}

// TestVolumeLifecycle: an empty volume is created in the namespace's project, grows (Cinder
// extends it), gets its description and metadata changed in place, waits while a server has it
// attached, and is deleted with its object.
func TestVolumeLifecycle(t *testing.T) {
	parallel(t)
	cinder := cinderClient(t)
	ctx := env.Ctx
	ns := newNamespace(t)
	vol := &kupenstackv1.Volume{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns},
		Spec: kupenstackv1.VolumeSpec{
			SizeGiB:     1,
			Description: "first",
			Metadata:    map[string]string{"team": "a", "tier": "db"},
		},
	}
	if err := env.Client.Create(ctx, vol); err != nil {
		t.Fatal(err)
	}
	got := readyVolume(t, client.ObjectKeyFromObject(vol))
	var proj kupenstackv1.Project
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, &proj); err != nil {
		t.Fatal(err)
	}
	os1, err := volumes.Get(ctx, cinder, got.Status.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	wantMeta := map[string]string{"team": "a", "tier": "db", volume.OwnerKey: string(got.UID)}
	if os1.TenantID != proj.Status.ID || os1.Status != "available" || os1.Size != 1 || os1.Name != "data" ||
		os1.Description != "first" || !maps.Equal(os1.Metadata, wantMeta) {
		t.Errorf("Cinder volume = project %s %s %d GiB %q %q %v", os1.TenantID, os1.Status, os1.Size, os1.Name, os1.Description, os1.Metadata)
	}
	if r := got.Status.Resource; r == nil || r.Status != "available" || r.SizeGiB != 1 || r.Bootable {
		t.Errorf("status.resource = %+v", r)
	}

	// Grow, and change the description and metadata (one key removed) in place.
	updateSpec(t, got, func(v *kupenstackv1.Volume) {
		v.Spec.SizeGiB = 3
		v.Spec.Description = "second"
		v.Spec.Metadata = map[string]string{"team": "b"}
	})
	eventually(t, "volume extended and updated", func() error {
		o, err := volumes.Get(ctx, cinder, got.Status.ID).Extract()
		if err != nil {
			return err
		}
		want := map[string]string{"team": "b", volume.OwnerKey: string(got.UID)}
		if o.Size != 3 || o.Status != "available" || o.Description != "second" || !maps.Equal(o.Metadata, want) {
			return fmt.Errorf("volume %s %d GiB %q %v", o.Status, o.Size, o.Description, o.Metadata)
		}
		return nil
	})
	got = readyVolume(t, client.ObjectKeyFromObject(vol))
	if got.Status.Resource.SizeGiB != 3 {
		t.Errorf("status size %d, want 3", got.Status.Resource.SizeGiB)
	}

	// Attached to a server (Cinder's own attach call; the server need not exist for it): the
	// deletion waits, without Degraded, and goes on once the volume is detached.
	server := "6f7c1d2e-0000-4000-8000-" + fmt.Sprintf("%012x", time.Now().UnixNano()&0xffffffffffff)
	if err := volumes.Attach(ctx, cinder, got.Status.ID, volumes.AttachOpts{MountPoint: "/dev/vdb", Mode: volumes.ReadWrite, InstanceUUID: server}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "volume attached", func() error {
		o, err := volumes.Get(ctx, cinder, got.Status.ID).Extract()
		if err != nil {
			return err
		}
		if o.Status != "in-use" {
			return fmt.Errorf("status %s", o.Status)
		}
		return nil
	})
	if err := env.Client.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // a few deletion passes
	var waiting kupenstackv1.Volume
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(got), &waiting); err != nil {
		t.Fatalf("the attached volume's object went: %v", err)
	}
	if c := meta.FindStatusCondition(waiting.Status.Conditions, kupenstackv1.ConditionDegraded); c != nil && c.Status == metav1.ConditionTrue {
		t.Errorf("waiting for the detach made the object Degraded: %+v", c)
	}
	if o, err := volumes.Get(ctx, cinder, got.Status.ID).Extract(); err != nil || o.Status != "in-use" {
		t.Fatalf("the attached volume: %+v (%v)", o, err)
	}
	o, err := volumes.Get(ctx, cinder, got.Status.ID).Extract()
	if err != nil || len(o.Attachments) != 1 {
		t.Fatalf("attachments of the volume: %+v (%v)", o, err)
	}
	if err := volumes.Detach(ctx, cinder, got.Status.ID, volumes.DetachOpts{AttachmentID: o.Attachments[0].AttachmentID}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, got)
	eventually(t, "volume gone in Cinder", func() error {
		if err := volumes.Get(ctx, cinder, got.Status.ID).Err; !openstack.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	deleteProject(t, ns) // the all-in-one is shared and reused: leave no project behind
}

// TestVolumeFromImage: a Volume made from an Image object waits for the Image, is bootable with
// its data; the Image cannot be deleted while the Volume refers to it; deleting the namespace
// removes both from OpenStack.
func TestVolumeFromImage(t *testing.T) {
	parallel(t)
	cinder := cinderClient(t)
	glance := glanceClient(t)
	ctx := env.Ctx
	ns := newNamespace(t)
	payload := make([]byte, 200<<10)
	if _, err := rand.Read(payload); err != nil {
		t.Fatal(err)
	}
	img := &kupenstackv1.Image{
		ObjectMeta: metav1.ObjectMeta{Name: "boot-image", Namespace: ns},
		Spec:       kupenstackv1.ImageSpec{ImageContent: kupenstackv1.ImageContent{Source: &kupenstackv1.ImageSource{URL: imageServer(t, payload)}, DiskFormat: "raw"}},
	}
	vol := &kupenstackv1.Volume{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: ns},
		Spec:       kupenstackv1.VolumeSpec{SizeGiB: 1, ImageRef: "boot-image"},
	}
	// The Volume first: it waits for its Image.
	if err := env.Client.Create(ctx, vol); err != nil {
		t.Fatal(err)
	}
	eventually(t, "volume waits for its image", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(vol), vol); err != nil {
			return err
		}
		p := meta.FindStatusCondition(vol.Status.Conditions, kupenstackv1.ConditionProgressing)
		if p == nil || !strings.Contains(p.Message, "Image/boot-image") {
			return fmt.Errorf("conditions %+v", vol.Status.Conditions)
		}
		return nil
	})
	if err := env.Client.Create(ctx, img); err != nil {
		t.Fatal(err)
	}
	gotImg := readyImage(t, client.ObjectKeyFromObject(img))
	got := readyVolume(t, client.ObjectKeyFromObject(vol))
	if r := got.Status.Resource; !r.Bootable || r.ImageID != gotImg.Status.ID || r.Status != "available" {
		t.Errorf("status.resource = %+v, want bootable from image %s", r, gotImg.Status.ID)
	}
	o, err := volumes.Get(ctx, cinder, got.Status.ID).Extract()
	if err != nil || o.Bootable != "true" || o.VolumeImageMetadata["image_id"] != gotImg.Status.ID {
		t.Fatalf("Cinder volume: %+v (%v)", o, err)
	}

	// The Image waits for the Volume that refers to it.
	if err := env.Client.Delete(ctx, gotImg); err != nil {
		t.Fatal(err)
	}
	eventually(t, "image deletion waits", func() error {
		var i kupenstackv1.Image
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(img), &i); err != nil {
			return err
		}
		p := meta.FindStatusCondition(i.Status.Conditions, kupenstackv1.ConditionProgressing)
		if p == nil || !strings.Contains(p.Message, "Volume/root") {
			return fmt.Errorf("conditions %+v", i.Status.Conditions)
		}
		return nil
	})
	if i, err := images.Get(ctx, glance, gotImg.Status.ID).Extract(); err != nil || i.Status != images.ImageStatusActive {
		t.Fatalf("the image referred to by a volume: %+v (%v)", i, err)
	}

	// Deleting the namespace removes everything, then the project.
	var proj kupenstackv1.Project
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, &proj); err != nil {
		t.Fatal(err)
	}
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := env.Client.Delete(ctx, namespace); err != nil {
		t.Fatal(err)
	}
	waitGone(t, namespace)
	waitGone(t, &proj)
	if err := volumes.Get(ctx, cinder, got.Status.ID).Err; !openstack.IsNotFound(err) {
		t.Errorf("volume left in Cinder after the namespace was deleted: %v", err)
	}
	if err := images.Get(ctx, glance, gotImg.Status.ID).Err; !openstack.IsNotFound(err) {
		t.Errorf("image left in Glance after the namespace was deleted: %v", err)
	}
}
