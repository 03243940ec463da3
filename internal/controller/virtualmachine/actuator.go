// Package virtualmachine maps the VirtualMachine kind to Nova servers, and replaces servers that
// fail according to the VM's restart policy.
package virtualmachine

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/pagination"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/nova"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=virtualmachines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=virtualmachines/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=virtualmachines/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// microversion: 2.52 creates servers with their tags (so a crash never leaves an untagged one),
// 2.71 shows their server groups.
const microversion = "2.71"

// Setup registers the VirtualMachine controller. healthPeriod is how often the servers of every
// project are listed (one call per project) to find failed and vanished ones: mostly only those
// changed since the previous list (ListSince), all of them once per resync period.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options, healthPeriod time.Duration) error {
	a := actuator{secrets: mgr.GetAPIReader(), kube: mgr.GetClient(), backoff: DefaultBackoff}
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.VirtualMachine, servers.Server]{
		Name:       "VirtualMachine",
		Controller: "virtualmachine",
		Actuator:   a,
		Can: generic.Capabilities[*kupenstackv1.VirtualMachine, servers.Server]{
			List: a.ListAll, ListSince: a.ListSince, ListOwned: a.ListOwned, Claims: a.Claims, Deleting: a.Deleting,
			Heal: &generic.Healing[*kupenstackv1.VirtualMachine, servers.Server]{Failure: a.Failure, Decide: a.Heal},
		},
		New:          func() *kupenstackv1.VirtualMachine { return &kupenstackv1.VirtualMachine{} },
		NewList:      newList,
		ListPeriod:   healthPeriod,
		Dependencies: dependencies,
		// Nova refuses a server on a network without a subnet, and the VM waits (networkWithoutSubnet):
		// the Subnet object wakes it as soon as it has an ID, instead of the wait's next poll.
		Watches: []generic.Watch{generic.WakeOn(mgr.GetClient(), newList, awaitsSubnet)},
	})
}

// awaitsSubnet says whether VM obj may be waiting for the changed Subnet: no server yet, a NIC on
// the network of a subnet that now has its ID (see networkWithoutSubnet).
func awaitsSubnet(subnet *kupenstackv1.Subnet, obj client.Object) bool {
	vm := obj.(*kupenstackv1.VirtualMachine)
	return subnet.Status.ID != "" && vm.Status.ID == "" &&
		slices.Contains(nicRefs(vm, func(n kupenstackv1.VirtualMachineNIC) string { return n.NetworkRef }), subnet.Spec.NetworkRef)
}

func newList() client.ObjectList { return &kupenstackv1.VirtualMachineList{} }

// dependencies are the objects a VM refers to: it waits for them, and they wait for it on deletion.
var dependencies = []generic.Dependency[*kupenstackv1.VirtualMachine]{
	generic.Refers[kupenstackv1.Flavor]("spec.flavorRef", func(v *kupenstackv1.VirtualMachine) []string { return generic.Ref(v.Spec.FlavorRef) }),
	generic.Refers[kupenstackv1.HostAggregate]("spec.hostAggregateRef", func(v *kupenstackv1.VirtualMachine) []string { return generic.Ref(v.Spec.HostAggregateRef) }),
	generic.Refers[kupenstackv1.Image]("spec.imageRef", func(v *kupenstackv1.VirtualMachine) []string { return generic.Ref(v.Spec.ImageRef) }),
	generic.Refers[kupenstackv1.PublicImage]("spec.publicImageRef", func(v *kupenstackv1.VirtualMachine) []string { return generic.Ref(v.Spec.PublicImageRef) }),
	generic.Refers[kupenstackv1.Volume]("spec.bootVolumeRef, spec.volumes[].volumeRef", func(v *kupenstackv1.VirtualMachine) []string {
		names := generic.Ref(v.Spec.BootVolumeRef)
		for _, vol := range v.Spec.Volumes {
			names = append(names, vol.VolumeRef)
		}
		return names
	}),
	generic.Refers[kupenstackv1.KeyPair]("spec.keyPairRef", func(v *kupenstackv1.VirtualMachine) []string { return generic.Ref(v.Spec.KeyPairRef) }),
	generic.Refers[kupenstackv1.Network]("spec.networks[].networkRef", func(v *kupenstackv1.VirtualMachine) []string {
		return nicRefs(v, func(n kupenstackv1.VirtualMachineNIC) string { return n.NetworkRef })
	}),
	generic.Refers[kupenstackv1.Port]("spec.networks[].portRef", func(v *kupenstackv1.VirtualMachine) []string {
		return nicRefs(v, func(n kupenstackv1.VirtualMachineNIC) string { return n.PortRef })
	}),
	generic.Refers[kupenstackv1.SecurityGroup]("spec.securityGroupRefs", func(v *kupenstackv1.VirtualMachine) []string { return v.Spec.SecurityGroupRefs }),
	generic.Refers[kupenstackv1.ServerGroup]("spec.serverGroupRef", func(v *kupenstackv1.VirtualMachine) []string { return generic.Ref(v.Spec.ServerGroupRef) }),
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
	_ generic.Actuator[*kupenstackv1.VirtualMachine, servers.Server] = actuator{}
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

// settled says whether Nova is done with the server for now: no task, not building.
func settled(srv *servers.Server) bool {
	return srv.TaskState == "" && srv.Status != "BUILD"
}

func (actuator) Delete(ctx context.Context, s generic.Scope, res *servers.Server) error {
	sc, err := admin(ctx, s)
	if err != nil {
		return err
	}
	return servers.Delete(ctx, sc, res.ID).ExtractErr()
}

func (actuator) ID(res *servers.Server) string { return res.ID }

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
