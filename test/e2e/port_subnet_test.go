package e2e

import (
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// TestPortWaitsForASubnet: a Port without fixedIPs applied before its network's Subnet exists
// waits for it, and gets an address (Neutron never adds one to an existing port).
func TestPortWaitsForASubnet(t *testing.T) {
	parallel(t)
	requireCloud(t)
	ns := newNamespace(t)
	net := &kupenstackv1.Network{ObjectMeta: objMeta(ns, "net")}
	port := &kupenstackv1.Port{ObjectMeta: objMeta(ns, "p"), Spec: kupenstackv1.PortSpec{NetworkRef: "net"}}
	create(t, net, port)
	waitReady(t, net)
	eventually(t, "port waiting for a subnet", func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(port), port); err != nil {
			return err
		}
		for _, c := range port.Status.Conditions {
			if c.Type == kupenstackv1.ConditionProgressing && c.Status == "True" && c.Message == "waiting for a subnet on network net, so that the port gets an address" {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", port.Status.Conditions)
	})
	time.Sleep(2 * time.Second) // it keeps waiting: no port was made without an address
	if port.Status.ID != "" {
		t.Fatalf("port created before the subnet: %s", port.Status.ID)
	}
	sub := &kupenstackv1.Subnet{ObjectMeta: objMeta(ns, "sub"), Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.88.0.0/24"}}}
	create(t, sub)
	waitReady(t, port)
	if r := port.Status.Resource; r == nil || len(r.FixedIPs) != 1 {
		t.Errorf("port addresses %+v", r)
	}
	deleteAll(t, ns, false, port, sub, net)
}
