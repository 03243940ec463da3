package virtualmachine

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

func TestNovaTime(t *testing.T) {
	start := time.Date(2026, 11, 22, 12, 0, 0, 500e6, time.UTC)
	end := start.Add(300 * time.Millisecond)
	for _, tc := range []struct {
		name, date string
		want       time.Time
	}{
		{"Nova's Date less the call's duration", "Sun, 22 Nov 2026 11:00:01 GMT", time.Date(2026, 11, 22, 11, 0, 0, 700e6, time.UTC)},
		{"no Date: the local start", "", start},
		{"a Date that is no HTTP date: the local start", "yesterday", start},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.date != "" {
				h.Set("Date", tc.date)
			}
			if got := novaTime(h, start, end); !got.Equal(tc.want) {
				t.Errorf("novaTime = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestListSinceAgainstNova runs the health check's lists against the real cloud, each since made
// as the check makes it (the previous list's time less generic.ChangesSkew): an unchanged
// server is not in a changes list; reset to ERROR, it is in the next one; deleted, it is in the
// one after that, as DELETED, and a change (the drift check wakes its VM).
func TestListSinceAgainstNova(t *testing.T) {
	path, cloudName := os.Getenv("OS_CLIENT_CONFIG_FILE"), os.Getenv("OS_CLOUD")
	if testing.Short() || path == "" {
		if os.Getenv("KUPENSTACK_E2E") == "required" && !testing.Short() {
			t.Fatal("KUPENSTACK_E2E=required but OS_CLIENT_CONFIG_FILE is not set")
		}
		t.Skip("needs the all-in-one cloud (make openstack-up)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	clients := openstack.NewClients(openstack.FileSource(path), cloudName, 50, 100)
	identity, err := clients.AdminIdentity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The admin credentials' own project: the token tells which one it is.
	project, err := tokens.Get(ctx, identity, identity.TokenID).ExtractProject()
	if err != nil {
		t.Fatal(err)
	}
	s := generic.Scope{Clients: clients, ProjectID: project.ID}
	nova, err := admin(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	glance, err := clients.Image(ctx, project.ID)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := flavors.ListDetail(nova, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fls, err := flavors.ExtractFlavors(pages)
	i := slices.IndexFunc(fls, func(f flavors.Flavor) bool { return f.Name == "m1.nano" })
	if err != nil || i < 0 {
		t.Fatalf("flavor m1.nano: %v", err)
	}
	flavorID := fls[i].ID
	pages, err = images.List(glance, images.ListOpts{Name: "aio-tiny"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := images.ExtractImages(pages)
	if err != nil || len(imgs) == 0 {
		t.Fatalf("image aio-tiny: %v %v", imgs, err)
	}

	srv, err := servers.Create(ctx, nova, servers.CreateOpts{Name: fmt.Sprintf("changes-since-%d", time.Now().UnixNano()),
		FlavorRef: flavorID, ImageRef: imgs[0].ID, Networks: "none"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	defer servers.Delete(context.Background(), nova, srv.ID) //nolint:errcheck // cleanup; gone already when the test passed
	for srv.Status != "ACTIVE" {
		if srv.Status == "ERROR" || ctx.Err() != nil {
			t.Fatalf("server %s did not become ACTIVE: %s %v", srv.ID, srv.Status, ctx.Err())
		}
		time.Sleep(time.Second)
		if srv, err = servers.Get(ctx, nova, srv.ID).Extract(); err != nil {
			t.Fatal(err)
		}
	}

	a := actuator{}
	listed := func(since time.Time) (*servers.Server, time.Time) {
		t.Helper()
		found, at, err := a.ListSince(ctx, s, since)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(at); d < 0 || d > 5*time.Second { // Nova runs on this machine
			t.Fatalf("list taken at %s by Nova's clock, %s from now", at, d)
		}
		i := slices.IndexFunc(found, func(x *servers.Server) bool { return x.ID == srv.ID })
		if i < 0 {
			return nil, at
		}
		return found[i], at
	}

	time.Sleep(2 * time.Second) // past the server's last update
	got, at := listed(time.Time{})
	if got == nil || got.Status != "ACTIVE" {
		t.Fatalf("full list: server %+v, want it ACTIVE", got)
	}
	time.Sleep(1500 * time.Millisecond)
	// Since exactly the previous list (no skew): nothing changed, so the server is not there.
	if got, at = listed(at); got != nil {
		t.Fatalf("changes list shows the unchanged server (%s, updated %s): changes-since not applied", got.Status, got.Updated)
	}

	if err := servers.ResetState(ctx, nova, srv.ID, servers.StateError).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if got, at = listed(at.Add(-generic.ChangesSkew)); got == nil || got.Status != "ERROR" {
		t.Fatalf("changes list after the reset: server %+v, want it in ERROR", got)
	}

	if err := servers.Delete(ctx, nova, srv.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := a.Get(ctx, s, srv.ID); openstack.IsNotFound(err) {
			break
		} else if ctx.Err() != nil {
			t.Fatalf("server %s not deleted: %v", srv.ID, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	got, _ = listed(at.Add(-generic.ChangesSkew))
	if got == nil || got.Status != "DELETED" {
		t.Fatalf("changes list after the deletion: server %+v, want it DELETED", got)
	}
	vm := &kupenstackv1.VirtualMachine{Status: kupenstackv1.VirtualMachineStatus{
		Resource: &kupenstackv1.VirtualMachineResourceStatus{Name: got.Name, Status: "ERROR"}}}
	if !generic.Changes(a.Diff(generic.TestScope(nil), vm, got)).Has(generic.FieldResource) {
		t.Error("the deleted server is no change of its VM")
	}
}
