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
		Actuator:   a,
		Can:        generic.Capabilities[*kupenstackv1.Port, osPort]{List: a.ListAll, ListOwned: a.ListOwned, Claims: a.Claims},
		New:        func() *kupenstackv1.Port { return &kupenstackv1.Port{} },
		NewList:    newList,
		// A Port without fixedIPs waits for its network's first subnet (Create): the Subnet
		// object wakes it as soon as it has an ID, instead of the wait's next poll.
		Watches: []generic.Watch{generic.WakeOn(mgr.GetClient(), newList, awaitsSubnet)},
		Dependencies: []generic.Dependency[*kupenstackv1.Port]{
			generic.Refers[kupenstackv1.Network]("spec.networkRef", func(p *kupenstackv1.Port) []string {
				if p.Spec.NetworkRef == "" {
					return nil
				}
				return []string{p.Spec.NetworkRef}
			}),
			generic.Refers[kupenstackv1.Subnet]("spec.fixedIPs[].subnetRef", func(p *kupenstackv1.Port) []string {
				var names []string
				for _, ip := range p.Spec.FixedIPs {
					names = append(names, ip.SubnetRef)
				}
				return names
			}),
			generic.Refers[kupenstackv1.SecurityGroup]("spec.securityGroupRefs", func(p *kupenstackv1.Port) []string {
				return p.Spec.SecurityGroupRefs
			}),
		},
	})
}

// awaitsSubnet says whether Port obj may be waiting for the changed Subnet: not created yet,
// without fixedIPs, on the network of a subnet that now has its ID (see Create).
func awaitsSubnet(subnet *kupenstackv1.Subnet, obj client.Object) bool {
	p := obj.(*kupenstackv1.Port)
	return subnet.Status.ID != "" && subnet.Spec.NetworkRef == p.Spec.NetworkRef && p.Status.ID == "" && len(p.Spec.FixedIPs) == 0
}

func newList() client.ObjectList { return &kupenstackv1.PortList{} }

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
	_ generic.Actuator[*kupenstackv1.Port, osPort] = actuator{}
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

// The spec fields Diff compares, as a user writes them.
const (
	fieldName                = "spec.name"
	fieldDescription         = "spec.description"
	fieldAdminStateUp        = "spec.adminStateUp"
	fieldPortSecurityEnabled = "spec.portSecurityEnabled"
	fieldSecurityGroupRefs   = "spec.securityGroupRefs"
	fieldFixedIPs            = "spec.fixedIPs"
	fieldAllowedAddressPairs = "spec.allowedAddressPairs"
	fieldTags                = "spec.tags"
)

// addressesMatch says whether the port has exactly the requested subnets (and addresses, where
// given), in any order. Each requested address claims its own address of the port, so two on one
// subnet need two there.
func addressesMatch(want []ports.IP, have []ports.IP) bool {
	if len(want) == 0 {
		return true // Neutron picked the port's addresses: any are the spec's
	}
	if len(want) != len(have) {
		return false
	}
	used := make([]bool, len(have))
	// Exact addresses first, so that an address-less entry cannot take the address another names.
	for _, exact := range []bool{true, false} {
		for _, w := range want {
			if (w.IPAddress != "") != exact {
				continue
			}
			found := false
			for i, h := range have {
				if !used[i] && h.SubnetID == w.SubnetID && (w.IPAddress == "" || w.IPAddress == h.IPAddress) {
					used[i], found = true, true
					break
				}
			}
			if !found {
				return false
			}
		}
	}
	return true
}

// pairsMatch compares address pairs as sets; a pair without a MAC address matches any (Neutron
// fills in the port's own).
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

// Diff compares every field Neutron lets change after creation; networkRef cannot change.
func (actuator) Diff(s generic.Scope, p *kupenstackv1.Port, res *osPort) generic.Changes {
	var d generic.Diff
	generic.Value(&d, fieldName, name(p), res.Name)
	generic.Value(&d, fieldDescription, p.Spec.Description, res.Description)
	generic.Optional(&d, fieldAdminStateUp, p.Spec.AdminStateUp, res.AdminStateUp)
	// Unset: the network's setting, not drift.
	generic.Optional(&d, fieldPortSecurityEnabled, p.Spec.PortSecurityEnabled, res.PortSecurityEnabled)
	// Unset: Neutron's default group, not drift. Compared by the IDs the refs resolve to now.
	if sgs := securityGroups(s, p); sgs != nil {
		generic.Set(&d, fieldSecurityGroupRefs, *sgs, res.SecurityGroups)
	}
	if want := fixedIPs(s, p); !addressesMatch(want, res.FixedIPs) {
		d.Add(fieldFixedIPs, want, res.FixedIPs)
	}
	if want := addressPairs(p); !pairsMatch(want, res.AllowedAddressPairs) {
		d.Add(fieldAllowedAddressPairs, want, res.AllowedAddressPairs)
	}
	generic.Set(&d, fieldTags, neutron.Tags(p, p.Spec.Tags), res.Tags)
	return d.Changes()
}

// keepAddresses fills the spec's address-less entries with the address the port has on that
// subnet, where it still has one, so that repairing another entry does not renumber the port.
func keepAddresses(want, have []ports.IP) []ports.IP {
	out := slices.Clone(want)
	taken := map[string]bool{}
	for _, w := range out {
		if w.IPAddress != "" {
			taken[w.IPAddress] = true
		}
	}
	for i := range out {
		if out[i].IPAddress != "" {
			continue
		}
		for _, h := range have {
			if h.SubnetID == out[i].SubnetID && !taken[h.IPAddress] {
				out[i].IPAddress, taken[h.IPAddress] = h.IPAddress, true
				break
			}
		}
	}
	return out
}

// Update makes the changes Diff found: tags through the tags API, the rest in one port update.
func (a actuator) Update(ctx context.Context, s generic.Scope, p *kupenstackv1.Port, cur *osPort, changes generic.Changes) (*osPort, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	tags := cur.Tags
	if changes.Has(fieldTags) {
		if tags, err = neutron.SyncTags(ctx, sc, "ports", cur.ID, neutron.Tags(p, p.Spec.Tags), cur.Tags); err != nil {
			return cur, err
		}
	}
	upd, dirty := ports.UpdateOpts{}, false
	if changes.Has(fieldName) {
		want := name(p)
		upd.Name, dirty = &want, true
	}
	if changes.Has(fieldDescription) {
		upd.Description, dirty = &p.Spec.Description, true
	}
	if changes.Has(fieldAdminStateUp) {
		upd.AdminStateUp, dirty = p.Spec.AdminStateUp, true
	}
	if changes.Has(fieldSecurityGroupRefs) {
		upd.SecurityGroups, dirty = securityGroups(s, p), true
	}
	if changes.Has(fieldFixedIPs) {
		upd.FixedIPs, dirty = keepAddresses(fixedIPs(s, p), cur.FixedIPs), true
	}
	if changes.Has(fieldAllowedAddressPairs) {
		want := addressPairs(p)
		if want == nil {
			want = []ports.AddressPair{} // an empty list removes them all; nil would leave them
		}
		upd.AllowedAddressPairs, dirty = &want, true
	}
	var builder ports.UpdateOptsBuilder = upd
	if changes.Has(fieldPortSecurityEnabled) {
		builder, dirty = portsecurity.PortUpdateOptsExt{UpdateOptsBuilder: upd, PortSecurityEnabled: p.Spec.PortSecurityEnabled}, true
	}
	if !dirty {
		// Only the tags changed (as after every create): the tags call's answer completes cur.
		tagged := *cur
		tagged.Tags = tags
		return &tagged, nil
	}
	var updated osPort
	if err := ports.Update(ctx, sc, cur.ID, builder).ExtractInto(&updated); err != nil {
		return cur, err
	}
	return &updated, nil
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
