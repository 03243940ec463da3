package e2e

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/provider"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// providerNet is a Neutron network with the attributes a ProviderNetwork sets.
type providerNet struct {
	networks.Network
	external.NetworkExternalExt
	provider.NetworkProviderExt
}

// TestProviderNetwork: the cloud admin declares an external VLAN network and its subnet as
// cluster-scoped objects; they are made in the admin's project with the segment Neutron picks;
// a tenant's router and floating IP refer to it by name; shared follows the spec and an
// out-of-band change is put back; its deletion waits while tenants use it, then removes it.
func TestProviderNetwork(t *testing.T) {
	parallel(t)
	c := adminClients(t)
	ctx := env.Ctx
	name := fmt.Sprintf("e2e-ext-%d", time.Now().UnixNano()%1000000)
	cidr := fmt.Sprintf("100.70.%d.0/24", cidrCounter.Add(1)%250)
	pn := &kupenstackv1.ProviderNetwork{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kupenstackv1.ProviderNetworkSpec{
		// The cloud's physical network for VLANs (vlanPhysnet): its flat network is taken by the
		// cloud's own external network, VLANs 100-199 are free.
		NetworkType: "vlan", PhysicalNetwork: vlanPhysnet(), External: true,
		NetworkParameters: kupenstackv1.NetworkParameters{Description: "the admin's"},
	}}
	pn.Spec.ResyncPeriod = &kupenstackv1.Duration{Duration: 2 * time.Second} // fast drift repair for the test
	ps := &kupenstackv1.ProviderSubnet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kupenstackv1.ProviderSubnetSpec{
		ProviderNetworkRef: name,
		SubnetParameters:   kupenstackv1.SubnetParameters{CIDR: cidr, EnableDHCP: new(false)},
	}}
	create(t, ps, pn) // the subnet first: it waits for its network
	waitReady(t, pn)
	waitReady(t, ps)

	net := &providerNet{}
	if err := networks.Get(ctx, c.neutron, pn.Status.ID).ExtractInto(net); err != nil {
		t.Fatal(err)
	}
	seg, _ := strconv.Atoi(net.SegmentationID)
	if net.NetworkType != "vlan" || net.PhysicalNetwork != vlanPhysnet() || seg < 100 || seg > 199 || !net.External || net.Shared {
		t.Errorf("network in Neutron: type %q physnet %q segment %q external %v shared %v",
			net.NetworkType, net.PhysicalNetwork, net.SegmentationID, net.External, net.Shared)
	}
	if r := pn.Status.Resource; r == nil || r.SegmentationID != seg || r.NetworkType != "vlan" || !r.External {
		t.Errorf("status.resource = %+v", r)
	}
	sub, err := subnets.Get(ctx, c.neutron, ps.Status.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if sub.NetworkID != pn.Status.ID || sub.CIDR != cidr || sub.EnableDHCP {
		t.Errorf("subnet in Neutron: %+v", sub)
	}

	// A tenant uses it by name: a router's gateway and a floating IP.
	tenantNS := newNamespace(t)
	router := &kupenstackv1.Router{ObjectMeta: objMeta(tenantNS, "r"), Spec: kupenstackv1.RouterSpec{
		ExternalGateway: &kupenstackv1.RouterGateway{ProviderNetworkRef: name}}}
	fip := &kupenstackv1.FloatingIP{ObjectMeta: objMeta(tenantNS, "ip"), Spec: kupenstackv1.FloatingIPSpec{ProviderNetworkRef: name}}
	create(t, router, fip)
	waitReady(t, router)
	waitReady(t, fip)
	// Not in the tenant's project: in the one the operator's admin scope is in.
	if tenant := projectID(t, tenantNS); net.ProjectID == tenant || net.ProjectID == "" {
		t.Errorf("network's project %q", net.ProjectID)
	}
	r, err := routers.Get(ctx, c.neutron, router.Status.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if r.GatewayInfo.NetworkID != pn.Status.ID {
		t.Errorf("router's gateway on %q, want %q", r.GatewayInfo.NetworkID, pn.Status.ID)
	}
	ip, err := floatingips.Get(ctx, c.neutron, fip.Status.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if addr, err := netip.ParseAddr(ip.FloatingIP); ip.FloatingNetworkID != pn.Status.ID || err != nil || !netip.MustParsePrefix(cidr).Contains(addr) {
		t.Errorf("floating IP %s on %q, want one of %s on %q", ip.FloatingIP, ip.FloatingNetworkID, cidr, pn.Status.ID)
	}

	// shared follows the spec; an admin's change behind the operator's back is put back.
	updateSpec(t, pn, func(p *kupenstackv1.ProviderNetwork) { p.Spec.Shared = true })
	expectShared := func(want bool) {
		t.Helper()
		eventually(t, fmt.Sprintf("shared=%v in Neutron", want), func() error {
			got := &providerNet{}
			if err := networks.Get(ctx, c.neutron, pn.Status.ID).ExtractInto(got); err != nil {
				return err
			}
			if got.Shared != want || !got.External {
				return fmt.Errorf("shared %v external %v", got.Shared, got.External)
			}
			return nil
		})
	}
	expectShared(true)
	// (Neutron refuses to make it non-external while routers use it.)
	if _, err := networks.Update(ctx, c.neutron, pn.Status.ID, networks.UpdateOpts{Shared: new(false)}).Extract(); err != nil {
		t.Fatal(err)
	}
	expectShared(true)

	// Deletion waits while a tenant's router and floating IP use it, and keeps the network.
	if err := env.Client.Delete(ctx, pn); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deletion blocked", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pn), pn); err != nil {
			return err
		}
		c := meta.FindStatusCondition(pn.Status.Conditions, kupenstackv1.ConditionProgressing)
		if c == nil || c.Reason != kupenstackv1.ReasonDeletionBlocked || !strings.Contains(c.Message, "Router/"+tenantNS+"/r") ||
			!strings.Contains(c.Message, "FloatingIP/"+tenantNS+"/ip") || !strings.Contains(c.Message, "ProviderSubnet/"+name+" ") && !strings.Contains(c.Message, "ProviderSubnet/"+name+"]") {
			return fmt.Errorf("progressing %+v", c)
		}
		return nil
	})
	if err := networks.Get(ctx, c.neutron, pn.Status.ID).Err; err != nil {
		t.Fatalf("network while in use: %v", err)
	}
	deleteAll(t, tenantNS, false, router, fip)
	if err := env.Client.Delete(ctx, ps); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ps)
	waitGone(t, pn)
	if err := networks.Get(ctx, c.neutron, pn.Status.ID).Err; !openstack.IsNotFound(err) {
		t.Errorf("network after deletion: %v", err)
	}
}
