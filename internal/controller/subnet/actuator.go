// Package subnet maps the Subnet kind to Neutron subnets.
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
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.Subnet, subnets.Subnet]{
		Name:       "Subnet",
		Controller: "subnet",
		Actuator:   actuator{neutron.Resource[*kupenstackv1.Subnet, subnets.Subnet]{API: api, NameOf: name}},
		New:        func() *kupenstackv1.Subnet { return &kupenstackv1.Subnet{} },
		NewList:    func() client.ObjectList { return &kupenstackv1.SubnetList{} },
		Dependencies: []generic.Dependency[*kupenstackv1.Subnet]{{
			Kind: "Network",
			New:  func() generic.Object { return &kupenstackv1.Network{} },
			Names: func(s *kupenstackv1.Subnet) []string {
				if s.Spec.NetworkRef == "" {
					return nil
				}
				return []string{s.Spec.NetworkRef}
			},
		}},
	})
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

type actuator struct {
	neutron.Resource[*kupenstackv1.Subnet, subnets.Subnet]
}

var (
	_ generic.Actuator[*kupenstackv1.Subnet, subnets.Subnet] = actuator{}
	_ generic.Lister[*kupenstackv1.Subnet, subnets.Subnet]   = actuator{}
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
func gateway(sn *kupenstackv1.Subnet) *string {
	switch {
	case sn.Spec.DisableGateway:
		return new("")
	case sn.Spec.GatewayIP != "":
		return &sn.Spec.GatewayIP
	}
	return nil
}

func (actuator) Create(ctx context.Context, s generic.Scope, sn *kupenstackv1.Subnet) (*subnets.Subnet, error) {
	// Before Neutron is asked: its refusal would not name the field.
	if err := CheckAllocationPools(&sn.Spec); err != nil {
		return nil, generic.InvalidConfig(err.Error())
	}
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	version := gophercloud.IPv4
	if sn.Spec.IPVersion != nil && *sn.Spec.IPVersion == 6 || sn.Spec.IPVersion == nil && strings.Contains(sn.Spec.CIDR, ":") {
		version = gophercloud.IPv6
	}
	return subnets.Create(ctx, sc, subnets.CreateOpts{
		NetworkID:       s.DependencyID("Network", sn.Spec.NetworkRef),
		Name:            name(sn),
		Description:     sn.Spec.Description,
		CIDR:            sn.Spec.CIDR,
		IPVersion:       version,
		GatewayIP:       gateway(sn),
		EnableDHCP:      sn.Spec.EnableDHCP,
		DNSNameservers:  sn.Spec.DNSNameservers,
		AllocationPools: pools(sn.Spec.AllocationPools),
	}).Extract()
}

func (a actuator) Update(ctx context.Context, s generic.Scope, sn *kupenstackv1.Subnet, cur *subnets.Subnet) (*subnets.Subnet, bool, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, false, err
	}
	tagged, err := neutron.SyncTags(ctx, sc, "subnets", cur.ID, neutron.Tags(sn, sn.Spec.Tags), cur.Tags)
	if err != nil {
		return cur, false, err
	}
	upd, dirty := subnets.UpdateOpts{}, false
	if want := name(sn); cur.Name != want {
		upd.Name, dirty = &want, true
	}
	if cur.Description != sn.Spec.Description {
		upd.Description, dirty = &sn.Spec.Description, true
	}
	if g := gateway(sn); g != nil && *g != cur.GatewayIP {
		upd.GatewayIP, dirty = g, true
	}
	if sn.Spec.EnableDHCP != nil && *sn.Spec.EnableDHCP != cur.EnableDHCP {
		upd.EnableDHCP, dirty = sn.Spec.EnableDHCP, true
	}
	if !slices.Equal(sn.Spec.DNSNameservers, cur.DNSNameservers) && (len(sn.Spec.DNSNameservers) > 0 || len(cur.DNSNameservers) > 0) {
		dns := slices.Clone(sn.Spec.DNSNameservers)
		if dns == nil {
			dns = []string{}
		}
		upd.DNSNameservers, dirty = &dns, true
	}
	if len(sn.Spec.AllocationPools) > 0 && !slices.Equal(pools(sn.Spec.AllocationPools), cur.AllocationPools) {
		upd.AllocationPools, dirty = pools(sn.Spec.AllocationPools), true
	}
	if upd.AllocationPools != nil || upd.GatewayIP != nil {
		if err := CheckAllocationPools(&sn.Spec); err != nil {
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
func (actuator) InSync(sn *kupenstackv1.Subnet, res *subnets.Subnet) bool {
	if sn.Spec.ManagementPolicy == kupenstackv1.ManagementPolicyUnmanaged {
		return true
	}
	g := gateway(sn)
	return res.Name == name(sn) && res.Description == sn.Spec.Description &&
		(g == nil || *g == res.GatewayIP) &&
		(sn.Spec.EnableDHCP == nil || *sn.Spec.EnableDHCP == res.EnableDHCP) &&
		slices.Equal(sn.Spec.DNSNameservers, res.DNSNameservers) &&
		(len(sn.Spec.AllocationPools) == 0 || slices.Equal(pools(sn.Spec.AllocationPools), res.AllocationPools)) &&
		neutron.SameSet(neutron.Tags(sn, sn.Spec.Tags), res.Tags)
}

func (actuator) Observe(sn *kupenstackv1.Subnet, res *subnets.Subnet) (bool, string) {
	st := &kupenstackv1.SubnetResourceStatus{
		Name: res.Name, Description: res.Description, NetworkID: res.NetworkID, CIDR: res.CIDR,
		IPVersion: res.IPVersion, GatewayIP: res.GatewayIP, EnableDHCP: res.EnableDHCP,
		DNSNameservers: res.DNSNameservers, Tags: res.Tags,
	}
	for _, p := range res.AllocationPools {
		st.AllocationPools = append(st.AllocationPools, kupenstackv1.IPRange{Start: p.Start, End: p.End})
	}
	sn.Status.Resource = st
	return true, "" // a subnet is usable as soon as it exists
}
