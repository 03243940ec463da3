package e2e

import (
	"fmt"
	"testing"

	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// TestNamespaceDeletionRemovesEverything: deleting a namespace (with the real namespace and
// garbage-collector controllers running) deletes its objects' OpenStack resources, then its
// Project and the Keystone project, and nothing is left behind: not even the security group
// Neutron made in the project by itself, which used to stay.
func TestNamespaceDeletionRemovesEverything(t *testing.T) {
	parallel(t)
	provider, cloud := connect(t)
	ctx := env.Ctx
	identity, err := gcopenstack.NewIdentityV3(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	neutronAdmin, err := gcopenstack.NewNetworkV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	net := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: ns}}
	sub := &kupenstackv1.Subnet{ObjectMeta: metav1.ObjectMeta{Name: "sub", Namespace: ns},
		Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.40.0.0/24"}}}
	for _, o := range []client.Object{net, sub} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "ready", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sub), sub); err != nil {
			return err
		}
		if !conditions.IsReady(sub.Status.Conditions, sub.Generation) {
			return fmt.Errorf("subnet %+v", sub.Status.Conditions)
		}
		return env.Client.Get(ctx, client.ObjectKeyFromObject(net), net)
	})
	var proj kupenstackv1.Project
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, &proj); err != nil {
		t.Fatal(err)
	}
	// Neutron's own security group of the project (the list makes it if nothing had yet).
	pages, err := groups.List(neutronAdmin, groups.ListOpts{ProjectID: proj.Status.ID, Name: "default"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defaults, err := groups.ExtractGroups(pages)
	if err != nil || len(defaults) != 1 {
		t.Fatalf("the project's default security groups: %+v, %v", defaults, err)
	}

	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := env.Client.Delete(ctx, namespace); err != nil {
		t.Fatal(err)
	}
	waitGone(t, namespace)
	waitGone(t, &proj)
	for what, err := range map[string]error{
		"network": networks.Get(ctx, neutronAdmin, net.Status.ID).Err,
		"subnet":  subnets.Get(ctx, neutronAdmin, sub.Status.ID).Err,
		"project": projects.Get(ctx, identity, proj.Status.ID).Err,
		// Read by ID: a list by project would make a new one.
		"default security group": groups.Get(ctx, neutronAdmin, defaults[0].ID).Err,
	} {
		if !openstack.IsNotFound(err) {
			t.Errorf("%s left in OpenStack after the namespace was deleted: %v", what, err)
		}
	}
	pages, err = groups.List(neutronAdmin, groups.ListOpts{}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, err := groups.ExtractGroups(pages)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range all {
		if g.ProjectID == proj.Status.ID {
			t.Errorf("security group %s (%s) of the deleted project left in OpenStack", g.Name, g.ID)
		}
	}
}
