package network

import (
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

const ownerTag = "kupenstack-uid-u1"

// inSyncNetwork is the Neutron network that matches the spec of testNetwork.
func inSyncNetwork() *osNetwork {
	n := &osNetwork{Network: networks.Network{
		Name: "custom", Description: "d", AdminStateUp: true, Tags: []string{"b", ownerTag, "a"},
	}}
	n.MTU = 1400
	n.PortSecurityEnabled = true
	return n
}

func testNetwork() *kupenstackv1.Network {
	return &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "ns", UID: "u1"},
		Spec: kupenstackv1.NetworkSpec{NetworkParameters: kupenstackv1.NetworkParameters{
			Name: "custom", Description: "d", AdminStateUp: new(true), MTU: new(1400), PortSecurityEnabled: new(true),
			Tags: []kupenstackv1.NeutronTag{"a", "b"},
		}}}
}

func TestNetworkDiff(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec func(*kupenstackv1.Network)
		res  func(*osNetwork)
		want []string
	}{
		{name: "unchanged"},
		{name: "name changed", res: func(n *osNetwork) { n.Name = "other" }, want: []string{"spec.name"}},
		{name: "name from metadata", spec: func(n *kupenstackv1.Network) { n.Spec.Name = "" }, want: []string{"spec.name"}},
		{name: "name from metadata in sync", spec: func(n *kupenstackv1.Network) { n.Spec.Name = "" }, res: func(n *osNetwork) { n.Name = "net" }},
		{name: "description changed", res: func(n *osNetwork) { n.Description = "x" }, want: []string{"spec.description"}},
		{name: "description removed", res: func(n *osNetwork) { n.Description = "" }, want: []string{"spec.description"}},
		{name: "description added", spec: func(n *kupenstackv1.Network) { n.Spec.Description = "" }, want: []string{"spec.description"}},
		{name: "admin state changed", res: func(n *osNetwork) { n.AdminStateUp = false }, want: []string{"spec.adminStateUp"}},
		// Unset fields are Neutron's defaults (or an admin's choice), not drift.
		{name: "admin state unmanaged", spec: func(n *kupenstackv1.Network) { n.Spec.AdminStateUp = nil }, res: func(n *osNetwork) { n.AdminStateUp = false }},
		{name: "mtu changed", res: func(n *osNetwork) { n.MTU = 1300 }, want: []string{"spec.mtu"}},
		{name: "mtu unmanaged", spec: func(n *kupenstackv1.Network) { n.Spec.MTU = nil }, res: func(n *osNetwork) { n.MTU = 1300 }},
		{name: "port security changed", res: func(n *osNetwork) { n.PortSecurityEnabled = false }, want: []string{"spec.portSecurityEnabled"}},
		{name: "port security unmanaged", spec: func(n *kupenstackv1.Network) { n.Spec.PortSecurityEnabled = nil }, res: func(n *osNetwork) { n.PortSecurityEnabled = false }},
		{name: "tag added", res: func(n *osNetwork) { n.Tags = append(n.Tags, "c") }, want: []string{"spec.tags"}},
		{name: "tag removed", res: func(n *osNetwork) { n.Tags = []string{"a", ownerTag} }, want: []string{"spec.tags"}},
		{name: "owner tag removed", res: func(n *osNetwork) { n.Tags = []string{"a", "b"} }, want: []string{"spec.tags"}},
		{name: "tag changed", res: func(n *osNetwork) { n.Tags = []string{"a", "c", ownerTag} }, want: []string{"spec.tags"}},
		{name: "tags reordered", res: func(n *osNetwork) { n.Tags = []string{ownerTag, "b", "a"} }},
		{name: "several", res: func(n *osNetwork) { n.Name, n.MTU = "x", 1 }, want: []string{"spec.name", "spec.mtu"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, res := testNetwork(), inSyncNetwork()
			if tc.spec != nil {
				tc.spec(obj)
			}
			if tc.res != nil {
				tc.res(res)
			}
			got := tenantActuator.Diff(generic.TestScope(nil), obj, res).Fields()
			if !slices.Equal(got, tc.want) {
				t.Errorf("Diff = %v, want %v", got, tc.want)
			}
		})
	}
}

func testProviderNetwork() *kupenstackv1.ProviderNetwork {
	return &kupenstackv1.ProviderNetwork{ObjectMeta: metav1.ObjectMeta{Name: "ext", UID: "u1"},
		Spec: kupenstackv1.ProviderNetworkSpec{
			NetworkParameters: kupenstackv1.NetworkParameters{Description: "d", Tags: []kupenstackv1.NeutronTag{"a"}},
			NetworkType:       "vlan", PhysicalNetwork: "public", SegmentationID: new(120), External: true,
		}}
}

func inSyncProviderNetwork() *osNetwork {
	n := &osNetwork{Network: networks.Network{Name: "ext", Description: "d", AdminStateUp: true, Tags: []string{ownerTag, "a"}}}
	n.External = true
	n.NetworkType, n.PhysicalNetwork, n.SegmentationID = "vlan", "public", "120"
	n.MTU = 1500
	return n
}

func TestProviderNetworkDiff(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec func(*kupenstackv1.ProviderNetwork)
		res  func(*osNetwork)
		want []string
	}{
		{name: "unchanged"},
		// The tenant kind's fields are compared for the provider kind too.
		{name: "description changed", res: func(n *osNetwork) { n.Description = "x" }, want: []string{"spec.description"}},
		{name: "tag removed", res: func(n *osNetwork) { n.Tags = []string{ownerTag} }, want: []string{"spec.tags"}},
		{name: "name changed", res: func(n *osNetwork) { n.Name = "y" }, want: []string{"spec.name"}},
		{name: "shared set", res: func(n *osNetwork) { n.Shared = true }, want: []string{"spec.shared"}},
		{name: "shared unset", spec: func(n *kupenstackv1.ProviderNetwork) { n.Spec.Shared = true }, want: []string{"spec.shared"}},
		{name: "external unset", res: func(n *osNetwork) { n.External = false }, want: []string{"spec.external"}},
		{name: "segment changed", res: func(n *osNetwork) { n.SegmentationID = "121" }, want: []string{"spec.segmentationID"}},
		{name: "segment chosen by Neutron", spec: func(n *kupenstackv1.ProviderNetwork) { n.Spec.SegmentationID = nil }, res: func(n *osNetwork) { n.SegmentationID = "121" }},
		{name: "type changed", res: func(n *osNetwork) { n.NetworkType = "flat"; n.SegmentationID = "" },
			want: []string{"spec.networkType", "spec.segmentationID"}},
		{name: "type chosen by Neutron", spec: func(n *kupenstackv1.ProviderNetwork) {
			n.Spec.NetworkType, n.Spec.PhysicalNetwork, n.Spec.SegmentationID = "", "", nil
		}},
		{name: "physical network changed", res: func(n *osNetwork) { n.PhysicalNetwork = "other" }, want: []string{"spec.physicalNetwork"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, res := testProviderNetwork(), inSyncProviderNetwork()
			if tc.spec != nil {
				tc.spec(obj)
			}
			if tc.res != nil {
				tc.res(res)
			}
			got := providerActuator.Diff(generic.TestScope(nil), obj, res).Fields()
			if !slices.Equal(got, tc.want) {
				t.Errorf("Diff = %v, want %v", got, tc.want)
			}
		})
	}
}
