package e2e

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// fipDriftObjects: a FloatingIP associated with one of the two addresses of port p1, behind a
// router to the public network; p2 is where an admin moves it.
func fipDriftObjects(ns string) []client.Object {
	return []client.Object{
		publicNetwork(ns),
		&kupenstackv1.Network{ObjectMeta: objMeta(ns, "net")},
		&kupenstackv1.Subnet{ObjectMeta: objMeta(ns, "sub"), Spec: kupenstackv1.SubnetSpec{
			NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.64.0.0/24"}}},
		&kupenstackv1.Router{ObjectMeta: objMeta(ns, "r"), Spec: kupenstackv1.RouterSpec{
			ExternalGateway: &kupenstackv1.RouterGateway{NetworkRef: "public"},
			Interfaces:      []kupenstackv1.RouterInterface{{SubnetRef: "sub"}},
		}},
		&kupenstackv1.Port{ObjectMeta: objMeta(ns, "p1"), Spec: kupenstackv1.PortSpec{NetworkRef: "net",
			FixedIPs: []kupenstackv1.PortFixedIP{{SubnetRef: "sub", IPAddress: "10.64.0.10"}, {SubnetRef: "sub", IPAddress: "10.64.0.11"}}}},
		&kupenstackv1.Port{ObjectMeta: objMeta(ns, "p2"), Spec: kupenstackv1.PortSpec{NetworkRef: "net",
			FixedIPs: []kupenstackv1.PortFixedIP{{SubnetRef: "sub", IPAddress: "10.64.0.20"}}}},
		&kupenstackv1.FloatingIP{ObjectMeta: objMeta(ns, "fip"), Spec: kupenstackv1.FloatingIPSpec{
			FloatingNetworkRef: "public", Description: ns + "/fip", PortRef: "p1", FixedIPAddress: "10.64.0.10",
			Tags: []kupenstackv1.NeutronTag{"spec-tag"},
		}},
	}
}

type oobFloatingIP struct {
	Description string `json:"description"`
	PortID      string `json:"port_id"`
	FixedIP     string `json:"fixed_ip_address"`
}

// fipDrift is a FloatingIP case: change PUTs body to the floating IP; repaired wants the spec's
// description, association to p1's 10.64.0.10.
func fipDrift(field string, body func(ctx context.Context, obj generic.Object) (map[string]any, error)) fieldDrift {
	return fieldDrift{
		kind: "FloatingIP", field: field, objects: fipDriftObjects,
		change: func(ctx context.Context, c driftClients, obj generic.Object) error {
			b, err := body(ctx, obj)
			if err != nil {
				return err
			}
			return neutronPutJSON(ctx, c, map[string]any{"floatingip": b}, "floatingips", obj.GetManagedStatus().ID)
		},
		repaired: func(ctx context.Context, c driftClients, obj generic.Object) error {
			var body struct {
				FloatingIP oobFloatingIP `json:"floatingip"`
			}
			if err := neutronGetJSON(ctx, c, &body, "floatingips", obj.GetManagedStatus().ID); err != nil {
				return err
			}
			p1, err := objectID(ctx, obj.GetNamespace(), "p1", &kupenstackv1.Port{})
			if err != nil {
				return err
			}
			want := oobFloatingIP{Description: obj.GetNamespace() + "/fip", PortID: p1, FixedIP: "10.64.0.10"}
			if body.FloatingIP != want {
				return fmt.Errorf("floating IP %+v, want %+v", body.FloatingIP, want)
			}
			return nil
		},
	}
}

func init() {
	addFieldDrifts(
		// With the association, as Neutron wants for a port with several addresses.
		fipDrift("spec.description", func(ctx context.Context, obj generic.Object) (map[string]any, error) {
			p1, err := objectID(ctx, obj.GetNamespace(), "p1", &kupenstackv1.Port{})
			return map[string]any{"description": "out of band", "port_id": p1, "fixed_ip_address": "10.64.0.10"}, err
		}),
		// Moved to another port.
		fipDrift("spec.portRef", func(ctx context.Context, obj generic.Object) (map[string]any, error) {
			p2, err := objectID(ctx, obj.GetNamespace(), "p2", &kupenstackv1.Port{})
			return map[string]any{"port_id": p2}, err
		}),
		// Disassociated.
		fipDrift("spec.portRef", func(context.Context, generic.Object) (map[string]any, error) {
			return map[string]any{"port_id": nil}, nil
		}),
		// The port's other address.
		fipDrift("spec.fixedIPAddress", func(ctx context.Context, obj generic.Object) (map[string]any, error) {
			p1, err := objectID(ctx, obj.GetNamespace(), "p1", &kupenstackv1.Port{})
			return map[string]any{"port_id": p1, "fixed_ip_address": "10.64.0.11"}, err
		}),
		fieldDrift{
			kind: "FloatingIP", field: "spec.tags", objects: fipDriftObjects,
			change:   replaceNeutronTags("floatingips"),
			repaired: neutronTagsRepaired("floatingips", "spec-tag"),
		},
	)
}
