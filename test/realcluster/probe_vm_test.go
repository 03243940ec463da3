package realcluster

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/imagedata"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// vmCycleWithin bounds one cycle of the probe's VM loop: created, ACTIVE, deleted, gone.
const vmCycleWithin = 3 * time.Minute

// vmLoop is the probe's VM create/delete loop: each call creates a server in the admin project
// (a 1 MiB blank image: nothing to boot, but Nova, Placement, Glance and Neutron all take part in
// making it ACTIVE), waits until it is ACTIVE, deletes it and waits until it is gone. A call that
// fails at any step counts as one failed call.
type vmLoop struct {
	nova, neutron, glance *gophercloud.ServiceClient
	image, flavor         string
	network               string
	cycles                int
	took                  []time.Duration // of the cycles that succeeded
}

// upgradeProbeCalls are the probe's calls (probeCalls) and the VM loop; the returned func deletes
// what the loop needs, to be called before the cloud goes.
func upgradeProbeCalls(ctx context.Context, t *testing.T, c *cluster) (map[string]func(context.Context) error, func()) {
	t.Helper()
	calls := probeCalls(ctx, t, c)
	vm, cleanup := newVMLoop(ctx, t, c)
	calls["vm create/delete"] = vm.cycle
	return calls, cleanup
}

// newVMLoop makes the image, flavor, network and subnet the loop's servers use.
func newVMLoop(ctx context.Context, t *testing.T, c *cluster) (*vmLoop, func()) {
	t.Helper()
	cloud := readPublishedCloud(ctx, t, c)
	httpClient := http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: cloud.dialer.DialContext, DisableKeepAlives: true}}
	provider, err := cloud.connect(ctx, httpClient, "")
	if err != nil {
		t.Fatal(err)
	}
	v := &vmLoop{}
	if v.nova, err = openstack.NewComputeV2(provider, cloud.endpoint); err != nil {
		t.Fatal(err)
	}
	if v.neutron, err = openstack.NewNetworkV2(provider, cloud.endpoint); err != nil {
		t.Fatal(err)
	}
	if v.glance, err = openstack.NewImageV2(provider, cloud.endpoint); err != nil {
		t.Fatal(err)
	}
	var cleanups []func() error
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			if err := cleanups[i](); err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
				t.Errorf("probe VM loop clean-up: %v", err)
			}
		}
	}
	fail := func(step string, err error) {
		t.Helper()
		cleanup()
		t.Fatalf("probe VM loop: %s: %v", step, err)
	}
	img, err := images.Create(ctx, v.glance, images.CreateOpts{Name: "probe-blank", ContainerFormat: "bare", DiskFormat: "raw"}).Extract()
	if err != nil {
		fail("image create", err)
	}
	v.image = img.ID
	cleanups = append(cleanups, func() error { return images.Delete(context.Background(), v.glance, v.image).ExtractErr() })
	if err := imagedata.Upload(ctx, v.glance, img.ID, bytes.NewReader(make([]byte, 1<<20))).ExtractErr(); err != nil {
		fail("image upload", err)
	}
	flavor, err := flavors.Create(ctx, v.nova, flavors.CreateOpts{Name: "probe-tiny", RAM: 64, VCPUs: 1, Disk: ptr.To(1)}).Extract()
	if err != nil {
		fail("flavor create", err)
	}
	v.flavor = flavor.ID
	cleanups = append(cleanups, func() error { return flavors.Delete(context.Background(), v.nova, v.flavor).ExtractErr() })
	network, err := networks.Create(ctx, v.neutron, networks.CreateOpts{Name: "probe-vms"}).Extract()
	if err != nil {
		fail("network create", err)
	}
	v.network = network.ID
	cleanups = append(cleanups, func() error { return networks.Delete(context.Background(), v.neutron, v.network).ExtractErr() })
	if _, err := subnets.Create(ctx, v.neutron, subnets.CreateOpts{NetworkID: network.ID, Name: "probe-vms",
		CIDR: "10.79.250.0/24", IPVersion: gophercloud.IPv4}).Extract(); err != nil {
		fail("subnet create", err) // deleted with its network
	}
	return v, func() {
		t.Logf("probe VM loop: %d cycles in all, %d succeeded (median %s, longest %s)", v.cycles, len(v.took),
			medianDuration(v.took).Round(100*time.Millisecond), slices.Max(append([]time.Duration{0}, v.took...)).Round(100*time.Millisecond))
		cleanup()
	}
}

// cycle creates a server, waits until it is ACTIVE, deletes it and waits until it is gone; the
// server is deleted whatever happened. It runs on its own deadline (vmCycleWithin), not the
// probe's 5 s per call, and finishes even when the probe stops: no server is left behind.
func (v *vmLoop) cycle(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), vmCycleWithin)
	defer cancel()
	v.cycles++
	start := time.Now()
	id, err := v.createActive(ctx, fmt.Sprintf("probe-vm-%d", v.cycles))
	if id == "" {
		return err
	}
	// Deleted in any case: a cycle that failed must not leave a server.
	gone := v.deleteAndWait(id)
	switch {
	case err != nil:
		return err
	case gone != nil:
		return gone
	}
	v.took = append(v.took, time.Since(start))
	return nil
}

// createActive creates a server named name with the loop's image, flavor and network and waits
// until it is ACTIVE, within ctx. A create whose answer was lost (a timeout, an API restarted
// under it) may still have made the server: it is found by its name and deleted, and no ID is
// returned. A server that exists but did not become ACTIVE is returned with the error: the
// caller deletes it.
func (v *vmLoop) createActive(ctx context.Context, name string) (string, error) {
	server, err := servers.Create(ctx, v.nova, servers.CreateOpts{Name: name,
		FlavorRef: v.flavor, ImageRef: v.image, Networks: []servers.Network{{UUID: v.network}}}, nil).Extract()
	if err != nil {
		if leftover := v.deleteByName(name); leftover != nil {
			return "", fmt.Errorf("server create: %w (and %v)", err, leftover)
		}
		return "", fmt.Errorf("server create: %w", err)
	}
	var state string
	active := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		s, err := servers.Get(ctx, v.nova, server.ID).Extract()
		if err != nil {
			state = err.Error()
			return false, nil
		}
		state = s.Status
		if s.Status == "ERROR" {
			return false, fmt.Errorf("server %s went to ERROR: %s", s.ID, s.Fault.Message)
		}
		return s.Status == "ACTIVE", nil
	})
	if active != nil {
		return server.ID, fmt.Errorf("server not ACTIVE (last seen %s): %w", state, active)
	}
	return server.ID, nil
}

// keep creates a server named name with the loop's image, flavor and network that stays (the
// caller deletes it with deleteAndWait), waits until it is ACTIVE (vmCycleWithin at most) and
// returns its ID.
func (v *vmLoop) keep(ctx context.Context, t *testing.T, name string) string {
	t.Helper()
	within, cancel := context.WithTimeout(ctx, vmCycleWithin)
	defer cancel()
	id, err := v.createActive(within, name)
	if err != nil {
		if id != "" {
			if err := v.deleteAndWait(id); err != nil {
				t.Error(err)
			}
		}
		t.Fatalf("server %s: %v", name, err)
	}
	return id
}

// deleteAndWait deletes the server and waits until Nova no longer has it, on a deadline of its
// own (vmCycleWithin): the cycle's may be spent.
func (v *vmLoop) deleteAndWait(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), vmCycleWithin)
	defer cancel()
	deleted := false
	err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		if !deleted {
			err := servers.Delete(ctx, v.nova, id).ExtractErr()
			if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
				return false, nil // asked again at the next tick
			}
			deleted = true
		}
		_, err := servers.Get(ctx, v.nova, id).Extract()
		return gophercloud.ResponseCodeIs(err, http.StatusNotFound), nil
	})
	if err != nil {
		return fmt.Errorf("server %s not deleted: %w", id, err)
	}
	return nil
}

// deleteByName deletes every server named name (Nova's name filter is a regular expression,
// anchored here), waiting for each to go. The list is retried until the deadline: the API that
// lost the create's answer may not answer at once either.
func (v *vmLoop) deleteByName(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), vmCycleWithin)
	defer cancel()
	var found []servers.Server
	err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		pages, err := servers.List(v.nova, servers.ListOpts{Name: "^" + regexp.QuoteMeta(name) + "$"}).AllPages(ctx)
		if err != nil {
			return false, nil
		}
		found, err = servers.ExtractServers(pages)
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("listing servers named %s: %w", name, err)
	}
	for _, s := range found {
		if err := v.deleteAndWait(s.ID); err != nil {
			return err
		}
	}
	return nil
}
