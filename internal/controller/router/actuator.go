// Package router maps the Router kind to Neutron routers, their external gateway and interfaces.
package router

import (
	"cmp"
	"context"
	"fmt"
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
		Actuator:   generic.Legacy[*kupenstackv1.Router, osRouter](a),
		Can:        generic.Capabilities[*kupenstackv1.Router, osRouter]{List: a.ListAll, ListOwned: a.ListOwned, Claims: a.Claims},
		New:        func() *kupenstackv1.Router { return &kupenstackv1.Router{} },
		NewList:    func() client.ObjectList { return &kupenstackv1.RouterList{} },
		Dependencies: []generic.Dependency[*kupenstackv1.Router]{
			{Kind: "Network", New: func() generic.Object { return &kupenstackv1.Network{} }, Names: func(r *kupenstackv1.Router) []string {
				if r.Spec.ExternalGateway == nil {
					return nil
				}
				return generic.Ref(r.Spec.ExternalGateway.NetworkRef)
			}},
			{Kind: "ProviderNetwork", ClusterScoped: true, New: func() generic.Object { return &kupenstackv1.ProviderNetwork{} },
				Names: func(r *kupenstackv1.Router) []string {
					if r.Spec.ExternalGateway == nil {
						return nil
					}
					return generic.Ref(r.Spec.ExternalGateway.ProviderNetworkRef)
				}},
			{Kind: "Subnet", New: func() generic.Object { return &kupenstackv1.Subnet{} }, Names: func(r *kupenstackv1.Router) []string {
				var names []string
				for _, i := range r.Spec.Interfaces {
					names = append(names, i.SubnetRef)
				}
				return names
			}},
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
	_ generic.LegacyActuator[*kupenstackv1.Router, osRouter] = actuator{}
)

func name(r *kupenstackv1.Router) string { return generic.Name(r, r.Spec.Name) }

// withInterfaces adds the router's interface ports.
func withInterfaces(ctx context.Context, sc *gophercloud.ServiceClient, r *routers.Router) (*osRouter, error) {
	pages, err := ports.List(sc, ports.ListOpts{DeviceID: r.ID, DeviceOwner: "network:router_interface"}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	found, err := ports.ExtractPorts(pages)
	if err != nil {
		return nil, err
	}
	out := &osRouter{Router: *r}
	for _, p := range found {
		for _, ip := range p.FixedIPs {
			out.Interfaces = append(out.Interfaces, kupenstackv1.RouterInterfaceStatus{SubnetID: ip.SubnetID, PortID: p.ID, IPAddress: ip.IPAddress})
		}
	}
	slices.SortFunc(out.Interfaces, func(a, b kupenstackv1.RouterInterfaceStatus) int { return cmp.Compare(a.SubnetID, b.SubnetID) })
	return out, nil
}

func (actuator) Get(ctx context.Context, s generic.Scope, id string) (*osRouter, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	r, err := routers.Get(ctx, sc, id).Extract()
	if err != nil {
		return nil, err
	}
	return withInterfaces(ctx, sc, r)
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
	return withInterfaces(ctx, sc, r)
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

func (a actuator) Update(ctx context.Context, s generic.Scope, r *kupenstackv1.Router, cur *osRouter) (*osRouter, bool, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, false, err
	}
	changed, err := neutron.SyncTags(ctx, sc, "routers", cur.ID, neutron.Tags(r, r.Spec.Tags), cur.Tags)
	if err != nil {
		return cur, false, err
	}
	upd, dirty := routers.UpdateOpts{}, false
	if want := name(r); cur.Name != want {
		upd.Name, dirty = want, true
	}
	if cur.Description != r.Spec.Description {
		upd.Description, dirty = &r.Spec.Description, true
	}
	if r.Spec.AdminStateUp != nil && cur.AdminStateUp != *r.Spec.AdminStateUp {
		upd.AdminStateUp, dirty = r.Spec.AdminStateUp, true
	}
	if want := gatewayInfo(s, r); (want == nil) != (cur.GatewayInfo.NetworkID == "") || want != nil && want.NetworkID != cur.GatewayInfo.NetworkID {
		if want == nil {
			want = &routers.GatewayInfo{} // an empty gateway removes it
		}
		upd.GatewayInfo, dirty = want, true
	}
	if dirty {
		if _, err := routers.Update(ctx, sc, cur.ID, upd).Extract(); err != nil {
			return cur, changed, err
		}
		changed = true
	}
	want := map[string]bool{}
	for _, i := range r.Spec.Interfaces {
		want[s.DependencyID("Subnet", i.SubnetRef)] = true
	}
	have := map[string]bool{}
	for _, i := range cur.Interfaces {
		have[i.SubnetID] = true
		if !want[i.SubnetID] {
			if _, err := routers.RemoveInterface(ctx, sc, cur.ID, routers.RemoveInterfaceOpts{PortID: i.PortID}).Extract(); err != nil && !openstack.IsNotFound(err) {
				return cur, changed, fmt.Errorf("detaching subnet %s: %w", i.SubnetID, err)
			}
			changed = true
		}
	}
	for id := range want {
		if !have[id] {
			if _, err := routers.AddInterface(ctx, sc, cur.ID, routers.AddInterfaceOpts{SubnetID: id}).Extract(); err != nil {
				return cur, changed, fmt.Errorf("attaching subnet %s: %w", id, err)
			}
			changed = true
		}
	}
	if !changed {
		return cur, false, nil
	}
	res, err := a.Get(ctx, s, cur.ID)
	return res, true, err
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

// ListAll lists the project's routers; interfaces are not listed (that would cost a call per
// router), so InSync compares only the router's own fields.
func (a actuator) ListAll(ctx context.Context, s generic.Scope) ([]*osRouter, error) {
	found, err := a.list(ctx, s, routers.ListOpts{})
	out := make([]*osRouter, len(found))
	for i := range found {
		out[i] = &osRouter{Router: found[i]}
	}
	return out, err
}

func (actuator) InSync(r *kupenstackv1.Router, res *osRouter) bool {
	if r.Spec.ManagementPolicy == kupenstackv1.ManagementPolicyUnmanaged {
		return true
	}
	return res.Name == name(r) && res.Description == r.Spec.Description &&
		(r.Spec.AdminStateUp == nil || *r.Spec.AdminStateUp == res.AdminStateUp) &&
		(r.Spec.ExternalGateway == nil) == (res.GatewayInfo.NetworkID == "") &&
		neutron.SameSet(neutron.Tags(r, r.Spec.Tags), res.Tags)
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
