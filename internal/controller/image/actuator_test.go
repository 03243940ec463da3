package image

import (
	"reflect"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// TestOneActuatorBothKinds: an Image and a PublicImage with the same content get the same patch
// from the shared code, and differ only in the visibility: a PublicImage made private (or shared)
// in Glance is put back to public, an Image keeps the visibility its spec asks for.
func TestOneActuatorBothKinds(t *testing.T) {
	content := kupenstackv1.ImageContent{MinDiskGiB: 2, Properties: map[string]string{"os_distro": "ubuntu"}}
	meta := metav1.ObjectMeta{Name: "jammy", UID: "u1"}
	img := &kupenstackv1.Image{ObjectMeta: meta, Spec: kupenstackv1.ImageSpec{ImageContent: content, Visibility: "private"}}
	pub := &kupenstackv1.PublicImage{ObjectMeta: meta, Spec: kupenstackv1.PublicImageSpec{ImageContent: content}}
	// Glance's image: the right name and tags, the wrong minimum disk, property and visibility.
	res := func(v images.ImageVisibility) *images.Image {
		return &images.Image{Name: "jammy", Status: images.ImageStatusActive, Visibility: v,
			Tags: []string{generic.OwnerTag(img)}, Properties: map[string]any{"os_distro": "debian"}}
	}
	want := func(v images.ImageVisibility) images.UpdateOpts {
		var p images.UpdateOpts
		if v != "" {
			p = append(p, images.UpdateVisibility{Visibility: v})
		}
		return append(p, images.ReplaceImageMinDisk{NewMinDisk: 2}, property{op: "replace", name: "os_distro", value: "ubuntu"})
	}
	ia, pa := imageActuator(SourcePolicy{}), publicImageActuator(SourcePolicy{})
	// ipatch and ppatch are the patches Update makes for the changes Diff finds.
	ipatch := func(i *kupenstackv1.Image, r *images.Image) images.UpdateOpts {
		return ia.patch(i, r, ia.Diff(generic.Scope{}, i, r))
	}
	ppatch := func(i *kupenstackv1.PublicImage, r *images.Image) images.UpdateOpts {
		return pa.patch(i, r, pa.Diff(generic.Scope{}, i, r))
	}

	if got := ppatch(pub, res(images.ImageVisibilityPrivate)); !reflect.DeepEqual(got, want(images.ImageVisibilityPublic)) {
		t.Errorf("PublicImage patch of a private image = %#v", got)
	}
	if got := ppatch(pub, res(images.ImageVisibilityPublic)); !reflect.DeepEqual(got, want("")) {
		t.Errorf("PublicImage patch of a public image = %#v", got)
	}
	if got := ipatch(img, res(images.ImageVisibilityPublic)); !reflect.DeepEqual(got, want(images.ImageVisibilityPrivate)) {
		t.Errorf("Image patch of a public image = %#v", got)
	}
	if got := ipatch(img, res(images.ImageVisibilityPrivate)); !reflect.DeepEqual(got, want("")) {
		t.Errorf("Image patch of a private image = %#v", got)
	}

	// In sync once Glance matches: for a PublicImage that includes being public.
	ok := res(images.ImageVisibilityPublic)
	ok.MinDiskGigabytes, ok.Properties = 2, map[string]any{"os_distro": "ubuntu"}
	if changes := pa.Diff(generic.Scope{}, pub, ok); len(changes) > 0 {
		t.Errorf("a public image matching the PublicImage differs in %s", changes)
	}
	ok.Visibility = images.ImageVisibilityCommunity
	if changes := pa.Diff(generic.Scope{}, pub, ok); !changes.Has("spec.visibility") || len(changes) != 1 {
		t.Errorf("a community image differs from a PublicImage in %q, not in spec.visibility", changes.Fields())
	}

	// Observe writes the one status type both kinds share.
	if ready, _ := pa.Observe(pub, ok); !ready || pub.Status.Resource == nil || pub.Status.Resource.Visibility != "community" {
		t.Errorf("Observe: ready %v, status %+v", ready, pub.Status.Resource)
	}
}
