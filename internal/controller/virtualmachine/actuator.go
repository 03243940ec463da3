// Package virtualmachine maps the VirtualMachine kind to Nova servers, and replaces servers that
// fail according to the VM's restart policy.
package virtualmachine

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/secgroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/tags"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/volumeattach"
	"github.com/gophercloud/gophercloud/v2/pagination"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/hostaggregate"
	"github.com/kupenstack/kupenstack/internal/controller/nova"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=virtualmachines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=virtualmachines/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=virtualmachines/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// microversion: 2.52 creates servers with their tags (so a crash never leaves an untagged one),
// 2.71 shows their server groups.
const microversion = "2.71"

// maxUserData is Nova's limit for user data: the base64 text it receives is at most 65535
// characters (the server create schema's maxLength), so at most 49149 bytes of data.
const maxUserData = 65535

// userDataSize is how many characters of user data Nova receives for data: gophercloud sends data
// that already is base64 as it is, and encodes anything else.
func userDataSize(data []byte) int {
	if _, err := base64.StdEncoding.DecodeString(string(data)); err == nil {
		return len(data)
	}
	return base64.StdEncoding.EncodedLen(len(data))
}

// Setup registers the VirtualMachine controller. healthPeriod is how often the servers of every
// project are listed (one call per project) to find failed and vanished ones: mostly only those
// changed since the previous list (ListSince), all of them once per resync period.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options, healthPeriod time.Duration) error {
	a := actuator{secrets: mgr.GetAPIReader(), kube: mgr.GetClient(), backoff: DefaultBackoff}
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.VirtualMachine, servers.Server]{
		Name:       "VirtualMachine",
		Controller: "virtualmachine",
		Actuator:   generic.Legacy[*kupenstackv1.VirtualMachine, servers.Server](a),
		Can: generic.Capabilities[*kupenstackv1.VirtualMachine, servers.Server]{
			List: a.ListAll, ListSince: a.ListSince, ListOwned: a.ListOwned, Claims: a.Claims, Deleting: a.Deleting,
			Heal: &generic.Healing[*kupenstackv1.VirtualMachine, servers.Server]{Failure: a.Failure, Decide: a.Heal},
		},
		New:          func() *kupenstackv1.VirtualMachine { return &kupenstackv1.VirtualMachine{} },
		NewList:      func() client.ObjectList { return &kupenstackv1.VirtualMachineList{} },
		ListPeriod:   healthPeriod,
		Dependencies: dependencies,
	})
}

// dependencies are the objects a VM refers to: it waits for them, and they wait for it on deletion.
var dependencies = []generic.Dependency[*kupenstackv1.VirtualMachine]{
	{Kind: "Flavor", ClusterScoped: true, New: func() generic.Object { return &kupenstackv1.Flavor{} },
		Names: func(v *kupenstackv1.VirtualMachine) []string { return generic.Ref(v.Spec.FlavorRef) }},
	{Kind: "HostAggregate", ClusterScoped: true, New: func() generic.Object { return &kupenstackv1.HostAggregate{} },
		Names: func(v *kupenstackv1.VirtualMachine) []string { return generic.Ref(v.Spec.HostAggregateRef) }},
	{Kind: "Image", New: func() generic.Object { return &kupenstackv1.Image{} },
		Names: func(v *kupenstackv1.VirtualMachine) []string { return generic.Ref(v.Spec.ImageRef) }},
	{Kind: "PublicImage", ClusterScoped: true, New: func() generic.Object { return &kupenstackv1.PublicImage{} },
		Names: func(v *kupenstackv1.VirtualMachine) []string { return generic.Ref(v.Spec.PublicImageRef) }},
	{Kind: "Volume", New: func() generic.Object { return &kupenstackv1.Volume{} },
		Names: func(v *kupenstackv1.VirtualMachine) []string {
			names := generic.Ref(v.Spec.BootVolumeRef)
			for _, vol := range v.Spec.Volumes {
				names = append(names, vol.VolumeRef)
			}
			return names
		}},
	{Kind: "KeyPair", New: func() generic.Object { return &kupenstackv1.KeyPair{} },
		Names: func(v *kupenstackv1.VirtualMachine) []string { return generic.Ref(v.Spec.KeyPairRef) }},
	{Kind: "Network", New: func() generic.Object { return &kupenstackv1.Network{} },
		Names: func(v *kupenstackv1.VirtualMachine) []string {
			return nicRefs(v, func(n kupenstackv1.VirtualMachineNIC) string { return n.NetworkRef })
		}},
	{Kind: "Port", New: func() generic.Object { return &kupenstackv1.Port{} },
		Names: func(v *kupenstackv1.VirtualMachine) []string {
			return nicRefs(v, func(n kupenstackv1.VirtualMachineNIC) string { return n.PortRef })
		}},
	{Kind: "SecurityGroup", New: func() generic.Object { return &kupenstackv1.SecurityGroup{} },
		Names: func(v *kupenstackv1.VirtualMachine) []string { return v.Spec.SecurityGroupRefs }},
	{Kind: "ServerGroup", New: func() generic.Object { return &kupenstackv1.ServerGroup{} },
		Names: func(v *kupenstackv1.VirtualMachine) []string { return generic.Ref(v.Spec.ServerGroupRef) }},
}

func nicRefs(v *kupenstackv1.VirtualMachine, field func(kupenstackv1.VirtualMachineNIC) string) []string {
	var names []string
	for _, n := range v.Spec.Networks {
		if name := field(n); name != "" {
			names = append(names, name)
		}
	}
	return names
}

type actuator struct {
	// secrets reads user data straight from the API server: caching every Secret of the cluster
	// to read a few would cost memory and RBAC the operator does not need.
	secrets client.Reader
	// kube reads the referenced HostAggregate's zone.
	kube    client.Reader
	backoff Backoff
}

var (
	_ generic.LegacyActuator[*kupenstackv1.VirtualMachine, servers.Server] = actuator{}
)

// admin reads servers with the admin scope, which also shows their host; servers are created in
// the namespace's project.
func admin(ctx context.Context, s generic.Scope) (*gophercloud.ServiceClient, error) {
	return nova.ClientFor(ctx, s, "", microversion)
}

func (actuator) Get(ctx context.Context, s generic.Scope, id string) (*servers.Server, error) {
	sc, err := admin(ctx, s)
	if err != nil {
		return nil, err
	}
	srv, err := servers.Get(ctx, sc, id).Extract()
	if err == nil && (srv.Status == "DELETED" || srv.Status == "SOFT_DELETED") {
		// An admin still reads a deleted server; for everyone else it is gone.
		return nil, gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusNotFound}
	}
	return srv, err
}

// list lists the project's servers (all of them, or those carrying tag) in one call.
func list(ctx context.Context, s generic.Scope, tag string) ([]*servers.Server, error) {
	sc, err := admin(ctx, s)
	if err != nil {
		return nil, err
	}
	pages, err := servers.List(sc, servers.ListOpts{AllTenants: true, TenantID: s.ProjectID, Tags: tag}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return generic.Pointers(servers.ExtractServers(pages))
}

func (actuator) ListAll(ctx context.Context, s generic.Scope) ([]*servers.Server, error) {
	return list(ctx, s, "")
}

// ListSince lists the project's servers whose updated_at is at or after since (Nova's
// changes-since, which also returns servers deleted since then, with status DELETED), or all of
// them when since is zero. at is when Nova received the call, by Nova's clock (novaTime).
func (actuator) ListSince(ctx context.Context, s generic.Scope, since time.Time) ([]*servers.Server, time.Time, error) {
	sc, err := admin(ctx, s)
	if err != nil {
		return nil, time.Time{}, err
	}
	opts := servers.ListOpts{AllTenants: true, TenantID: s.ProjectID}
	if !since.IsZero() {
		// ISO 8601 in UTC; whole seconds, which only widens the window.
		opts.ChangesSince = since.UTC().Format(time.RFC3339)
	}
	pager := servers.List(sc, opts)
	if pager.Err != nil {
		return nil, time.Time{}, pager.Err
	}
	start := time.Now()
	var at time.Time
	// The first answer's Date header, read as the page is made: AllPages keeps no headers, and
	// EachPage skips the empty page a quiet project's changes list usually is.
	pages, err := pager.WithPageCreator(func(r pagination.PageResult) pagination.Page {
		if at.IsZero() {
			at = novaTime(r.Header, start, time.Now())
		}
		return servers.ServerPage{LinkedPageBase: pagination.LinkedPageBase{PageResult: r}}
	}).AllPages(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	found, err := generic.Pointers(servers.ExtractServers(pages))
	return found, at, err
}

// novaTime is when a call sent at start and answered at end reached Nova, by Nova's clock: the
// answer's Date less the time the call took (Date has whole seconds, which errs early, the safe
// side). Without a Date, the local start.
func novaTime(h http.Header, start, end time.Time) time.Time {
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return start
	}
	return date.Add(-end.Sub(start))
}

// Deleting tells the engine that Nova is deleting the server already (no second DELETE).
func (actuator) Deleting(srv *servers.Server) bool { return deleting(srv) }

// deleting says whether Nova is already deleting the server: it is no longer anyone's.
func deleting(srv *servers.Server) bool {
	return srv.TaskState == "deleting" || srv.Status == "DELETED" || srv.Status == "SOFT_DELETED"
}

// FindOwned finds the server created for this object (it carries the owner tag from its create
// call on), leaving out a failed one being replaced.
func (actuator) FindOwned(ctx context.Context, s generic.Scope, vm *kupenstackv1.VirtualMachine) (*servers.Server, error) {
	found, err := list(ctx, s, generic.OwnerTag(vm))
	if err != nil {
		return nil, err
	}
	for _, srv := range found {
		if !deleting(srv) {
			return srv, nil
		}
	}
	return nil, nil
}

// ListOwned lists every server created for this VM, those Nova is still deleting included: a
// deleted VM waits for all of them, since each holds ports (and their IPs in the subnet) until it
// is gone. A (soft-)deleted server counts as gone, as for Get.
func (actuator) ListOwned(ctx context.Context, s generic.Scope, vm *kupenstackv1.VirtualMachine) ([]*servers.Server, error) {
	found, err := list(ctx, s, generic.OwnerTag(vm))
	return slices.DeleteFunc(found, func(srv *servers.Server) bool {
		return srv.Status == "DELETED" || srv.Status == "SOFT_DELETED"
	}), err
}

// Claims: Nova tags a server in its create call, so a second server made for the VM (a create
// that outlived an operator restart, or two operators) carries the owner tag from the start.
func (actuator) Claims(vm *kupenstackv1.VirtualMachine, srv *servers.Server, _ time.Time) bool {
	return srv.Tags != nil && slices.Contains(*srv.Tags, generic.OwnerTag(vm)) && !deleting(srv)
}

func (a actuator) FindImport(ctx context.Context, s generic.Scope, vm *kupenstackv1.VirtualMachine) (*servers.Server, error) {
	return generic.FindImport(vm.Spec.Import,
		func(id string) (*servers.Server, error) { return a.Get(ctx, s, id) },
		func(name string) ([]servers.Server, error) {
			all, err := list(ctx, s, "")
			var out []servers.Server
			for _, srv := range all {
				if srv.Name == name && !deleting(srv) {
					out = append(out, *srv)
				}
			}
			return out, err
		})
}

func serverName(vm *kupenstackv1.VirtualMachine) string { return generic.Name(vm, vm.Spec.Name) }

// wantTags are the server's tags: the spec's and the owner tag.
func wantTags(vm *kupenstackv1.VirtualMachine) []string {
	out := []string{generic.OwnerTag(vm)}
	for _, t := range vm.Spec.Tags {
		out = append(out, string(t))
	}
	sort.Strings(out)
	return out
}

func (a actuator) userData(ctx context.Context, vm *kupenstackv1.VirtualMachine) ([]byte, error) {
	ref := vm.Spec.UserData
	if ref == nil {
		return nil, nil
	}
	var secret corev1.Secret
	if err := a.secrets.Get(ctx, client.ObjectKey{Namespace: vm.Namespace, Name: ref.Name}, &secret); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, generic.WaitFor(fmt.Sprintf("waiting for Secret %s with the user data", ref.Name), 10*time.Second)
		}
		return nil, err
	}
	data, ok := secret.Data[ref.Key]
	switch {
	case !ok:
		return nil, generic.InvalidConfig(fmt.Sprintf("Secret %s has no key %s for the user data", ref.Name, ref.Key))
	case userDataSize(data) > maxUserData:
		return nil, generic.InvalidConfig(fmt.Sprintf("user data in Secret %s (key %s) is %d bytes, %d in base64; Nova takes at most %d characters of base64 (%d bytes)",
			ref.Name, ref.Key, len(data), userDataSize(data), maxUserData, maxUserData/4*3))
	}
	return data, nil
}

// imageID is the Glance image the server boots from: its Image's or its PublicImage's ("" when
// it boots from a volume).
func imageID(s generic.Scope, vm *kupenstackv1.VirtualMachine) string {
	if vm.Spec.PublicImageRef != "" {
		return s.DependencyID("PublicImage", vm.Spec.PublicImageRef)
	}
	return s.DependencyID("Image", vm.Spec.ImageRef)
}

func (a actuator) Create(ctx context.Context, s generic.Scope, vm *kupenstackv1.VirtualMachine) (*servers.Server, error) {
	userData, err := a.userData(ctx, vm)
	if err != nil {
		return nil, err
	}
	opts := servers.CreateOpts{
		Name:             serverName(vm),
		FlavorRef:        s.DependencyID("Flavor", vm.Spec.FlavorRef),
		ImageRef:         imageID(s, vm),
		UserData:         userData,
		AvailabilityZone: vm.Spec.AvailabilityZone,
		Metadata:         vm.Spec.Metadata,
		Tags:             wantTags(vm),
		Networks:         "none",
	}
	if name := vm.Spec.HostAggregateRef; name != "" {
		var agg kupenstackv1.HostAggregate
		if err := a.kube.Get(ctx, client.ObjectKey{Name: name}, &agg); err != nil {
			return nil, err
		}
		opts.AvailabilityZone = hostaggregate.Zone(&agg)
	}
	if len(vm.Spec.NodeSelector) > 0 {
		zone, err := a.zoneFor(ctx, kupenstackv1.LabelSet(vm.Spec.NodeSelector))
		if err != nil {
			return nil, err
		}
		opts.AvailabilityZone = zone
	}
	if vol := vm.Spec.BootVolumeRef; vol != "" {
		opts.BlockDevice = []servers.BlockDevice{{SourceType: servers.SourceVolume, DestinationType: servers.DestinationVolume,
			UUID: s.DependencyID("Volume", vol), BootIndex: 0}}
	}
	for _, sg := range vm.Spec.SecurityGroupRefs {
		opts.SecurityGroups = append(opts.SecurityGroups, s.DependencyID("SecurityGroup", sg))
	}
	if len(vm.Spec.Networks) > 0 {
		var nics []servers.Network
		for _, n := range vm.Spec.Networks {
			if n.PortRef != "" {
				nics = append(nics, servers.Network{Port: s.DependencyID("Port", n.PortRef)})
			} else {
				nics = append(nics, servers.Network{UUID: s.DependencyID("Network", n.NetworkRef), FixedIP: n.FixedIP})
			}
		}
		opts.Networks = nics
	}
	var create servers.CreateOptsBuilder = opts
	if kp := vm.Spec.KeyPairRef; kp != "" {
		create = keyPairOpts{opts, s.DependencyID("KeyPair", kp)}
	}
	var hints servers.SchedulerHintOptsBuilder
	if sg := vm.Spec.ServerGroupRef; sg != "" {
		hints = servers.SchedulerHintOpts{Group: s.DependencyID("ServerGroup", sg)}
	}
	sc, err := nova.Client(ctx, s, microversion)
	if err != nil {
		return nil, err
	}
	srv, err := servers.Create(ctx, sc, create, hints).Extract()
	if err != nil {
		return nil, networkWithoutSubnet(replacingPortBusy(vm, err, time.Now()))
	}
	vm.Status.AppliedPowerState = kupenstackv1.PowerStateRunning
	vm.Status.Resize = nil // a new server has the spec's flavor; an old resize is no longer its
	// The create response has the ID only; the first observation must not look like an error.
	srv.Status, srv.Name = "BUILD", opts.Name
	return srv, nil
}

// zoneFor finds the availability zone of the one Ready HostAggregate whose node selector includes
// every label of selector: all of its hosts carry those labels.
func (a actuator) zoneFor(ctx context.Context, selector map[string]string) (string, error) {
	var list kupenstackv1.HostAggregateList
	if err := a.kube.List(ctx, &list); err != nil {
		return "", err
	}
	var names []string
	zone := ""
	for _, agg := range list.Items {
		if !includes(kupenstackv1.LabelSet(agg.Spec.NodeSelector), selector) {
			continue
		}
		if !conditions.IsReady(agg.Status.Conditions, agg.Generation) {
			return "", generic.WaitFor(fmt.Sprintf("waiting for HostAggregate/%s, which selects nodes labelled %v, to be ready", agg.Name, selector), 10*time.Second)
		}
		names = append(names, agg.Name)
		zone = hostaggregate.Zone(&agg)
	}
	switch len(names) {
	case 0:
		return "", generic.WaitFor(fmt.Sprintf("waiting for a HostAggregate that selects nodes labelled %v", selector), 30*time.Second)
	case 1:
		return zone, nil
	}
	return "", generic.InvalidConfig(fmt.Sprintf("nodeSelector %v matches several HostAggregates %v; use hostAggregateRef", selector, names))
}

// includes says whether every pair of sub is in set.
func includes(set, sub map[string]string) bool {
	for k, v := range sub {
		if got, ok := set[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// keyPairOpts adds key_name to the create request.
type keyPairOpts struct {
	servers.CreateOpts
	keyName string
}

func (o keyPairOpts) ToServerCreateMap() (map[string]any, error) {
	m, err := o.CreateOpts.ToServerCreateMap()
	if err != nil {
		return nil, err
	}
	m["server"].(map[string]any)["key_name"] = o.keyName
	return m, nil
}

// settled says whether Nova is done with the server for now: no task, not building.
func settled(srv *servers.Server) bool {
	return srv.TaskState == "" && srv.Status != "BUILD"
}

// Update reconciles the mutable fields in place: flavor (resize), name, metadata, tags, security
// groups, attached volumes and power state.
func (a actuator) Update(ctx context.Context, s generic.Scope, vm *kupenstackv1.VirtualMachine, cur *servers.Server) (*servers.Server, bool, error) {
	sc, err := nova.Client(ctx, s, microversion)
	if err != nil {
		return cur, false, err
	}
	// The flavor first: while Nova resizes, it refuses most other actions (attach, stop).
	if err := a.syncFlavor(ctx, s, sc, vm, cur); err != nil {
		return cur, false, err
	}
	if !settled(cur) {
		return cur, false, nil // act once Nova is done; Observe keeps polling meanwhile
	}
	changed := false
	if name := serverName(vm); cur.Name != name {
		if _, err := servers.Update(ctx, sc, cur.ID, servers.UpdateOpts{Name: name}).Extract(); err != nil {
			return cur, changed, fmt.Errorf("renaming the server: %w", err)
		}
		changed = true
	}
	if want := vm.Spec.Metadata; !maps.Equal(want, cur.Metadata) && (len(want) > 0 || len(cur.Metadata) > 0) {
		if _, err := servers.ResetMetadata(ctx, sc, cur.ID, servers.MetadataOpts(want)).Extract(); err != nil {
			return cur, changed, fmt.Errorf("setting the metadata: %w", err)
		}
		changed = true
	}
	if want := wantTags(vm); !slices.Equal(want, sortedTags(cur)) {
		if _, err := tags.ReplaceAll(ctx, sc, cur.ID, tags.ReplaceAllOpts{Tags: want}).Extract(); err != nil {
			return cur, changed, fmt.Errorf("setting the tags: %w", err)
		}
		changed = true
	}
	if did, err := a.syncSecurityGroups(ctx, s, sc, vm, cur); err != nil || did {
		changed = changed || did
		if err != nil {
			return cur, changed, err
		}
	}
	if did, err := syncVolumes(ctx, s, sc, vm, cur); err != nil || did {
		changed = changed || did
		if err != nil {
			return cur, changed, err
		}
	}
	if did, err := syncPower(ctx, sc, vm, cur); err != nil || did {
		changed = changed || did
		if err != nil {
			return cur, changed, err
		}
	}
	if !changed {
		return cur, false, nil
	}
	updated, err := a.Get(ctx, s, cur.ID)
	return updated, true, err
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
// made for it). Without refs the server keeps what it has: the project's default group.
func (actuator) syncSecurityGroups(ctx context.Context, s generic.Scope, sc *gophercloud.ServiceClient, vm *kupenstackv1.VirtualMachine, cur *servers.Server) (bool, error) {
	if len(vm.Spec.SecurityGroupRefs) == 0 || !slices.ContainsFunc(vm.Spec.Networks, func(n kupenstackv1.VirtualMachineNIC) bool { return n.NetworkRef != "" }) {
		return false, nil
	}
	pages, err := secgroups.ListByServer(sc, cur.ID).AllPages(ctx)
	if err != nil {
		return false, fmt.Errorf("listing the server's security groups: %w", err)
	}
	have, err := secgroups.ExtractSecurityGroups(pages)
	if err != nil {
		return false, err
	}
	want := map[string]bool{}
	for _, name := range vm.Spec.SecurityGroupRefs {
		want[s.DependencyID("SecurityGroup", name)] = true
	}
	changed := false
	for _, g := range have {
		if want[g.ID] {
			delete(want, g.ID)
			continue
		}
		if err := secgroups.RemoveServer(ctx, sc, cur.ID, g.ID).ExtractErr(); err != nil {
			return changed, fmt.Errorf("removing security group %s: %w", g.ID, err)
		}
		changed = true
	}
	for id := range want {
		if err := secgroups.AddServer(ctx, sc, cur.ID, id).ExtractErr(); err != nil {
			return changed, fmt.Errorf("adding security group %s: %w", id, err)
		}
		changed = true
	}
	return changed, nil
}

// wantVolumes are the IDs of the volumes spec.volumes attaches.
func wantVolumes(s generic.Scope, vm *kupenstackv1.VirtualMachine) map[string]bool {
	want := map[string]bool{}
	for _, v := range vm.Spec.Volumes {
		want[s.DependencyID("Volume", v.VolumeRef)] = true
	}
	return want
}

// syncVolumes attaches the spec's volumes and detaches the others (never the boot volume).
func syncVolumes(ctx context.Context, s generic.Scope, sc *gophercloud.ServiceClient, vm *kupenstackv1.VirtualMachine, cur *servers.Server) (bool, error) {
	want := wantVolumes(s, vm)
	boot := s.DependencyID("Volume", vm.Spec.BootVolumeRef)
	changed := false
	for _, att := range cur.AttachedVolumes {
		if want[att.ID] {
			delete(want, att.ID)
			continue
		}
		if att.ID == boot {
			continue
		}
		if err := volumeattach.Delete(ctx, sc, cur.ID, att.ID).ExtractErr(); err != nil {
			return changed, fmt.Errorf("detaching volume %s: %w", att.ID, err)
		}
		changed = true
	}
	for id := range want {
		if _, err := volumeattach.Create(ctx, sc, cur.ID, volumeattach.CreateOpts{VolumeID: id}).Extract(); err != nil {
			return changed, fmt.Errorf("attaching volume %s: %w", id, err)
		}
		changed = true
	}
	return changed, nil
}

// syncPower starts or stops the server: when spec.powerState changed since the operator last
// acted on it, when a server that should be stopped runs, and (restartPolicy Always only) when
// one that should run has stopped.
func syncPower(ctx context.Context, sc *gophercloud.ServiceClient, vm *kupenstackv1.VirtualMachine, cur *servers.Server) (bool, error) {
	want := vm.Spec.PowerState
	if want == "" {
		want = kupenstackv1.PowerStateRunning
	}
	requested := want != vm.Status.AppliedPowerState
	switch {
	case cur.Status == "ACTIVE" && want == kupenstackv1.PowerStateStopped:
		if err := servers.Stop(ctx, sc, cur.ID).ExtractErr(); err != nil {
			return false, fmt.Errorf("stopping the server: %w", err)
		}
	case cur.Status == "SHUTOFF" && want == kupenstackv1.PowerStateRunning &&
		(requested || vm.Spec.RestartPolicy == kupenstackv1.RestartPolicyAlways):
		if err := servers.Start(ctx, sc, cur.ID).ExtractErr(); err != nil {
			return false, fmt.Errorf("starting the server: %w", err)
		}
		if !requested {
			vm.Status.RestartCount++
			vm.Status.LastFailureReason = "the server stopped while powerState is running; restartPolicy Always starts it again"
		}
	default:
		vm.Status.AppliedPowerState = want
		return false, nil
	}
	vm.Status.AppliedPowerState = want
	return true, nil
}

func (actuator) Delete(ctx context.Context, s generic.Scope, res *servers.Server) error {
	sc, err := admin(ctx, s)
	if err != nil {
		return err
	}
	return servers.Delete(ctx, sc, res.ID).ExtractErr()
}

func (actuator) ID(res *servers.Server) string { return res.ID }

// Failure: a server in ERROR has failed (a deleted one is reported gone by Get). The states of a
// resize (RESIZE, VERIFY_RESIZE, REVERT_RESIZE) are no failure: Update waits them out, confirms
// or reverts.
//
// A server that went to ERROR during a resize is a failure like any other, for its restartPolicy
// to handle: Nova can revert only a resize in VERIFY_RESIZE, and a server in ERROR can neither be
// reverted nor resized again (only an admin's reset-state, which cannot tell where the resize
// stopped, gets it out). Always and OnFailure replace it, on the spec's (new) flavor, the
// Port, Volume and floating IP objects moving to the replacement as on any other; Never leaves it
// as it is, Degraded. The message says the resize is the cause.
func (actuator) Failure(vm *kupenstackv1.VirtualMachine, srv *servers.Server) string {
	if srv.Status != "ERROR" {
		return ""
	}
	msg := fmt.Sprintf("server %s went to ERROR", srv.ID)
	if r := vm.Status.Resize; r != nil && r.Phase != kupenstackv1.ResizePhaseFailed {
		msg += fmt.Sprintf(" while being resized from flavor %s to %s", r.FromFlavorName, r.FlavorName)
	}
	if srv.Fault.Message != "" {
		msg += ": " + srv.Fault.Message
	}
	return msg
}

func (a actuator) Heal(vm *kupenstackv1.VirtualMachine, failure string, now time.Time) generic.HealDecision {
	return a.backoff.decide(vm, failure, now)
}

// InSync: the list shows the server as it was last observed, and nothing to change or heal.
func (actuator) InSync(vm *kupenstackv1.VirtualMachine, srv *servers.Server) bool {
	if srv.Status == "DELETED" {
		return false // a changes-since list shows a deleted server: gone, even for an unmanaged VM
	}
	if vm.Spec.ManagementPolicy == kupenstackv1.ManagementPolicyUnmanaged {
		return true
	}
	seen := vm.Status.Resource
	if seen == nil || seen.Status != srv.Status || seen.TaskState != srv.TaskState || seen.Name != srv.Name {
		return false
	}
	// A flavor changed since the last observation (a resize out of band): Update resizes it back.
	// One the operator saw already and left (a failed resize) stays in sync, so it is not tried
	// again on every list.
	if seen.FlavorName != flavorName(srv) {
		return false
	}
	return maps.Equal(vm.Spec.Metadata, srv.Metadata) || len(vm.Spec.Metadata)+len(srv.Metadata) == 0
}

// Observe records the server in the status and says whether it is where the spec wants it.
func (actuator) Observe(vm *kupenstackv1.VirtualMachine, srv *servers.Server) (bool, string) {
	st := &kupenstackv1.VirtualMachineResourceStatus{
		Name: srv.Name, Status: srv.Status, TaskState: srv.TaskState, PowerState: srv.PowerState.String(),
		Host: srv.Host, AvailabilityZone: srv.AvailabilityZone, Metadata: srv.Metadata, Fault: srv.Fault.Message,
		Addresses: addresses(srv), Tags: sortedTags(srv),
	}
	st.FlavorName = flavorName(srv)
	if id, ok := srv.Image["id"].(string); ok {
		st.ImageID = id
	}
	for _, v := range srv.AttachedVolumes {
		st.VolumeIDs = append(st.VolumeIDs, v.ID)
	}
	vm.Status.Resource = st

	want := vm.Spec.PowerState
	if want == "" {
		want = kupenstackv1.PowerStateRunning
	}
	switch {
	case !settled(srv):
		task := srv.TaskState
		if task == "" {
			task = "building"
		}
		return false, fmt.Sprintf("server is %s (%s)", srv.Status, task)
	case srv.Status == "ERROR":
		return false, ""
	case vm.Spec.ManagementPolicy != kupenstackv1.ManagementPolicyUnmanaged &&
		len(vm.Spec.Volumes) != len(srv.AttachedVolumes)-boolInt(vm.Spec.BootVolumeRef != ""):
		return false, "attaching and detaching volumes"
	case srv.Status == "ACTIVE":
		if want == kupenstackv1.PowerStateStopped {
			return false, "stopping the server"
		}
		return true, ""
	case srv.Status == "SHUTOFF":
		if want == kupenstackv1.PowerStateStopped {
			return true, ""
		}
		if vm.Spec.RestartPolicy == kupenstackv1.RestartPolicyAlways {
			return false, "starting the server"
		}
		return false, "" // stopped outside KupenStack; restartPolicy OnFailure leaves it stopped
	case srv.Status == "PAUSED" || srv.Status == "SUSPENDED" || srv.Status == "SHELVED" || srv.Status == "SHELVED_OFFLOADED":
		return false, "" // put there outside KupenStack; it stays until resumed
	}
	return false, fmt.Sprintf("server is %s", srv.Status)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// addresses flattens Nova's addresses (network name → list of address objects).
func addresses(srv *servers.Server) []kupenstackv1.VirtualMachineAddress {
	var out []kupenstackv1.VirtualMachineAddress
	networks := slices.Sorted(maps.Keys(srv.Addresses))
	for _, net := range networks {
		list, _ := srv.Addresses[net].([]any)
		for _, item := range list {
			m, _ := item.(map[string]any)
			addr, _ := m["addr"].(string)
			typ, _ := m["OS-EXT-IPS:type"].(string)
			mac, _ := m["OS-EXT-IPS-MAC:mac_addr"].(string)
			out = append(out, kupenstackv1.VirtualMachineAddress{Network: net, Address: addr, Type: typ, MAC: mac})
		}
	}
	return out
}
