package port

import (
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
)

var ids = map[string]string{
	"SecurityGroup/web": "sg-web", "SecurityGroup/db": "sg-db",
	"Subnet/v4": "sub-v4", "Subnet/v4b": "sub-v4b",
}

// spec is a Port that sets every mutable field.
func spec() *kupenstackv1.Port {
	up, ps := true, true
	return &kupenstackv1.Port{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web-0", UID: types.UID("uid-1")},
		Spec: kupenstackv1.PortSpec{
			NetworkRef: "net", Description: "d", AdminStateUp: &up, PortSecurityEnabled: &ps,
			SecurityGroupRefs:   []string{"web", "db"},
			FixedIPs:            []kupenstackv1.PortFixedIP{{SubnetRef: "v4", IPAddress: "10.0.0.5"}, {SubnetRef: "v4b"}},
			AllowedAddressPairs: []kupenstackv1.AddressPair{{IPAddress: "10.0.0.100"}, {IPAddress: "10.0.1.0/24", MACAddress: "fa:16:3e:00:00:01"}},
			Tags:                []kupenstackv1.NeutronTag{"a", "b"},
		},
	}
}

// matching is the port as Neutron has it when it matches spec().
func matching(p *kupenstackv1.Port) *osPort {
	res := &osPort{}
	res.Name, res.Description, res.AdminStateUp, res.PortSecurityEnabled = "web-0", "d", true, true
	res.SecurityGroups = []string{"sg-db", "sg-web"}
	res.FixedIPs = []ports.IP{{SubnetID: "sub-v4b", IPAddress: "10.0.1.9"}, {SubnetID: "sub-v4", IPAddress: "10.0.0.5"}}
	res.AllowedAddressPairs = []ports.AddressPair{
		{IPAddress: "10.0.1.0/24", MACAddress: "fa:16:3e:00:00:01"}, {IPAddress: "10.0.0.100", MACAddress: "fa:16:3e:aa:aa:aa"},
	}
	res.Tags = neutron.Tags(p, p.Spec.Tags)
	slices.Reverse(res.Tags)
	return res
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  map[string]string
		spec func(*kupenstackv1.Port)
		res  func(*osPort)
		want []string
	}{
		{name: "unchanged, lists reordered"},
		{name: "name changed", res: func(r *osPort) { r.Name = "other" }, want: []string{fieldName}},
		{name: "name from metadata", spec: func(p *kupenstackv1.Port) { p.Spec.Name = "custom" }, want: []string{fieldName}},
		{name: "description changed", res: func(r *osPort) { r.Description = "x" }, want: []string{fieldDescription}},
		{name: "description added", spec: func(p *kupenstackv1.Port) { p.Spec.Description = "" }, want: []string{fieldDescription}},
		{name: "admin state changed", res: func(r *osPort) { r.AdminStateUp = false }, want: []string{fieldAdminStateUp}},
		{name: "admin state unset: any", spec: func(p *kupenstackv1.Port) { p.Spec.AdminStateUp = nil }, res: func(r *osPort) { r.AdminStateUp = false }},
		{name: "port security changed", res: func(r *osPort) { r.PortSecurityEnabled = false }, want: []string{fieldPortSecurityEnabled}},
		{name: "port security unset: the network's", spec: func(p *kupenstackv1.Port) { p.Spec.PortSecurityEnabled = nil }, res: func(r *osPort) { r.PortSecurityEnabled = false }},
		{name: "security group swapped", res: func(r *osPort) { r.SecurityGroups = []string{"sg-db", "sg-other"} }, want: []string{fieldSecurityGroupRefs}},
		{name: "security group removed", res: func(r *osPort) { r.SecurityGroups = []string{"sg-db"} }, want: []string{fieldSecurityGroupRefs}},
		{name: "security group added", res: func(r *osPort) { r.SecurityGroups = append(r.SecurityGroups, "sg-x") }, want: []string{fieldSecurityGroupRefs}},
		{name: "security group re-created with a new ID", ids: map[string]string{"SecurityGroup/web": "sg-web-2"}, want: []string{fieldSecurityGroupRefs}},
		{name: "security groups unset: the default", spec: func(p *kupenstackv1.Port) { p.Spec.SecurityGroupRefs = nil }, res: func(r *osPort) { r.SecurityGroups = []string{"sg-default"} }},
		{name: "security groups emptied", spec: func(p *kupenstackv1.Port) { p.Spec.SecurityGroupRefs = []string{} }, want: []string{fieldSecurityGroupRefs}},
		{name: "fixed IP changed", res: func(r *osPort) { r.FixedIPs[1].IPAddress = "10.0.0.6" }, want: []string{fieldFixedIPs}},
		{name: "fixed IP removed", res: func(r *osPort) { r.FixedIPs = r.FixedIPs[1:] }, want: []string{fieldFixedIPs}},
		{name: "fixed IP added", res: func(r *osPort) { r.FixedIPs = append(r.FixedIPs, ports.IP{SubnetID: "sub-v4", IPAddress: "10.0.0.7"}) }, want: []string{fieldFixedIPs}},
		{name: "fixed IP without an address: any on its subnet", res: func(r *osPort) { r.FixedIPs[0].IPAddress = "10.0.1.10" }},
		{name: "fixed IP's subnet re-created with a new ID", ids: map[string]string{"Subnet/v4b": "sub-v4b-2"}, want: []string{fieldFixedIPs}},
		{name: "fixed IPs unset: Neutron's pick", spec: func(p *kupenstackv1.Port) { p.Spec.FixedIPs = nil }, res: func(r *osPort) { r.FixedIPs = r.FixedIPs[:1] }},
		{
			name: "address-less entry cannot take the address another names",
			spec: func(p *kupenstackv1.Port) {
				p.Spec.FixedIPs = []kupenstackv1.PortFixedIP{{SubnetRef: "v4"}, {SubnetRef: "v4", IPAddress: "10.0.0.5"}}
			},
			res: func(r *osPort) {
				r.FixedIPs = []ports.IP{{SubnetID: "sub-v4", IPAddress: "10.0.0.5"}, {SubnetID: "sub-v4b", IPAddress: "10.0.1.9"}}
			},
			want: []string{fieldFixedIPs},
		},
		{name: "address pair removed", res: func(r *osPort) { r.AllowedAddressPairs = r.AllowedAddressPairs[:1] }, want: []string{fieldAllowedAddressPairs}},
		{name: "address pair added", res: func(r *osPort) {
			r.AllowedAddressPairs = append(r.AllowedAddressPairs, ports.AddressPair{IPAddress: "1.2.3.4"})
		}, want: []string{fieldAllowedAddressPairs}},
		{name: "address pair changed", res: func(r *osPort) { r.AllowedAddressPairs[0].MACAddress = "fa:16:3e:00:00:02" }, want: []string{fieldAllowedAddressPairs}},
		{name: "address pairs added to a spec without", spec: func(p *kupenstackv1.Port) { p.Spec.AllowedAddressPairs = nil }, want: []string{fieldAllowedAddressPairs}},
		{name: "tag removed", res: func(r *osPort) { r.Tags = r.Tags[1:] }, want: []string{fieldTags}},
		{name: "tag added", res: func(r *osPort) { r.Tags = append(r.Tags, "x") }, want: []string{fieldTags}},
		{name: "tag changed", spec: func(p *kupenstackv1.Port) { p.Spec.Tags[0] = "c" }, want: []string{fieldTags}},
		{
			name: "several at once", res: func(r *osPort) { r.Description, r.SecurityGroups, r.Tags = "x", nil, nil },
			want: []string{fieldDescription, fieldSecurityGroupRefs, fieldTags},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := spec()
			res := matching(p)
			if tc.spec != nil {
				tc.spec(p)
			}
			if tc.res != nil {
				tc.res(res)
			}
			scopeIDs := map[string]string{}
			for k, v := range ids {
				scopeIDs[k] = v
			}
			for k, v := range tc.ids {
				scopeIDs[k] = v
			}
			got := actuator{}.Diff(generic.TestScope(scopeIDs), p, res)
			if !slices.Equal(got.Fields(), tc.want) {
				t.Errorf("changes %v, want %v", got, tc.want)
			}
		})
	}
}

func TestKeepAddresses(t *testing.T) {
	want := []ports.IP{{SubnetID: "a"}, {SubnetID: "a", IPAddress: "10.0.0.5"}, {SubnetID: "b"}}
	have := []ports.IP{{SubnetID: "a", IPAddress: "10.0.0.5"}, {SubnetID: "a", IPAddress: "10.0.0.6"}, {SubnetID: "c", IPAddress: "10.0.2.1"}}
	got := keepAddresses(want, have)
	expect := []ports.IP{{SubnetID: "a", IPAddress: "10.0.0.6"}, {SubnetID: "a", IPAddress: "10.0.0.5"}, {SubnetID: "b"}}
	if !slices.Equal(got, expect) {
		t.Errorf("got %v, want %v", got, expect)
	}
}
