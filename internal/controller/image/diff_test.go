package image

import (
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

func TestDiff(t *testing.T) {
	content := func() kupenstackv1.ImageContent {
		return kupenstackv1.ImageContent{MinDiskGiB: 1, MinRAMMiB: 64, Tags: []kupenstackv1.NeutronTag{"a", "b"},
			Properties: map[string]string{"os_distro": "cirros"}, Source: &kupenstackv1.ImageSource{}}
	}
	meta := metav1.ObjectMeta{Namespace: "team", Name: "tiny", UID: "u1"}
	img := func(mod func(*kupenstackv1.ImageSpec)) *kupenstackv1.Image {
		i := &kupenstackv1.Image{ObjectMeta: meta, Spec: kupenstackv1.ImageSpec{ImageContent: content(), Visibility: "private"}}
		if mod != nil {
			mod(&i.Spec)
		}
		return i
	}
	res := func(mod func(*images.Image)) *images.Image {
		r := &images.Image{Name: "tiny", Status: images.ImageStatusActive, Visibility: images.ImageVisibilityPrivate,
			MinDiskGigabytes: 1, MinRAMMegabytes: 64, Tags: []string{"b", generic.OwnerTag(img(nil)), "a"},
			// Glance's own keys are not properties.
			Properties: map[string]any{"os_distro": "cirros", "os_hash_algo": "sha512", "stores": "file"}}
		if mod != nil {
			mod(r)
		}
		return r
	}
	ia := imageActuator(SourcePolicy{})
	for _, tc := range []struct {
		name string
		obj  *kupenstackv1.Image
		res  *images.Image
		want []string
	}{
		{"unchanged (tags in another order)", img(nil), res(nil), nil},
		{"queued: data to upload", img(nil), res(func(r *images.Image) { r.Status = images.ImageStatusQueued }), []string{"spec.source"}},
		{"queued without a source: nothing to upload", img(func(s *kupenstackv1.ImageSpec) { s.Source = nil }),
			res(func(r *images.Image) { r.Status = images.ImageStatusQueued }), nil},
		{"killed", img(nil), res(func(r *images.Image) { r.Status = images.ImageStatusKilled }), []string{"spec.source"}},
		{"saving", img(nil), res(func(r *images.Image) { r.Status = images.ImageStatusSaving }), nil},
		{"name changed", img(nil), res(func(r *images.Image) { r.Name = "other" }), []string{"spec.name"}},
		{"spec name", img(func(s *kupenstackv1.ImageSpec) { s.Name = "cirros" }), res(nil), []string{"spec.name"}},
		{"visibility changed", img(nil), res(func(r *images.Image) { r.Visibility = images.ImageVisibilityShared }), []string{"spec.visibility"}},
		{"visibility unset", img(func(s *kupenstackv1.ImageSpec) { s.Visibility = "" }), res(func(r *images.Image) { r.Visibility = images.ImageVisibilityShared }), nil},
		{"min disk changed", img(nil), res(func(r *images.Image) { r.MinDiskGigabytes = 5 }), []string{"spec.minDiskGiB"}},
		{"min RAM changed", img(nil), res(func(r *images.Image) { r.MinRAMMegabytes = 0 }), []string{"spec.minRamMiB"}},
		{"tag added", img(nil), res(func(r *images.Image) { r.Tags = append(r.Tags, "c") }), []string{"spec.tags"}},
		{"tag removed", img(nil), res(func(r *images.Image) { r.Tags = r.Tags[1:] }), []string{"spec.tags"}},
		{"tag changed", img(nil), res(func(r *images.Image) { r.Tags[0] = "c" }), []string{"spec.tags"}},
		{"property changed", img(nil), res(func(r *images.Image) { r.Properties["os_distro"] = "debian" }), []string{"spec.properties"}},
		{"property added", img(nil), res(func(r *images.Image) { r.Properties["hw_disk_bus"] = "scsi" }), []string{"spec.properties"}},
		{"property removed", img(nil), res(func(r *images.Image) { delete(r.Properties, "os_distro") }), []string{"spec.properties"}},
		{"several", img(nil), res(func(r *images.Image) { r.Name, r.MinRAMMegabytes, r.Tags = "x", 1, nil }),
			[]string{"spec.name", "spec.minRamMiB", "spec.tags"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ia.Diff(generic.TestScope(nil), tc.obj, tc.res)
			if !slices.Equal(got.Fields(), tc.want) {
				t.Errorf("Diff = %q, want %q (%+v)", got.Fields(), tc.want, got)
			}
		})
	}

	// A PublicImage is always public, whatever its spec.
	pub := &kupenstackv1.PublicImage{ObjectMeta: metav1.ObjectMeta{Name: "tiny", UID: "u1"}, Spec: kupenstackv1.PublicImageSpec{ImageContent: content()}}
	r := res(func(r *images.Image) { r.Tags = []string{"a", "b", generic.OwnerTag(pub)} })
	pa := publicImageActuator(SourcePolicy{})
	if got := pa.Diff(generic.TestScope(nil), pub, r); !slices.Equal(got.Fields(), []string{"spec.visibility"}) {
		t.Errorf("PublicImage Diff of a private image = %q", got.Fields())
	}
	r.Visibility = images.ImageVisibilityPublic
	if got := pa.Diff(generic.TestScope(nil), pub, r); len(got) > 0 {
		t.Errorf("PublicImage Diff of its public image = %q", got.Fields())
	}
}

// TestPatchOnlyChanged: Update's patch touches the changed fields only.
func TestPatchOnlyChanged(t *testing.T) {
	i := &kupenstackv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "tiny", UID: "u1"}, Spec: kupenstackv1.ImageSpec{
		Visibility: "private", ImageContent: kupenstackv1.ImageContent{MinDiskGiB: 1, Properties: map[string]string{"a": "1", "b": "2"}}}}
	r := &images.Image{Name: "old", Visibility: images.ImageVisibilityPrivate, MinDiskGigabytes: 1, Tags: []string{generic.OwnerTag(i)},
		Properties: map[string]any{"a": "1", "c": "3"}}
	ia := imageActuator(SourcePolicy{})
	got := ia.patch(i, r, ia.Diff(generic.TestScope(nil), i, r))
	want := images.UpdateOpts{images.ReplaceImageName{NewName: "tiny"},
		property{op: "add", name: "b", value: "2"}, property{op: "remove", name: "c"}}
	if !slices.Equal(got, want) {
		t.Errorf("patch = %#v, want %#v", got, want)
	}
}
