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
// security group and key pair; a direct gophercloud program and the operator, each in its own
// project and with the same concurrency, run at the same time, so that the machine's noise hits
// both alike: creation to all ACTIVE, then deletion to all gone. The self-heal benchmark uses
// the operator's VMs between the two.
func benchConvergence(t *testing.T, cl *cloud, rep *report) {
	res := &convergenceResult{}
	if enabled("converge") {
		rep.convergence = res
	}
	var base *baseline
	if enabled("converge") {
		base = newBaseline(t, cl)
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

	t.Run("create", func(t *testing.T) {
		if base != nil {
			t.Run("direct", func(t *testing.T) {
				t.Parallel()
				res.baseCreate = base.create(t)
				rep.save(t)
			})
		}
		t.Run("operator", func(t *testing.T) {
			t.Parallel()
			before := requestCounts()
			start := time.Now()
			create(t, objs...)
			waitFor(t, "all VMs ACTIVE", 250*time.Millisecond, 60*time.Minute, func() error {
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
			res.opCreate = time.Since(start)
			res.opCreateCalls = requestCounts().minus(before)
			t.Logf("operator: %d VMs ACTIVE in %s; OpenStack requests: %v", numVMs, res.opCreate, res.opCreateCalls)
			rep.save(t)
		})
	})
	if t.Failed() {
		return
	}

	if enabled("heal") {
		t.Run("heal", func(t *testing.T) { benchHeal(t, cl, ns, rep) })
		rep.save(t)
	}

	t.Run("delete", func(t *testing.T) {
		if base != nil {
			t.Run("direct", func(t *testing.T) {
				t.Parallel()
				res.baseDelete = base.delete(t)
				rep.save(t)
			})
		}
		t.Run("operator", func(t *testing.T) {
			t.Parallel()
			before := requestCounts()
			start := time.Now()
			for _, o := range objs {
				if err := env.Client.Delete(env.Ctx, o); err != nil {
					t.Fatalf("deleting %s: %v", o.GetName(), err)
				}
			}
			waitFor(t, "all objects gone", 250*time.Millisecond, 60*time.Minute, func() error {
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
			res.opDelete = time.Since(start)
			res.opDeleteCalls = requestCounts().minus(before)
			t.Logf("operator: everything deleted in %s; OpenStack requests: %v", res.opDelete, res.opDeleteCalls)
			rep.save(t)
		})
	})
}

// operatorObjects are the objects `kubectl apply` would create: network, subnet, security
// group, key pair, and per VM a port and the VM on it.
func operatorObjects(ns, flavor string) []client.Object {
	om := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	objs := []client.Object{
		&kupenstackv1.Network{ObjectMeta: om("net")},
		&kupenstackv1.Subnet{ObjectMeta: om("sub"), Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: cidr}}},
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

// baseline does what the operator does, directly with gophercloud, in a fresh project: the
// shared resources one after the other, then per VM a port and a server on it, `workers` VMs at
// a time, each waited for until ACTIVE (polled every second, as gophercloud's WaitFor does).
// Deletion: servers (waited for until gone), ports, then the shared resources.
type baseline struct {
	nova, neutron     *gophercloud.ServiceClient
	flavorID, imageID string
	keyName           string

	mu          sync.Mutex
	serverIDs   []string
	portIDs     []string
	netID, sgID string
	keyMade     bool
}

func newBaseline(t *testing.T, cl *cloud) *baseline {
	ctx := env.Ctx
	projectID := cl.newProject(t, "kupenstack-bench-baseline-"+runID)
	cl.unlimit(t, projectID)
	b := &baseline{keyName: "bench-baseline-" + runID}
	var err error
	if b.nova, b.neutron, err = cl.scoped(ctx, projectID); err != nil {
		t.Fatal(err)
	}
	b.flavorID, b.imageID = lookupFlavorImage(t, cl, b.nova)
	// Whatever is left (after a failure) goes when the test ends, before the project.
	t.Cleanup(func() {
		ctx := context.Background()
		nova, neutron := b.nova, b.neutron
		for _, id := range b.serverIDs {
			_ = servers.ForceDelete(ctx, nova, id).ExtractErr()
		}
		for _, id := range b.serverIDs {
			waitGone(ctx, func() error { return servers.Get(ctx, nova, id).Err })
		}
		for _, id := range b.portIDs {
			_ = ports.Delete(ctx, neutron, id).ExtractErr()
		}
		if b.sgID != "" {
			_ = groups.Delete(ctx, neutron, b.sgID).ExtractErr()
		}
		if b.netID != "" {
			_ = networks.Delete(ctx, neutron, b.netID).ExtractErr()
		}
		if b.keyMade {
			_ = keypairs.Delete(ctx, nova, b.keyName, nil).ExtractErr()
		}
	})
	return b
}

func (b *baseline) create(t *testing.T) time.Duration {
	ctx, nova, neutron := env.Ctx, b.nova, b.neutron
	start := time.Now()
	net, err := networks.Create(ctx, neutron, networks.CreateOpts{Name: "net"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	b.netID = net.ID
	if _, err := subnets.Create(ctx, neutron, subnets.CreateOpts{NetworkID: net.ID, CIDR: cidr, IPVersion: gophercloud.IPv4}).Extract(); err != nil {
		t.Fatal(err)
	}
	sg, err := groups.Create(ctx, neutron, groups.CreateOpts{Name: "sg"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	b.sgID = sg.ID
	if _, err := keypairs.Create(ctx, nova, keypairs.CreateOpts{Name: b.keyName, PublicKey: publicKey}).Extract(); err != nil {
		t.Fatal(err)
	}
	b.keyMade = true
	err = parallel(numVMs, workers, func(i int) error {
		p, err := ports.Create(ctx, neutron, ports.CreateOpts{Name: fmt.Sprintf("port-%03d", i), NetworkID: net.ID,
			SecurityGroups: &[]string{sg.ID}}).Extract()
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.portIDs = append(b.portIDs, p.ID)
		b.mu.Unlock()
		srv, err := servers.Create(ctx, nova, withKey{servers.CreateOpts{Name: fmt.Sprintf("vm-%03d", i),
			FlavorRef: b.flavorID, ImageRef: b.imageID, Networks: []servers.Network{{Port: p.ID}}}, b.keyName}, nil).Extract()
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.serverIDs = append(b.serverIDs, srv.ID)
		b.mu.Unlock()
		return gophercloud.WaitFor(ctx, func(ctx context.Context) (bool, error) {
			s, err := servers.Get(ctx, nova, srv.ID).Extract()
			if err != nil {
				return false, fatal(err)
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
	d := time.Since(start)
	t.Logf("direct: %d VMs ACTIVE in %s", numVMs, d)
	return d
}

func (b *baseline) delete(t *testing.T) time.Duration {
	ctx, nova, neutron := env.Ctx, b.nova, b.neutron
	start := time.Now()
	if err := parallel(len(b.serverIDs), workers, func(i int) error {
		if err := servers.Delete(ctx, nova, b.serverIDs[i]).ExtractErr(); err != nil {
			return err
		}
		return gophercloud.WaitFor(ctx, func(ctx context.Context) (bool, error) {
			err := servers.Get(ctx, nova, b.serverIDs[i]).Err
			if openstack.IsNotFound(err) {
				return true, nil
			}
			return false, fatal(err)
		})
	}); err != nil {
		t.Fatal(err)
	}
	if err := parallel(len(b.portIDs), workers, func(i int) error { return ports.Delete(ctx, neutron, b.portIDs[i]).ExtractErr() }); err != nil {
		t.Fatal(err)
	}
	b.serverIDs, b.portIDs = nil, nil
	if err := groups.Delete(ctx, neutron, b.sgID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	b.sgID = ""
	if err := keypairs.Delete(ctx, nova, b.keyName, nil).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	b.keyMade = false
	if err := networks.Delete(ctx, neutron, b.netID).ExtractErr(); err != nil { // with its subnet
		t.Fatal(err)
	}
	b.netID = ""
	d := time.Since(start)
	t.Logf("direct: everything deleted in %s", d)
	return d
}

// fatal is what ends the baseline's polling: a rejected request, not a 5xx, a 429 or a dropped
// connection, which a real program polls through (the N=200 run saw Nova answer a GET with 500
// when Neutron failed under the load; the operator retries those too).
func fatal(err error) error {
	if class, _ := openstack.Classify(err); err == nil || class != openstack.Rejected {
		return nil
	}
	return err
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
