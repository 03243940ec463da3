package e2e

import (
	"crypto/md5" //nolint:gosec // Glance's own checksum is MD5
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// imageServer serves payload at /disk.img on 127.0.0.1, for the operator to download.
func imageServer(t *testing.T, payload []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/disk.img" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(payload)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/disk.img"
}

func randomPayload(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func glanceClient(t *testing.T) *gophercloud.ServiceClient {
	t.Helper()
	provider, cloud := connect(t)
	sc, err := gcopenstack.NewImageV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// readyImage waits until the Image is Ready and returns it.
func readyImage(t *testing.T, key client.ObjectKey) *kupenstackv1.Image {
	t.Helper()
	var img kupenstackv1.Image
	eventually(t, "image "+key.Name+" ready", func() error {
		if err := env.Client.Get(env.Ctx, key, &img); err != nil {
			return err
		}
		if !conditions.IsReady(img.Status.Conditions, img.Generation) {
			return fmt.Errorf("not ready: %+v", img.Status.Conditions)
		}
		return nil
	})
	return &img
}

// TestImageLifecycle: an Image is uploaded by the operator from a URL (served here), verified,
// activated with the right size and checksums; its properties change in place; data with the
// wrong sha256 is never activated and the object says why; deleting the objects deletes the images.
func TestImageLifecycle(t *testing.T) {
	parallel(t)
	glance := glanceClient(t)
	ctx := env.Ctx
	ns := newNamespace(t)
	payload := randomPayload(t, 300<<10+17)
	sum256 := sha256.Sum256(payload)
	sumMD5 := md5.Sum(payload) //nolint:gosec
	sum512 := sha512.Sum512(payload)
	url := imageServer(t, payload)

	img := &kupenstackv1.Image{
		ObjectMeta: metav1.ObjectMeta{Name: "disk", Namespace: ns},
		Spec: kupenstackv1.ImageSpec{ImageContent: kupenstackv1.ImageContent{
			Source:     &kupenstackv1.ImageSource{URL: url, SHA256: strings.ToUpper(hex.EncodeToString(sum256[:]))},
			DiskFormat: "raw",
			MinDiskGiB: 1,
			Properties: map[string]string{"hw_disk_bus": "virtio", "os_distro": "none"},
			Tags:       []kupenstackv1.NeutronTag{"team-a"},
		}},
	}
	bad := &kupenstackv1.Image{
		ObjectMeta: metav1.ObjectMeta{Name: "corrupt", Namespace: ns},
		Spec: kupenstackv1.ImageSpec{ImageContent: kupenstackv1.ImageContent{
			Source:     &kupenstackv1.ImageSource{URL: url, SHA256: strings.Repeat("ab", 32)},
			DiskFormat: "raw",
		}},
	}
	for _, o := range []client.Object{img, bad} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	got := readyImage(t, client.ObjectKeyFromObject(img))
	r := got.Status.Resource
	if r == nil || r.Status != "active" || r.Size != int64(len(payload)) || r.Checksum != hex.EncodeToString(sumMD5[:]) ||
		r.HashAlgo != "sha512" || r.HashValue != hex.EncodeToString(sum512[:]) {
		t.Fatalf("status.resource = %+v", r)
	}
	var proj kupenstackv1.Project
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, &proj); err != nil {
		t.Fatal(err)
	}
	os1, err := images.Get(ctx, glance, got.Status.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if os1.Owner != proj.Status.ID || os1.Visibility != images.ImageVisibilityPrivate || os1.DiskFormat != "raw" ||
		os1.ContainerFormat != "bare" || os1.MinDiskGigabytes != 1 || os1.Properties["hw_disk_bus"] != "virtio" {
		t.Errorf("Glance image = owner %s %s %s/%s min_disk %d properties %v", os1.Owner, os1.Visibility,
			os1.DiskFormat, os1.ContainerFormat, os1.MinDiskGigabytes, os1.Properties)
	}
	if !slices.Contains(os1.Tags, "team-a") || !slices.Contains(os1.Tags, "kupenstack-uid-"+string(got.UID)) {
		t.Errorf("tags = %v", os1.Tags)
	}
	// The data in Glance is the payload.
	if got.Status.Resource.Properties["os_distro"] != "none" {
		t.Errorf("observed properties = %v", got.Status.Resource.Properties)
	}

	// Properties, name and minimums change in place (same image).
	updateSpec(t, got, func(im *kupenstackv1.Image) {
		im.Spec.Properties = map[string]string{"hw_disk_bus": "scsi", "hw_scsi_model": "virtio-scsi"}
		im.Spec.MinRAMMiB = 64
		im.Spec.Name = "disk-v1"
	})
	eventually(t, "properties updated", func() error {
		o, err := images.Get(ctx, glance, got.Status.ID).Extract()
		if err != nil {
			return err
		}
		if o.Properties["hw_disk_bus"] != "scsi" || o.Properties["hw_scsi_model"] != "virtio-scsi" || o.Properties["os_distro"] != nil ||
			o.MinRAMMegabytes != 64 || o.Name != "disk-v1" || o.Status != images.ImageStatusActive {
			return fmt.Errorf("image %s %s min_ram %d properties %v", o.Name, o.Status, o.MinRAMMegabytes, o.Properties)
		}
		return nil
	})

	// The corrupt source: Degraded, saying why, and its image never becomes active.
	eventually(t, "corrupt image degraded", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(bad), bad); err != nil {
			return err
		}
		c := meta.FindStatusCondition(bad.Status.Conditions, kupenstackv1.ConditionDegraded)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != kupenstackv1.ReasonInvalidConfiguration ||
			!strings.Contains(c.Message, "sha256 is "+hex.EncodeToString(sum256[:])) {
			return fmt.Errorf("conditions %+v", bad.Status.Conditions)
		}
		return nil
	})
	if conditions.IsReady(bad.Status.Conditions, bad.Generation) {
		t.Error("the corrupt image is Ready")
	}
	if bad.Status.ID == "" {
		t.Fatal("the corrupt image has no ID")
	}
	o, err := images.Get(ctx, glance, bad.Status.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if o.Status == images.ImageStatusActive || o.SizeBytes != 0 {
		t.Errorf("the corrupt data reached Glance: %s, %d bytes", o.Status, o.SizeBytes)
	}
	pages, err := images.List(glance, images.ListOpts{Owner: proj.Status.ID, Status: images.ImageStatusActive}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	active, err := images.ExtractImages(pages)
	if err != nil {
		t.Fatal(err)
	}
	if len(active) != 1 || active[0].ID != got.Status.ID {
		t.Errorf("active images of the project: %d, want only %s", len(active), got.Status.ID)
	}

	// Deleting the objects deletes the images.
	for _, o := range []client.Object{got, bad} {
		if err := env.Client.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []*kupenstackv1.Image{got, bad} {
		waitGone(t, o)
		if err := images.Get(ctx, glance, o.Status.ID).Err; !openstack.IsNotFound(err) {
			t.Errorf("image %s still in Glance (%v)", o.Status.ID, err)
		}
	}
	deleteProject(t, ns) // the all-in-one is shared and reused: leave no project behind
}

// TestImageImportPublic: the cloud's public image is imported read-only by name; deleting the
// object leaves it in place.
func TestImageImportPublic(t *testing.T) {
	parallel(t)
	glance := glanceClient(t)
	ctx := env.Ctx
	ns := newNamespace(t)
	pages, err := images.List(glance, images.ListOpts{Name: "aio-tiny"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	public, err := images.ExtractImages(pages)
	if err != nil || len(public) != 1 {
		t.Fatalf("the AIO's public image aio-tiny: %d found (%v)", len(public), err)
	}
	img := &kupenstackv1.Image{
		ObjectMeta: metav1.ObjectMeta{Name: "tiny", Namespace: ns},
		Spec: kupenstackv1.ImageSpec{ManagedSpec: kupenstackv1.ManagedSpec{
			ManagementPolicy: kupenstackv1.ManagementPolicyUnmanaged,
			Import:           &kupenstackv1.ImportSpec{Name: "aio-tiny"},
		}},
	}
	if err := env.Client.Create(ctx, img); err != nil {
		t.Fatal(err)
	}
	got := readyImage(t, client.ObjectKeyFromObject(img))
	if got.Status.ID != public[0].ID || got.Status.Resource.Visibility != "public" || got.Status.Resource.Size != public[0].SizeBytes {
		t.Errorf("imported %s: %+v", got.Status.ID, got.Status.Resource)
	}
	if err := env.Client.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	waitGone(t, got)
	after, err := images.Get(ctx, glance, public[0].ID).Extract()
	if err != nil || after.Status != images.ImageStatusActive || after.Name != "aio-tiny" {
		t.Fatalf("the public image changed after the unmanaged import went: %+v (%v)", after, err)
	}
	deleteProject(t, ns)
}
