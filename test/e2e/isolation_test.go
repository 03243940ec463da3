package e2e

import (
	"fmt"
	"testing"

	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

const testPublicKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKl1TxPap+mh4hQxL9QXanMWwZu7OnQ05dcpmltQzOt1 e2e@kupenstack"

// TestTwoNamespacesTwoProjects: the same names in two namespaces make resources in two different
// projects (and two Nova key pairs), each owned by its own namespace's project.
func TestTwoNamespacesTwoProjects(t *testing.T) {
	parallel(t)
	provider, cloud := connect(t)
	neutronAdmin, err := gcopenstack.NewNetworkV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	type result struct{ project, network, keypair string }
	var results []result
	var namespaces []string
	for range 2 {
		ns := newNamespace(t)
		namespaces = append(namespaces, ns)
		net := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "shared-name", Namespace: ns}}
		kp := &kupenstackv1.KeyPair{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns},
			Spec: kupenstackv1.KeyPairSpec{PublicKey: testPublicKey}}
		for _, o := range []client.Object{net, kp} {
			if err := env.Client.Create(env.Ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, ns+" ready", func() error {
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(net), net); err != nil {
				return err
			}
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(kp), kp); err != nil {
				return err
			}
			if !conditions.IsReady(net.Status.Conditions, net.Generation) || !conditions.IsReady(kp.Status.Conditions, kp.Generation) {
				return fmt.Errorf("network %+v keypair %+v", net.Status.Conditions, kp.Status.Conditions)
			}
			return nil
		})
		var p kupenstackv1.Project
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: ns}, &p); err != nil {
			t.Fatal(err)
		}
		osNet, err := networks.Get(env.Ctx, neutronAdmin, net.Status.ID).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if osNet.ProjectID != p.Status.ID {
			t.Errorf("%s: network in project %s, want %s", ns, osNet.ProjectID, p.Status.ID)
		}
		results = append(results, result{p.Status.ID, net.Status.ID, kp.Status.ID})
	}
	if results[0].project == results[1].project || results[0].network == results[1].network || results[0].keypair == results[1].keypair {
		t.Fatalf("namespaces share OpenStack resources: %+v", results)
	}
	for _, ns := range namespaces {
		for _, o := range []client.Object{
			&kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "shared-name", Namespace: ns}},
			&kupenstackv1.KeyPair{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}},
		} {
			if err := env.Client.Delete(env.Ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		deleteProject(t, ns) // waits for the objects: the project goes last
	}
}
