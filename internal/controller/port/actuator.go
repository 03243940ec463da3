// Package port maps the Port kind to Neutron ports.
package port

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsecurity"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=ports,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=ports/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=ports/finalizers,verbs=update

// Setup registers the Port controller.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	a := actuator{neutron.Resource[*kupenstackv1.Port, osPort]{API: api, NameOf: name}}
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.Port, osPort]{
		Name:       "Port",
		Controller: "port",
		Actuator:   generic.Legacy[*kupenstackv1.Port, osPort](a),
		Can:        generic.Capabilities[*kupenstackv1.Port, osPort]{List: a.ListAll, ListOwned: a.ListOwned, Claims: a.Claims},
		New:        func() *kupenstackv1.Port { return &kupenstackv1.Port{} },
		NewList:    func() client.ObjectList { return &kupenstackv1.PortList{} },
		Dependencies: []generic.Dependency[*kupenstackv1.Port]{
			{Kind: "Network", New: func() generic.Object { return &kupenstackv1.Network{} }, Names: func(p *kupenstackv1.Port) []string {
				if p.Spec.NetworkRef == "" {
					return nil
				}
				return []string{p.Spec.NetworkRef}
			}},
			{Kind: "Subnet", New: func() generic.Object { return &kupenstackv1.Subnet{} }, Names: func(p *kupenstackv1.Port) []string {
				var names []string
				for _, ip := range p.Spec.FixedIPs {
					names = append(names, ip.SubnetRef)
				}
				return names
			}},
			{Kind: "SecurityGroup", New: func() generic.Object { return &kupenstackv1.SecurityGroup{} }, Names: func(p *kupenstackv1.Port) []string {
				return p.Spec.SecurityGroupRefs
			}},
		},
	})
}

type osPort struct {
	ports.Port
	portsecurity.PortSecurityExt
}

// api are Neutron's port calls.
var api = neutron.API[osPort]{
	GetFn: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) (*osPort, error) {
		var p osPort
		return &p, ports.Get(ctx, sc, id).ExtractInto(&p)
	},
	ListFn: func(ctx context.Context, sc *gophercloud.ServiceClient, f neutron.Filter) ([]osPort, error) {
		pages, err := ports.List(sc, ports.ListOpts{ProjectID: f.ProjectID, Tags: f.Tags, Name: f.Name}).AllPages(ctx)
		if err != nil {
			return nil, err
		}
		var found []osPort
		return found, ports.ExtractPortsInto(pages, &found)
	},
	DeleteFn: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
		return ports.Delete(ctx, sc, id).ExtractErr()
	},
	IDOf:      func(r *osPort) string { return r.ID },
	TagsOf:    func(r *osPort) []string { return r.Tags },
	CreatedAt: func(r *osPort) time.Time { return r.CreatedAt },
	NameOf:    func(r *osPort) string { return r.Name },
}

type actuator struct {
	neutron.Resource[*kupenstackv1.Port, osPort]
}

var (
	_ generic.LegacyActuator[*kupenstackv1.Port, osPort] = actuator{}
)

func name(p *kupenstackv1.Port) string { return generic.Name(p, p.Spec.Name) }

func fixedIPs(s generic.Scope, p *kupenstackv1.Port) []ports.IP {
	var out []ports.IP
	for _, ip := range p.Spec.FixedIPs {
		out = append(out, ports.IP{SubnetID: s.DependencyID("Subnet", ip.SubnetRef), IPAddress: ip.IPAddress})
	}
	return out
}

func securityGroups(s generic.Scope, p *kupenstackv1.Port) *[]string {
	if p.Spec.SecurityGroupRefs == nil {
		return nil
	}
	ids := []string{}
	for _, ref := range p.Spec.SecurityGroupRefs {
		ids = append(ids, s.DependencyID("SecurityGroup", ref))
	}
	return &ids
}

func addressPairs(p *kupenstackv1.Port) []ports.AddressPair {
	var out []ports.AddressPair
	for _, ap := range p.Spec.AllowedAddressPairs {
		out = append(out, ports.AddressPair{IPAddress: ap.IPAddress, MACAddress: ap.MACAddress})
	}
	return out
}

func (actuator) Create(ctx context.Context, s generic.Scope, p *kupenstackv1.Port) (*osPort, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	opts := ports.CreateOpts{
		NetworkID: s.DependencyID("Network", p.Spec.NetworkRef), Name: name(p), Description: p.Spec.Description,
		AdminStateUp: p.Spec.AdminStateUp, SecurityGroups: securityGroups(s, p), AllowedAddressPairs: addressPairs(p),
	}
	if ips := fixedIPs(s, p); len(ips) > 0 {
		opts.FixedIPs = ips
	} else {
		// Neutron gives a port an address only from the subnets its network has when the port is
		// made, never later: a Port applied together with its network's Subnet waits for it.
		network, err := networks.Get(ctx, sc, opts.NetworkID).Extract()
		if err != nil {
			return nil, err
		}
		if len(network.Subnets) == 0 {
			return nil, generic.WaitFor(fmt.Sprintf("waiting for a subnet on network %s, so that the port gets an address", p.Spec.NetworkRef), 3*time.Second)
		}
	}
	var builder ports.CreateOptsBuilder = opts
	if p.Spec.PortSecurityEnabled != nil {
		builder = portsecurity.PortCreateOptsExt{CreateOptsBuilder: opts, PortSecurityEnabled: p.Spec.PortSecurityEnabled}
	}
	var created osPort
	return &created, ports.Create(ctx, sc, builder).ExtractInto(&created)
}

// addressesMatch says whether the port has exactly the requested subnets (and addresses, where given).
func addressesMatch(want []ports.IP, have []ports.IP) bool {
	if len(want) == 0 {
		return true
	}
	if len(want) != len(have) {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h ports.IP) bool {
			return h.SubnetID == w.SubnetID && (w.IPAddress == "" || w.IPAddress == h.IPAddress)
		}) {
			return false
		}
	}
	return true
}

func pairsMatch(want []ports.AddressPair, have []ports.AddressPair) bool {
	if len(want) != len(have) {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h ports.AddressPair) bool {
			return h.IPAddress == w.IPAddress && (w.MACAddress == "" || w.MACAddress == h.MACAddress)
		}) {
			return false
		}
	}
	return true
}

func (a actuator) Update(ctx context.Context, s generic.Scope, p *kupenstackv1.Port, cur *osPort) (*osPort, bool, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, false, err
	}
	changed, err := neutron.SyncTags(ctx, sc, "ports", cur.ID, neutron.Tags(p, p.Spec.Tags), cur.Tags)
	if err != nil {
		return cur, false, err
	}
	upd, dirty := ports.UpdateOpts{}, false
	if want := name(p); cur.Name != want {
		upd.Name, dirty = &want, true
	}
	if cur.Description != p.Spec.Description {
		upd.Description, dirty = &p.Spec.Description, true
	}
	if p.Spec.AdminStateUp != nil && *p.Spec.AdminStateUp != cur.AdminStateUp {
		upd.AdminStateUp, dirty = p.Spec.AdminStateUp, true
	}
	if sgs := securityGroups(s, p); sgs != nil && !neutron.SameSet(*sgs, cur.SecurityGroups) {
		upd.SecurityGroups, dirty = sgs, true
	}
	if want := fixedIPs(s, p); !addressesMatch(want, cur.FixedIPs) {
		upd.FixedIPs, dirty = want, true
	}
	if want := addressPairs(p); !pairsMatch(want, cur.AllowedAddressPairs) {
		if want == nil {
			want = []ports.AddressPair{}
		}
		upd.AllowedAddressPairs, dirty = &want, true
	}
	var builder ports.UpdateOptsBuilder = upd
	if ps := p.Spec.PortSecurityEnabled; ps != nil && *ps != cur.PortSecurityEnabled {
		builder, dirty = portsecurity.PortUpdateOptsExt{UpdateOptsBuilder: upd, PortSecurityEnabled: ps}, true
	}
	if dirty {
		var updated osPort
		if err := ports.Update(ctx, sc, cur.ID, builder).ExtractInto(&updated); err != nil {
			return cur, changed, err
		}
		return &updated, true, nil
	}
	return a.Refresh(ctx, s, cur, changed)
}

// InSync compares the port's own fields; references are resolved only in a full reconcile.
func (actuator) InSync(p *kupenstackv1.Port, res *osPort) bool {
	if p.Spec.ManagementPolicy == kupenstackv1.ManagementPolicyUnmanaged {
		return true
	}
	return res.Name == name(p) && res.Description == p.Spec.Description &&
		(p.Spec.AdminStateUp == nil || *p.Spec.AdminStateUp == res.AdminStateUp) &&
		(p.Spec.PortSecurityEnabled == nil || *p.Spec.PortSecurityEnabled == res.PortSecurityEnabled) &&
		(p.Spec.SecurityGroupRefs == nil || len(p.Spec.SecurityGroupRefs) == len(res.SecurityGroups)) &&
		pairsMatch(addressPairs(p), res.AllowedAddressPairs) &&
		neutron.SameSet(neutron.Tags(p, p.Spec.Tags), res.Tags)
}

func (actuator) Observe(p *kupenstackv1.Port, res *osPort) (bool, string) {
	st := &kupenstackv1.PortResourceStatus{
		Name: res.Name, Description: res.Description, Status: res.Status, NetworkID: res.NetworkID,
		MACAddress: res.MACAddress, SecurityGroupIDs: res.SecurityGroups, DeviceID: res.DeviceID,
		DeviceOwner: res.DeviceOwner, AdminStateUp: res.AdminStateUp, Tags: res.Tags,
	}
	for _, ip := range res.FixedIPs {
		st.FixedIPs = append(st.FixedIPs, kupenstackv1.PortIPStatus{SubnetID: ip.SubnetID, IPAddress: ip.IPAddress})
	}
	p.Status.Resource = st
	return true, "" // an unbound port is DOWN, and still usable
}
