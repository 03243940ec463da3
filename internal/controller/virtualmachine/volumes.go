package virtualmachine

import (
	"context"
	"fmt"
	"slices"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/volumeattach"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// wantVolumes are the IDs of the volumes spec.volumes attaches, by the IDs the refs resolve to now.
func wantVolumes(s generic.Scope, vm *kupenstackv1.VirtualMachine) []string {
	var want []string
	for _, v := range vm.Spec.Volumes {
		want = append(want, s.DependencyID("Volume", v.VolumeRef))
	}
	return want
}

// attachedVolumes are the IDs of the volumes attached to the server, the boot volume left out:
// spec.volumes does not list it, and it is never detached.
func attachedVolumes(s generic.Scope, vm *kupenstackv1.VirtualMachine, srv *servers.Server) []string {
	boot := s.DependencyID("Volume", vm.Spec.BootVolumeRef)
	var have []string
	for _, att := range srv.AttachedVolumes {
		if boot == "" || att.ID != boot {
			have = append(have, att.ID)
		}
	}
	return have
}

// diffVolumes compares the attached volumes with spec.volumes, as sets: a Volume re-created with
// a new ID is a change.
func diffVolumes(d *generic.Diff, s generic.Scope, vm *kupenstackv1.VirtualMachine, srv *servers.Server) {
	want, have := wantVolumes(s, vm), attachedVolumes(s, vm, srv)
	slices.Sort(want)
	slices.Sort(have)
	generic.Set(d, fieldVolumes, want, have)
}

// syncVolumes attaches the spec's volumes and detaches the others (never the boot volume).
func syncVolumes(ctx context.Context, s generic.Scope, sc *gophercloud.ServiceClient, vm *kupenstackv1.VirtualMachine, cur *servers.Server) error {
	want := map[string]bool{}
	for _, id := range wantVolumes(s, vm) {
		want[id] = true
	}
	for _, id := range attachedVolumes(s, vm, cur) {
		if want[id] {
			delete(want, id)
			continue
		}
		if err := volumeattach.Delete(ctx, sc, cur.ID, id).ExtractErr(); err != nil {
			return fmt.Errorf("detaching volume %s: %w", id, err)
		}
	}
	for id := range want {
		if _, err := volumeattach.Create(ctx, sc, cur.ID, volumeattach.CreateOpts{VolumeID: id}).Extract(); err != nil {
			return fmt.Errorf("attaching volume %s: %w", id, err)
		}
	}
	return nil
}
