// Package e2e runs KupenStack's end-to-end tests against a real OpenStack: the all-in-one cloud of
// hack/openstack-aio (make openstack-up), named by OS_CLIENT_CONFIG_FILE and OS_CLOUD.
//
// Without OS_CLIENT_CONFIG_FILE the tests skip, unless KUPENSTACK_E2E=required (make test sets
// it), in which case they fail: CI must never pass by skipping them.
package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/kupenstack/kupenstack/internal/openstack"
)

// connect returns an authenticated admin provider client for the test cloud.
func connect(t *testing.T) (*gophercloud.ProviderClient, *openstack.Cloud) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test; skipped in -short mode")
	}
	path, name := os.Getenv("OS_CLIENT_CONFIG_FILE"), os.Getenv("OS_CLOUD")
	if path == "" || name == "" {
		if os.Getenv("KUPENSTACK_E2E") == "required" {
			t.Fatal("KUPENSTACK_E2E=required but OS_CLIENT_CONFIG_FILE/OS_CLOUD are not set")
		}
		t.Skip("no OpenStack: set OS_CLIENT_CONFIG_FILE and OS_CLOUD (make openstack-up writes them)")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading clouds.yaml: %v", err)
	}
	cloud, err := openstack.ParseCloud(data, name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	provider, err := cloud.Connect(ctx)
	if err != nil {
		t.Fatalf("is the cloud up (make openstack-up)? %v", err)
	}
	return provider, cloud
}
