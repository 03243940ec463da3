package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

func ruleStrings(rs []rules.SecGroupRule, selfID string) []string {
	var out []string
	for _, r := range rs {
		remote := r.RemoteIPPrefix
		if r.RemoteGroupID == selfID && selfID != "" {
			remote = "self"
		}
		out = append(out, fmt.Sprintf("%s/%s/%s/%d-%d/%s", r.Direction, r.EtherType, r.Protocol, r.PortRangeMin, r.PortRangeMax, remote))
	}
	slices.Sort(out)
	return out
}

// TestSecurityGroupRulesAsSet: the rules in OpenStack are exactly the spec's (Neutron's default
// egress rules removed), follow spec changes, and rules added out of band are removed.
func TestSecurityGroupRulesAsSet(t *testing.T) {
	parallel(t)
	provider, cloud := connect(t)
	ctx := env.Ctx
	neutronAdmin, err := gcopenstack.NewNetworkV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	p22, p80 := 22, 80
	sg := &kupenstackv1.SecurityGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: kupenstackv1.SecurityGroupSpec{
			Description: "web servers",
			Rules: []kupenstackv1.SecurityGroupRule{
				{Direction: "ingress", Protocol: "tcp", PortRangeMin: &p22, PortRangeMax: &p22, RemoteIPPrefix: "192.0.2.0/24"},
				{Direction: "ingress", Protocol: "icmp"},
				{Direction: "ingress", Protocol: "tcp", PortRangeMin: &p80, PortRangeMax: &p80, RemoteGroupRef: "web"},
			},
		},
	}
	sg.Spec.ResyncPeriod = &kupenstackv1.Duration{Duration: 2 * time.Second}
	if err := env.Client.Create(ctx, sg); err != nil {
		t.Fatal(err)
	}
	var got kupenstackv1.SecurityGroup
	waitRules := func(want ...string) {
		t.Helper()
		slices.Sort(want)
		eventually(t, "rules "+strings.Join(want, " "), func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sg), &got); err != nil {
				return err
			}
			if got.Status.ID == "" || !conditions.IsReady(got.Status.Conditions, got.Generation) {
				return fmt.Errorf("not ready: %+v", got.Status.Conditions)
			}
			g, err := groups.Get(ctx, neutronAdmin, got.Status.ID).Extract()
			if err != nil {
				return err
			}
			if have := ruleStrings(g.Rules, g.ID); !slices.Equal(have, want) {
				return fmt.Errorf("rules %v, want %v", have, want)
			}
			return nil
		})
	}
	waitRules("ingress/IPv4/tcp/22-22/192.0.2.0/24", "ingress/IPv4/icmp/0-0/", "ingress/IPv4/tcp/80-80/self")

	updateSpec(t, &got, func(sg *kupenstackv1.SecurityGroup) {
		sg.Spec.Rules = []kupenstackv1.SecurityGroupRule{sg.Spec.Rules[0], {Direction: "egress", Ethertype: "IPv6"}}
	})
	waitRules("ingress/IPv4/tcp/22-22/192.0.2.0/24", "egress/IPv6//0-0/")

	// A rule added behind KupenStack's back (in the group's own project) is drift: it goes.
	var proj kupenstackv1.Project
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, &proj); err != nil {
		t.Fatal(err)
	}
	if _, err := rules.Create(ctx, neutronAdmin, rules.CreateOpts{
		ProjectID: proj.Status.ID,
		Direction: rules.DirIngress, EtherType: rules.EtherType4, SecGroupID: got.Status.ID, Protocol: rules.ProtocolUDP,
		PortRangeMin: 53, PortRangeMax: 53,
	}).Extract(); err != nil {
		t.Fatal(err)
	}
	waitRules("ingress/IPv4/tcp/22-22/192.0.2.0/24", "egress/IPv6//0-0/")

	// One an admin adds as `openstack security group rule create` does, owned by the admin's own
	// project: the group's project cannot even see it to delete it, and it must go all the same.
	if _, err := rules.Create(ctx, neutronAdmin, rules.CreateOpts{
		Direction: rules.DirIngress, EtherType: rules.EtherType4, SecGroupID: got.Status.ID, Protocol: rules.ProtocolTCP,
		PortRangeMin: 22, PortRangeMax: 22, RemoteIPPrefix: "0.0.0.0/0",
	}).Extract(); err != nil {
		t.Fatal(err)
	}
	waitRules("ingress/IPv4/tcp/22-22/192.0.2.0/24", "egress/IPv6//0-0/")

	if err := env.Client.Delete(ctx, &got); err != nil {
		t.Fatal(err)
	}
	waitGone(t, &got)
	if err := groups.Get(ctx, neutronAdmin, got.Status.ID).Err; !openstack.IsNotFound(err) {
		t.Errorf("security group left in OpenStack: %v", err)
	}
	deleteProject(t, ns)
}
