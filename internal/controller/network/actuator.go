// Package network maps the Network kind to Neutron networks.
package network

import (
	"context"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/mtu"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsecurity"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=networks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=networks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=networks/finalizers,verbs=update

// Setup registers the Network controller.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.Network, osNetwork]{
		Name:       "Network",
		Controller: "network",
		Actuator:   actuator{neutron.Resource[*kupenstackv1.Network, osNetwork]{API: api, NameOf: name}},
		New:        func() *kupenstackv1.Network { return &kupenstackv1.Network{} },
		NewList:    func() client.ObjectList { return &kupenstackv1.NetworkList{} },
	})
}

// osNetwork is a Neutron network with the extension fields KupenStack manages.
type osNetwork struct {
	networks.Network
	mtu.NetworkMTUExt
	portsecurity.PortSecurityExt
	external.NetworkExternalExt
}

// api are Neutron's network calls, with the extension fields.
var api = neutron.API[osNetwork]{
	GetFn: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) (*osNetwork, error) {
		var n osNetwork
		return &n, networks.Get(ctx, sc, id).ExtractInto(&n)
	},
	ListFn: func(ctx context.Context, sc *gophercloud.ServiceClient, f neutron.Filter) ([]osNetwork, error) {
		pages, err := networks.List(sc, networks.ListOpts{ProjectID: f.ProjectID, Tags: f.Tags, Name: f.Name}).AllPages(ctx)
		if err != nil {
			return nil, err
		}
		var found []osNetwork
		return found, networks.ExtractNetworksInto(pages, &found)
	},
	DeleteFn: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
		return networks.Delete(ctx, sc, id).ExtractErr()
	},
	IDOf:      func(r *osNetwork) string { return r.ID },
	TagsOf:    func(r *osNetwork) []string { return r.Tags },
	CreatedAt: func(r *osNetwork) time.Time { return r.CreatedAt },
	NameOf:    func(r *osNetwork) string { return r.Name },
}

type actuator struct {
	neutron.Resource[*kupenstackv1.Network, osNetwork]
}

var (
	_ generic.Actuator[*kupenstackv1.Network, osNetwork] = actuator{}
	_ generic.Lister[*kupenstackv1.Network, osNetwork]   = actuator{}
)

func name(n *kupenstackv1.Network) string { return generic.Name(n, n.Spec.Name) }

func (actuator) Create(ctx context.Context, s generic.Scope, n *kupenstackv1.Network) (*osNetwork, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	var opts networks.CreateOptsBuilder = networks.CreateOpts{
		Name:         name(n),
		Description:  n.Spec.Description,
		AdminStateUp: n.Spec.AdminStateUp,
	}
	if n.Spec.MTU != nil {
		opts = mtu.CreateOptsExt{CreateOptsBuilder: opts, MTU: *n.Spec.MTU}
	}
	if n.Spec.PortSecurityEnabled != nil {
		opts = portsecurity.NetworkCreateOptsExt{CreateOptsBuilder: opts, PortSecurityEnabled: n.Spec.PortSecurityEnabled}
	}
	var created osNetwork
	// Tags (the owner tag included) follow in Update: Zed's Neutron takes none on create.
	return &created, networks.Create(ctx, sc, opts).ExtractInto(&created)
}

func (a actuator) Update(ctx context.Context, s generic.Scope, n *kupenstackv1.Network, cur *osNetwork) (*osNetwork, bool, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, false, err
	}
	tagged, err := neutron.SyncTags(ctx, sc, "networks", cur.ID, neutron.Tags(n, n.Spec.Tags), cur.Tags)
	if err != nil {
		return cur, false, err
	}
	upd := networks.UpdateOpts{}
	dirty := false
	if want := name(n); cur.Name != want {
		upd.Name, dirty = &want, true
	}
	if cur.Description != n.Spec.Description {
		upd.Description, dirty = &n.Spec.Description, true
	}
	if n.Spec.AdminStateUp != nil && cur.AdminStateUp != *n.Spec.AdminStateUp {
		upd.AdminStateUp, dirty = n.Spec.AdminStateUp, true
	}
	var opts networks.UpdateOptsBuilder = upd
	if n.Spec.MTU != nil && cur.MTU != *n.Spec.MTU {
		opts, dirty = mtu.UpdateOptsExt{UpdateOptsBuilder: opts, MTU: *n.Spec.MTU}, true
	}
	if p := n.Spec.PortSecurityEnabled; p != nil && cur.PortSecurityEnabled != *p {
		opts, dirty = portsecurity.NetworkUpdateOptsExt{UpdateOptsBuilder: opts, PortSecurityEnabled: p}, true
	}
	if dirty {
		var updated osNetwork
		if err := networks.Update(ctx, sc, cur.ID, opts).ExtractInto(&updated); err != nil {
			return cur, tagged, err
		}
		return &updated, true, nil
	}
	return a.Refresh(ctx, s, cur, tagged)
}

// ListAll lists every network the project can see, not only its own: imported shared and
// external networks are checked too.
func (a actuator) ListAll(ctx context.Context, s generic.Scope) ([]*osNetwork, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	return generic.Pointers(api.ListFn(ctx, sc, neutron.Filter{}))
}

// InSync compares the fields Update manages; an unmanaged network is never out of sync.
func (actuator) InSync(n *kupenstackv1.Network, res *osNetwork) bool {
	if n.Spec.ManagementPolicy == kupenstackv1.ManagementPolicyUnmanaged {
		return true
	}
	return res.Name == name(n) && res.Description == n.Spec.Description &&
		(n.Spec.AdminStateUp == nil || res.AdminStateUp == *n.Spec.AdminStateUp) &&
		(n.Spec.MTU == nil || res.MTU == *n.Spec.MTU) &&
		(n.Spec.PortSecurityEnabled == nil || res.PortSecurityEnabled == *n.Spec.PortSecurityEnabled) &&
		neutron.SameSet(neutron.Tags(n, n.Spec.Tags), res.Tags)
}

func (actuator) Observe(n *kupenstackv1.Network, res *osNetwork) (bool, string) {
	ps := res.PortSecurityEnabled
	n.Status.Resource = &kupenstackv1.NetworkResourceStatus{
		Name:                res.Name,
		Description:         res.Description,
		Status:              res.Status,
		AdminStateUp:        res.AdminStateUp,
		MTU:                 res.MTU,
		PortSecurityEnabled: &ps,
		External:            res.External,
		Shared:              res.Shared,
		Subnets:             res.Subnets,
		Tags:                res.Tags,
	}
	if res.Status != "ACTIVE" {
		return false, "network status is " + res.Status
	}
	return true, ""
}
