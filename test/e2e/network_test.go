package e2e

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/mtu"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

type osNet struct {
	networks.Network
	mtu.NetworkMTUExt
}

// TestNetworkLifecycle: a namespace becomes a Keystone project when its first Network appears;
// the network is created inside that project, updated in place, re-created after an out-of-band
// delete, deleted with its object; deleting the Project removes the Keystone project.
func TestNetworkLifecycle(t *testing.T) {
	parallel(t)
	provider, cloud := connect(t)
	ctx := env.Ctx
	identity, err := gcopenstack.NewIdentityV3(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	neutron, err := gcopenstack.NewNetworkV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)

	mtu1400 := 1400
	netObj := &kupenstackv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "private", Namespace: ns},
		Spec: kupenstackv1.NetworkSpec{
			NetworkParameters: kupenstackv1.NetworkParameters{
				Description: "first",
				MTU:         &mtu1400,
				Tags:        []kupenstackv1.NeutronTag{"team-a"},
			},
		},
	}
	netObj.Spec.ResyncPeriod = &kupenstackv1.Duration{Duration: 2 * time.Second} // fast drift repair for the test
	if err := env.Client.Create(ctx, netObj); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(netObj)
	ready := func(n *kupenstackv1.Network) error {
		if err := env.Client.Get(ctx, key, n); err != nil {
			return err
		}
		if !conditions.IsReady(n.Status.Conditions, n.Generation) {
			return fmt.Errorf("not ready: %+v", n.Status.Conditions)
		}
		return nil
	}
	var got kupenstackv1.Network
	eventually(t, "network ready", func() error { return ready(&got) })

	var proj kupenstackv1.Project
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, &proj); err != nil {
		t.Fatalf("the namespace got no Project: %v", err)
	}
	ksProject, err := projects.Get(ctx, identity, proj.Status.ID).Extract()
	if err != nil {
		t.Fatalf("Keystone project %s: %v", proj.Status.ID, err)
	}
	if ksProject.Name != kupenstackv1.ProjectNamePrefix+ns || !proj.Status.CreatedByKupenstack {
		t.Errorf("unexpected project %q (created=%v)", ksProject.Name, proj.Status.CreatedByKupenstack)
	}

	var os1 osNet
	if err := networks.Get(ctx, neutron, got.Status.ID).ExtractInto(&os1); err != nil {
		t.Fatal(err)
	}
	if os1.ProjectID != proj.Status.ID {
		t.Errorf("network belongs to project %s, want the namespace's %s", os1.ProjectID, proj.Status.ID)
	}
	if os1.Name != "private" || os1.Description != "first" || os1.MTU != 1400 {
		t.Errorf("network = %q %q mtu %d", os1.Name, os1.Description, os1.MTU)
	}
	if !slices.Contains(os1.Tags, "team-a") || !slices.Contains(os1.Tags, "kupenstack-uid-"+string(got.UID)) {
		t.Errorf("tags = %v", os1.Tags)
	}
	if got.Status.Resource == nil || got.Status.Resource.Status != "ACTIVE" || got.Status.ObservedGeneration != got.Generation {
		t.Errorf("status = %+v", got.Status)
	} else if !generic.SameSet(got.Status.Resource.Tags, os1.Tags) {
		// The status after a create comes from the tags call's answer, not a second read.
		t.Errorf("status tags %v, Neutron's %v", got.Status.Resource.Tags, os1.Tags)
	}

	// Update in place.
	updateSpec(t, &got, func(n *kupenstackv1.Network) { n.Spec.Description = "second" })
	eventually(t, "description updated", func() error {
		var n osNet
		if err := networks.Get(ctx, neutron, got.Status.ID).ExtractInto(&n); err != nil {
			return err
		}
		if n.Description != "second" {
			return fmt.Errorf("description %q", n.Description)
		}
		return nil
	})

	// Out-of-band deletion is repaired by the drift check.
	oldID := got.Status.ID
	if err := networks.Delete(ctx, neutron, oldID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "network re-created", func() error {
		var n kupenstackv1.Network
		if err := ready(&n); err != nil {
			return err
		}
		if n.Status.ID == oldID {
			return errors.New("still the deleted network's ID")
		}
		got = n
		return nil
	})

	// Deleting the object deletes the network.
	if err := env.Client.Delete(ctx, &got); err != nil {
		t.Fatal(err)
	}
	waitGone(t, &got)
	if err := networks.Get(ctx, neutron, got.Status.ID).Err; !openstack.IsNotFound(err) {
		t.Errorf("network %s still exists in OpenStack (%v)", got.Status.ID, err)
	}

	// The namespace's project goes once its Project does (envtest has no namespace controller,
	// so delete the Project as namespace deletion's garbage collection would).
	if err := env.Client.Delete(ctx, &proj); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Keystone project deleted", func() error {
		if err := projects.Get(ctx, identity, proj.Status.ID).Err; !openstack.IsNotFound(err) {
			return fmt.Errorf("project still there (%v)", err)
		}
		return nil
	})
}

// TestNetworkImportUnmanaged: an existing network is imported by name, observed without being
// changed, and left in place when the object is deleted.
func TestNetworkImportUnmanaged(t *testing.T) {
	parallel(t)
	provider, cloud := connect(t)
	ctx := env.Ctx
	neutron, err := gcopenstack.NewNetworkV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	proj, seed := projectOf(t, ns)
	existing, err := networks.Create(ctx, neutron, networks.CreateOpts{
		Name: "legacy", Description: "made by hand", ProjectID: proj.Status.ID,
	}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = networks.Delete(ctx, neutron, existing.ID).ExtractErr() })

	imported := &kupenstackv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy-view", Namespace: ns},
		Spec: kupenstackv1.NetworkSpec{
			ManagedSpec: kupenstackv1.ManagedSpec{
				ManagementPolicy: kupenstackv1.ManagementPolicyUnmanaged,
				Import:           &kupenstackv1.ImportSpec{Name: "legacy"},
			},
			NetworkParameters: kupenstackv1.NetworkParameters{
				Description: "the operator must not write this",
			},
		},
	}
	if err := env.Client.Create(ctx, imported); err != nil {
		t.Fatal(err)
	}
	eventually(t, "import ready", func() error {
		var n kupenstackv1.Network
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(imported), &n); err != nil {
			return err
		}
		if n.Status.ID != existing.ID || !conditions.IsReady(n.Status.Conditions, n.Generation) {
			return fmt.Errorf("id %q conditions %+v", n.Status.ID, n.Status.Conditions)
		}
		return nil
	})
	if err := env.Client.Delete(ctx, imported); err != nil {
		t.Fatal(err)
	}
	waitGone(t, imported)
	after, err := networks.Get(ctx, neutron, existing.ID).Extract()
	if err != nil {
		t.Fatalf("the unmanaged network was deleted: %v", err)
	}
	if after.Description != "made by hand" {
		t.Errorf("the unmanaged network was changed: description %q", after.Description)
	}

	// Clean up: the seed network, then the project (the hand-made network goes first, or
	// Keystone would leave it orphaned in a deleted project).
	if err := networks.Delete(ctx, neutron, existing.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, seed); err != nil {
		t.Fatal(err)
	}
	deleteProject(t, ns)
}
