// Package subnet maps the Subnet kind (a subnet of a tenant's Network) and the ProviderSubnet kind
// (a subnet of the cloud admin's ProviderNetwork, cluster-scoped) to Neutron subnets: the same
// Neutron resource, told apart only by the kind of network they refer to (providersubnet.go).
package subnet

import (
	"context"
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
		Name:       "Subnet",
		Controller: "subnet",
		Actuator:   generic.Legacy[*kupenstackv1.Subnet, subnets.Subnet](a),
		Can:        generic.Capabilities[*kupenstackv1.Subnet, subnets.Subnet]{List: a.ListAll, ListOwned: a.ListOwned, Claims: a.Claims},
		New:        func() *kupenstackv1.Subnet { return &kupenstackv1.Subnet{} },
		NewList:    func() client.ObjectList { return &kupenstackv1.SubnetList{} },
		Dependencies: []generic.Dependency[*kupenstackv1.Subnet]{{
			Kind:  "Network",
			New:   func() generic.Object { return &kupenstackv1.Network{} },
			Names: func(s *kupenstackv1.Subnet) []string { return generic.Ref(s.Spec.NetworkRef) },
		}},
	})
}

var tenantActuator = actuator[*kupenstackv1.Subnet]{
	Resource: neutron.Resource[*kupenstackv1.Subnet, subnets.Subnet]{API: api, NameOf: name},
	params:   func(sn *kupenstackv1.Subnet) *kupenstackv1.SubnetParameters { return &sn.Spec.SubnetParameters },
	networkID: func(s generic.Scope, sn *kupenstackv1.Subnet) string {
		return s.DependencyID("Network", sn.Spec.NetworkRef)
	},
	observe: func(sn *kupenstackv1.Subnet, st *kupenstackv1.SubnetResourceStatus) { sn.Status.Resource = st },
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
	observe   func(O, *kupenstackv1.SubnetResourceStatus)
}

var (
	_ generic.LegacyActuator[*kupenstackv1.Subnet, subnets.Subnet]         = actuator[*kupenstackv1.Subnet]{}
	_ generic.LegacyActuator[*kupenstackv1.ProviderSubnet, subnets.Subnet] = actuator[*kupenstackv1.ProviderSubnet]{}
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

func (a actuator[O]) Update(ctx context.Context, s generic.Scope, obj O, cur *subnets.Subnet) (*subnets.Subnet, bool, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, false, err
	}
	p := a.params(obj)
	tagged, err := neutron.SyncTags(ctx, sc, "subnets", cur.ID, neutron.Tags(obj, p.Tags), cur.Tags)
	if err != nil {
		return cur, false, err
	}
	upd, dirty := subnets.UpdateOpts{}, false
	if want := a.NameOf(obj); cur.Name != want {
		upd.Name, dirty = &want, true
	}
	if cur.Description != p.Description {
		upd.Description, dirty = &p.Description, true
	}
	if g := gateway(p); g != nil && *g != cur.GatewayIP {
		upd.GatewayIP, dirty = g, true
	}
	if p.EnableDHCP != nil && *p.EnableDHCP != cur.EnableDHCP {
		upd.EnableDHCP, dirty = p.EnableDHCP, true
	}
	if !slices.Equal(p.DNSNameservers, cur.DNSNameservers) && (len(p.DNSNameservers) > 0 || len(cur.DNSNameservers) > 0) {
		dns := slices.Clone(p.DNSNameservers)
		if dns == nil {
			dns = []string{}
		}
		upd.DNSNameservers, dirty = &dns, true
	}
	if len(p.AllocationPools) > 0 && !slices.Equal(pools(p.AllocationPools), cur.AllocationPools) {
		upd.AllocationPools, dirty = pools(p.AllocationPools), true
	}
	if upd.AllocationPools != nil || upd.GatewayIP != nil {
		if err := CheckAllocationPools(p); err != nil {
			return cur, tagged, generic.InvalidConfig(err.Error())
		}
	}
	if dirty {
		updated, err := subnets.Update(ctx, sc, cur.ID, upd).Extract()
		if err != nil {
			return cur, tagged, err
		}
		return updated, true, nil
	}
	return a.Refresh(ctx, s, cur, tagged)
}

// InSync compares the fields Update manages.
func (a actuator[O]) InSync(obj O, res *subnets.Subnet) bool {
	if obj.GetManagedSpec().ManagementPolicy == kupenstackv1.ManagementPolicyUnmanaged {
		return true
	}
	p := a.params(obj)
	g := gateway(p)
	return res.Name == a.NameOf(obj) && res.Description == p.Description &&
		(g == nil || *g == res.GatewayIP) &&
		(p.EnableDHCP == nil || *p.EnableDHCP == res.EnableDHCP) &&
		slices.Equal(p.DNSNameservers, res.DNSNameservers) &&
		(len(p.AllocationPools) == 0 || slices.Equal(pools(p.AllocationPools), res.AllocationPools)) &&
		neutron.SameSet(neutron.Tags(obj, p.Tags), res.Tags)
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
