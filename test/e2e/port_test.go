package e2e

import (
	"fmt"
	"slices"
	"testing"

	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// TestPortUpdates: a port gets its fixed address and security groups, then follows changes of
// its security groups and allowed address pairs in place (same port ID).
func TestPortUpdates(t *testing.T) {
	parallel(t)
	provider, cloud := connect(t)
	ctx := env.Ctx
	neutronAdmin, err := gcopenstack.NewNetworkV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	deps := []client.Object{
		&kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: ns}},
		&kupenstackv1.Subnet{ObjectMeta: metav1.ObjectMeta{Name: "sub", Namespace: ns}, Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.50.0.0/24"}}},
		&kupenstackv1.SecurityGroup{ObjectMeta: metav1.ObjectMeta{Name: "sg1", Namespace: ns}},
		&kupenstackv1.SecurityGroup{ObjectMeta: metav1.ObjectMeta{Name: "sg2", Namespace: ns}},
	}
	port := &kupenstackv1.Port{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}, Spec: kupenstackv1.PortSpec{
		NetworkRef:        "net",
		FixedIPs:          []kupenstackv1.PortFixedIP{{SubnetRef: "sub", IPAddress: "10.50.0.20"}},
		SecurityGroupRefs: []string{"sg1"},
	}}
	for _, o := range append(deps, port) {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	sgID := func(name string) string {
		var sg kupenstackv1.SecurityGroup
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &sg); err != nil {
			t.Fatal(err)
		}
		return sg.Status.ID
	}
	var firstID string
	expect := func(sg string, pairs ...string) {
		t.Helper()
		eventually(t, fmt.Sprintf("port with %s and pairs %v", sg, pairs), func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(port), port); err != nil {
				return err
			}
			if !conditions.IsReady(port.Status.Conditions, port.Generation) {
				return fmt.Errorf("not ready: %+v", port.Status.Conditions)
			}
			p, err := ports.Get(ctx, neutronAdmin, port.Status.ID).Extract()
			if err != nil {
				return err
			}
			var have []string
			for _, ap := range p.AllowedAddressPairs {
				have = append(have, ap.IPAddress)
			}
			if !slices.Equal(p.SecurityGroups, []string{sgID(sg)}) || !slices.Equal(have, pairs) ||
				len(p.FixedIPs) != 1 || p.FixedIPs[0].IPAddress != "10.50.0.20" {
				return fmt.Errorf("port = groups %v pairs %v ips %v", p.SecurityGroups, have, p.FixedIPs)
			}
			return nil
		})
		if firstID == "" {
			firstID = port.Status.ID
		} else if port.Status.ID != firstID {
			t.Fatalf("port replaced (%s -> %s); want updated in place", firstID, port.Status.ID)
		}
	}
	expect("sg1")

	updateSpec(t, port, func(port *kupenstackv1.Port) {
		port.Spec.SecurityGroupRefs = []string{"sg2"}
		port.Spec.AllowedAddressPairs = []kupenstackv1.AddressPair{{IPAddress: "10.50.0.100"}}
	})
	expect("sg2", "10.50.0.100")

	for _, o := range append(deps, port) {
		if err := env.Client.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range append(deps, port) {
		waitGone(t, o)
	}
	if err := ports.Get(ctx, neutronAdmin, firstID).Err; !openstack.IsNotFound(err) {
		t.Errorf("port left in OpenStack: %v", err)
	}
	deleteProject(t, ns)
}
