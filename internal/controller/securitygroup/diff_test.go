package securitygroup

import (
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

const ownerTag = "kupenstack-uid-u1"

func testGroup() *kupenstackv1.SecurityGroup {
	return &kupenstackv1.SecurityGroup{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"},
		Spec: kupenstackv1.SecurityGroupSpec{Description: "d", Tags: []kupenstackv1.NeutronTag{"a", "b"},
			Rules: []kupenstackv1.SecurityGroupRule{
				{Direction: "ingress", Protocol: "tcp", PortRangeMin: new(22), PortRangeMax: new(22), RemoteIPPrefix: "10.0.0.0/8", Description: "ssh"},
				{Direction: "ingress", Ethertype: "IPv4", Protocol: "tcp", PortRangeMin: new(80), PortRangeMax: new(80), RemoteGroupRef: "lb"},
				{Direction: "ingress", RemoteGroupRef: "web"},
				{Direction: "egress", Ethertype: "IPv6"},
			}}}
}

func inSyncGroup() *groups.SecGroup {
	return &groups.SecGroup{ID: "sg-web", Name: "web", Description: "d", Tags: []string{"b", ownerTag, "a"},
		Rules: []rules.SecGroupRule{
			{ID: "r1", Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortRangeMin: 22, PortRangeMax: 22, RemoteIPPrefix: "10.0.0.0/8"},
			{ID: "r2", Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortRangeMin: 80, PortRangeMax: 80, RemoteGroupID: "sg-lb"},
			{ID: "r3", Direction: "ingress", EtherType: "IPv4", RemoteGroupID: "sg-web"},
			{ID: "r4", Direction: "egress", EtherType: "IPv6"},
		}}
}

func TestSecurityGroupDiff(t *testing.T) {
	for _, tc := range []struct {
		name string
		deps map[string]string
		spec func(*kupenstackv1.SecurityGroup)
		res  func(*groups.SecGroup)
		want []string
	}{
		{name: "unchanged"},
		{name: "name changed", res: func(g *groups.SecGroup) { g.Name = "x" }, want: []string{"spec.name"}},
		{name: "spec name", spec: func(g *kupenstackv1.SecurityGroup) { g.Spec.Name = "custom" }, want: []string{"spec.name"}},
		{name: "description changed", res: func(g *groups.SecGroup) { g.Description = "x" }, want: []string{"spec.description"}},
		{name: "description removed", res: func(g *groups.SecGroup) { g.Description = "" }, want: []string{"spec.description"}},
		{name: "tag added", res: func(g *groups.SecGroup) { g.Tags = append(g.Tags, "c") }, want: []string{"spec.tags"}},
		{name: "tag removed", res: func(g *groups.SecGroup) { g.Tags = []string{"a", ownerTag} }, want: []string{"spec.tags"}},
		{name: "tag changed", res: func(g *groups.SecGroup) { g.Tags = []string{"a", "c", ownerTag} }, want: []string{"spec.tags"}},
		{name: "tags reordered", res: func(g *groups.SecGroup) { g.Tags = []string{ownerTag, "a", "b"} }},
		{name: "rule added", res: func(g *groups.SecGroup) {
			g.Rules = append(g.Rules, rules.SecGroupRule{ID: "r5", Direction: "egress", EtherType: "IPv4"})
		}, want: []string{"spec.rules"}},
		{name: "rule removed", res: func(g *groups.SecGroup) { g.Rules = g.Rules[1:] }, want: []string{"spec.rules"}},
		{name: "rule's port changed", res: func(g *groups.SecGroup) { g.Rules[0].PortRangeMax = 23 }, want: []string{"spec.rules"}},
		{name: "rule's prefix changed", res: func(g *groups.SecGroup) { g.Rules[0].RemoteIPPrefix = "0.0.0.0/0" }, want: []string{"spec.rules"}},
		{name: "rule's protocol changed", res: func(g *groups.SecGroup) { g.Rules[0].Protocol = "udp" }, want: []string{"spec.rules"}},
		{name: "rule's direction changed", res: func(g *groups.SecGroup) { g.Rules[3].Direction = "ingress" }, want: []string{"spec.rules"}},
		{name: "rule's ethertype changed", res: func(g *groups.SecGroup) { g.Rules[3].EtherType = "IPv4" }, want: []string{"spec.rules"}},
		{name: "rule's remote group changed", res: func(g *groups.SecGroup) { g.Rules[1].RemoteGroupID = "sg-other" }, want: []string{"spec.rules"}},
		{name: "rule twice", res: func(g *groups.SecGroup) {
			twin := g.Rules[0]
			twin.ID = "r1b"
			g.Rules = append(g.Rules, twin)
		}, want: []string{"spec.rules"}},
		{name: "rules reordered", res: func(g *groups.SecGroup) { slices.Reverse(g.Rules) }},
		{name: "spec rules reordered", spec: func(g *kupenstackv1.SecurityGroup) { slices.Reverse(g.Spec.Rules) }},
		// Neutron answers the prefix in its canonical form.
		{name: "prefix spelled otherwise", spec: func(g *kupenstackv1.SecurityGroup) { g.Spec.Rules[0].RemoteIPPrefix = "10.1.2.3/8" }},
		// Neutron cannot update a rule's description: not compared.
		{name: "rule description", res: func(g *groups.SecGroup) { g.Rules[0].Description = "other" }},
		{name: "remote group re-created", deps: map[string]string{"SecurityGroup/lb": "sg-lb2"}, want: []string{"spec.rules"}},
		// The drift check before the remote group is cached: its rules cannot be compared.
		{name: "remote group not resolved", deps: map[string]string{}, res: func(g *groups.SecGroup) { g.Rules = g.Rules[:1] }},
		{name: "remote group not resolved, description changed", deps: map[string]string{},
			res: func(g *groups.SecGroup) { g.Description = "x" }, want: []string{"spec.description"}},
		{name: "several", res: func(g *groups.SecGroup) { g.Name, g.Rules = "x", nil }, want: []string{"spec.name", "spec.rules"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, res := testGroup(), inSyncGroup()
			if tc.spec != nil {
				tc.spec(obj)
			}
			if tc.res != nil {
				tc.res(res)
			}
			deps := tc.deps
			if deps == nil {
				deps = map[string]string{"SecurityGroup/lb": "sg-lb"}
			}
			got := actuator{}.Diff(generic.TestScope(deps), obj, res).Fields()
			if !slices.Equal(got, tc.want) {
				t.Errorf("Diff = %v, want %v", got, tc.want)
			}
		})
	}
}
