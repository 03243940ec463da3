package e2e

import (
	"crypto/md5" //nolint:gosec // Glance's own checksum is MD5
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// TestPublicImage, on the real cloud: the admin's PublicImage is uploaded once, with visibility
// public and owned by the admin's project; a tenant's VM boots from it and a tenant's Volume
// starts with its data, both naming it in publicImageRef; another project (through its
// member-only application credential) sees it; its deletion waits while a VM or Volume of any
// namespace refers to it, then deletes the Glance image.
func TestPublicImage(t *testing.T) {
	parallel(t)
	requireCloud(t)
	c := adminClients(t)
	glance := glanceClient(t)
	cinder := cinderClient(t)
	ctx := env.Ctx
	adminProvider, _ := connect(t)
	adminProject, err := adminProvider.GetAuthResult().(tokens.CreateResult).ExtractProject()
	if err != nil || adminProject == nil {
		t.Fatalf("the admin's project: %+v (%v)", adminProject, err)
	}

	ns := newNamespace(t)
	other := newNamespace(t)
	flavor := vmFlavor(t, ns+"-nano")
	// The data, served here; every request is counted: the image is downloaded once, however
	// many VMs and volumes use it.
	payload := randomPayload(t, 64<<10)
	var downloads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		downloads.Add(1)
		_, _ = w.Write(payload)
	}))
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(payload)
	pub := &kupenstackv1.PublicImage{ObjectMeta: metav1.ObjectMeta{Name: ns + "-base"}, Spec: kupenstackv1.PublicImageSpec{
		ImageContent: kupenstackv1.ImageContent{
			Source:     &kupenstackv1.ImageSource{URL: srv.URL + "/base.raw", SHA256: hex.EncodeToString(sum[:])},
			DiskFormat: "raw",
			Properties: map[string]string{"os_distro": "none"},
		}}}
	vm := &kupenstackv1.VirtualMachine{ObjectMeta: objMeta(ns, "vm"), Spec: kupenstackv1.VirtualMachineSpec{
		FlavorRef: flavor.Name, PublicImageRef: pub.Name}}
	vol := &kupenstackv1.Volume{ObjectMeta: objMeta(ns, "root"), Spec: kupenstackv1.VolumeSpec{SizeGiB: 1, PublicImageRef: pub.Name}}

	// The tenant's objects first: they wait for the cluster-scoped PublicImage by name.
	create(t, vm, vol)
	eventually(t, "the VM waits for the public image", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(vm), vm); err != nil {
			return err
		}
		p := meta.FindStatusCondition(vm.Status.Conditions, kupenstackv1.ConditionProgressing)
		if p == nil || !strings.Contains(p.Message, "PublicImage/"+pub.Name) {
			return fmt.Errorf("conditions %+v", vm.Status.Conditions)
		}
		return nil
	})
	create(t, pub)
	t.Cleanup(func() { _ = env.Client.Delete(ctx, pub) })
	waitReady(t, pub)

	// Glance: one public image, the admin project's, with the data.
	img, err := images.Get(ctx, glance, pub.Status.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	md5sum := md5.Sum(payload) //nolint:gosec // comparing with Glance's checksum
	if img.Visibility != images.ImageVisibilityPublic || img.Owner != adminProject.ID || img.Status != images.ImageStatusActive ||
		img.SizeBytes != int64(len(payload)) || img.Checksum != hex.EncodeToString(md5sum[:]) {
		t.Errorf("Glance image: visibility %s, owner %s (admin project %s), status %s, size %d, checksum %s",
			img.Visibility, img.Owner, adminProject.ID, img.Status, img.SizeBytes, img.Checksum)
	}
	if r := pub.Status.Resource; r == nil || r.Visibility != "public" || r.Owner != adminProject.ID || r.Properties["os_distro"] != "none" {
		t.Errorf("status.resource = %+v", r)
	}
	tagged, err := images.List(glance, images.ListOpts{Tags: []string{generic.OwnerTag(pub)}}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if found, err := images.ExtractImages(tagged); err != nil || len(found) != 1 {
		t.Errorf("images tagged for the PublicImage: %d (%v), want 1", len(found), err)
	}

	// The tenant's VM boots from it, its Volume starts with its data.
	waitVM(t, vm, "VM ACTIVE from the public image", func(vm *kupenstackv1.VirtualMachine) error {
		if r := vm.Status.Resource; r == nil || r.Status != "ACTIVE" || !meta.IsStatusConditionTrue(vm.Status.Conditions, kupenstackv1.ConditionReady) {
			return fmt.Errorf("resource %+v, conditions %+v", r, vm.Status.Conditions)
		}
		return nil
	})
	if r := vm.Status.Resource; r.ImageID != pub.Status.ID {
		t.Errorf("server image %q, want the public image %q", r.ImageID, pub.Status.ID)
	}
	if s := server(t, c, vm.Status.ID); s == nil || s.TenantID != projectID(t, ns) {
		t.Errorf("server %+v, want it in the tenant's project %s", s, projectID(t, ns))
	}
	got := readyVolume(t, client.ObjectKeyFromObject(vol))
	if r := got.Status.Resource; !r.Bootable || r.ImageID != pub.Status.ID {
		t.Errorf("volume status.resource = %+v, want bootable from %s", r, pub.Status.ID)
	}
	if o, err := volumes.Get(ctx, cinder, got.Status.ID).Extract(); err != nil || o.VolumeImageMetadata["image_id"] != pub.Status.ID {
		t.Errorf("Cinder volume: %+v (%v)", o, err)
	}
	if n := downloads.Load(); n != 1 {
		t.Errorf("the source was downloaded %d times, want once", n)
	}

	// Another project sees it: a member-only credential of namespace other's project, not the
	// admin, which sees every image anyway.
	cred := &kupenstackv1.ApplicationCredential{ObjectMeta: objMeta(other, "tools")}
	create(t, cred)
	var cloudsYAML []byte
	eventually(t, "the application credential's Secret", func() error {
		_, doc, err := readAppCredSecret(ctx, other, "tools")
		if err == nil && len(doc) == 0 {
			err = fmt.Errorf("no clouds.yaml yet")
		}
		cloudsYAML = doc
		return err
	})
	tool, endpoint, err := connectWith(ctx, cloudsYAML)
	if err != nil {
		t.Fatal(err)
	}
	toolGlance, err := gcopenstack.NewImageV2(tool, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := images.List(toolGlance, images.ListOpts{Visibility: images.ImageVisibilityPublic}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen, err := images.ExtractImages(pages)
	if err != nil || !slices.ContainsFunc(seen, func(i images.Image) bool { return i.ID == pub.Status.ID }) {
		t.Errorf("another project's public images do not include %s (%v)", pub.Status.ID, err)
	}

	// Deletion waits for the namespace's users; then the Glance image goes.
	if err := env.Client.Delete(ctx, pub); err != nil {
		t.Fatal(err)
	}
	eventually(t, "public image deletion waits for the VM and the Volume", func() error {
		var p kupenstackv1.PublicImage
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pub), &p); err != nil {
			return err
		}
		c := meta.FindStatusCondition(p.Status.Conditions, kupenstackv1.ConditionProgressing)
		if c == nil || c.Reason != kupenstackv1.ReasonDeletionBlocked ||
			!strings.Contains(c.Message, "VirtualMachine/"+ns+"/vm") || !strings.Contains(c.Message, "Volume/"+ns+"/root") {
			return fmt.Errorf("conditions %+v", p.Status.Conditions)
		}
		return nil
	})
	if i, err := images.Get(ctx, glance, pub.Status.ID).Extract(); err != nil || i.Status != images.ImageStatusActive {
		t.Fatalf("the public image in use: %+v (%v)", i, err)
	}
	if err := env.Client.Delete(ctx, vm); err != nil {
		t.Fatal(err)
	}
	waitGone(t, vm)
	// Still in use by the Volume.
	var p kupenstackv1.PublicImage
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pub), &p); err != nil {
		t.Fatalf("the public image went while a Volume uses it: %v", err)
	}
	deleteAll(t, ns, false, vol)
	waitGone(t, pub)
	eventually(t, "the Glance image deleted", func() error {
		if _, err := images.Get(ctx, glance, pub.Status.ID).Extract(); !openstack.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	deleteAll(t, other, false, cred)
}
