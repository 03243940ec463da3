// Package image maps the Image kind (a namespace's project's images) and the cluster-scoped
// PublicImage kind (public images, with the admin scope) to Glance images; one actuator serves
// both, and the operator uploads their data itself.
package image

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=images,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=images/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=images/finalizers,verbs=update
// +kubebuilder:rbac:groups=kupenstack.io,resources=publicimages,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=publicimages/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=publicimages/finalizers,verbs=update

// Setup registers the Image controller; sources says which addresses downloads may reach.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options, sources SourcePolicy) error {
	a := imageActuator(sources)
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.Image, images.Image]{
		Name:       "Image",
		Controller: "image",
		Actuator:   a,
		Can:        generic.Capabilities[*kupenstackv1.Image, images.Image]{List: a.ListAll},
		New:        func() *kupenstackv1.Image { return &kupenstackv1.Image{} },
		NewList:    func() client.ObjectList { return &kupenstackv1.ImageList{} },
	})
}

// SetupPublic registers the PublicImage controller: cluster-scoped, so it acts with the admin
// scope and its images belong to the operator's own project.
func SetupPublic(ctx context.Context, mgr ctrl.Manager, o generic.Options, sources SourcePolicy) error {
	a := publicImageActuator(sources)
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.PublicImage, images.Image]{
		Name:          "PublicImage",
		Controller:    "publicimage",
		Actuator:      a,
		Can:           generic.Capabilities[*kupenstackv1.PublicImage, images.Image]{List: a.ListAll},
		New:           func() *kupenstackv1.PublicImage { return &kupenstackv1.PublicImage{} },
		NewList:       func() client.ObjectList { return &kupenstackv1.PublicImageList{} },
		ClusterScoped: true,
	})
}

// imageActuator serves Images: the visibility is the spec's.
func imageActuator(sources SourcePolicy) actuator[*kupenstackv1.Image] {
	return actuator[*kupenstackv1.Image]{sources: sources, visibility: func(i *kupenstackv1.Image) images.ImageVisibility {
		return images.ImageVisibility(i.Spec.Visibility)
	}}
}

// publicImageActuator serves PublicImages: always public.
func publicImageActuator(sources SourcePolicy) actuator[*kupenstackv1.PublicImage] {
	return actuator[*kupenstackv1.PublicImage]{sources: sources, public: true,
		visibility: func(*kupenstackv1.PublicImage) images.ImageVisibility { return images.ImageVisibilityPublic }}
}

// object is what the actuator needs of an Image or a PublicImage.
type object interface {
	generic.Object
	GetImageContent() *kupenstackv1.ImageContent
	GetImageStatus() *kupenstackv1.ImageStatus
}

// actuator serves both image kinds; they differ only in the visibility they ask for.
type actuator[O object] struct {
	sources SourcePolicy
	// visibility is the one the object wants ("" leaves Glance's as it is).
	visibility func(O) images.ImageVisibility
	// public: imports by name look among the cloud's public images only (the admin scope sees
	// every project's images).
	public bool
}

var (
	_ generic.Actuator[*kupenstackv1.Image, images.Image]       = actuator[*kupenstackv1.Image]{}
	_ generic.Actuator[*kupenstackv1.PublicImage, images.Image] = actuator[*kupenstackv1.PublicImage]{}
)

func glance(ctx context.Context, s generic.Scope) (*gophercloud.ServiceClient, error) {
	return s.Clients.Image(ctx, s.ProjectID)
}

func name(i object) string { return generic.Name(i, i.GetImageContent().Name) }

// tags are the tags the image should carry: the user's plus the owner tag, sorted.
func tags(i object) []string {
	out := []string{generic.OwnerTag(i)}
	for _, t := range i.GetImageContent().Tags {
		out = append(out, string(t))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// glanceKeys are the keys of Glance's image representation that are not user properties.
var glanceKeys = map[string]bool{
	"os_hash_algo": true, "os_hash_value": true, "stores": true, "direct_url": true, "locations": true,
	"owner_specified.openstack.md5": true, "owner_specified.openstack.sha256": true, "owner_specified.openstack.object": true,
}

// properties are the image's user properties, as strings.
func properties(res *images.Image) map[string]string {
	out := map[string]string{}
	for k, v := range res.Properties {
		if glanceKeys[k] || strings.HasPrefix(k, "os_glance") {
			continue
		}
		out[k] = fmt.Sprint(v)
	}
	return out
}

func (actuator[O]) Get(ctx context.Context, s generic.Scope, id string) (*images.Image, error) {
	sc, err := glance(ctx, s)
	if err != nil {
		return nil, err
	}
	return images.Get(ctx, sc, id).Extract()
}

func list(ctx context.Context, s generic.Scope, opts images.ListOpts) ([]images.Image, error) {
	sc, err := glance(ctx, s)
	if err != nil {
		return nil, err
	}
	pages, err := images.List(sc, opts).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return images.ExtractImages(pages)
}

// FindOwned finds the image tagged for this object: Glance takes the tags in the create call, so
// an image created for it always carries the tag.
// A PublicImage's scope has no project ID: the tag (the object's UID) alone tells.
func (actuator[O]) FindOwned(ctx context.Context, s generic.Scope, i O) (*images.Image, error) {
	found, err := list(ctx, s, images.ListOpts{Owner: s.ProjectID, Tags: []string{generic.OwnerTag(i)}})
	if err != nil || len(found) == 0 {
		return nil, err
	}
	return &found[0], nil
}

// FindImport looks the image up by ID, or by a name unique among the images the project can
// see: its own, the cloud's public ones and those shared with it; a PublicImage's name among the
// public images.
func (a actuator[O]) FindImport(ctx context.Context, s generic.Scope, i O) (*images.Image, error) {
	imp := i.GetManagedSpec().Import
	if id := imp.ID; id != "" {
		found, err := a.Get(ctx, s, id)
		if openstack.IsNotFound(err) {
			return nil, nil
		}
		return found, err
	}
	opts := images.ListOpts{Name: imp.Name}
	if a.public {
		opts.Visibility = images.ImageVisibilityPublic
	}
	found, err := list(ctx, s, opts)
	if err != nil || len(found) != 1 {
		return nil, generic.ImportMatches(len(found), err)
	}
	return &found[0], nil
}

// Create registers the image (queued, without data); Update uploads the data.
func (a actuator[O]) Create(ctx context.Context, s generic.Scope, i O) (*images.Image, error) {
	sc, err := glance(ctx, s)
	if err != nil {
		return nil, err
	}
	visibility := a.visibility(i)
	c := i.GetImageContent()
	return images.Create(ctx, sc, images.CreateOpts{
		Name:            name(i),
		Visibility:      &visibility,
		Tags:            tags(i),
		DiskFormat:      c.DiskFormat,
		ContainerFormat: c.ContainerFormat,
		MinDisk:         c.MinDiskGiB,
		MinRAM:          c.MinRAMMiB,
		Properties:      c.Properties,
	}).Extract()
}

// dataField is the change that stands for the image's data: a queued image (also one left queued
// by a crash or a failed upload) still needs its upload, a killed one (Glance failed to store the
// data) re-creating.
const dataField = "spec.source"

// Diff compares the fields Glance lets change (name, visibility, min disk and RAM, tags and
// properties) and whether the data is still to upload. Protected is not compared: the spec has no
// such field, and it is the admin's. Disk and container format cannot change once data is there
// (immutable in the spec too).
func (a actuator[O]) Diff(_ generic.Scope, i O, res *images.Image) generic.Changes {
	var d generic.Diff
	c := i.GetImageContent()
	switch {
	case res.Status == images.ImageStatusKilled:
		d.AddWork(dataField, images.ImageStatusActive, res.Status)
	case res.Status == images.ImageStatusQueued && c.Source != nil:
		d.AddWork(dataField, "uploaded", res.Status)
	}
	generic.Value(&d, "spec.name", name(i), res.Name)
	// The API defaults an Image's visibility to private (a PublicImage's is public); unset, Glance's
	// stays.
	if want := a.visibility(i); want != "" {
		generic.Value(&d, "spec.visibility", want, res.Visibility)
	}
	generic.Value(&d, "spec.minDiskGiB", c.MinDiskGiB, res.MinDiskGigabytes)
	generic.Value(&d, "spec.minRamMiB", c.MinRAMMiB, res.MinRAMMegabytes)
	generic.Set(&d, "spec.tags", tags(i), res.Tags)
	generic.Map(&d, "spec.properties", c.Properties, properties(res))
	return d.Changes()
}

// Update uploads the data of a queued image (or deletes a killed one, for the next pass to
// create again), then makes the field changes with one JSON patch.
func (a actuator[O]) Update(ctx context.Context, s generic.Scope, i O, cur *images.Image, changes generic.Changes) (*images.Image, error) {
	sc, err := glance(ctx, s)
	if err != nil {
		return nil, err
	}
	if changes.Has(dataField) {
		switch cur.Status {
		case images.ImageStatusKilled:
			if err := images.Delete(ctx, sc, cur.ID).ExtractErr(); err != nil && !openstack.IsNotFound(err) {
				return nil, err
			}
			return nil, generic.WaitFor("Glance failed to store the image data (status killed); creating the image again", 5*time.Second)
		case images.ImageStatusQueued:
			if err := upload(ctx, a.sources, sc, cur.ID, i.GetImageContent().Source); err != nil {
				return nil, err
			}
		}
	}
	patch := a.patch(i, cur, changes)
	if len(patch) == 0 {
		return a.Get(ctx, s, cur.ID)
	}
	return images.Update(ctx, sc, cur.ID, patch).Extract()
}

// patch is the JSON patch of the changed fields.
func (a actuator[O]) patch(i O, res *images.Image, changes generic.Changes) images.UpdateOpts {
	c := i.GetImageContent()
	var patch images.UpdateOpts
	if changes.Has("spec.name") {
		patch = append(patch, images.ReplaceImageName{NewName: name(i)})
	}
	if changes.Has("spec.visibility") {
		patch = append(patch, images.UpdateVisibility{Visibility: a.visibility(i)})
	}
	if changes.Has("spec.minDiskGiB") {
		patch = append(patch, images.ReplaceImageMinDisk{NewMinDisk: c.MinDiskGiB})
	}
	if changes.Has("spec.minRamMiB") {
		patch = append(patch, images.ReplaceImageMinRam{NewMinRam: c.MinRAMMiB})
	}
	if changes.Has("spec.tags") {
		patch = append(patch, images.ReplaceImageTags{NewTags: tags(i)})
	}
	if changes.Has("spec.properties") {
		have := properties(res)
		for _, k := range slices.Sorted(maps.Keys(c.Properties)) {
			v, ok := have[k]
			switch {
			case !ok:
				patch = append(patch, property{op: "add", name: k, value: c.Properties[k]})
			case v != c.Properties[k]:
				patch = append(patch, property{op: "replace", name: k, value: c.Properties[k]})
			}
		}
		for _, k := range slices.Sorted(maps.Keys(have)) {
			if _, ok := c.Properties[k]; !ok {
				patch = append(patch, property{op: "remove", name: k})
			}
		}
	}
	return patch
}

// property is a JSON patch operation on one property (gophercloud's does not escape the name).
type property struct{ op, name, value string }

func (p property) ToImagePatchMap() map[string]any {
	m := map[string]any{"op": p.op, "path": "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(p.name)}
	if p.op != "remove" {
		m["value"] = p.value
	}
	return m
}

func (actuator[O]) Delete(ctx context.Context, s generic.Scope, res *images.Image) error {
	sc, err := glance(ctx, s)
	if err != nil {
		return err
	}
	return images.Delete(ctx, sc, res.ID).ExtractErr()
}

func (actuator[O]) ID(res *images.Image) string { return res.ID }

// ListAll lists every image the project can see (its own, public and shared ones), so that
// imported images are checked too; with the admin scope (PublicImages), every image.
func (actuator[O]) ListAll(ctx context.Context, s generic.Scope) ([]*images.Image, error) {
	return generic.Pointers(list(ctx, s, images.ListOpts{}))
}

func (actuator[O]) Observe(i O, res *images.Image) (bool, string) {
	hashAlgo, _ := res.Properties["os_hash_algo"].(string)
	hashValue, _ := res.Properties["os_hash_value"].(string)
	i.GetImageStatus().Resource = &kupenstackv1.ImageResourceStatus{
		Name:            res.Name,
		Status:          string(res.Status),
		Visibility:      string(res.Visibility),
		DiskFormat:      res.DiskFormat,
		ContainerFormat: res.ContainerFormat,
		Size:            res.SizeBytes,
		Checksum:        res.Checksum,
		HashAlgo:        hashAlgo,
		HashValue:       hashValue,
		MinDiskGiB:      res.MinDiskGigabytes,
		MinRAMMiB:       res.MinRAMMegabytes,
		Owner:           res.Owner,
		Properties:      properties(res),
		Tags:            res.Tags,
	}
	switch res.Status {
	case images.ImageStatusActive:
		return true, ""
	case images.ImageStatusQueued:
		return false, "the image has no data yet"
	case images.ImageStatusSaving:
		return false, "Glance is saving the image data"
	}
	return false, "image status is " + string(res.Status)
}
