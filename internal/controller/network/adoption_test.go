package network

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// TestFindOwnedAfterCrash runs the adoption path against the real cloud: a network created for
// an object whose owner tag was never set (the operator died between the create call and the
// tagging) is found again; an older network of the same name, or one owned by another object,
// is not.
func TestFindOwnedAfterCrash(t *testing.T) {
	path, cloudName := os.Getenv("OS_CLIENT_CONFIG_FILE"), os.Getenv("OS_CLOUD")
	if testing.Short() || path == "" {
		if os.Getenv("KUPENSTACK_E2E") == "required" && !testing.Short() {
			t.Fatal("KUPENSTACK_E2E=required but OS_CLIENT_CONFIG_FILE is not set")
		}
		t.Skip("needs the all-in-one cloud (make openstack-up)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clients := openstack.NewClients(openstack.FileSource(path), cloudName, 50, 100)
	identity, err := clients.AdminIdentity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Act in the admin credentials' own project: the token tells which one it is.
	res := tokens.Get(ctx, identity, identity.TokenID)
	project, err := res.ExtractProject()
	if err != nil {
		t.Fatal(err)
	}
	s := generic.Scope{Clients: clients, ProjectID: project.ID}
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	a := tenantActuator
	netName := fmt.Sprintf("adoption-%d", time.Now().UnixNano())

	// An older network of that name (made before the object) is someone else's.
	older, err := networks.Create(ctx, sc, networks.CreateOpts{Name: netName}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	defer networks.Delete(ctx, sc, older.ID)
	time.Sleep(2 * time.Second) // Neutron timestamps have second precision
	obj := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{
		Name: netName, Namespace: "n", UID: types.UID(fmt.Sprintf("uid-%d", time.Now().UnixNano())),
		CreationTimestamp: metav1.Now(),
	}}
	obj.CreationTimestamp = metav1.NewTime(obj.CreationTimestamp.Add(time.Minute)) // older is clearly before it
	if found, err := a.FindOwned(ctx, s, obj); err != nil || found != nil {
		t.Fatalf("adopted a network made before the object: %v %v", found, err)
	}

	// The crash case: created by Create, never tagged.
	obj.CreationTimestamp = metav1.NewTime(time.Now().Add(-time.Minute))
	created, err := a.Create(ctx, s, obj)
	if err != nil {
		t.Fatal(err)
	}
	defer networks.Delete(ctx, sc, created.ID)
	// older now also looks "created after" the object; it must lose to nothing but its own merit:
	// tag it as another object's, as the operator would have.
	olderNow, err := a.Get(ctx, s, older.ID)
	if err != nil {
		t.Fatal(err)
	}
	other := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: netName, UID: "someone-else"}}
	if _, err := a.Update(ctx, s, other, olderNow, a.Diff(s, other, olderNow)); err != nil {
		t.Fatal(err)
	}
	found, err := a.FindOwned(ctx, s, obj)
	if err != nil || found == nil || found.ID != created.ID {
		t.Fatalf("FindOwned = %v, %v; want the untagged network %s", found, err, created.ID)
	}

	// Once tagged, it is found by its tag.
	if _, err := a.Update(ctx, s, obj, found, a.Diff(s, obj, found)); err != nil {
		t.Fatal(err)
	}
	found, err = a.FindOwned(ctx, s, obj)
	if err != nil || found == nil || found.ID != created.ID {
		t.Fatalf("FindOwned by tag = %v, %v", found, err)
	}
}
