// Package router maps the Router kind to Neutron routers, their external gateway and interfaces.
package router

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=routers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=routers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=routers/finalizers,verbs=update

// Setup registers the Router controller.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	a := actuator{}
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.Router, osRouter]{
		Name:       "Router",
		Controller: "router",
		Actuator:   a,
		Can:        generic.Capabilities[*kupenstackv1.Router, osRouter]{List: a.ListAll, ListOwned: a.ListOwned, Claims: a.Claims},
		New:        func() *kupenstackv1.Router { return &kupenstackv1.Router{} },
		NewList:    func() client.ObjectList { return &kupenstackv1.RouterList{} },
		Dependencies: []generic.Dependency[*kupenstackv1.Router]{
			generic.Refers[kupenstackv1.Network]("spec.externalGateway.networkRef", func(r *kupenstackv1.Router) []string {
				if r.Spec.ExternalGateway == nil {
					return nil
				}
				return generic.Ref(r.Spec.ExternalGateway.NetworkRef)
			}),
			generic.Refers[kupenstackv1.ProviderNetwork]("spec.externalGateway.providerNetworkRef", func(r *kupenstackv1.Router) []string {
				if r.Spec.ExternalGateway == nil {
					return nil
				}
				return generic.Ref(r.Spec.ExternalGateway.ProviderNetworkRef)
			}),
			generic.Refers[kupenstackv1.Subnet]("spec.interfaces[].subnetRef", func(r *kupenstackv1.Router) []string {
				var names []string
				for _, i := range r.Spec.Interfaces {
					names = append(names, i.SubnetRef)
				}
				return names
			}),
		},
	})
}

// osRouter is a router with its interfaces (which Neutron reports as ports).
type osRouter struct {
	routers.Router
	Interfaces []kupenstackv1.RouterInterfaceStatus
}

type actuator struct{}

var (
	_ generic.Actuator[*kupenstackv1.Router, osRouter] = actuator{}
)

func name(r *kupenstackv1.Router) string { return generic.Name(r, r.Spec.Name) }

// interfacePorts lists the interface ports of the routers whose IDs are given.
func interfacePorts(ctx context.Context, sc *gophercloud.ServiceClient, routerIDs []string) ([]ports.Port, error) {
	pages, err := ports.List(sc, interfaceQuery(routerIDs)).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return ports.ExtractPorts(pages)
}

// interfaceQuery asks for the interface ports of several routers in one list: Neutron ORs a
// filter given more than once (gophercloud's ListOpts takes one device ID).
type interfaceQuery []string

func (q interfaceQuery) ToPortListQuery() (string, error) {
	v := url.Values{"device_owner": {"network:router_interface"}, "device_id": q}
	return "?" + v.Encode(), nil
}

// withInterfaces adds the interfaces found among ifaces (interface ports) to r.
func withInterfaces(r *routers.Router, ifaces []ports.Port) *osRouter {
	out := &osRouter{Router: *r}
	for _, p := range ifaces {
		if p.DeviceID != r.ID {
			continue
		}
		for _, ip := range p.FixedIPs {
			out.Interfaces = append(out.Interfaces, kupenstackv1.RouterInterfaceStatus{SubnetID: ip.SubnetID, PortID: p.ID, IPAddress: ip.IPAddress})
		}
	}
	slices.SortFunc(out.Interfaces, func(a, b kupenstackv1.RouterInterfaceStatus) int { return cmp.Compare(a.SubnetID, b.SubnetID) })
	return out
}

// read completes routers with their interfaces, listing the interface ports of up to
// interfaceBatch routers per call.
func read(ctx context.Context, sc *gophercloud.ServiceClient, rs []routers.Router) ([]*osRouter, error) {
	out := make([]*osRouter, 0, len(rs))
	for batch := range slices.Chunk(rs, interfaceBatch) {
		ids := make([]string, len(batch))
		for i := range batch {
			ids[i] = batch[i].ID
		}
		ifaces, err := interfacePorts(ctx, sc, ids)
		if err != nil {
			return nil, err
		}
		for i := range batch {
			out = append(out, withInterfaces(&batch[i], ifaces))
		}
	}
	return out, nil
}

// interfaceBatch keeps a list call's URL short (a router ID is 36 characters).
const interfaceBatch = 40

func (actuator) Get(ctx context.Context, s generic.Scope, id string) (*osRouter, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	r, err := routers.Get(ctx, sc, id).Extract()
	if err != nil {
		return nil, err
	}
	found, err := read(ctx, sc, []routers.Router{*r})
	if err != nil {
		return nil, err
	}
	return found[0], nil
}

func (actuator) list(ctx context.Context, s generic.Scope, opts routers.ListOpts) ([]routers.Router, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	opts.ProjectID = s.ProjectID
	pages, err := routers.List(sc, opts).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return routers.ExtractRouters(pages)
}

// found completes a router found by a list call with its interfaces.
func (a actuator) found(ctx context.Context, s generic.Scope, r *routers.Router, err error) (*osRouter, error) {
	if err != nil || r == nil {
		return nil, err
	}
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	found, err := read(ctx, sc, []routers.Router{*r})
	if err != nil {
		return nil, err
	}
	return found[0], nil
}

func (a actuator) FindOwned(ctx context.Context, s generic.Scope, r *kupenstackv1.Router) (*osRouter, error) {
	res, err := neutron.FindOwned(r, neutron.ClaimableName(name(r)), a.byTagOrName(ctx, s), tagsOf, createdAt)
	return a.found(ctx, s, res, err)
}

// byTagOrName is the project's list call that neutron.FindOwned and neutron.Owned filter.
func (a actuator) byTagOrName(ctx context.Context, s generic.Scope) func(tag, name string) ([]routers.Router, error) {
	return func(tag, name string) ([]routers.Router, error) {
		return a.list(ctx, s, routers.ListOpts{Tags: tag, Name: name})
	}
}

func tagsOf(r *routers.Router) []string     { return r.Tags }
func createdAt(r *routers.Router) time.Time { return r.CreatedAt }

// ListOwned lists every router made for r (see neutron.Owned), with its interfaces, which
// deleting it detaches.
func (a actuator) ListOwned(ctx context.Context, s generic.Scope, r *kupenstackv1.Router) ([]*osRouter, error) {
	found, err := neutron.Owned(r, neutron.ClaimableName(name(r)), a.byTagOrName(ctx, s), tagsOf, createdAt)
	if err != nil {
		return nil, err
	}
	out := make([]*osRouter, 0, len(found))
	for i := range found {
		res, err := a.found(ctx, s, &found[i], nil)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// Claims: see neutron.Claimed.
func (actuator) Claims(r *kupenstackv1.Router, res *osRouter, now time.Time) bool {
	return neutron.Claimed(r, neutron.ClaimableName(name(r)), res.Name, res.Tags, res.CreatedAt, now)
}

func (a actuator) FindImport(ctx context.Context, s generic.Scope, r *kupenstackv1.Router) (*osRouter, error) {
	res, err := generic.FindImport(r.Spec.Import,
		func(id string) (*routers.Router, error) {
			sc, err := neutron.Client(ctx, s)
			if err != nil {
				return nil, err
			}
			return routers.Get(ctx, sc, id).Extract()
		},
		func(name string) ([]routers.Router, error) { return a.list(ctx, s, routers.ListOpts{Name: name}) })
	return a.found(ctx, s, res, err)
}

func gatewayInfo(s generic.Scope, r *kupenstackv1.Router) *routers.GatewayInfo {
	if r.Spec.ExternalGateway == nil {
		return nil
	}
	if gw := r.Spec.ExternalGateway; gw.ProviderNetworkRef != "" {
		return &routers.GatewayInfo{NetworkID: s.DependencyID("ProviderNetwork", gw.ProviderNetworkRef)}
	}
	return &routers.GatewayInfo{NetworkID: s.DependencyID("Network", r.Spec.ExternalGateway.NetworkRef)}
}

func (actuator) Create(ctx context.Context, s generic.Scope, r *kupenstackv1.Router) (*osRouter, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	created, err := routers.Create(ctx, sc, routers.CreateOpts{
		Name: name(r), Description: r.Spec.Description, AdminStateUp: r.Spec.AdminStateUp, GatewayInfo: gatewayInfo(s, r),
	}).Extract()
	if err != nil {
		return nil, err
	}
	return &osRouter{Router: *created}, nil // interfaces follow in Update
}

// The spec fields Diff compares, as a user writes them.
const (
	fieldName            = "spec.name"
	fieldDescription     = "spec.description"
	fieldAdminStateUp    = "spec.adminStateUp"
	fieldExternalGateway = "spec.externalGateway"
	fieldInterfaces      = "spec.interfaces"
	fieldTags            = "spec.tags"
)

// gatewayNetworkID is the ID of the external network the spec wants the gateway on ("": none).
func gatewayNetworkID(s generic.Scope, r *kupenstackv1.Router) string {
	if gw := gatewayInfo(s, r); gw != nil {
		return gw.NetworkID
	}
	return ""
}

// interfaceSubnets are the IDs of the subnets the spec attaches the router to.
func interfaceSubnets(s generic.Scope, r *kupenstackv1.Router) []string {
	out := []string{}
	for _, i := range r.Spec.Interfaces {
		out = append(out, s.DependencyID("Subnet", i.SubnetRef))
	}
	return out
}

func attachedSubnets(res *osRouter) []string {
	out := []string{}
	for _, i := range res.Interfaces {
		out = append(out, i.SubnetID)
	}
	return out
}

// Diff compares every field of the spec. The spec owns the gateway (none when unset) and the
// whole set of interfaces: an interface removed out of band is added back, and one added out of
// band is detached, as one dropped from the spec is. The gateway's SNAT and addresses and the
// router's static routes are Neutron's choice or the admin's (the spec has no field for them),
// not drift.
func (actuator) Diff(s generic.Scope, r *kupenstackv1.Router, res *osRouter) generic.Changes {
	var d generic.Diff
	generic.Value(&d, fieldName, name(r), res.Name)
	generic.Value(&d, fieldDescription, r.Spec.Description, res.Description)
	generic.Optional(&d, fieldAdminStateUp, r.Spec.AdminStateUp, res.AdminStateUp)
	generic.Value(&d, fieldExternalGateway, gatewayNetworkID(s, r), res.GatewayInfo.NetworkID)
	generic.Set(&d, fieldInterfaces, interfaceSubnets(s, r), attachedSubnets(res))
	generic.Set(&d, fieldTags, neutron.Tags(r, r.Spec.Tags), res.Tags)
	return d.Changes()
}

// Update makes the changes Diff found: tags through the tags API, the router's own fields in one
// update, then interfaces detached and attached one by one.
func (a actuator) Update(ctx context.Context, s generic.Scope, r *kupenstackv1.Router, cur *osRouter, changes generic.Changes) (*osRouter, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	if changes.Has(fieldTags) {
		if _, err := neutron.SyncTags(ctx, sc, "routers", cur.ID, neutron.Tags(r, r.Spec.Tags), cur.Tags); err != nil {
			return cur, err
		}
	}
	upd, dirty := routers.UpdateOpts{}, false
	if changes.Has(fieldName) {
		upd.Name, dirty = name(r), true
	}
	if changes.Has(fieldDescription) {
		upd.Description, dirty = &r.Spec.Description, true
	}
	if changes.Has(fieldAdminStateUp) {
		upd.AdminStateUp, dirty = r.Spec.AdminStateUp, true
	}
	if changes.Has(fieldExternalGateway) {
		want := gatewayInfo(s, r)
		if want == nil {
			want = &routers.GatewayInfo{} // an empty gateway removes it
		}
		upd.GatewayInfo, dirty = want, true
	}
	if dirty {
		if _, err := routers.Update(ctx, sc, cur.ID, upd).Extract(); err != nil {
			return cur, err
		}
	}
	if changes.Has(fieldInterfaces) {
		if err := syncInterfaces(ctx, sc, cur, interfaceSubnets(s, r)); err != nil {
			return cur, err
		}
	}
	return a.Get(ctx, s, cur.ID)
}

// syncInterfaces detaches the router from the subnets not in want and attaches it to the missing ones.
func syncInterfaces(ctx context.Context, sc *gophercloud.ServiceClient, cur *osRouter, want []string) error {
	have := map[string]bool{}
	for _, i := range cur.Interfaces {
		have[i.SubnetID] = true
		if !slices.Contains(want, i.SubnetID) {
			if _, err := routers.RemoveInterface(ctx, sc, cur.ID, routers.RemoveInterfaceOpts{PortID: i.PortID}).Extract(); err != nil && !openstack.IsNotFound(err) {
				return fmt.Errorf("detaching subnet %s: %w", i.SubnetID, err)
			}
		}
	}
	for _, id := range want {
		if !have[id] {
			if _, err := routers.AddInterface(ctx, sc, cur.ID, routers.AddInterfaceOpts{SubnetID: id}).Extract(); err != nil {
				return fmt.Errorf("attaching subnet %s: %w", id, err)
			}
			have[id] = true
		}
	}
	return nil
}

// Delete detaches every interface first: Neutron refuses to delete a router that has any.
func (actuator) Delete(ctx context.Context, s generic.Scope, res *osRouter) error {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return err
	}
	for _, i := range res.Interfaces {
		if _, err := routers.RemoveInterface(ctx, sc, res.ID, routers.RemoveInterfaceOpts{PortID: i.PortID}).Extract(); err != nil && !openstack.IsNotFound(err) {
			return fmt.Errorf("detaching subnet %s: %w", i.SubnetID, err)
		}
	}
	return routers.Delete(ctx, sc, res.ID).ExtractErr()
}

func (actuator) ID(res *osRouter) string { return res.ID }

// ListAll lists the project's routers with their interfaces: one list of routers, and one of
// interface ports per interfaceBatch routers, so that the drift check sees interfaces too.
func (a actuator) ListAll(ctx context.Context, s generic.Scope) ([]*osRouter, error) {
	found, err := a.list(ctx, s, routers.ListOpts{})
	if err != nil {
		return nil, err
	}
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	return read(ctx, sc, found)
}

func (actuator) Observe(r *kupenstackv1.Router, res *osRouter) (bool, string) {
	st := &kupenstackv1.RouterResourceStatus{
		Name: res.Name, Description: res.Description, Status: res.Status, AdminStateUp: res.AdminStateUp,
		ExternalGatewayNetworkID: res.GatewayInfo.NetworkID, Interfaces: res.Interfaces, Tags: res.Tags,
	}
	for _, ip := range res.GatewayInfo.ExternalFixedIPs {
		st.ExternalIPs = append(st.ExternalIPs, ip.IPAddress)
	}
	r.Status.Resource = st
	if res.Status != "ACTIVE" {
		return false, "router status is " + res.Status
	}
	return true, ""
}
