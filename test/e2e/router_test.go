package e2e

import (
	"fmt"
	"slices"
	"testing"

	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// TestRouterInterfacesAndGateway: interfaces follow the spec as a set, the gateway can be removed
// and added back, and deleting the router detaches everything first.
func TestRouterInterfacesAndGateway(t *testing.T) {
	parallel(t)
	provider, cloud := connect(t)
	ctx := env.Ctx
	neutronAdmin, err := gcopenstack.NewNetworkV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	objs := []client.Object{
		&kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "public", Namespace: ns}, Spec: kupenstackv1.NetworkSpec{
			ManagedSpec: kupenstackv1.ManagedSpec{ManagementPolicy: kupenstackv1.ManagementPolicyUnmanaged, Import: &kupenstackv1.ImportSpec{Name: "public"}}}},
		&kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: ns}},
		&kupenstackv1.Subnet{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: ns}, Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.30.1.0/24"}}},
		&kupenstackv1.Subnet{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: ns}, Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.30.2.0/24"}}},
	}
	router := &kupenstackv1.Router{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns}, Spec: kupenstackv1.RouterSpec{
		ExternalGateway: &kupenstackv1.RouterGateway{NetworkRef: "public"},
		Interfaces:      []kupenstackv1.RouterInterface{{SubnetRef: "a"}},
	}}
	for _, o := range append(objs, router) {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	subnetID := func(name string) string {
		var s kupenstackv1.Subnet
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
			t.Fatal(err)
		}
		return s.Status.ID
	}
	// expect waits until the router in Neutron has exactly these subnets and (no) gateway.
	expect := func(gateway bool, subnets ...string) {
		t.Helper()
		eventually(t, fmt.Sprintf("router gateway=%v interfaces=%v", gateway, subnets), func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(router), router); err != nil {
				return err
			}
			if !conditions.IsReady(router.Status.Conditions, router.Generation) {
				return fmt.Errorf("not ready: %+v", router.Status.Conditions)
			}
			r, err := routers.Get(ctx, neutronAdmin, router.Status.ID).Extract()
			if err != nil {
				return err
			}
			if (r.GatewayInfo.NetworkID != "") != gateway {
				return fmt.Errorf("gateway %q", r.GatewayInfo.NetworkID)
			}
			pages, err := ports.List(neutronAdmin, ports.ListOpts{DeviceID: r.ID, DeviceOwner: "network:router_interface"}).AllPages(ctx)
			if err != nil {
				return err
			}
			found, _ := ports.ExtractPorts(pages)
			var have, want []string
			for _, p := range found {
				for _, ip := range p.FixedIPs {
					have = append(have, ip.SubnetID)
				}
			}
			for _, s := range subnets {
				want = append(want, subnetID(s))
			}
			slices.Sort(have)
			slices.Sort(want)
			if !slices.Equal(have, want) {
				return fmt.Errorf("interfaces on %v, want %v", have, want)
			}
			return nil
		})
	}
	expect(true, "a")

	updateSpec(t, router, func(r *kupenstackv1.Router) {
		r.Spec.Interfaces = []kupenstackv1.RouterInterface{{SubnetRef: "b"}}
		r.Spec.ExternalGateway = nil
	})
	expect(false, "b")

	updateSpec(t, router, func(r *kupenstackv1.Router) {
		r.Spec.Interfaces = []kupenstackv1.RouterInterface{{SubnetRef: "a"}, {SubnetRef: "b"}}
		r.Spec.ExternalGateway = &kupenstackv1.RouterGateway{NetworkRef: "public"}
	})
	expect(true, "a", "b")

	// Delete everything at once: the subnets wait for the router, which detaches itself first.
	routerID := router.Status.ID
	for _, o := range append(objs, router) {
		if err := env.Client.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range append(objs, router) {
		waitGone(t, o)
	}
	if err := routers.Get(ctx, neutronAdmin, routerID).Err; !openstack.IsNotFound(err) {
		t.Errorf("router left in OpenStack: %v", err)
	}
	deleteProject(t, ns)
}
