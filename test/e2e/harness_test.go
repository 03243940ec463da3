package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/catalog"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
)

// TestTokenAndCatalog proves the e2e harness: the admin credentials authenticate and the catalog
// lists every service KupenStack drives.
func TestTokenAndCatalog(t *testing.T) {
	parallel(t)
	provider, cloud := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	if provider.Token() == "" {
		t.Fatal("no token after authentication")
	}
	identity, err := gcopenstack.NewIdentityV3(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	// The token must be valid for the identity service itself, not only present.
	if _, err := tokens.Get(ctx, identity, provider.Token()).ExtractToken(); err != nil {
		t.Fatalf("validating our own token: %v", err)
	}

	pages, err := catalog.List(identity).AllPages(ctx)
	if err != nil {
		t.Fatalf("listing the catalog: %v", err)
	}
	entries, err := catalog.ExtractServiceCatalog(pages)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range entries {
		have[e.Type] = len(e.Endpoints) > 0
	}
	// Block storage under its official type or its alias volumev3 (OpenStack's service-types
	// authority): Debian's cinder registers the first, the cinder chart the second, and
	// gophercloud finds either.
	if have["volumev3"] {
		have["block-storage"] = true
	}
	for _, want := range []string{"identity", "image", "placement", "compute", "network", "block-storage"} {
		if !have[want] {
			t.Errorf("catalog has no endpoints for %q (have %v)", want, have)
		}
	}
}
