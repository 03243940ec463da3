package e2e

import (
	"context"
	"fmt"
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// driftSecurityGroup is a SecurityGroup with a description, tags and rules, one referring to
// itself.
func driftSecurityGroup(ns string) []client.Object {
	return []client.Object{&kupenstackv1.SecurityGroup{ObjectMeta: objMeta(ns, "web"), Spec: kupenstackv1.SecurityGroupSpec{
		Description: "spec description", Tags: driftNetworkTags,
		Rules: []kupenstackv1.SecurityGroupRule{
			{Direction: "ingress", Protocol: "tcp", PortRangeMin: new(22), PortRangeMax: new(22), RemoteIPPrefix: "192.0.2.0/24"},
			{Direction: "ingress", Protocol: "tcp", PortRangeMin: new(80), PortRangeMax: new(80), RemoteGroupRef: "web"},
		},
	}}}
}

// driftSecurityGroupRules are the rules of driftSecurityGroup, as ruleStrings writes them.
var driftSecurityGroupRules = []string{"ingress/IPv4/tcp/22-22/192.0.2.0/24", "ingress/IPv4/tcp/80-80/self"}

// securityGroupRulesDrift is a spec.rules case: change edits the group's rules as an admin
// (the rules it adds are the admin project's), repaired checks they are the spec's again.
func securityGroupRulesDrift(change func(ctx context.Context, c driftClients, g *groups.SecGroup) error) fieldDrift {
	return fieldDrift{
		kind: "SecurityGroup", field: "spec.rules", objects: driftSecurityGroup,
		change: func(ctx context.Context, c driftClients, obj generic.Object) error {
			g, err := groups.Get(ctx, c.neutron, obj.GetManagedStatus().ID).Extract()
			if err != nil {
				return err
			}
			return change(ctx, c, g)
		},
		repaired: func(ctx context.Context, c driftClients, obj generic.Object) error {
			g, err := groups.Get(ctx, c.neutron, obj.GetManagedStatus().ID).Extract()
			if err != nil {
				return err
			}
			if have := ruleStrings(g.Rules, g.ID); !slices.Equal(have, driftSecurityGroupRules) {
				return fmt.Errorf("rules %v, want %v", have, driftSecurityGroupRules)
			}
			return nil
		},
	}
}

// deleteRule deletes g's rule on port.
func deleteRule(ctx context.Context, c driftClients, g *groups.SecGroup, port int) error {
	for _, r := range g.Rules {
		if r.PortRangeMin == port {
			return rules.Delete(ctx, c.neutron, r.ID).ExtractErr()
		}
	}
	return fmt.Errorf("no rule on port %d in %v", port, ruleStrings(g.Rules, g.ID))
}

func addRule(ctx context.Context, c driftClients, g *groups.SecGroup, port int, prefix string) error {
	return rules.Create(ctx, c.neutron, rules.CreateOpts{Direction: rules.DirIngress, EtherType: rules.EtherType4,
		SecGroupID: g.ID, Protocol: rules.ProtocolTCP, PortRangeMin: port, PortRangeMax: port, RemoteIPPrefix: prefix}).Err
}

func init() {
	sg := func(field string, attrs map[string]any, repaired func(generic.Object, map[string]any) error) fieldDrift {
		return neutronAttrDrift("SecurityGroup", "security-groups", field, driftSecurityGroup, attrs, repaired)
	}
	addFieldDrifts(
		sg("spec.name", map[string]any{"name": "renamed-out-of-band"}, neutronNameIs),
		sg("spec.description", map[string]any{"description": "out of band"}, neutronAttrIs("description", "spec description")),
		neutronTagsDrift("SecurityGroup", "security-groups", driftSecurityGroup, driftNetworkTags),
		securityGroupRulesDrift(func(ctx context.Context, c driftClients, g *groups.SecGroup) error {
			return addRule(ctx, c, g, 443, "0.0.0.0/0") // added
		}),
		securityGroupRulesDrift(func(ctx context.Context, c driftClients, g *groups.SecGroup) error {
			return deleteRule(ctx, c, g, 22) // removed
		}),
		securityGroupRulesDrift(func(ctx context.Context, c driftClients, g *groups.SecGroup) error {
			// changed: Neutron cannot update a rule, so an admin replaces it (wider, here).
			if err := deleteRule(ctx, c, g, 22); err != nil {
				return err
			}
			return addRule(ctx, c, g, 22, "0.0.0.0/0")
		}),
	)
}
