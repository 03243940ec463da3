package e2e

import (
	"fmt"
	"strings"
	"testing"

	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// TestSubnetDependsOnNetwork: a Subnet created before its Network waits for it, lands in it,
// is updated in place, and keeps the Network (and its OpenStack network) from being deleted
// until the Subnet is gone.
func TestSubnetDependsOnNetwork(t *testing.T) {
	parallel(t)
	provider, cloud := connect(t)
	ctx := env.Ctx
	neutronAdmin, err := gcopenstack.NewNetworkV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	sub := &kupenstackv1.Subnet{
		ObjectMeta: metav1.ObjectMeta{Name: "private-v4", Namespace: ns},
		Spec: kupenstackv1.SubnetSpec{
			NetworkRef: "private",
			SubnetParameters: kupenstackv1.SubnetParameters{
				CIDR:            "10.20.0.0/24",
				GatewayIP:       "10.20.0.1",
				DNSNameservers:  []string{"192.0.2.53"},
				AllocationPools: []kupenstackv1.AllocationPool{{Start: "10.20.0.10", End: "10.20.0.200"}},
			},
		},
	}
	if err := env.Client.Create(ctx, sub); err != nil {
		t.Fatal(err)
	}
	eventually(t, "subnet waits for its network", func() error {
		var s kupenstackv1.Subnet
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sub), &s); err != nil {
			return err
		}
		for _, c := range s.Status.Conditions {
			if c.Type == kupenstackv1.ConditionProgressing && strings.Contains(c.Message, "waiting for Network/private to be created") {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", s.Status.Conditions)
	})

	net := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "private", Namespace: ns}}
	if err := env.Client.Create(ctx, net); err != nil {
		t.Fatal(err)
	}
	var got kupenstackv1.Subnet
	eventually(t, "subnet ready", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sub), &got); err != nil {
			return err
		}
		if !conditions.IsReady(got.Status.Conditions, got.Generation) {
			return fmt.Errorf("conditions %+v", got.Status.Conditions)
		}
		return nil
	})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(net), net); err != nil {
		t.Fatal(err)
	}
	osSub, err := subnets.Get(ctx, neutronAdmin, got.Status.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if osSub.NetworkID != net.Status.ID || osSub.CIDR != "10.20.0.0/24" || osSub.GatewayIP != "10.20.0.1" ||
		len(osSub.AllocationPools) != 1 || osSub.AllocationPools[0].Start != "10.20.0.10" {
		t.Errorf("subnet in OpenStack = %+v", osSub)
	}

	// Update in place.
	updateSpec(t, &got, func(s *kupenstackv1.Subnet) { s.Spec.DNSNameservers = []string{"192.0.2.54", "192.0.2.55"} })
	eventually(t, "dns updated", func() error {
		s, err := subnets.Get(ctx, neutronAdmin, got.Status.ID).Extract()
		if err != nil {
			return err
		}
		if strings.Join(s.DNSNameservers, ",") != "192.0.2.54,192.0.2.55" {
			return fmt.Errorf("dns %v", s.DNSNameservers)
		}
		return nil
	})

	// The Network cannot go while the Subnet refers to it.
	if err := env.Client.Delete(ctx, net); err != nil {
		t.Fatal(err)
	}
	eventually(t, "network deletion waits", func() error {
		var n kupenstackv1.Network
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(net), &n); err != nil {
			return err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == kupenstackv1.ConditionProgressing && strings.Contains(c.Message, "Subnet/private-v4") {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", n.Status.Conditions)
	})
	if _, err := networks.Get(ctx, neutronAdmin, net.Status.ID).Extract(); err != nil {
		t.Fatalf("network deleted while a subnet refers to it: %v", err)
	}
	if err := env.Client.Delete(ctx, &got); err != nil {
		t.Fatal(err)
	}
	waitGone(t, &got)
	waitGone(t, net)
	for _, err := range []error{subnets.Get(ctx, neutronAdmin, got.Status.ID).Err, networks.Get(ctx, neutronAdmin, net.Status.ID).Err} {
		if !openstack.IsNotFound(err) {
			t.Errorf("left behind in OpenStack: %v", err)
		}
	}
	deleteProject(t, ns)
}
