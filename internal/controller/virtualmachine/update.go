package virtualmachine

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/secgroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/tags"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/nova"
)

// The spec fields Diff compares, as the user writes them.
const (
	fieldName           = "spec.name"
	fieldMetadata       = "spec.metadata"
	fieldTags           = "spec.tags"
	fieldSecurityGroups = "spec.securityGroupRefs"
	fieldVolumes        = "spec.volumes"
	fieldFlavor         = "spec.flavorRef"
	fieldPowerState     = "spec.powerState"
)

// Diff compares the server with the spec. The fields that are immutable in the spec (image or
// boot volume, key pair, NICs, user data, placement) are not compared: Nova cannot change the
// first ones, and a migration by an admin is no drift. It reads the Flavor and SecurityGroup
// objects from the manager's cache (no OpenStack call): Nova shows a server's flavor and groups
// by name only.
func (a actuator) Diff(s generic.Scope, vm *kupenstackv1.VirtualMachine, srv *servers.Server) generic.Changes {
	var d generic.Diff
	if why := needsReplacing(vm, srv); why != "" {
		d.Add(generic.FieldResource, "a working server", why)
		return d.Changes()
	}
	// The flavor first: Update resizes before anything else, and the resize's later steps (wait,
	// confirm, done) are each a pass in which Diff reports the flavor.
	a.diffFlavor(&d, vm, srv)
	if !settled(srv) {
		return d.Changes() // Nova refuses most actions while busy: compared once it is done
	}
	generic.Value(&d, fieldName, serverName(vm), srv.Name)
	generic.Map(&d, fieldMetadata, vm.Spec.Metadata, srv.Metadata) // no metadata in the spec: none on the server
	generic.Set(&d, fieldTags, wantTags(vm), sortedTags(srv))
	a.diffSecurityGroups(&d, vm, srv)
	diffVolumes(&d, s, vm, srv)
	if want, needed := powerAction(vm, srv); needed {
		d.Add(fieldPowerState, want, srv.Status)
	}
	return d.Changes()
}

// needsReplacing says why the server needs a pass that replaces it, "" when it does not: a
// changes-since list shows a deleted server as DELETED, and one that failed since it was last
// observed as ERROR (an imported one is never replaced). Only the list-based drift check sees
// these here: in a pass, Get reports a deleted server gone and Failure catches the failed one
// before Diff, so Update never gets this change. Without it the health check would miss both
// until the next full list.
func needsReplacing(vm *kupenstackv1.VirtualMachine, srv *servers.Server) string {
	switch {
	case srv.Status == "DELETED":
		return "deleted"
	case srv.Status == "ERROR" && vm.Spec.Import == nil && (vm.Status.Resource == nil || vm.Status.Resource.Status != "ERROR"):
		return "ERROR"
	}
	return ""
}

// diffFlavor reports spec.flavorRef while the resize state machine has something to do: start,
// wait for, confirm, revert or finish a resize, or report the failed one again (it stays
// Degraded until the spec changes).
func (a actuator) diffFlavor(d *generic.Diff, vm *kupenstackv1.VirtualMachine, srv *servers.Server) {
	if vm.Spec.FlavorRef == "" {
		return // an imported server whose flavor is not managed
	}
	have := flavorName(srv)
	want, err := a.wantFlavorName(context.Background(), vm)
	if err != nil {
		d.Add(fieldFlavor, vm.Spec.FlavorRef, have) // Update reads it again and reports why it cannot
		return
	}
	if decideResize(vm, srv, want) != resizeNothing ||
		(vm.Status.Resize != nil && settled(srv) && have == want) { // a resize record to clear
		d.Add(fieldFlavor, want, have)
	}
}

// syncsSecurityGroups says whether spec.securityGroupRefs is applied to the server: with refs
// and a NIC Nova makes the port of. Without refs the server keeps what it has (the project's
// default group); the port of a portRef NIC has the groups of its Port object.
func syncsSecurityGroups(vm *kupenstackv1.VirtualMachine) bool {
	return len(vm.Spec.SecurityGroupRefs) > 0 &&
		slices.ContainsFunc(vm.Spec.Networks, func(n kupenstackv1.VirtualMachineNIC) bool { return n.NetworkRef != "" })
}

// diffSecurityGroups compares the names of the server's groups (Nova shows no IDs) with those of
// the spec's SecurityGroup objects. A group re-created with a new ID shows by its name too:
// Neutron deletes no group a port still uses, so the old one must have left the server first.
func (a actuator) diffSecurityGroups(d *generic.Diff, vm *kupenstackv1.VirtualMachine, srv *servers.Server) {
	if !syncsSecurityGroups(vm) {
		return
	}
	var have []string
	for _, g := range srv.SecurityGroups {
		if name, ok := g["name"].(string); ok {
			have = append(have, name)
		}
	}
	var want []string
	for _, ref := range vm.Spec.SecurityGroupRefs {
		var sg kupenstackv1.SecurityGroup
		if err := a.kube.Get(context.Background(), client.ObjectKey{Namespace: vm.Namespace, Name: ref}, &sg); err != nil {
			d.Add(fieldSecurityGroups, vm.Spec.SecurityGroupRefs, have) // Update compares by ID
			return
		}
		want = append(want, securityGroupName(&sg))
	}
	slices.Sort(have)
	slices.Sort(want)
	generic.Set(d, fieldSecurityGroups, want, have)
}

// securityGroupName is the Neutron name of a SecurityGroup object's group.
func securityGroupName(sg *kupenstackv1.SecurityGroup) string {
	if r := sg.Status.Resource; r != nil && r.Name != "" {
		return r.Name
	}
	return generic.Name(sg, sg.Spec.Name)
}

// Update makes the changes Diff found. A resize takes several passes: while Nova works, Update
// returns the resize's wait (or Degraded) error, and the other changes wait for the next pass.
func (a actuator) Update(ctx context.Context, s generic.Scope, vm *kupenstackv1.VirtualMachine, cur *servers.Server, changes generic.Changes) (*servers.Server, error) {
	sc, err := nova.Client(ctx, s, microversion)
	if err != nil {
		return cur, err
	}
	// The flavor first: while Nova resizes, it refuses most other actions (attach, stop).
	if changes.Has(fieldFlavor) {
		if err := a.syncFlavor(ctx, s, sc, vm, cur); err != nil {
			return cur, err
		}
	}
	if !settled(cur) {
		// Diff reports no other field then; a wait keeps the pass from counting this as done.
		return cur, generic.WaitFor(fmt.Sprintf("server is %s (%s)", cur.Status, orNone(cur.TaskState)), resizePoll)
	}
	if changes.Has(fieldName) {
		if _, err := servers.Update(ctx, sc, cur.ID, servers.UpdateOpts{Name: serverName(vm)}).Extract(); err != nil {
			return cur, fmt.Errorf("renaming the server: %w", err)
		}
	}
	if changes.Has(fieldMetadata) {
		if _, err := servers.ResetMetadata(ctx, sc, cur.ID, servers.MetadataOpts(vm.Spec.Metadata)).Extract(); err != nil {
			return cur, fmt.Errorf("setting the metadata: %w", err)
		}
	}
	if changes.Has(fieldTags) {
		if _, err := tags.ReplaceAll(ctx, sc, cur.ID, tags.ReplaceAllOpts{Tags: wantTags(vm)}).Extract(); err != nil {
			return cur, fmt.Errorf("setting the tags: %w", err)
		}
	}
	if changes.Has(fieldSecurityGroups) {
		if err := syncSecurityGroups(ctx, s, sc, vm, cur); err != nil {
			return cur, err
		}
	}
	// A server to be stopped stops before its volumes change: from a stopped server a detach is
	// immediate, while a running guest must release the disk first, and one that ignores the
	// unplug (nothing booted, no hotplug support) holds Nova's detach, and every action on the
	// server after it, for minutes. The volumes follow once it is SHUTOFF (settled, above).
	// Starting goes the other way already: volumes first, then the start.
	if changes.Has(fieldVolumes) && changes.Has(fieldPowerState) && stopping(vm, cur) {
		if err := syncPower(ctx, sc, vm, cur); err != nil {
			return cur, err
		}
		// The engine names no update that waits; the volumes' update, next, has its Event.
		s.Event(corev1.EventTypeNormal, "Stopping", "Update",
			fmt.Sprintf("stopping server %s before changing its volumes", cur.ID))
		return cur, generic.WaitFor("stopping the server before its volumes change", resizePoll)
	}
	if changes.Has(fieldVolumes) {
		if err := syncVolumes(ctx, s, sc, vm, cur); err != nil {
			return cur, err
		}
	}
	if changes.Has(fieldPowerState) {
		if err := syncPower(ctx, sc, vm, cur); err != nil {
			return cur, err
		}
	}
	return a.Get(ctx, s, cur.ID)
}

func sortedTags(srv *servers.Server) []string {
	if srv.Tags == nil {
		return nil
	}
	out := slices.Clone(*srv.Tags)
	sort.Strings(out)
	return out
}

// syncSecurityGroups applies spec.securityGroupRefs to the server (that is, to the ports Nova
// made for it), by the IDs the refs resolve to now.
func syncSecurityGroups(ctx context.Context, s generic.Scope, sc *gophercloud.ServiceClient, vm *kupenstackv1.VirtualMachine, cur *servers.Server) error {
	pages, err := secgroups.ListByServer(sc, cur.ID).AllPages(ctx)
	if err != nil {
		return fmt.Errorf("listing the server's security groups: %w", err)
	}
	have, err := secgroups.ExtractSecurityGroups(pages)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, name := range vm.Spec.SecurityGroupRefs {
		want[s.DependencyID("SecurityGroup", name)] = true
	}
	for _, g := range have {
		if want[g.ID] {
			delete(want, g.ID)
			continue
		}
		if err := secgroups.RemoveServer(ctx, sc, cur.ID, g.ID).ExtractErr(); err != nil {
			return fmt.Errorf("removing security group %s: %w", g.ID, err)
		}
	}
	for id := range want {
		if err := secgroups.AddServer(ctx, sc, cur.ID, id).ExtractErr(); err != nil {
			return fmt.Errorf("adding security group %s: %w", id, err)
		}
	}
	return nil
}

// wantPower is the power state the spec asks for (running when unset).
func wantPower(vm *kupenstackv1.VirtualMachine) kupenstackv1.PowerState {
	if vm.Spec.PowerState == "" {
		return kupenstackv1.PowerStateRunning
	}
	return vm.Spec.PowerState
}

// powerAction says what syncPower does: stop a server that should be stopped and runs, start
// one that should run and has stopped when spec.powerState changed since the operator last acted
// on it or under restartPolicy Always; and (needed, with neither) record a changed powerState
// as applied, so that a later stop out of band under OnFailure is not taken for a request.
func powerAction(vm *kupenstackv1.VirtualMachine, srv *servers.Server) (want kupenstackv1.PowerState, needed bool) {
	want = wantPower(vm)
	requested := want != vm.Status.AppliedPowerState
	switch {
	case stopping(vm, srv):
		return want, true
	case srv.Status == "SHUTOFF" && want == kupenstackv1.PowerStateRunning &&
		(requested || vm.Spec.RestartPolicy == kupenstackv1.RestartPolicyAlways):
		return want, true
	}
	return want, requested
}

// stopping says whether syncPower would stop the server.
func stopping(vm *kupenstackv1.VirtualMachine, srv *servers.Server) bool {
	return srv.Status == "ACTIVE" && wantPower(vm) == kupenstackv1.PowerStateStopped
}

// syncPower starts or stops the server as powerAction says, and records the state as applied.
func syncPower(ctx context.Context, sc *gophercloud.ServiceClient, vm *kupenstackv1.VirtualMachine, cur *servers.Server) error {
	want := wantPower(vm)
	requested := want != vm.Status.AppliedPowerState
	switch {
	case stopping(vm, cur):
		if err := servers.Stop(ctx, sc, cur.ID).ExtractErr(); err != nil {
			return fmt.Errorf("stopping the server: %w", err)
		}
	case cur.Status == "SHUTOFF" && want == kupenstackv1.PowerStateRunning &&
		(requested || vm.Spec.RestartPolicy == kupenstackv1.RestartPolicyAlways):
		if err := servers.Start(ctx, sc, cur.ID).ExtractErr(); err != nil {
			return fmt.Errorf("starting the server: %w", err)
		}
		if !requested {
			vm.Status.RestartCount++
			vm.Status.LastFailureReason = "the server stopped while powerState is running; restartPolicy Always starts it again"
		}
	}
	vm.Status.AppliedPowerState = want
	return nil
}
