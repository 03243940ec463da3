// Package network maps the Network kind to Neutron networks.
package network

import (
	"context"
	"slices"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/mtu"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsecurity"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// osNetwork is a Neutron network with the extension fields KupenStack manages.
type osNetwork struct {
	networks.Network
	mtu.NetworkMTUExt
	portsecurity.PortSecurityExt
	external.NetworkExternalExt
}

type actuator struct{}

var _ generic.Actuator[*kupenstackv1.Network, osNetwork] = actuator{}

func client(ctx context.Context, s generic.Scope) (*gophercloud.ServiceClient, error) {
	return s.Clients.Network(ctx, s.ProjectID)
}

// name is the network's name in OpenStack.
func name(n *kupenstackv1.Network) string {
	if n.Spec.Name != "" {
		return n.Spec.Name
	}
	return n.Name
}

// tags are the tags the network should carry: the user's plus the owner tag.
func tags(n *kupenstackv1.Network) []string {
	out := []string{generic.OwnerTag(n)}
	for _, t := range n.Spec.Tags {
		out = append(out, string(t))
	}
	slices.Sort(out)
	return out
}

func (actuator) Get(ctx context.Context, s generic.Scope, id string) (*osNetwork, error) {
	sc, err := client(ctx, s)
	if err != nil {
		return nil, err
	}
	var n osNetwork
	return &n, networks.Get(ctx, sc, id).ExtractInto(&n)
}

func (a actuator) list(ctx context.Context, s generic.Scope, opts networks.ListOpts) ([]osNetwork, error) {
	sc, err := client(ctx, s)
	if err != nil {
		return nil, err
	}
	opts.ProjectID = s.ProjectID
	pages, err := networks.List(sc, opts).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	var found []osNetwork
	return found, networks.ExtractNetworksInto(pages, &found)
}

func (a actuator) FindOwned(ctx context.Context, s generic.Scope, n *kupenstackv1.Network) (*osNetwork, error) {
	found, err := a.list(ctx, s, networks.ListOpts{Tags: generic.OwnerTag(n)})
	if err != nil || len(found) > 0 {
		return first(found), err
	}
	if found, err = a.list(ctx, s, networks.ListOpts{Name: name(n)}); err != nil {
		return nil, err
	}
	for i := range found {
		if generic.MaybeOurs(n, found[i].Tags, found[i].CreatedAt) {
			return &found[i], nil
		}
	}
	return nil, nil
}

func first(found []osNetwork) *osNetwork {
	if len(found) == 0 {
		return nil
	}
	return &found[0]
}

func (a actuator) FindImport(ctx context.Context, s generic.Scope, n *kupenstackv1.Network) (*osNetwork, error) {
	imp := n.Spec.Import
	if imp.ID != "" {
		found, err := a.Get(ctx, s, imp.ID)
		if generic.IsNotFound(err) {
			return nil, nil
		}
		return found, err
	}
	found, err := a.list(ctx, s, networks.ListOpts{Name: imp.Name})
	if err != nil || len(found) != 1 {
		return nil, generic.ImportMatches(len(found), err)
	}
	return &found[0], nil
}

func (a actuator) Create(ctx context.Context, s generic.Scope, n *kupenstackv1.Network) (*osNetwork, error) {
	sc, err := client(ctx, s)
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
	if err := networks.Create(ctx, sc, opts).ExtractInto(&created); err != nil {
		return nil, err
	}
	// Zed's Neutron takes no tags on create; tags (the owner tag included) follow in Update.
	// Until then FindOwned recognises the network by name and creation time.
	return &created, nil
}

func (a actuator) Update(ctx context.Context, s generic.Scope, n *kupenstackv1.Network, cur *osNetwork) (*osNetwork, bool, error) {
	sc, err := client(ctx, s)
	if err != nil {
		return nil, false, err
	}
	changed := false
	if want := tags(n); !sameSet(want, cur.Tags) {
		if _, err := attributestags.ReplaceAll(ctx, sc, "networks", cur.ID, attributestags.ReplaceAllOpts{Tags: want}).Extract(); err != nil {
			return cur, false, err
		}
		changed = true
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
	if !dirty {
		if changed {
			res, err := a.Get(ctx, s, cur.ID)
			return res, true, err
		}
		return cur, false, nil
	}
	var updated osNetwork
	if err := networks.Update(ctx, sc, cur.ID, opts).ExtractInto(&updated); err != nil {
		return cur, changed, err
	}
	return &updated, true, nil
}

func (actuator) Delete(ctx context.Context, s generic.Scope, res *osNetwork) error {
	sc, err := client(ctx, s)
	if err != nil {
		return err
	}
	return networks.Delete(ctx, sc, res.ID).ExtractErr()
}

func (actuator) ID(res *osNetwork) string { return res.ID }

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

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
