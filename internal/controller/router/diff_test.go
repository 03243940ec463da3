package router

import (
	"net/url"
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
)

func spec() *kupenstackv1.Router {
	up := true
	return &kupenstackv1.Router{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "edge", UID: types.UID("uid-1")},
		Spec: kupenstackv1.RouterSpec{
			Description: "d", AdminStateUp: &up,
			ExternalGateway: &kupenstackv1.RouterGateway{NetworkRef: "public"},
			Interfaces:      []kupenstackv1.RouterInterface{{SubnetRef: "a"}, {SubnetRef: "b"}},
			Tags:            []kupenstackv1.NeutronTag{"x", "y"},
		},
	}
}

func matching(r *kupenstackv1.Router) *osRouter {
	tags := neutron.Tags(r, r.Spec.Tags)
	slices.Reverse(tags)
	res := &osRouter{Router: routers.Router{Name: "edge", Description: "d", AdminStateUp: true, Tags: tags,
		GatewayInfo: routers.GatewayInfo{NetworkID: "ext-1", ExternalFixedIPs: []routers.ExternalFixedIP{{IPAddress: "172.24.4.3"}}}}}
	res.Interfaces = []kupenstackv1.RouterInterfaceStatus{{SubnetID: "sub-b", PortID: "p2"}, {SubnetID: "sub-a", PortID: "p1"}}
	return res
}

func TestDiff(t *testing.T) {
	f := false
	for _, tc := range []struct {
		name string
		ids  map[string]string
		spec func(*kupenstackv1.Router)
		res  func(*osRouter)
		want []string
	}{
		{name: "unchanged, lists reordered"},
		{name: "name changed", res: func(r *osRouter) { r.Name = "other" }, want: []string{fieldName}},
		{name: "name set in the spec", spec: func(r *kupenstackv1.Router) { r.Spec.Name = "custom" }, want: []string{fieldName}},
		{name: "description changed", res: func(r *osRouter) { r.Description = "x" }, want: []string{fieldDescription}},
		{name: "admin state changed", res: func(r *osRouter) { r.AdminStateUp = false }, want: []string{fieldAdminStateUp}},
		{name: "admin state down in the spec", spec: func(r *kupenstackv1.Router) { r.Spec.AdminStateUp = &f }, want: []string{fieldAdminStateUp}},
		{name: "admin state unset: any", spec: func(r *kupenstackv1.Router) { r.Spec.AdminStateUp = nil }, res: func(r *osRouter) { r.AdminStateUp = false }},
		{name: "gateway removed", res: func(r *osRouter) { r.GatewayInfo = routers.GatewayInfo{} }, want: []string{fieldExternalGateway}},
		{name: "gateway on another network", res: func(r *osRouter) { r.GatewayInfo.NetworkID = "ext-2" }, want: []string{fieldExternalGateway}},
		{name: "gateway added, the spec has none", spec: func(r *kupenstackv1.Router) { r.Spec.ExternalGateway = nil }, want: []string{fieldExternalGateway}},
		{name: "gateway network re-created with a new ID", ids: map[string]string{"Network/public": "ext-3"}, want: []string{fieldExternalGateway}},
		{
			name: "gateway on a provider network", ids: map[string]string{"ProviderNetwork/ext": "ext-1"},
			spec: func(r *kupenstackv1.Router) {
				r.Spec.ExternalGateway = &kupenstackv1.RouterGateway{ProviderNetworkRef: "ext"}
			},
		},
		{name: "gateway's addresses and SNAT are Neutron's", res: func(r *osRouter) { r.GatewayInfo.ExternalFixedIPs = nil; r.GatewayInfo.EnableSNAT = &f }},
		{name: "interface removed", res: func(r *osRouter) { r.Interfaces = r.Interfaces[1:] }, want: []string{fieldInterfaces}},
		{name: "interface added out of band", res: func(r *osRouter) {
			r.Interfaces = append(r.Interfaces, kupenstackv1.RouterInterfaceStatus{SubnetID: "sub-c", PortID: "p3"})
		}, want: []string{fieldInterfaces}},
		{name: "interface swapped", res: func(r *osRouter) { r.Interfaces[0].SubnetID = "sub-c" }, want: []string{fieldInterfaces}},
		{name: "interface's subnet re-created with a new ID", ids: map[string]string{"Subnet/a": "sub-a2"}, want: []string{fieldInterfaces}},
		{name: "no interfaces in the spec", spec: func(r *kupenstackv1.Router) { r.Spec.Interfaces = nil }, want: []string{fieldInterfaces}},
		{name: "tag removed", res: func(r *osRouter) { r.Tags = r.Tags[1:] }, want: []string{fieldTags}},
		{name: "tag added", res: func(r *osRouter) { r.Tags = append(r.Tags, "z") }, want: []string{fieldTags}},
		{name: "tag changed", spec: func(r *kupenstackv1.Router) { r.Spec.Tags[0] = "w" }, want: []string{fieldTags}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := spec()
			res := matching(r)
			if tc.spec != nil {
				tc.spec(r)
			}
			if tc.res != nil {
				tc.res(res)
			}
			ids := map[string]string{"Network/public": "ext-1", "Subnet/a": "sub-a", "Subnet/b": "sub-b"}
			for k, v := range tc.ids {
				ids[k] = v
			}
			got := actuator{}.Diff(generic.TestScope(ids), r, res)
			if !slices.Equal(got.Fields(), tc.want) {
				t.Errorf("changes %v, want %v", got, tc.want)
			}
		})
	}
}

// The drift check's list gives each router the interface ports of its own, from one list of several routers'.
func TestWithInterfaces(t *testing.T) {
	ifaces := []ports.Port{
		{ID: "p1", DeviceID: "r1", FixedIPs: []ports.IP{{SubnetID: "s2", IPAddress: "10.0.2.1"}, {SubnetID: "s1", IPAddress: "10.0.1.1"}}},
		{ID: "p2", DeviceID: "r2", FixedIPs: []ports.IP{{SubnetID: "s3", IPAddress: "10.0.3.1"}}},
	}
	got := withInterfaces(&routers.Router{ID: "r1"}, ifaces)
	want := []kupenstackv1.RouterInterfaceStatus{{SubnetID: "s1", PortID: "p1", IPAddress: "10.0.1.1"}, {SubnetID: "s2", PortID: "p1", IPAddress: "10.0.2.1"}}
	if !slices.Equal(got.Interfaces, want) {
		t.Errorf("interfaces %v, want %v", got.Interfaces, want)
	}
	q, _ := interfaceQuery{"r1", "r2"}.ToPortListQuery()
	v, err := url.ParseQuery(q[1:])
	if err != nil || !slices.Equal(v["device_id"], []string{"r1", "r2"}) || v.Get("device_owner") != "network:router_interface" {
		t.Errorf("query %q", q)
	}
}
