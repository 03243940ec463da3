// Package volume maps the Volume kind to Cinder volumes.
package volume

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=volumes,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=volumes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=volumes/finalizers,verbs=update

// Setup registers the Volume controller.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	a := actuator{}
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.Volume, volumes.Volume]{
		Name:       "Volume",
		Controller: "volume",
		Actuator:   a,
		Can:        generic.Capabilities[*kupenstackv1.Volume, volumes.Volume]{List: a.ListAll},
		New:        func() *kupenstackv1.Volume { return &kupenstackv1.Volume{} },
		NewList:    func() client.ObjectList { return &kupenstackv1.VolumeList{} },
		// Attaching and detaching happen through VirtualMachines: a VM's change (its spec, or the
		// attachments in its status) refreshes the Volumes it names or has attached.
		Watches: []generic.Watch{{Object: &kupenstackv1.VirtualMachine{}, Map: volumesOfVM(mgr.GetClient())}},
		Dependencies: []generic.Dependency[*kupenstackv1.Volume]{
			generic.Refers[kupenstackv1.Image]("spec.imageRef", func(v *kupenstackv1.Volume) []string {
				if v.Spec.ImageRef == "" {
					return nil
				}
				return []string{v.Spec.ImageRef}
			}),
			generic.Refers[kupenstackv1.PublicImage]("spec.publicImageRef", func(v *kupenstackv1.Volume) []string {
				if v.Spec.PublicImageRef == "" {
					return nil
				}
				return []string{v.Spec.PublicImageRef}
			}),
		},
	})
}

// volumesOfVM maps a VirtualMachine to its Volumes: those its spec names and those attached.
func volumesOfVM(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		vm := o.(*kupenstackv1.VirtualMachine)
		names := map[string]bool{}
		if vm.Spec.BootVolumeRef != "" {
			names[vm.Spec.BootVolumeRef] = true
		}
		for _, v := range vm.Spec.Volumes {
			names[v.VolumeRef] = true
		}
		if r := vm.Status.Resource; r != nil && len(r.VolumeIDs) > 0 {
			var list kupenstackv1.VolumeList
			if err := c.List(ctx, &list, client.InNamespace(vm.Namespace)); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "listing volumes for a VM change")
			}
			for _, v := range list.Items {
				if v.Status.ID != "" && slices.Contains(r.VolumeIDs, v.Status.ID) {
					names[v.Name] = true
				}
			}
		}
		reqs := make([]reconcile.Request, 0, len(names))
		for n := range names {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: vm.Namespace, Name: n}})
		}
		return reqs
	}
}

// OwnerKey is the metadata key that marks a volume as created for a Volume object (its UID):
// Cinder volumes have no tags. A volume without it is never adopted.
const OwnerKey = "kupenstack-owner-uid"

type actuator struct{}

var (
	_ generic.Actuator[*kupenstackv1.Volume, volumes.Volume] = actuator{}
)

// cinder is the project's block storage client; microversion 3.42 extends attached volumes.
func cinder(ctx context.Context, s generic.Scope) (*gophercloud.ServiceClient, error) {
	sc, err := s.Clients.BlockStorage(ctx, s.ProjectID)
	if err != nil {
		return nil, err
	}
	c := *sc
	c.Microversion = "3.42"
	return &c, nil
}

func name(v *kupenstackv1.Volume) string { return generic.Name(v, v.Spec.Name) }

// metadata is the metadata the volume should carry: the user's plus the owner key.
func metadata(v *kupenstackv1.Volume) map[string]string {
	out := maps.Clone(v.Spec.Metadata)
	if out == nil {
		out = map[string]string{}
	}
	out[OwnerKey] = string(v.UID)
	return out
}

// wantMetadata is what the metadata should be given what it is: an imported volume keeps the
// owner key it has (if any) and gets none.
func wantMetadata(v *kupenstackv1.Volume, res *volumes.Volume) map[string]string {
	want := metadata(v)
	if v.Spec.Import != nil {
		delete(want, OwnerKey)
		if owner, ok := res.Metadata[OwnerKey]; ok {
			want[OwnerKey] = owner
		}
	}
	return want
}

func (actuator) Get(ctx context.Context, s generic.Scope, id string) (*volumes.Volume, error) {
	sc, err := cinder(ctx, s)
	if err != nil {
		return nil, err
	}
	return volumes.Get(ctx, sc, id).Extract()
}

func list(ctx context.Context, s generic.Scope, opts volumes.ListOpts) ([]volumes.Volume, error) {
	sc, err := cinder(ctx, s)
	if err != nil {
		return nil, err
	}
	pages, err := volumes.List(sc, opts).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return volumes.ExtractVolumes(pages)
}

// FindOwned finds the project's volume carrying this object's owner key (set in the create call
// itself), ignoring volumes being deleted.
func (actuator) FindOwned(ctx context.Context, s generic.Scope, v *kupenstackv1.Volume) (*volumes.Volume, error) {
	found, err := list(ctx, s, volumes.ListOpts{Metadata: map[string]string{OwnerKey: string(v.UID)}})
	if err != nil {
		return nil, err
	}
	for i := range found {
		// Check again: the filter is the API's, the rule is ours.
		if found[i].Metadata[OwnerKey] == string(v.UID) && found[i].Status != "deleting" {
			return &found[i], nil
		}
	}
	return nil, nil
}

// FindImport looks the volume up by ID, or by a name unique in the project.
func (a actuator) FindImport(ctx context.Context, s generic.Scope, v *kupenstackv1.Volume) (*volumes.Volume, error) {
	if id := v.Spec.Import.ID; id != "" {
		found, err := a.Get(ctx, s, id)
		if openstack.IsNotFound(err) {
			return nil, nil
		}
		return found, err
	}
	found, err := list(ctx, s, volumes.ListOpts{Name: v.Spec.Import.Name})
	if err != nil || len(found) != 1 {
		return nil, generic.ImportMatches(len(found), err)
	}
	return &found[0], nil
}

func (actuator) Create(ctx context.Context, s generic.Scope, v *kupenstackv1.Volume) (*volumes.Volume, error) {
	sc, err := cinder(ctx, s)
	if err != nil {
		return nil, err
	}
	opts := volumes.CreateOpts{
		Size:             v.Spec.SizeGiB,
		Name:             name(v),
		Description:      v.Spec.Description,
		VolumeType:       v.Spec.VolumeType,
		AvailabilityZone: v.Spec.AvailabilityZone,
		Metadata:         metadata(v),
	}
	if v.Spec.ImageRef != "" {
		opts.ImageID = s.DependencyID("Image", v.Spec.ImageRef)
	}
	if v.Spec.PublicImageRef != "" {
		opts.ImageID = s.DependencyID("PublicImage", v.Spec.PublicImageRef)
	}
	return volumes.Create(ctx, sc, opts, nil).Extract()
}

// settled are the statuses in which a volume can be changed.
func settled(status string) bool { return status == "available" || status == "in-use" }

// statusField is the change Diff reports for a volume Cinder failed on: no field to set back, but
// Update turns it into the object's InvalidConfiguration.
const statusField = "status.resource.status"

// Diff compares name, description, metadata and size. A volume Cinder is still working on shows
// no changes until it settles (Observe reports it as waiting); one Cinder failed on shows its
// status, for Update to report.
func (actuator) Diff(_ generic.Scope, v *kupenstackv1.Volume, res *volumes.Volume) generic.Changes {
	var d generic.Diff
	switch {
	case res.Status == "error" || res.Status == "error_extending":
		d.AddWork(statusField, "available", res.Status)
		return d.Changes()
	case !settled(res.Status):
		return nil
	}
	generic.Value(&d, "spec.name", name(v), res.Name)
	generic.Value(&d, "spec.description", v.Spec.Description, res.Description)
	generic.Map(&d, "spec.metadata", wantMetadata(v, res), res.Metadata)
	// Unset (an imported volume), the size is Cinder's.
	if v.Spec.SizeGiB > 0 {
		generic.Value(&d, "spec.sizeGiB", v.Spec.SizeGiB, res.Size)
	}
	return d.Changes()
}

// Update sets name, description and metadata in one call, and extends the volume when the spec
// is larger. A volume larger than the spec (extended outside KupenStack) cannot shrink: Degraded.
func (a actuator) Update(ctx context.Context, s generic.Scope, v *kupenstackv1.Volume, cur *volumes.Volume, changes generic.Changes) (*volumes.Volume, error) {
	switch {
	case cur.Status == "error":
		return nil, generic.InvalidConfig("Cinder could not create the volume (status error); delete the object and check the cloud's volume service")
	case cur.Status == "error_extending":
		return nil, generic.InvalidConfig(fmt.Sprintf("Cinder could not extend the volume to %d GiB (status error_extending); an admin must reset its status", v.Spec.SizeGiB))
	}
	sc, err := cinder(ctx, s)
	if err != nil {
		return nil, err
	}
	var upd volumes.UpdateOpts
	if changes.Has("spec.name") {
		want := name(v)
		upd.Name = &want
	}
	if changes.Has("spec.description") {
		upd.Description = &v.Spec.Description
	}
	if changes.Has("spec.metadata") {
		upd.Metadata = wantMetadata(v, cur) // replaces the whole metadata
	}
	if upd.Name != nil || upd.Description != nil || upd.Metadata != nil {
		if _, err := volumes.Update(ctx, sc, cur.ID, upd).Extract(); err != nil {
			return nil, err
		}
	}
	if changes.Has("spec.sizeGiB") {
		if cur.Size > v.Spec.SizeGiB {
			return nil, generic.Degraded(kupenstackv1.ReasonDriftNotRepairable, fmt.Sprintf(
				"the volume is %d GiB in Cinder but spec.sizeGiB is %d (it was extended outside KupenStack, or imported larger): "+
					"Cinder volumes cannot shrink; set spec.sizeGiB to %d", cur.Size, v.Spec.SizeGiB, cur.Size), 0)
		}
		if err := volumes.ExtendSize(ctx, sc, cur.ID, volumes.ExtendSizeOpts{NewSize: v.Spec.SizeGiB}).ExtractErr(); err != nil {
			return nil, err
		}
	}
	return a.Get(ctx, s, cur.ID)
}

// Delete deletes the volume unless a server still has it attached, or Cinder is still working on
// it: then the object waits (Progressing), since Cinder would refuse.
func (actuator) Delete(ctx context.Context, s generic.Scope, res *volumes.Volume) error {
	if servers := attachedTo(res); len(servers) > 0 {
		return generic.WaitFor(fmt.Sprintf("volume %s is attached to server %s; waiting for the detach", res.ID, strings.Join(servers, ", ")), 5*time.Second)
	}
	switch res.Status {
	case "creating", "downloading", "extending", "attaching", "detaching", "reserved", "uploading", "retyping",
		"maintenance", "backing-up", "restoring-backup", "awaiting-transfer":
		return generic.WaitFor(fmt.Sprintf("volume %s is %s; waiting to delete it", res.ID, res.Status), 5*time.Second)
	case "deleting":
		return nil
	}
	sc, err := cinder(ctx, s)
	if err != nil {
		return err
	}
	return volumes.Delete(ctx, sc, res.ID, volumes.DeleteOpts{}).ExtractErr()
}

func attachedTo(res *volumes.Volume) []string {
	var servers []string
	for _, a := range res.Attachments {
		servers = append(servers, a.ServerID)
	}
	return servers
}

func (actuator) ID(res *volumes.Volume) string { return res.ID }

func (actuator) ListAll(ctx context.Context, s generic.Scope) ([]*volumes.Volume, error) {
	return generic.Pointers(list(ctx, s, volumes.ListOpts{}))
}

func (actuator) Observe(v *kupenstackv1.Volume, res *volumes.Volume) (bool, string) {
	r := &kupenstackv1.VolumeResourceStatus{
		Name:             res.Name,
		Description:      res.Description,
		Status:           res.Status,
		SizeGiB:          res.Size,
		VolumeType:       res.VolumeType,
		AvailabilityZone: res.AvailabilityZone,
		Bootable:         res.Bootable == "true",
		ImageID:          res.VolumeImageMetadata["image_id"],
		Metadata:         res.Metadata,
	}
	for _, a := range res.Attachments {
		r.Attachments = append(r.Attachments, kupenstackv1.VolumeAttachmentStatus{ServerID: a.ServerID, Device: a.Device})
	}
	v.Status.Resource = r
	switch {
	case res.Status == "extending":
		return true, fmt.Sprintf("Cinder is extending the volume to %d GiB", v.Spec.SizeGiB)
	case !settled(res.Status):
		return false, "volume status is " + res.Status
	case v.Spec.ManagementPolicy != kupenstackv1.ManagementPolicyUnmanaged && v.Spec.SizeGiB > res.Size:
		return true, fmt.Sprintf("extending the volume from %d to %d GiB", res.Size, v.Spec.SizeGiB)
	}
	return true, ""
}
