//go:build bench

package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

const (
	flavorName = "m1.nano"
	imageName  = "aio-tiny"
	cidr       = "10.98.0.0/22" // room for N=200 and more
	publicKey  = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGDRGOgCgV1Yx4Zy1a1fGqTXVN+5NqbN2GLhHEakrXzA bench"
)

// benchConvergence: N VMs, each on its own port on one shared network and subnet, with one
// security group and key pair; first a direct gophercloud program, then the operator, both with
// the same concurrency in their own project; creation to all ACTIVE, then deletion to all gone.
// The self-heal benchmark uses the operator's VMs before they are deleted.
func benchConvergence(t *testing.T, cl *cloud, rep *report) {
	var base baselineResult
	if enabled("converge") {
		t.Run("baseline", func(t *testing.T) { base = runBaseline(t, cl) })
		if t.Failed() {
			return
		}
	}
	ns := newNamespace(t, "bench-vm-"+runID)
	flavor := &kupenstackv1.Flavor{ObjectMeta: metav1.ObjectMeta{Name: ns + "-nano"}, Spec: kupenstackv1.FlavorSpec{
		ManagedSpec: kupenstackv1.ManagedSpec{ManagementPolicy: kupenstackv1.ManagementPolicyUnmanaged,
			Import: &kupenstackv1.ImportSpec{Name: flavorName}}}}
	img := &kupenstackv1.Image{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tiny"}, Spec: kupenstackv1.ImageSpec{
		ManagedSpec: kupenstackv1.ManagedSpec{ManagementPolicy: kupenstackv1.ManagementPolicyUnmanaged,
			Import: &kupenstackv1.ImportSpec{Name: imageName}}}}
	create(t, flavor, img)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), flavor) })
	// The project exists before the clock starts, as the baseline's does, and gets the same quotas.
	cl.unlimit(t, projectID(t, ns))
	waitFor(t, "flavor and image imported", 200*time.Millisecond, 2*time.Minute, func() error {
		for _, o := range []client.Object{flavor, img} {
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return err
			}
		}
		if !ready(flavor) || !ready(img) {
			return fmt.Errorf("not ready")
		}
		return nil
	})

	objs := operatorObjects(ns, flavor.Name)
	requestsBefore := requestCounts()
	start := time.Now()
	create(t, objs...)
	waitFor(t, "all VMs ACTIVE", 250*time.Millisecond, 30*time.Minute, func() error {
		var vms kupenstackv1.VirtualMachineList
		if err := env.Client.List(env.Ctx, &vms, client.InNamespace(ns)); err != nil {
			return err
		}
		n := 0
		for i := range vms.Items {
			vm := &vms.Items[i]
			if ready(vm) && vm.Status.Resource != nil && vm.Status.Resource.Status == "ACTIVE" {
				n++
			}
		}
		if n < numVMs {
			return fmt.Errorf("%d of %d ACTIVE", n, numVMs)
		}
		return nil
	})
	opCreate := time.Since(start)
	createCalls := requestCounts().minus(requestsBefore)
	t.Logf("operator: %d VMs ACTIVE in %s, %g OpenStack requests", numVMs, opCreate, createCalls.total())

	if enabled("heal") {
		t.Run("heal", func(t *testing.T) { benchHeal(t, cl, ns, rep) })
	}

	requestsBefore = requestCounts()
	start = time.Now()
	for _, o := range objs {
		if err := env.Client.Delete(env.Ctx, o); err != nil {
			t.Fatalf("deleting %s: %v", o.GetName(), err)
		}
	}
	waitFor(t, "all objects gone", 250*time.Millisecond, 30*time.Minute, func() error {
		left := 0
		for _, l := range []client.ObjectList{&kupenstackv1.VirtualMachineList{}, &kupenstackv1.PortList{},
			&kupenstackv1.SecurityGroupList{}, &kupenstackv1.KeyPairList{}, &kupenstackv1.SubnetList{}, &kupenstackv1.NetworkList{}} {
			if err := env.Client.List(env.Ctx, l, client.InNamespace(ns)); err != nil {
				return err
			}
			left += lenList(l)
		}
		if left > 0 {
			return fmt.Errorf("%d objects left", left)
		}
		return nil
	})
	opDelete := time.Since(start)
	deleteCalls := requestCounts().minus(requestsBefore)
	t.Logf("operator: everything deleted in %s, %g OpenStack requests", opDelete, deleteCalls.total())
	if enabled("converge") {
		rep.convergence = &convergenceResult{base: base, opCreate: opCreate, opDelete: opDelete,
			opCreateCalls: createCalls.total(), opDeleteCalls: deleteCalls.total()}
	}
}

// operatorObjects are the objects `kubectl apply` would create: network, subnet, security
// group, key pair, and per VM a port and the VM on it.
func operatorObjects(ns, flavor string) []client.Object {
	om := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	objs := []client.Object{
		&kupenstackv1.Network{ObjectMeta: om("net")},
		&kupenstackv1.Subnet{ObjectMeta: om("sub"), Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", CIDR: cidr}},
		&kupenstackv1.SecurityGroup{ObjectMeta: om("sg")},
		&kupenstackv1.KeyPair{ObjectMeta: om("key"), Spec: kupenstackv1.KeyPairSpec{PublicKey: publicKey}},
	}
	for i := range numVMs {
		port := fmt.Sprintf("port-%03d", i)
		objs = append(objs,
			&kupenstackv1.Port{ObjectMeta: om(port), Spec: kupenstackv1.PortSpec{NetworkRef: "net", SecurityGroupRefs: []string{"sg"},
				// The subnet reference makes the port wait for the subnet: a port created on a
				// network without one has no address, and Nova rejects it.
				FixedIPs: []kupenstackv1.PortFixedIP{{SubnetRef: "sub"}}}},
			&kupenstackv1.VirtualMachine{ObjectMeta: om(fmt.Sprintf("vm-%03d", i)), Spec: kupenstackv1.VirtualMachineSpec{
				FlavorRef: flavor, ImageRef: "tiny", KeyPairRef: "key",
				Networks: []kupenstackv1.VirtualMachineNIC{{PortRef: port}}}})
	}
	return objs
}

type baselineResult struct {
	create, delete time.Duration
}

// runBaseline does what the operator does, directly with gophercloud, in a fresh project: the
// shared resources one after the other, then per VM a port and a server on it, `workers` VMs at
// a time, each waited for until ACTIVE (polled every second, as gophercloud's WaitFor does).
// Deletion: servers (waited for until gone), ports, then the shared resources.
func runBaseline(t *testing.T, cl *cloud) baselineResult {
	ctx := env.Ctx
	projectID := cl.newProject(t, "kupenstack-bench-baseline-"+runID)
	cl.unlimit(t, projectID)
	nova, neutron, err := cl.scoped(ctx, projectID)
	if err != nil {
		t.Fatal(err)
	}
	flavorID, imageID := lookupFlavorImage(t, cl, nova)
	keyName := "bench-baseline-" + runID

	var (
		mu        sync.Mutex
		serverIDs []string
		portIDs   []string
		netID     string
		sgID      string
		keyMade   bool
	)
	// Whatever is left (after a failure) goes when the test ends, before the project.
	t.Cleanup(func() {
		ctx := context.Background()
		for _, id := range serverIDs {
			_ = servers.ForceDelete(ctx, nova, id).ExtractErr()
		}
		for _, id := range serverIDs {
			waitGone(ctx, func() error { return servers.Get(ctx, nova, id).Err })
		}
		for _, id := range portIDs {
			_ = ports.Delete(ctx, neutron, id).ExtractErr()
		}
		if sgID != "" {
			_ = groups.Delete(ctx, neutron, sgID).ExtractErr()
		}
		if netID != "" {
			_ = networks.Delete(ctx, neutron, netID).ExtractErr()
		}
		if keyMade {
			_ = keypairs.Delete(ctx, nova, keyName, nil).ExtractErr()
		}
	})

	start := time.Now()
	net, err := networks.Create(ctx, neutron, networks.CreateOpts{Name: "net"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	netID = net.ID
	if _, err := subnets.Create(ctx, neutron, subnets.CreateOpts{NetworkID: net.ID, CIDR: cidr, IPVersion: gophercloud.IPv4}).Extract(); err != nil {
		t.Fatal(err)
	}
	sg, err := groups.Create(ctx, neutron, groups.CreateOpts{Name: "sg"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	sgID = sg.ID
	if _, err := keypairs.Create(ctx, nova, keypairs.CreateOpts{Name: keyName, PublicKey: publicKey}).Extract(); err != nil {
		t.Fatal(err)
	}
	keyMade = true
	err = parallel(numVMs, workers, func(i int) error {
		p, err := ports.Create(ctx, neutron, ports.CreateOpts{Name: fmt.Sprintf("port-%03d", i), NetworkID: net.ID,
			SecurityGroups: &[]string{sg.ID}}).Extract()
		if err != nil {
			return err
		}
		mu.Lock()
		portIDs = append(portIDs, p.ID)
		mu.Unlock()
		srv, err := servers.Create(ctx, nova, withKey{servers.CreateOpts{Name: fmt.Sprintf("vm-%03d", i),
			FlavorRef: flavorID, ImageRef: imageID, Networks: []servers.Network{{Port: p.ID}}}, keyName}, nil).Extract()
		if err != nil {
			return err
		}
		mu.Lock()
		serverIDs = append(serverIDs, srv.ID)
		mu.Unlock()
		return gophercloud.WaitFor(ctx, func(ctx context.Context) (bool, error) {
			s, err := servers.Get(ctx, nova, srv.ID).Extract()
			if err != nil {
				return false, err
			}
			if s.Status == "ERROR" {
				return false, fmt.Errorf("server %s went to ERROR: %s", s.ID, s.Fault.Message)
			}
			return s.Status == "ACTIVE", nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var res baselineResult
	res.create = time.Since(start)
	t.Logf("baseline: %d VMs ACTIVE in %s", numVMs, res.create)

	start = time.Now()
	if err := parallel(len(serverIDs), workers, func(i int) error {
		if err := servers.Delete(ctx, nova, serverIDs[i]).ExtractErr(); err != nil {
			return err
		}
		return gophercloud.WaitFor(ctx, func(ctx context.Context) (bool, error) {
			err := servers.Get(ctx, nova, serverIDs[i]).Err
			if openstack.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
	}); err != nil {
		t.Fatal(err)
	}
	if err := parallel(len(portIDs), workers, func(i int) error { return ports.Delete(ctx, neutron, portIDs[i]).ExtractErr() }); err != nil {
		t.Fatal(err)
	}
	serverIDs, portIDs = nil, nil
	if err := groups.Delete(ctx, neutron, sg.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	sgID = ""
	if err := keypairs.Delete(ctx, nova, keyName, nil).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	keyMade = false
	if err := networks.Delete(ctx, neutron, net.ID).ExtractErr(); err != nil { // with its subnet
		t.Fatal(err)
	}
	netID = ""
	res.delete = time.Since(start)
	t.Logf("baseline: everything deleted in %s", res.delete)
	return res
}

// withKey adds key_name to a server create request.
type withKey struct {
	servers.CreateOpts
	key string
}

func (o withKey) ToServerCreateMap() (map[string]any, error) {
	m, err := o.CreateOpts.ToServerCreateMap()
	if err == nil {
		m["server"].(map[string]any)["key_name"] = o.key
	}
	return m, err
}

func lookupFlavorImage(t *testing.T, cl *cloud, nova *gophercloud.ServiceClient) (string, string) {
	t.Helper()
	pages, err := flavors.ListDetail(nova, nil).AllPages(env.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := flavors.ExtractFlavors(pages)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(fs, func(f flavors.Flavor) bool { return f.Name == flavorName })
	if i < 0 {
		t.Fatalf("no flavor %s", flavorName)
	}
	glance, err := gcopenstack.NewImageV2(nova.ProviderClient, cl.cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ipages, err := images.List(glance, images.ListOpts{Name: imageName}).AllPages(env.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := images.ExtractImages(ipages)
	if err != nil || len(imgs) == 0 {
		t.Fatalf("no image %s (%v)", imageName, err)
	}
	return fs[i].ID, imgs[0].ID
}

// parallel runs do(0..n-1) on `width` goroutines and returns the first error.
func parallel(n, width int, do func(i int) error) error {
	jobs := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range width {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := do(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	return <-errs
}

// waitGone polls get (a Get's error) until it reports 404, for at most five minutes.
func waitGone(ctx context.Context, get func() error) {
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if openstack.IsNotFound(get()) {
			return
		}
	}
}
