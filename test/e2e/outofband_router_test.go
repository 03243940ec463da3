package e2e

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// routerDriftObjects: a Router that sets every field, attached to subnet a; subnet b is one an
// admin attaches it to.
func routerDriftObjects(ns string) []client.Object {
	up := true
	return []client.Object{
		publicNetwork(ns),
		&kupenstackv1.Network{ObjectMeta: objMeta(ns, "net")},
		&kupenstackv1.Subnet{ObjectMeta: objMeta(ns, "a"), Spec: kupenstackv1.SubnetSpec{
			NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.65.1.0/24"}}},
		&kupenstackv1.Subnet{ObjectMeta: objMeta(ns, "b"), Spec: kupenstackv1.SubnetSpec{
			NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.65.2.0/24"}}},
		&kupenstackv1.Router{ObjectMeta: objMeta(ns, "r"), Spec: kupenstackv1.RouterSpec{
			Description: "spec description", AdminStateUp: &up,
			ExternalGateway: &kupenstackv1.RouterGateway{NetworkRef: "public"},
			Interfaces:      []kupenstackv1.RouterInterface{{SubnetRef: "a"}},
			Tags:            []kupenstackv1.NeutronTag{"spec-tag"},
		}},
	}
}

type oobRouter struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	AdminStateUp bool   `json:"admin_state_up"`
	Gateway      *struct {
		NetworkID string `json:"network_id"`
	} `json:"external_gateway_info"`
}

// routerRepaired checks the router's own fields and its interfaces (on subnet a only).
func routerRepaired(ctx context.Context, c driftClients, obj generic.Object) error {
	ns, id := obj.GetNamespace(), obj.GetManagedStatus().ID
	var body struct {
		Router oobRouter `json:"router"`
	}
	if err := neutronGetJSON(ctx, c, &body, "routers", id); err != nil {
		return err
	}
	public, err := objectID(ctx, ns, "public", &kupenstackv1.Network{})
	if err != nil {
		return err
	}
	r := body.Router
	if r.Name != obj.GetName() || r.Description != "spec description" || !r.AdminStateUp || r.Gateway == nil || r.Gateway.NetworkID != public {
		return fmt.Errorf("router %+v (gateway %+v)", r, r.Gateway)
	}
	var ports struct {
		Ports []struct {
			FixedIPs []struct {
				SubnetID string `json:"subnet_id"`
			} `json:"fixed_ips"`
		} `json:"ports"`
	}
	q := url.Values{"device_id": {id}, "device_owner": {"network:router_interface"}}
	if _, err := c.neutron.Get(ctx, c.neutron.ServiceURL("ports")+"?"+q.Encode(), &ports, nil); err != nil {
		return err
	}
	var have []string
	for _, p := range ports.Ports {
		for _, ip := range p.FixedIPs {
			have = append(have, ip.SubnetID)
		}
	}
	a, err := objectID(ctx, ns, "a", &kupenstackv1.Subnet{})
	if err != nil {
		return err
	}
	if !slices.Equal(have, []string{a}) {
		return fmt.Errorf("interfaces on %v, want [%s]", have, a)
	}
	return nil
}

// routerDrift is a Router case whose change PUTs body to the router's path (under the router's ID).
func routerDrift(field string, body func(ctx context.Context, obj generic.Object) (any, error), path ...string) fieldDrift {
	return fieldDrift{
		kind: "Router", field: field, objects: routerDriftObjects, repaired: routerRepaired,
		change: func(ctx context.Context, c driftClients, obj generic.Object) error {
			b, err := body(ctx, obj)
			if err != nil {
				return err
			}
			return neutronPutJSON(ctx, c, b, append([]string{"routers", obj.GetManagedStatus().ID}, path...)...)
		},
	}
}

func routerUpdate(fields map[string]any) func(context.Context, generic.Object) (any, error) {
	return func(context.Context, generic.Object) (any, error) { return map[string]any{"router": fields}, nil }
}

// subnetInterface is an add_router_interface or remove_router_interface body for subnet name.
func subnetInterface(name string) func(context.Context, generic.Object) (any, error) {
	return func(ctx context.Context, obj generic.Object) (any, error) {
		id, err := objectID(ctx, obj.GetNamespace(), name, &kupenstackv1.Subnet{})
		return map[string]string{"subnet_id": id}, err
	}
}

func init() {
	addFieldDrifts(
		routerDrift("spec.name", routerUpdate(map[string]any{"name": "renamed-out-of-band"})),
		routerDrift("spec.description", routerUpdate(map[string]any{"description": "out of band"})),
		routerDrift("spec.adminStateUp", routerUpdate(map[string]any{"admin_state_up": false})),
		// Gateway removed.
		routerDrift("spec.externalGateway", routerUpdate(map[string]any{"external_gateway_info": map[string]any{}})),
		// The spec's interface removed, and another added: the spec owns the whole set.
		routerDrift("spec.interfaces", subnetInterface("a"), "remove_router_interface"),
		routerDrift("spec.interfaces", subnetInterface("b"), "add_router_interface"),
		fieldDrift{
			kind: "Router", field: "spec.tags", objects: routerDriftObjects,
			change:   replaceNeutronTags("routers"),
			repaired: neutronTagsRepaired("routers", "spec-tag"),
		},
	)
}
