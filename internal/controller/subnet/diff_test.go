package subnet

import (
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

const ownerTag = "kupenstack-uid-u1"

func testSubnet() *kupenstackv1.Subnet {
	return &kupenstackv1.Subnet{ObjectMeta: metav1.ObjectMeta{Name: "sn", Namespace: "ns", UID: "u1"},
		Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{
			Description: "d", CIDR: "10.0.0.0/24", GatewayIP: "10.0.0.1", EnableDHCP: new(true),
			DNSNameservers:  []string{"8.8.8.8", "1.1.1.1"},
			AllocationPools: []kupenstackv1.AllocationPool{{Start: "10.0.0.10", End: "10.0.0.20"}, {Start: "10.0.0.30", End: "10.0.0.40"}},
			Tags:            []kupenstackv1.NeutronTag{"a", "b"},
		}}}
}

func inSyncSubnet() *subnets.Subnet {
	return &subnets.Subnet{ID: "sub-1", NetworkID: "net-1", Name: "sn", Description: "d", CIDR: "10.0.0.0/24",
		GatewayIP: "10.0.0.1", EnableDHCP: true, DNSNameservers: []string{"8.8.8.8", "1.1.1.1"},
		AllocationPools: []subnets.AllocationPool{{Start: "10.0.0.10", End: "10.0.0.20"}, {Start: "10.0.0.30", End: "10.0.0.40"}},
		Tags:            []string{"b", ownerTag, "a"},
	}
}

func TestSubnetDiff(t *testing.T) {
	for _, tc := range []struct {
		name string
		deps map[string]string
		spec func(*kupenstackv1.Subnet)
		res  func(*subnets.Subnet)
		want []string
	}{
		{name: "unchanged"},
		{name: "network not resolved", deps: map[string]string{}},
		{name: "network resolves to a new ID", deps: map[string]string{"Network/net": "net-2"}, want: []string{"spec.networkRef"}},
		{name: "name changed", res: func(s *subnets.Subnet) { s.Name = "x" }, want: []string{"spec.name"}},
		{name: "spec name", spec: func(s *kupenstackv1.Subnet) { s.Spec.Name = "custom" }, want: []string{"spec.name"}},
		{name: "description changed", res: func(s *subnets.Subnet) { s.Description = "x" }, want: []string{"spec.description"}},
		{name: "description removed", res: func(s *subnets.Subnet) { s.Description = "" }, want: []string{"spec.description"}},
		{name: "gateway changed", res: func(s *subnets.Subnet) { s.GatewayIP = "10.0.0.254" }, want: []string{"spec.gatewayIP"}},
		{name: "gateway removed", res: func(s *subnets.Subnet) { s.GatewayIP = "" }, want: []string{"spec.gatewayIP"}},
		// No gateway in the spec: Neutron picked it, or an admin did.
		{name: "gateway unmanaged", spec: func(s *kupenstackv1.Subnet) { s.Spec.GatewayIP = "" }, res: func(s *subnets.Subnet) { s.GatewayIP = "10.0.0.254" }},
		{name: "gateway disabled", spec: func(s *kupenstackv1.Subnet) { s.Spec.GatewayIP, s.Spec.DisableGateway = "", true }, want: []string{"spec.disableGateway"}},
		{name: "gateway disabled in both", spec: func(s *kupenstackv1.Subnet) { s.Spec.GatewayIP, s.Spec.DisableGateway = "", true },
			res: func(s *subnets.Subnet) { s.GatewayIP = "" }},
		{name: "IPv6 gateway spelled otherwise", spec: func(s *kupenstackv1.Subnet) { s.Spec.GatewayIP = "fd00:0::1" },
			res: func(s *subnets.Subnet) { s.GatewayIP = "fd00::1" }},
		{name: "DHCP changed", res: func(s *subnets.Subnet) { s.EnableDHCP = false }, want: []string{"spec.enableDHCP"}},
		{name: "DHCP unmanaged", spec: func(s *kupenstackv1.Subnet) { s.Spec.EnableDHCP = nil }, res: func(s *subnets.Subnet) { s.EnableDHCP = false }},
		{name: "DNS added", res: func(s *subnets.Subnet) { s.DNSNameservers = append(s.DNSNameservers, "9.9.9.9") }, want: []string{"spec.dnsNameservers"}},
		{name: "DNS removed", res: func(s *subnets.Subnet) { s.DNSNameservers = s.DNSNameservers[:1] }, want: []string{"spec.dnsNameservers"}},
		{name: "DNS changed", res: func(s *subnets.Subnet) { s.DNSNameservers = []string{"8.8.8.8", "9.9.9.9"} }, want: []string{"spec.dnsNameservers"}},
		{name: "DNS reordered", res: func(s *subnets.Subnet) { s.DNSNameservers = []string{"1.1.1.1", "8.8.8.8"} }, want: []string{"spec.dnsNameservers"}},
		{name: "DNS added when the spec has none", spec: func(s *kupenstackv1.Subnet) { s.Spec.DNSNameservers = nil }, want: []string{"spec.dnsNameservers"}},
		{name: "no DNS on either side", spec: func(s *kupenstackv1.Subnet) { s.Spec.DNSNameservers = nil }, res: func(s *subnets.Subnet) { s.DNSNameservers = []string{} }},
		{name: "pool added", res: func(s *subnets.Subnet) {
			s.AllocationPools = append(s.AllocationPools, subnets.AllocationPool{Start: "10.0.0.50", End: "10.0.0.60"})
		}, want: []string{"spec.allocationPools"}},
		{name: "pool removed", res: func(s *subnets.Subnet) { s.AllocationPools = s.AllocationPools[:1] }, want: []string{"spec.allocationPools"}},
		{name: "pool changed", res: func(s *subnets.Subnet) { s.AllocationPools[1].End = "10.0.0.45" }, want: []string{"spec.allocationPools"}},
		{name: "pools reordered", res: func(s *subnets.Subnet) { slices.Reverse(s.AllocationPools) }},
		// No pools in the spec: Neutron's default pool (the whole cidr), or an admin's.
		{name: "pools unmanaged", spec: func(s *kupenstackv1.Subnet) { s.Spec.AllocationPools = nil }},
		{name: "tag added", res: func(s *subnets.Subnet) { s.Tags = append(s.Tags, "c") }, want: []string{"spec.tags"}},
		{name: "tag removed", res: func(s *subnets.Subnet) { s.Tags = []string{ownerTag, "a"} }, want: []string{"spec.tags"}},
		{name: "tag changed", res: func(s *subnets.Subnet) { s.Tags = []string{ownerTag, "a", "c"} }, want: []string{"spec.tags"}},
		{name: "tags reordered", res: func(s *subnets.Subnet) { s.Tags = []string{"a", "b", ownerTag} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, res := testSubnet(), inSyncSubnet()
			if tc.spec != nil {
				tc.spec(obj)
			}
			if tc.res != nil {
				tc.res(res)
			}
			deps := tc.deps
			if deps == nil {
				deps = map[string]string{"Network/net": "net-1"}
			}
			got := tenantActuator.Diff(generic.TestScope(deps), obj, res).Fields()
			if !slices.Equal(got, tc.want) {
				t.Errorf("Diff = %v, want %v", got, tc.want)
			}
		})
	}
}

// The provider kind shares the tenant kind's comparison; only its reference differs.
func TestProviderSubnetDiff(t *testing.T) {
	obj := &kupenstackv1.ProviderSubnet{ObjectMeta: metav1.ObjectMeta{Name: "sn", UID: "u1"},
		Spec: kupenstackv1.ProviderSubnetSpec{ProviderNetworkRef: "ext", SubnetParameters: testSubnet().Spec.SubnetParameters}}
	for _, tc := range []struct {
		name string
		deps map[string]string
		res  func(*subnets.Subnet)
		want []string
	}{
		{name: "unchanged", deps: map[string]string{"ProviderNetwork/ext": "net-1"}},
		{name: "network resolves to a new ID", deps: map[string]string{"ProviderNetwork/ext": "net-2"}, want: []string{"spec.providerNetworkRef"}},
		{name: "tenant network of that name ignored", deps: map[string]string{"Network/ext": "net-2", "ProviderNetwork/ext": "net-1"}},
		{name: "description and DNS changed", deps: map[string]string{"ProviderNetwork/ext": "net-1"},
			res:  func(s *subnets.Subnet) { s.Description, s.DNSNameservers = "x", nil },
			want: []string{"spec.description", "spec.dnsNameservers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := inSyncSubnet()
			if tc.res != nil {
				tc.res(res)
			}
			got := providerActuator.Diff(generic.TestScope(tc.deps), obj, res).Fields()
			if !slices.Equal(got, tc.want) {
				t.Errorf("Diff = %v, want %v", got, tc.want)
			}
		})
	}
}
