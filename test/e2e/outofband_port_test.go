package e2e

import (
	"context"
	"fmt"
	"slices"

	"github.com/gophercloud/gophercloud/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// neutronPutJSON sends body to a Neutron resource's path (e.g. "ports", id), as an admin would.
func neutronPutJSON(ctx context.Context, c driftClients, body any, path ...string) error {
	_, err := c.neutron.Put(ctx, c.neutron.ServiceURL(path...), body, nil, &gophercloud.RequestOpts{OkCodes: []int{200, 201}})
	return err
}

// neutronGetJSON reads a Neutron resource into out.
func neutronGetJSON(ctx context.Context, c driftClients, out any, path ...string) error {
	_, err := c.neutron.Get(ctx, c.neutron.ServiceURL(path...), out, nil)
	return err
}

// objectID is the OpenStack ID in the status of obj's namespace's object name (obj's type decides the kind).
func objectID(ctx context.Context, ns, name string, obj generic.Object) (string, error) {
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		return "", err
	}
	return obj.GetManagedStatus().ID, nil
}

// oobPort is the Port as Neutron has it, the fields the out-of-band cases change.
type oobPort struct {
	Name                string   `json:"name"`
	Description         string   `json:"description"`
	AdminStateUp        bool     `json:"admin_state_up"`
	PortSecurityEnabled bool     `json:"port_security_enabled"`
	SecurityGroups      []string `json:"security_groups"`
	FixedIPs            []struct {
		SubnetID  string `json:"subnet_id"`
		IPAddress string `json:"ip_address"`
	} `json:"fixed_ips"`
	AllowedAddressPairs []struct {
		IPAddress string `json:"ip_address"`
	} `json:"allowed_address_pairs"`
	Tags []string `json:"tags"`
}

func getOOBPort(ctx context.Context, c driftClients, id string) (oobPort, error) {
	var body struct {
		Port oobPort `json:"port"`
	}
	err := neutronGetJSON(ctx, c, &body, "ports", id)
	return body.Port, err
}

// portDriftObjects: a Port that sets every mutable field, with the network, subnet and two
// security groups it needs.
func portDriftObjects(ns string) []client.Object {
	up, security := true, true
	return []client.Object{
		&kupenstackv1.Network{ObjectMeta: objMeta(ns, "net")},
		&kupenstackv1.Subnet{ObjectMeta: objMeta(ns, "sub"), Spec: kupenstackv1.SubnetSpec{
			NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.63.0.0/24"}}},
		&kupenstackv1.SecurityGroup{ObjectMeta: objMeta(ns, "web")},
		&kupenstackv1.SecurityGroup{ObjectMeta: objMeta(ns, "db")},
		&kupenstackv1.Port{ObjectMeta: objMeta(ns, "p"), Spec: kupenstackv1.PortSpec{
			NetworkRef: "net", Description: "spec description", AdminStateUp: &up, PortSecurityEnabled: &security,
			FixedIPs:            []kupenstackv1.PortFixedIP{{SubnetRef: "sub", IPAddress: "10.63.0.20"}},
			SecurityGroupRefs:   []string{"web"},
			AllowedAddressPairs: []kupenstackv1.AddressPair{{IPAddress: "10.63.0.100"}},
			Tags:                []kupenstackv1.NeutronTag{"spec-tag"},
		}},
	}
}

// portDrift is a Port case: change PUTs body to the port, repaired checks the port read back.
func portDrift(field string, body func(ctx context.Context, obj generic.Object) (any, error), repaired func(ctx context.Context, obj generic.Object, p oobPort) error) fieldDrift {
	return fieldDrift{
		kind: "Port", field: field, objects: portDriftObjects,
		change: func(ctx context.Context, c driftClients, obj generic.Object) error {
			b, err := body(ctx, obj)
			if err != nil {
				return err
			}
			return neutronPutJSON(ctx, c, map[string]any{"port": b}, "ports", obj.GetManagedStatus().ID)
		},
		repaired: func(ctx context.Context, c driftClients, obj generic.Object) error {
			p, err := getOOBPort(ctx, c, obj.GetManagedStatus().ID)
			if err != nil {
				return err
			}
			return repaired(ctx, obj, p)
		},
	}
}

func fixed(body map[string]any) func(context.Context, generic.Object) (any, error) {
	return func(context.Context, generic.Object) (any, error) { return body, nil }
}

func init() {
	addFieldDrifts(
		portDrift("spec.name", fixed(map[string]any{"name": "renamed-out-of-band"}), func(_ context.Context, obj generic.Object, p oobPort) error {
			if p.Name != obj.GetName() {
				return fmt.Errorf("name %q", p.Name)
			}
			return nil
		}),
		portDrift("spec.description", fixed(map[string]any{"description": "out of band"}), func(_ context.Context, _ generic.Object, p oobPort) error {
			if p.Description != "spec description" {
				return fmt.Errorf("description %q", p.Description)
			}
			return nil
		}),
		portDrift("spec.adminStateUp", fixed(map[string]any{"admin_state_up": false}), func(_ context.Context, _ generic.Object, p oobPort) error {
			if !p.AdminStateUp {
				return fmt.Errorf("admin state down")
			}
			return nil
		}),
		// Neutron disables port security only on a port without security groups and address pairs.
		portDrift("spec.portSecurityEnabled", fixed(map[string]any{"port_security_enabled": false, "security_groups": []string{}, "allowed_address_pairs": []any{}}),
			func(_ context.Context, _ generic.Object, p oobPort) error {
				if !p.PortSecurityEnabled || len(p.SecurityGroups) != 1 || len(p.AllowedAddressPairs) != 1 {
					return fmt.Errorf("port security %v, groups %v, pairs %v", p.PortSecurityEnabled, p.SecurityGroups, p.AllowedAddressPairs)
				}
				return nil
			}),
		// Swapped for the namespace's other SecurityGroup.
		portDrift("spec.securityGroupRefs", func(ctx context.Context, obj generic.Object) (any, error) {
			db, err := objectID(ctx, obj.GetNamespace(), "db", &kupenstackv1.SecurityGroup{})
			return map[string]any{"security_groups": []string{db}}, err
		}, func(ctx context.Context, obj generic.Object, p oobPort) error {
			web, err := objectID(ctx, obj.GetNamespace(), "web", &kupenstackv1.SecurityGroup{})
			if err != nil {
				return err
			}
			if !slices.Equal(p.SecurityGroups, []string{web}) {
				return fmt.Errorf("security groups %v, want [%s]", p.SecurityGroups, web)
			}
			return nil
		}),
		portDrift("spec.fixedIPs", func(ctx context.Context, obj generic.Object) (any, error) {
			sub, err := objectID(ctx, obj.GetNamespace(), "sub", &kupenstackv1.Subnet{})
			return map[string]any{"fixed_ips": []map[string]string{{"subnet_id": sub, "ip_address": "10.63.0.21"}}}, err
		}, func(_ context.Context, _ generic.Object, p oobPort) error {
			if len(p.FixedIPs) != 1 || p.FixedIPs[0].IPAddress != "10.63.0.20" {
				return fmt.Errorf("fixed IPs %v", p.FixedIPs)
			}
			return nil
		}),
		portDrift("spec.allowedAddressPairs", fixed(map[string]any{"allowed_address_pairs": []map[string]string{{"ip_address": "10.63.0.101"}}}),
			func(_ context.Context, _ generic.Object, p oobPort) error {
				if len(p.AllowedAddressPairs) != 1 || p.AllowedAddressPairs[0].IPAddress != "10.63.0.100" {
					return fmt.Errorf("address pairs %v", p.AllowedAddressPairs)
				}
				return nil
			}),
		fieldDrift{
			kind: "Port", field: "spec.tags", objects: portDriftObjects,
			change:   replaceNeutronTags("ports"),
			repaired: neutronTagsRepaired("ports", "spec-tag"),
		},
	)
}

// replaceNeutronTags replaces the resource's tags (KupenStack's owner tag included) with one of
// an admin's.
func replaceNeutronTags(collection string) func(ctx context.Context, c driftClients, obj generic.Object) error {
	return func(ctx context.Context, c driftClients, obj generic.Object) error {
		return neutronPutJSON(ctx, c, map[string]any{"tags": []string{"out-of-band"}}, collection, obj.GetManagedStatus().ID, "tags")
	}
}

// neutronTagsRepaired checks that the resource has its owner tag and the spec's tags again, and no other.
func neutronTagsRepaired(collection string, specTags ...string) func(ctx context.Context, c driftClients, obj generic.Object) error {
	return func(ctx context.Context, c driftClients, obj generic.Object) error {
		var body struct {
			Tags []string `json:"tags"`
		}
		if err := neutronGetJSON(ctx, c, &body, collection, obj.GetManagedStatus().ID, "tags"); err != nil {
			return err
		}
		want := append([]string{generic.OwnerTag(obj)}, specTags...)
		slices.Sort(want)
		slices.Sort(body.Tags)
		if !slices.Equal(body.Tags, want) {
			return fmt.Errorf("tags %v, want %v", body.Tags, want)
		}
		return nil
	}
}
