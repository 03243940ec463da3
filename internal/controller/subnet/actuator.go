// Package subnet maps the Subnet kind (a subnet of a tenant's Network) and the ProviderSubnet kind
// (a subnet of the cloud admin's ProviderNetwork, cluster-scoped) to Neutron subnets: the same
// Neutron resource, told apart only by the kind of network they refer to (providersubnet.go).
package subnet

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=subnets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=subnets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=subnets/finalizers,verbs=update

// Setup registers the Subnet controller.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	a := tenantActuator
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.Subnet, subnets.Subnet]{
		Name:         "Subnet",
		Controller:   "subnet",
		Actuator:     a,
		Can:          generic.Capabilities[*kupenstackv1.Subnet, subnets.Subnet]{List: a.ListAll, ListOwned: a.ListOwned, Claims: a.Claims},
		New:          func() *kupenstackv1.Subnet { return &kupenstackv1.Subnet{} },
		NewList:      func() client.ObjectList { return &kupenstackv1.SubnetList{} },
		Dependencies: []generic.Dependency[*kupenstackv1.Subnet]{generic.Refers[kupenstackv1.Network]("spec.networkRef", func(s *kupenstackv1.Subnet) []string { return generic.Ref(s.Spec.NetworkRef) })},
	})
}

var tenantActuator = actuator[*kupenstackv1.Subnet]{
	Resource: neutron.Resource[*kupenstackv1.Subnet, subnets.Subnet]{API: api, NameOf: name},
	params:   func(sn *kupenstackv1.Subnet) *kupenstackv1.SubnetParameters { return &sn.Spec.SubnetParameters },
	networkID: func(s generic.Scope, sn *kupenstackv1.Subnet) string {
		return s.DependencyID("Network", sn.Spec.NetworkRef)
	},
	networkField: "spec.networkRef",
	observe:      func(sn *kupenstackv1.Subnet, st *kupenstackv1.SubnetResourceStatus) { sn.Status.Resource = st },
}

// api are Neutron's subnet calls.
var api = neutron.API[subnets.Subnet]{
	GetFn: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) (*subnets.Subnet, error) {
		return subnets.Get(ctx, sc, id).Extract()
	},
	ListFn: func(ctx context.Context, sc *gophercloud.ServiceClient, f neutron.Filter) ([]subnets.Subnet, error) {
		pages, err := subnets.List(sc, subnets.ListOpts{ProjectID: f.ProjectID, Tags: f.Tags, Name: f.Name}).AllPages(ctx)
		if err != nil {
			return nil, err
		}
		return subnets.ExtractSubnets(pages)
	},
	DeleteFn: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
		return subnets.Delete(ctx, sc, id).ExtractErr()
	},
	IDOf:      func(r *subnets.Subnet) string { return r.ID },
	TagsOf:    func(r *subnets.Subnet) []string { return r.Tags },
	CreatedAt: func(r *subnets.Subnet) time.Time { return r.CreatedAt },
	NameOf:    func(r *subnets.Subnet) string { return r.Name },
}

// actuator maps one subnet kind: params are the subnet's fields, networkID the ID of the network
// it refers to, observe writes the kind's status.
type actuator[O generic.Object] struct {
	neutron.Resource[O, subnets.Subnet]
	params    func(O) *kupenstackv1.SubnetParameters
	networkID func(generic.Scope, O) string
	// networkField is the spec field that refers to the network.
	networkField string
	observe      func(O, *kupenstackv1.SubnetResourceStatus)
}

var (
	_ generic.Actuator[*kupenstackv1.Subnet, subnets.Subnet]         = actuator[*kupenstackv1.Subnet]{}
	_ generic.Actuator[*kupenstackv1.ProviderSubnet, subnets.Subnet] = actuator[*kupenstackv1.ProviderSubnet]{}
)

func name(sn *kupenstackv1.Subnet) string { return generic.Name(sn, sn.Spec.Name) }

func pools(in []kupenstackv1.AllocationPool) []subnets.AllocationPool {
	out := make([]subnets.AllocationPool, len(in))
	for i, p := range in {
		out[i] = subnets.AllocationPool{Start: p.Start, End: p.End}
	}
	return out
}

// gateway is the gateway_ip to send: nil lets Neutron choose, "" disables it.
func gateway(p *kupenstackv1.SubnetParameters) *string {
	switch {
	case p.DisableGateway:
		return new("")
	case p.GatewayIP != "":
		return &p.GatewayIP
	}
	return nil
}

func (a actuator[O]) Create(ctx context.Context, s generic.Scope, obj O) (*subnets.Subnet, error) {
	p := a.params(obj)
	// Before Neutron is asked: its refusal would not name the field.
	if err := CheckAllocationPools(p); err != nil {
		return nil, generic.InvalidConfig(err.Error())
	}
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	version := gophercloud.IPv4
	if p.IPVersion != nil && *p.IPVersion == 6 || p.IPVersion == nil && strings.Contains(p.CIDR, ":") {
		version = gophercloud.IPv6
	}
	return subnets.Create(ctx, sc, subnets.CreateOpts{
		NetworkID:       a.networkID(s, obj),
		Name:            a.NameOf(obj),
		Description:     p.Description,
		CIDR:            p.CIDR,
		IPVersion:       version,
		GatewayIP:       gateway(p),
		EnableDHCP:      p.EnableDHCP,
		DNSNameservers:  p.DNSNameservers,
		AllocationPools: pools(p.AllocationPools),
	}).Extract()
}

// canonicalIP writes an address as Neutron answers it (fd00::1, not fd00:0::1); anything else
// unchanged.
func canonicalIP(addr string) string {
	if ip, err := netip.ParseAddr(addr); err == nil {
		return ip.String()
	}
	return addr
}

func canonicalPools(in []subnets.AllocationPool) []subnets.AllocationPool {
	out := make([]subnets.AllocationPool, len(in))
	for i, p := range in {
		out[i] = subnets.AllocationPool{Start: canonicalIP(p.Start), End: canonicalIP(p.End)}
	}
	return out
}

// gatewayField is the spec field that decides the gateway.
func gatewayField(p *kupenstackv1.SubnetParameters) string {
	if p.DisableGateway {
		return "spec.disableGateway"
	}
	return "spec.gatewayIP"
}

// Diff compares every field of the spec Neutron can change after creation. The cidr and IP
// version cannot change in Neutron at all; a gateway, DHCP or pools the spec leaves unset are
// Neutron's choice, not drift.
func (a actuator[O]) Diff(s generic.Scope, obj O, res *subnets.Subnet) generic.Changes {
	var d generic.Diff
	p := a.params(obj)
	// Unresolved (the drift check before the network is cached): nothing to compare with.
	if net := a.networkID(s, obj); net != "" {
		generic.Value(&d, a.networkField, net, res.NetworkID)
	}
	generic.Value(&d, "spec.name", a.NameOf(obj), res.Name)
	generic.Value(&d, "spec.description", p.Description, res.Description)
	if g := gateway(p); g != nil {
		generic.Value(&d, gatewayField(p), canonicalIP(*g), canonicalIP(res.GatewayIP))
	}
	generic.Optional(&d, "spec.enableDHCP", p.EnableDHCP, res.EnableDHCP)
	// DHCP hands the servers out in this order. None in the spec means none: Neutron has no default.
	dns := make([]string, len(p.DNSNameservers))
	for i, ip := range p.DNSNameservers {
		dns[i] = canonicalIP(ip)
	}
	generic.Sequence(&d, "spec.dnsNameservers", dns, res.DNSNameservers)
	if len(p.AllocationPools) > 0 {
		generic.Set(&d, "spec.allocationPools", canonicalPools(pools(p.AllocationPools)), canonicalPools(res.AllocationPools))
	}
	generic.Set(&d, "spec.tags", neutron.Tags(obj, p.Tags), res.Tags)
	return d.Changes()
}

// Update makes the changes Diff found. A subnet cannot move to another network: that makes it
// Degraded.
func (a actuator[O]) Update(ctx context.Context, s generic.Scope, obj O, cur *subnets.Subnet, changes generic.Changes) (*subnets.Subnet, error) {
	p := a.params(obj)
	if changes.Has("spec.allocationPools") || changes.Has(gatewayField(p)) {
		if err := CheckAllocationPools(p); err != nil {
			return cur, generic.InvalidConfig(err.Error())
		}
	}
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	if res, done, err := neutron.UpdateTags(ctx, sc, "subnets", cur.ID, neutron.Tags(obj, p.Tags), cur.Tags, cur, changes,
		func(s subnets.Subnet, tags []string) subnets.Subnet { s.Tags = tags; return s }); done {
		return res, err
	}
	upd, dirty := subnets.UpdateOpts{}, false
	if changes.Has("spec.name") {
		want := a.NameOf(obj)
		upd.Name, dirty = &want, true
	}
	if changes.Has("spec.description") {
		upd.Description, dirty = &p.Description, true
	}
	if changes.Has(gatewayField(p)) {
		upd.GatewayIP, dirty = gateway(p), true
	}
	if changes.Has("spec.enableDHCP") {
		upd.EnableDHCP, dirty = p.EnableDHCP, true
	}
	if changes.Has("spec.dnsNameservers") {
		dns := slices.Clone(p.DNSNameservers)
		if dns == nil {
			dns = []string{} // nil would leave them out of the request
		}
		upd.DNSNameservers, dirty = &dns, true
	}
	if changes.Has("spec.allocationPools") {
		upd.AllocationPools, dirty = pools(p.AllocationPools), true
	}
	if dirty {
		if err := subnets.Update(ctx, sc, cur.ID, upd).Err; err != nil {
			return cur, err
		}
	}
	// Re-read: the tags call and the update answer each carry only part of the change.
	updated, err := a.Get(ctx, s, cur.ID)
	if err != nil {
		return cur, err
	}
	if changes.Has(a.networkField) {
		return updated, generic.Degraded(kupenstackv1.ReasonDriftNotRepairable, fmt.Sprintf(
			"%s refers to network %s now, but the subnet is on network %s and Neutron cannot move it: delete the object and create it again to have the subnet made on the new network",
			a.networkField, a.networkID(s, obj), updated.NetworkID), 0)
	}
	return updated, nil
}

func (a actuator[O]) Observe(obj O, res *subnets.Subnet) (bool, string) {
	st := &kupenstackv1.SubnetResourceStatus{
		Name: res.Name, Description: res.Description, NetworkID: res.NetworkID, CIDR: res.CIDR,
		IPVersion: res.IPVersion, GatewayIP: res.GatewayIP, EnableDHCP: res.EnableDHCP,
		DNSNameservers: res.DNSNameservers, Tags: res.Tags,
	}
	for _, p := range res.AllocationPools {
		st.AllocationPools = append(st.AllocationPools, kupenstackv1.IPRange{Start: p.Start, End: p.End})
	}
	a.observe(obj, st)
	return true, "" // a subnet is usable as soon as it exists
}
