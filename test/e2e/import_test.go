package e2e

import (
	"fmt"
	"testing"

	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

// TestImportDetach: existing resources are imported by name (a security group, managed from then
// on, and a key pair, unmanaged); with onDelete: detach and unmanaged, deleting the objects leaves
// both in OpenStack.
func TestImportDetach(t *testing.T) {
	parallel(t)
	provider, cloud := connect(t)
	ctx := env.Ctx
	neutronAdmin, err := gcopenstack.NewNetworkV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	nova, err := gcopenstack.NewComputeV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	proj, seed := projectOf(t, ns)
	sg, err := groups.Create(ctx, neutronAdmin, groups.CreateOpts{Name: "legacy-sg", ProjectID: proj.Status.ID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = groups.Delete(ctx, neutronAdmin, sg.ID).ExtractErr() })
	kpName := "legacy-" + ns
	if _, err := keypairs.Create(ctx, nova, keypairs.CreateOpts{Name: kpName, PublicKey: testPublicKey}).Extract(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = keypairs.Delete(ctx, nova, kpName, nil).ExtractErr() })

	sgObj := &kupenstackv1.SecurityGroup{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: kupenstackv1.SecurityGroupSpec{
		ManagedSpec: kupenstackv1.ManagedSpec{Import: &kupenstackv1.ImportSpec{Name: "legacy-sg"}, OnDelete: kupenstackv1.OnDeleteDetach},
		Name:        "legacy-sg",
		Description: "now managed",
		Rules:       []kupenstackv1.SecurityGroupRule{{Direction: "egress"}},
	}}
	kpObj := &kupenstackv1.KeyPair{ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: ns}, Spec: kupenstackv1.KeyPairSpec{
		ManagedSpec: kupenstackv1.ManagedSpec{ManagementPolicy: kupenstackv1.ManagementPolicyUnmanaged, Import: &kupenstackv1.ImportSpec{Name: kpName}},
	}}
	for _, o := range []client.Object{sgObj, kpObj} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "imports ready", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sgObj), sgObj); err != nil {
			return err
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(kpObj), kpObj); err != nil {
			return err
		}
		if sgObj.Status.ID != sg.ID || !conditions.IsReady(sgObj.Status.Conditions, sgObj.Generation) {
			return fmt.Errorf("security group %q %+v", sgObj.Status.ID, sgObj.Status.Conditions)
		}
		if kpObj.Status.ID != kpName || !conditions.IsReady(kpObj.Status.Conditions, kpObj.Generation) {
			return fmt.Errorf("key pair %q %+v", kpObj.Status.ID, kpObj.Status.Conditions)
		}
		return nil
	})
	// The imported, managed group now follows the spec.
	eventually(t, "imported group managed", func() error {
		g, err := groups.Get(ctx, neutronAdmin, sg.ID).Extract()
		if err != nil {
			return err
		}
		if g.Description != "now managed" || len(g.Rules) != 1 {
			return fmt.Errorf("group %q with %d rules", g.Description, len(g.Rules))
		}
		return nil
	})

	for _, o := range []client.Object{sgObj, kpObj, seed} {
		if err := env.Client.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
		waitGone(t, o)
	}
	if _, err := groups.Get(ctx, neutronAdmin, sg.ID).Extract(); err != nil {
		t.Errorf("detached security group was deleted: %v", err)
	}
	if _, err := keypairs.Get(ctx, nova, kpName, nil).Extract(); err != nil {
		t.Errorf("unmanaged key pair was deleted: %v", err)
	}
	// The group lives in the namespace's project: remove it before the project goes.
	if err := groups.Delete(ctx, neutronAdmin, sg.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	deleteProject(t, ns)
}
