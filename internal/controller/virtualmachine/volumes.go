package virtualmachine

import (
	"context"
	"fmt"
	"slices"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
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

// syncVolumes attaches the spec's volumes and detaches the others (never the boot volume). A
// volume Cinder is attaching, detaching or holds reserved is waited for: Nova answers a second
// attach or detach of it with 400, and on a real hypervisor the first one takes a while.
func syncVolumes(ctx context.Context, s generic.Scope, sc *gophercloud.ServiceClient, vm *kupenstackv1.VirtualMachine, cur *servers.Server) error {
	want := map[string]bool{}
	for _, id := range wantVolumes(s, vm) {
		want[id] = true
	}
	var detach []string
	for _, id := range attachedVolumes(s, vm, cur) {
		if want[id] {
			delete(want, id)
			continue
		}
		detach = append(detach, id)
	}
	if len(detach)+len(want) == 0 {
		return nil
	}
	cinder, err := s.Clients.BlockStorage(ctx, s.ProjectID)
	if err != nil {
		return err
	}
	// busy returns a wait while Cinder is attaching or detaching the volume, or, for a detach,
	// has already detached it.
	busy := func(id string, detaching bool) error {
		v, err := volumes.Get(ctx, cinder, id).Extract()
		if err != nil {
			return fmt.Errorf("reading volume %s: %w", id, err)
		}
		return volumeBusy(id, v.Status, detaching)
	}
	for _, id := range detach {
		if err := busy(id, true); err != nil {
			return err
		}
		if err := volumeattach.Delete(ctx, sc, cur.ID, id).ExtractErr(); err != nil {
			return fmt.Errorf("detaching volume %s: %w", id, err)
		}
	}
	for id := range want {
		if err := busy(id, false); err != nil {
			return err
		}
		if _, err := volumeattach.Create(ctx, sc, cur.ID, volumeattach.CreateOpts{VolumeID: id}).Extract(); err != nil {
			return fmt.Errorf("attaching volume %s: %w", id, err)
		}
	}
	return nil
}

// volumeBusy is the wait before attaching or detaching a volume of that Cinder status, or nil.
// A volume the server still lists but Cinder shows available is being detached: Cinder frees it
// before Nova drops it from the server, and a second detach in between is answered 400 ("Volume
// status must be 'in-use'"), an error that would stop the VM until its next resync (a CI run of
// 2026-11-29 met it two seconds after the first detach).
func volumeBusy(id, status string, detaching bool) error {
	switch {
	case volumeInTransition(status):
		return generic.WaitFor(fmt.Sprintf("volume %s is %s", id, status), resizePoll)
	case detaching && status == "available":
		return generic.WaitFor(fmt.Sprintf("volume %s is detached in Cinder; waiting for Nova to drop it from the server", id), resizePoll)
	}
	return nil
}

// volumeInTransition says whether Cinder is attaching or detaching a volume of that status.
func volumeInTransition(status string) bool {
	switch status {
	case "attaching", "detaching", "reserved":
		return true
	}
	return false
}
