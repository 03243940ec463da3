package e2e

import (
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// driftSubnet is a Network and a Subnet that sets every mutable field, in 10.64.0.0/24 (each case
// has its own project, so the ranges do not meet).
func driftSubnet(ns string) []client.Object {
	return []client.Object{&kupenstackv1.Network{ObjectMeta: objMeta(ns, "net")},
		&kupenstackv1.Subnet{ObjectMeta: objMeta(ns, "sub"), Spec: kupenstackv1.SubnetSpec{NetworkRef: "net",
			SubnetParameters: driftSubnetParameters()}}}
}

func driftSubnetParameters() kupenstackv1.SubnetParameters {
	return kupenstackv1.SubnetParameters{
		CIDR: "10.64.0.0/24", Description: "spec description", GatewayIP: "10.64.0.1", EnableDHCP: new(true),
		DNSNameservers:  []string{"192.0.2.53", "192.0.2.54"},
		AllocationPools: []kupenstackv1.AllocationPool{{Start: "10.64.0.10", End: "10.64.0.20"}, {Start: "10.64.0.30", End: "10.64.0.40"}},
		Tags:            driftNetworkTags,
	}
}

// subnetPools reads allocation_pools as start-end strings, sorted.
func subnetPools(got map[string]any) []string {
	var out []string
	pools, _ := got["allocation_pools"].([]any)
	for _, p := range pools {
		m, _ := p.(map[string]any)
		out = append(out, fmt.Sprintf("%v-%v", m["start"], m["end"]))
	}
	slices.Sort(out)
	return out
}

func init() {
	sub := func(field string, attrs map[string]any, repaired func(generic.Object, map[string]any) error) fieldDrift {
		return neutronAttrDrift("Subnet", "subnets", field, driftSubnet, attrs, repaired)
	}
	noGateway := func(ns string) []client.Object {
		objs := driftSubnet(ns)
		sn := objs[1].(*kupenstackv1.Subnet)
		sn.Spec.GatewayIP, sn.Spec.DisableGateway = "", true
		return objs
	}
	// A ProviderSubnet shares the Subnet's comparison; its VLANs come from vlanPhysnet's 100.
	providerSubnet := func(ns string) []client.Object {
		return []client.Object{driftProviderNetwork(ns), &kupenstackv1.ProviderSubnet{ObjectMeta: objMeta("", ns),
			Spec: kupenstackv1.ProviderSubnetSpec{ProviderNetworkRef: ns, SubnetParameters: driftSubnetParameters()}}}
	}
	addFieldDrifts(
		sub("spec.name", map[string]any{"name": "renamed-out-of-band"}, neutronNameIs),
		sub("spec.description", map[string]any{"description": "out of band"}, neutronAttrIs("description", "spec description")),
		sub("spec.gatewayIP", map[string]any{"gateway_ip": "10.64.0.254"}, neutronAttrIs("gateway_ip", "10.64.0.1")),
		neutronAttrDrift("Subnet", "subnets", "spec.disableGateway", noGateway, map[string]any{"gateway_ip": "10.64.0.1"},
			neutronAttrIs("gateway_ip", nil)),
		sub("spec.enableDHCP", map[string]any{"enable_dhcp": false}, neutronAttrIs("enable_dhcp", true)),
		// Reordered only: DHCP hands them out in order, so the order is the spec's.
		sub("spec.dnsNameservers", map[string]any{"dns_nameservers": []string{"192.0.2.54", "192.0.2.53"}},
			neutronAttrIs("dns_nameservers", []any{"192.0.2.53", "192.0.2.54"})),
		sub("spec.allocationPools", map[string]any{"allocation_pools": []map[string]string{{"start": "10.64.0.10", "end": "10.64.0.25"}}},
			func(_ generic.Object, got map[string]any) error {
				if have, want := subnetPools(got), []string{"10.64.0.10-10.64.0.20", "10.64.0.30-10.64.0.40"}; !slices.Equal(have, want) {
					return fmt.Errorf("allocation pools %v, want %v", have, want)
				}
				return nil
			}),
		neutronTagsDrift("Subnet", "subnets", driftSubnet, driftNetworkTags),

		neutronAttrDrift("ProviderSubnet", "subnets", "spec.description", providerSubnet, map[string]any{"description": "out of band"},
			neutronAttrIs("description", "spec description")),
		neutronAttrDrift("ProviderSubnet", "subnets", "spec.name", providerSubnet, map[string]any{"name": "renamed-out-of-band"}, neutronNameIs),
		neutronAttrDrift("ProviderSubnet", "subnets", "spec.gatewayIP", providerSubnet, map[string]any{"gateway_ip": "10.64.0.254"},
			neutronAttrIs("gateway_ip", "10.64.0.1")),
		neutronAttrDrift("ProviderSubnet", "subnets", "spec.enableDHCP", providerSubnet, map[string]any{"enable_dhcp": false},
			neutronAttrIs("enable_dhcp", true)),
		neutronAttrDrift("ProviderSubnet", "subnets", "spec.dnsNameservers", providerSubnet,
			map[string]any{"dns_nameservers": []string{"192.0.2.54", "192.0.2.53"}}, neutronAttrIs("dns_nameservers", []any{"192.0.2.53", "192.0.2.54"})),
		neutronTagsDrift("ProviderSubnet", "subnets", providerSubnet, driftNetworkTags),
	)
}
