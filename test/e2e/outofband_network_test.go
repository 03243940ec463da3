package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
)

// neutronAttrDrift is a case of a Neutron kind whose change PUTs attrs to the resource (of
// collection, e.g. "networks") as an admin would; repaired reads the resource's attributes back.
func neutronAttrDrift(kind, collection, field string, objects func(ns string) []client.Object, attrs map[string]any,
	repaired func(obj generic.Object, got map[string]any) error,
) fieldDrift {
	singular := strings.ReplaceAll(strings.TrimSuffix(collection, "s"), "-", "_") // "security_group"
	return fieldDrift{
		kind: kind, field: field, objects: objects,
		change: func(ctx context.Context, c driftClients, obj generic.Object) error {
			_, err := c.neutron.Put(ctx, c.neutron.ServiceURL(collection, obj.GetManagedStatus().ID),
				map[string]any{singular: attrs}, nil, &gophercloud.RequestOpts{OkCodes: []int{200}})
			return err
		},
		repaired: func(ctx context.Context, c driftClients, obj generic.Object) error {
			var body map[string]map[string]any
			if _, err := c.neutron.Get(ctx, c.neutron.ServiceURL(collection, obj.GetManagedStatus().ID), &body, nil); err != nil {
				return err
			}
			return repaired(obj, body[singular])
		},
	}
}

// neutronAttrIs is a repaired check: the attribute is want again.
func neutronAttrIs(attr string, want any) func(generic.Object, map[string]any) error {
	return func(_ generic.Object, got map[string]any) error {
		if fmt.Sprint(got[attr]) != fmt.Sprint(want) {
			return fmt.Errorf("%s is %v, want %v", attr, got[attr], want)
		}
		return nil
	}
}

// neutronNameIs is a repaired check: the name is the object's again.
func neutronNameIs(obj generic.Object, got map[string]any) error {
	return neutronAttrIs("name", obj.GetName())(obj, got)
}

// neutronTagsDrift is a case that replaces the resource's tags (the owner tag with them) with one
// of an admin's; repaired checks they are the spec's and the owner tag again.
func neutronTagsDrift(kind, collection string, objects func(ns string) []client.Object, spec []kupenstackv1.NeutronTag) fieldDrift {
	d := neutronAttrDrift(kind, collection, "spec.tags", objects, nil, func(obj generic.Object, got map[string]any) error {
		var have []string
		tags, _ := got["tags"].([]any)
		for _, t := range tags {
			have = append(have, fmt.Sprint(t))
		}
		slices.Sort(have)
		if want := neutron.Tags(obj, spec); !slices.Equal(have, want) {
			return fmt.Errorf("tags %v, want %v", have, want)
		}
		return nil
	})
	d.change = func(ctx context.Context, c driftClients, obj generic.Object) error {
		_, err := c.neutron.Put(ctx, c.neutron.ServiceURL(collection, obj.GetManagedStatus().ID, "tags"),
			map[string]any{"tags": []string{"out-of-band"}}, nil, &gophercloud.RequestOpts{OkCodes: []int{200}})
		return err
	}
	return d
}

var driftNetworkTags = []kupenstackv1.NeutronTag{"spec-tag", "other"}

// driftNetwork is a Network that sets every mutable field.
func driftNetwork(ns string) []client.Object {
	return []client.Object{&kupenstackv1.Network{ObjectMeta: objMeta(ns, "net"), Spec: kupenstackv1.NetworkSpec{
		NetworkParameters: kupenstackv1.NetworkParameters{
			Description: "spec description", AdminStateUp: new(true), MTU: new(1400), PortSecurityEnabled: new(true),
			Tags: driftNetworkTags,
		}}}}
}

// driftProviderNetwork is a ProviderNetwork named after ns, on a VLAN of vlanPhysnet as in
// TestProviderNetwork (the segment Neutron's choice: they are few).
func driftProviderNetwork(ns string) *kupenstackv1.ProviderNetwork {
	return &kupenstackv1.ProviderNetwork{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: kupenstackv1.ProviderNetworkSpec{
		NetworkType: "vlan", PhysicalNetwork: vlanPhysnet(),
		NetworkParameters: kupenstackv1.NetworkParameters{Description: "spec description", Tags: driftNetworkTags,
			AdminStateUp: new(true), MTU: new(1400), PortSecurityEnabled: new(true)},
	}}
}

func init() {
	net := func(field string, attrs map[string]any, repaired func(generic.Object, map[string]any) error) fieldDrift {
		return neutronAttrDrift("Network", "networks", field, driftNetwork, attrs, repaired)
	}
	pnet := func(ns string) []client.Object { return []client.Object{driftProviderNetwork(ns)} }
	addFieldDrifts(
		net("spec.name", map[string]any{"name": "renamed-out-of-band"}, neutronNameIs),
		net("spec.description", map[string]any{"description": "out of band"}, neutronAttrIs("description", "spec description")),
		net("spec.adminStateUp", map[string]any{"admin_state_up": false}, neutronAttrIs("admin_state_up", true)),
		net("spec.mtu", map[string]any{"mtu": 1300}, neutronAttrIs("mtu", 1400)),
		net("spec.portSecurityEnabled", map[string]any{"port_security_enabled": false}, neutronAttrIs("port_security_enabled", true)),
		neutronTagsDrift("Network", "networks", driftNetwork, driftNetworkTags),

		neutronAttrDrift("ProviderNetwork", "networks", "spec.shared", pnet, map[string]any{"shared": true},
			neutronAttrIs("shared", false)),
		neutronAttrDrift("ProviderNetwork", "networks", "spec.description", pnet, map[string]any{"description": "out of band"},
			neutronAttrIs("description", "spec description")),
		neutronTagsDrift("ProviderNetwork", "networks", pnet, driftNetworkTags),
		neutronAttrDrift("ProviderNetwork", "networks", "spec.name", pnet, map[string]any{"name": "renamed-out-of-band"}, neutronNameIs),
		neutronAttrDrift("ProviderNetwork", "networks", "spec.adminStateUp", pnet, map[string]any{"admin_state_up": false},
			neutronAttrIs("admin_state_up", true)),
		neutronAttrDrift("ProviderNetwork", "networks", "spec.mtu", pnet, map[string]any{"mtu": 1300}, neutronAttrIs("mtu", 1400)),
		neutronAttrDrift("ProviderNetwork", "networks", "spec.portSecurityEnabled", pnet, map[string]any{"port_security_enabled": false},
			neutronAttrIs("port_security_enabled", true)),
		neutronAttrDrift("ProviderNetwork", "networks", "spec.external", pnet, map[string]any{"router:external": true},
			neutronAttrIs("router:external", false)),
	)
}
