// Package floatingip maps the FloatingIP kind to Neutron floating IPs and their association.
package floatingip

import (
	"context"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=floatingips,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=floatingips/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=floatingips/finalizers,verbs=update

// Setup registers the FloatingIP controller.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	a := actuator{neutron.Resource[*kupenstackv1.FloatingIP, floatingips.FloatingIP]{API: api}}
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.FloatingIP, floatingips.FloatingIP]{
		Name:       "FloatingIP",
		Controller: "floatingip",
		Actuator:   a,
		Can:        generic.Capabilities[*kupenstackv1.FloatingIP, floatingips.FloatingIP]{List: a.ListAll, ListOwned: a.ListOwned, Claims: a.Claims},
		New:        func() *kupenstackv1.FloatingIP { return &kupenstackv1.FloatingIP{} },
		NewList:    newList,
		// An association waits for a router between the port's subnet and the external network
		// (Update): a Router object's change wakes the addresses not associated yet, instead of
		// the wait's next poll.
		Watches: []generic.Watch{generic.WakeOn(mgr.GetClient(), newList, awaitsRouter)},
		Dependencies: []generic.Dependency[*kupenstackv1.FloatingIP]{
			generic.Refers[kupenstackv1.Network]("spec.floatingNetworkRef", func(f *kupenstackv1.FloatingIP) []string {
				return generic.Ref(f.Spec.FloatingNetworkRef)
			}),
			generic.Refers[kupenstackv1.ProviderNetwork]("spec.providerNetworkRef", func(f *kupenstackv1.FloatingIP) []string { return generic.Ref(f.Spec.ProviderNetworkRef) }),
			generic.Refers[kupenstackv1.Port]("spec.portRef", func(f *kupenstackv1.FloatingIP) []string {
				return generic.Ref(f.Spec.PortRef)
			}),
		},
	})
}

// awaitsRouter says whether FloatingIP obj may be waiting for the changed Router: it names a
// port it is not associated with yet, and the router has an interface (see Update).
func awaitsRouter(router *kupenstackv1.Router, obj client.Object) bool {
	f := obj.(*kupenstackv1.FloatingIP)
	return router.Status.Resource != nil && len(router.Status.Resource.Interfaces) > 0 &&
		f.Spec.PortRef != "" && (f.Status.Resource == nil || f.Status.Resource.PortID == "")
}

func newList() client.ObjectList { return &kupenstackv1.FloatingIPList{} }

// floatingNetworkID is the ID of the network the address comes from: the ProviderNetwork's or the
// Network's it names ("" while references are not resolved, as when deleting).
func floatingNetworkID(s generic.Scope, f *kupenstackv1.FloatingIP) string {
	if f.Spec.ProviderNetworkRef != "" {
		return s.DependencyID("ProviderNetwork", f.Spec.ProviderNetworkRef)
	}
	return s.DependencyID("Network", f.Spec.FloatingNetworkRef)
}

// api are Neutron's floating IP calls.
var api = neutron.API[floatingips.FloatingIP]{
	GetFn: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) (*floatingips.FloatingIP, error) {
		return floatingips.Get(ctx, sc, id).Extract()
	},
	ListFn: func(ctx context.Context, sc *gophercloud.ServiceClient, f neutron.Filter) ([]floatingips.FloatingIP, error) {
		return list(ctx, sc, floatingips.ListOpts{ProjectID: f.ProjectID, Tags: f.Tags})
	},
	DeleteFn: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
		return floatingips.Delete(ctx, sc, id).ExtractErr()
	},
	IDOf:      func(r *floatingips.FloatingIP) string { return r.ID },
	TagsOf:    func(r *floatingips.FloatingIP) []string { return r.Tags },
	CreatedAt: func(r *floatingips.FloatingIP) time.Time { return r.CreatedAt },
}

func list(ctx context.Context, sc *gophercloud.ServiceClient, opts floatingips.ListOpts) ([]floatingips.FloatingIP, error) {
	pages, err := floatingips.List(sc, opts).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return floatingips.ExtractFloatingIPs(pages)
}

// actuator has no name to search by: it replaces FindOwned and FindImport.
type actuator struct {
	neutron.Resource[*kupenstackv1.FloatingIP, floatingips.FloatingIP]
}

var (
	_ generic.Actuator[*kupenstackv1.FloatingIP, floatingips.FloatingIP] = actuator{}
)

func (actuator) list(ctx context.Context, s generic.Scope, opts floatingips.ListOpts) ([]floatingips.FloatingIP, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	opts.ProjectID = s.ProjectID
	return list(ctx, sc, opts)
}

// FindOwned: floating IPs have no name, so the untagged fallback matches on network and
// requested address instead (see generic.MaybeOurs).
func (a actuator) FindOwned(ctx context.Context, s generic.Scope, f *kupenstackv1.FloatingIP) (*floatingips.FloatingIP, error) {
	found, err := a.list(ctx, s, floatingips.ListOpts{Tags: generic.OwnerTag(f)})
	if err != nil || len(found) > 0 {
		return first(found), err
	}
	// Deleting, the engine resolves no references: then any floating network of the project.
	netID := floatingNetworkID(s, f)
	if found, err = a.list(ctx, s, floatingips.ListOpts{FloatingNetworkID: netID, FloatingIP: f.Spec.FloatingIPAddress}); err != nil {
		return nil, err
	}
	for i := range found {
		if found[i].Description == f.Spec.Description && generic.MaybeOurs(f, found[i].Tags, found[i].CreatedAt) {
			return &found[i], nil
		}
	}
	return nil, nil
}

func first(found []floatingips.FloatingIP) *floatingips.FloatingIP {
	if len(found) == 0 {
		return nil
	}
	return &found[0]
}

func (a actuator) FindImport(ctx context.Context, s generic.Scope, f *kupenstackv1.FloatingIP) (*floatingips.FloatingIP, error) {
	return generic.FindImport(f.Spec.Import,
		func(id string) (*floatingips.FloatingIP, error) { return a.Get(ctx, s, id) },
		// A floating IP's "name" is its address.
		func(name string) ([]floatingips.FloatingIP, error) {
			return a.list(ctx, s, floatingips.ListOpts{FloatingIP: name})
		})
}

func (actuator) Create(ctx context.Context, s generic.Scope, f *kupenstackv1.FloatingIP) (*floatingips.FloatingIP, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	// The association follows in Update, so that a port that cannot be reached yet (no router)
	// never costs the allocated address.
	return floatingips.Create(ctx, sc, floatingips.CreateOpts{
		FloatingNetworkID: floatingNetworkID(s, f),
		FloatingIP:        f.Spec.FloatingIPAddress,
		Description:       f.Spec.Description,
	}).Extract()
}

// The spec fields Diff compares, as a user writes them.
const (
	fieldDescription    = "spec.description"
	fieldPortRef        = "spec.portRef"
	fieldFixedIPAddress = "spec.fixedIPAddress"
	fieldTags           = "spec.tags"
)

// Diff compares what Neutron lets change after creation: the description, the tags and the
// association. The spec owns the association: without portRef the address must be unassociated,
// so one associated out of band is drift too. The address and its network cannot change.
func (actuator) Diff(s generic.Scope, f *kupenstackv1.FloatingIP, res *floatingips.FloatingIP) generic.Changes {
	var d generic.Diff
	generic.Value(&d, fieldDescription, f.Spec.Description, res.Description)
	wantPort := s.DependencyID("Port", f.Spec.PortRef)
	generic.Value(&d, fieldPortRef, wantPort, res.PortID)
	// Unset: Neutron picks one of the port's addresses, and any is the spec's.
	if f.Spec.FixedIPAddress != "" && wantPort != "" && wantPort == res.PortID {
		generic.Value(&d, fieldFixedIPAddress, f.Spec.FixedIPAddress, res.FixedIP)
	}
	generic.Set(&d, fieldTags, neutron.Tags(f, f.Spec.Tags), res.Tags)
	return d.Changes()
}

// Update makes the changes Diff found: tags through the tags API, the rest in one update.
func (a actuator) Update(ctx context.Context, s generic.Scope, f *kupenstackv1.FloatingIP, cur *floatingips.FloatingIP, changes generic.Changes) (*floatingips.FloatingIP, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	tags := cur.Tags
	if changes.Has(fieldTags) {
		if tags, err = neutron.SyncTags(ctx, sc, "floatingips", cur.ID, neutron.Tags(f, f.Spec.Tags), cur.Tags); err != nil {
			return cur, err
		}
	}
	upd, dirty := floatingips.UpdateOpts{}, false
	if changes.Has(fieldDescription) {
		upd.Description, dirty = &f.Spec.Description, true
	}
	if changes.Has(fieldPortRef) || changes.Has(fieldFixedIPAddress) {
		// An empty port ID disassociates.
		wantPort := s.DependencyID("Port", f.Spec.PortRef)
		upd.PortID, upd.FixedIP, dirty = &wantPort, f.Spec.FixedIPAddress, true
	} else if dirty && cur.PortID != "" {
		// Neutron re-validates the association on every update: without its address, one to a
		// port with several is refused ("multiple fixed IPv4 addresses").
		upd.PortID, upd.FixedIP = &cur.PortID, cur.FixedIP
	}
	if !dirty {
		// Only the tags changed (as after every create): the tags call's answer completes cur.
		tagged := *cur
		tagged.Tags = tags
		return &tagged, nil
	}
	updated, err := floatingips.Update(ctx, sc, cur.ID, upd).Extract()
	if openstack.IsNotFound(err) && strings.Contains(err.Error(), "ExternalGatewayForFloatingIPNotFound") {
		// Resolves itself once a router connects the port's subnet to the external network.
		return cur, generic.WaitFor("waiting for a router between the port's subnet and the floating IP's network", 5*time.Second)
	}
	if err != nil {
		return cur, err
	}
	return updated, nil
}

func (actuator) Observe(f *kupenstackv1.FloatingIP, res *floatingips.FloatingIP) (bool, string) {
	f.Status.Resource = &kupenstackv1.FloatingIPResourceStatus{
		FloatingIPAddress: res.FloatingIP, FloatingNetworkID: res.FloatingNetworkID, PortID: res.PortID,
		FixedIPAddress: res.FixedIP, RouterID: res.RouterID, Status: res.Status, Description: res.Description, Tags: res.Tags,
	}
	return true, ""
}
