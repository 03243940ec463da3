// Package reliability runs the operator as a real process, with only the permissions of its
// ClusterRole, against a real API server and the all-in-one cloud, and makes things go wrong
// while objects are created and deleted: it SIGKILLs the operator at random moments (seeded,
// reported), fails OpenStack's answers through a proxy (faults_test.go), and stops Neutron.
// Afterwards nothing may be duplicated in OpenStack, nothing left behind, and everything must
// converge.
package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/keypair"
	"github.com/kupenstack/kupenstack/internal/openstack/cloudconfig"
	"github.com/kupenstack/kupenstack/internal/testutil/operator"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

var env = testenv.New(nil)

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

const publicKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKl1TxPap+mh4hQxL9QXanMWwZu7OnQ05dcpmltQzOt1 crash@test"

var crashArgs = []string{"--cloud-secret=kupenstack-system/kupenstack-cloud", "--cloud=aio",
	"--metrics-bind-address=0", "--health-probe-bind-address=0", "--resync-period=20s"}

// cloud are admin clients of the test cloud, to count what exists behind the operator's back.
type cloud struct{ neutron, nova, identity *gophercloud.ServiceClient }

func connect(t *testing.T) (cloud, []byte) {
	t.Helper()
	path, name := os.Getenv("OS_CLIENT_CONFIG_FILE"), os.Getenv("OS_CLOUD")
	if testing.Short() {
		t.Skip("reliability test; skipped in -short mode")
	}
	if path == "" || name == "" {
		if os.Getenv("KUPENSTACK_E2E") == "required" {
			t.Fatal("KUPENSTACK_E2E=required but OS_CLIENT_CONFIG_FILE/OS_CLOUD are not set")
		}
		t.Skip("no OpenStack: set OS_CLIENT_CONFIG_FILE and OS_CLOUD")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cloudconfig.Parse(data, name)
	if err != nil {
		t.Fatal(err)
	}
	provider, err := cc.Connect(env.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	nt, err := gcopenstack.NewNetworkV2(provider, cc.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	nv, err := gcopenstack.NewComputeV2(provider, cc.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	id, err := gcopenstack.NewIdentityV3(provider, cc.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return cloud{neutron: nt, nova: nv, identity: id}, data
}

// seed is the random seed of the kill moments: KUPENSTACK_CRASH_SEED replays a run.
func seed(t *testing.T) uint64 {
	if s := os.Getenv("KUPENSTACK_CRASH_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KUPENSTACK_CRASH_SEED: %v", err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// objectsFor makes the workload: n cheap objects of three kinds in namespace ns, within the
// default quotas of one project (which allow 10 security groups, but 100 networks and 500 ports):
// Networks, Ports on one shared Network and Subnet (the first objects), and KeyPairs.
func objectsFor(ns string, n int) []generic.Object {
	out := []generic.Object{
		&kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}},
		&kupenstackv1.Subnet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared-v4"},
			Spec: kupenstackv1.SubnetSpec{NetworkRef: "shared", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.99.0.0/22"}}},
	}
	for i := range n {
		meta := metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("o-%d", i)}
		switch i % 3 {
		case 0:
			out = append(out, &kupenstackv1.Network{ObjectMeta: meta})
		case 1:
			out = append(out, &kupenstackv1.Port{ObjectMeta: meta, Spec: kupenstackv1.PortSpec{NetworkRef: "shared"}})
		default:
			out = append(out, &kupenstackv1.KeyPair{ObjectMeta: meta, Spec: kupenstackv1.KeyPairSpec{PublicKey: publicKey}})
		}
	}
	return out
}

// inCloud counts the OpenStack resources made for obj (by its name in the project, or a key pair's
// Nova name): a duplicate made by a crash would have the same name.
func inCloud(ctx context.Context, c cloud, project string, obj generic.Object) (int, error) {
	switch o := obj.(type) {
	case *kupenstackv1.Network:
		pages, err := networks.List(c.neutron, networks.ListOpts{ProjectID: project, Name: o.Name}).AllPages(ctx)
		if err != nil {
			return 0, err
		}
		found, err := networks.ExtractNetworks(pages)
		return len(found), err
	case *kupenstackv1.Subnet:
		pages, err := subnets.List(c.neutron, subnets.ListOpts{ProjectID: project, Name: o.Name}).AllPages(ctx)
		if err != nil {
			return 0, err
		}
		found, err := subnets.ExtractSubnets(pages)
		return len(found), err
	case *kupenstackv1.Port:
		pages, err := ports.List(c.neutron, ports.ListOpts{ProjectID: project, Name: o.Name}).AllPages(ctx)
		if err != nil {
			return 0, err
		}
		found, err := ports.ExtractPorts(pages)
		return len(found), err
	case *kupenstackv1.KeyPair:
		err := keypairs.Get(ctx, c.nova, keypair.NovaName(o), nil).Err
		if gophercloud.ResponseCodeIs(err, 404) {
			return 0, nil
		}
		return 1, err
	}
	return 0, fmt.Errorf("no count for %T", obj)
}

// TestSIGKILLDuringCreateAndDelete: see the package comment. 100 objects (98 plus the shared
// Network and Subnet) by default; KUPENSTACK_CRASH_OBJECTS sets another number.
func TestSIGKILLDuringCreateAndDelete(t *testing.T) {
	c, clouds := connect(t)
	env.Require(t)
	n := 98
	if v, err := strconv.Atoi(os.Getenv("KUPENSTACK_CRASH_OBJECTS")); err == nil && v > 0 {
		n = v
	}
	s := seed(t)
	t.Logf("seed %d (replay: KUPENSTACK_CRASH_SEED=%d), %d objects", s, s, n)
	rng := rand.New(rand.NewPCG(s, s))

	op := operator.New(t, env, crashArgs...)
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kupenstack-system"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kupenstack-system", Name: "kupenstack-cloud"},
			Data: map[string][]byte{"clouds.yaml": clouds}},
	} {
		if err := env.Client.Create(env.Ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}

	// The chaos: a few SIGKILLs at seeded random moments 1–5 s apart, each followed by a restart at
	// once. Their number is bounded, not their timing: a loaded machine may need long for one pass,
	// and the point is that killing at any moment loses or duplicates nothing.
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	kills := 0
	chaos := func(n int) {
		t.Helper()
		for range n {
			time.Sleep(time.Duration(1000+rng.IntN(4000)) * time.Millisecond)
			op.Kill()
			kills++
			if err := op.Start(); err != nil {
				t.Fatalf("restarting the operator: %v", err)
			}
		}
	}

	ns := fmt.Sprintf("crash-%d", time.Now().Unix()%100000)
	if err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() { // leave nothing behind in the cloud for the next run (key pairs count per user)
			op.Kill()
			cleanupCloud(c, ns)
		}
	})
	objs := objectsFor(ns, n)
	for _, o := range objs {
		if err := env.Client.Create(env.Ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	chaos(6)
	waitUntil(t, 10*time.Minute, "every object Ready", func() error {
		for _, o := range objs {
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return err
			}
			if st := o.GetManagedStatus(); st.ID == "" || !conditions.IsReady(st.Conditions, o.GetGeneration()) {
				return fmt.Errorf("%T %s not ready: id %q, conditions %+v", o, o.GetName(), st.ID, st.Conditions)
			}
		}
		return nil
	})
	var project kupenstackv1.Project
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: ns}, &project); err != nil {
		t.Fatal(err)
	}
	// One such late create for sure, whatever the kills hit: an untagged port of o-1's name.
	late, err := ports.Create(env.Ctx, c.neutron, ports.CreateOpts{Name: objs[3].GetName(),
		NetworkID: objs[0].GetManagedStatus().ID, ProjectID: project.Status.ID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	// A create in flight at a kill can land after the restarted operator made its own (Zed's
	// Neutron tags a port only after creating it, so nothing tells the late one apart until it is
	// UntaggedGrace old); the drift check finds it and the object's pass deletes it. Exactly one
	// resource per object is where the cloud must settle, while the objects live.
	waitUntil(t, generic.UntaggedGrace+3*time.Minute, "exactly one OpenStack resource per object", func() error {
		var wrong []string
		for _, o := range objs {
			count, err := inCloud(env.Ctx, c, project.Status.ID, o)
			if err != nil {
				return err
			}
			if count != 1 {
				wrong = append(wrong, fmt.Sprintf("%T %s: %d", o, o.GetName(), count))
			}
		}
		if len(wrong) > 0 {
			return fmt.Errorf("%v", wrong)
		}
		return nil
	})
	var evs eventsv1.EventList
	if err := env.Client.List(env.Ctx, &evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	lateDeleted := false
	for _, e := range evs.Items {
		if e.Reason == "DeletingDuplicate" || e.Reason == "Adopted" {
			t.Logf("%s %s/%s: %s", e.Reason, e.Regarding.Kind, e.Regarding.Name, e.Note)
			lateDeleted = lateDeleted || (e.Reason == "DeletingDuplicate" && strings.Contains(e.Note, late.ID))
		}
	}
	if !lateDeleted {
		t.Errorf("no DeletingDuplicate Event for the late port %s of Port %s", late.ID, objs[3].GetName())
	}

	// Delete everything while the operator keeps dying.
	for _, o := range objs {
		if err := env.Client.Delete(env.Ctx, o); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	chaos(6)
	waitUntil(t, 10*time.Minute, "every object deleted", func() error {
		for _, o := range objs {
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%T %s still there (%v)", o, o.GetName(), err)
			}
		}
		return nil
	})
	t.Logf("%d kills, %d operator starts", kills, op.Starts())
	for _, o := range objs {
		count, err := inCloud(env.Ctx, c, project.Status.ID, o)
		if err != nil {
			t.Fatal(err)
		}
		if count != 0 {
			t.Errorf("%T %s: %d OpenStack resources left behind", o, o.GetName(), count)
		}
	}
	if err := env.Client.Delete(env.Ctx, &project); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Minute, "project deleted", func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: ns}, &project); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
}

// cleanupCloud deletes, best effort, what a failed run may have left: the namespace's key pairs,
// ports, subnets and networks in its project, and the project.
func cleanupCloud(c cloud, ns string) {
	ctx := context.Background()
	var p kupenstackv1.Project
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, &p); err == nil && p.Status.ID != "" {
		if pages, err := ports.List(c.neutron, ports.ListOpts{ProjectID: p.Status.ID}).AllPages(ctx); err == nil {
			found, _ := ports.ExtractPorts(pages)
			for _, r := range found {
				_ = ports.Delete(ctx, c.neutron, r.ID).ExtractErr()
			}
		}
		if pages, err := networks.List(c.neutron, networks.ListOpts{ProjectID: p.Status.ID}).AllPages(ctx); err == nil {
			found, _ := networks.ExtractNetworks(pages)
			for _, r := range found {
				_ = networks.Delete(ctx, c.neutron, r.ID).ExtractErr() // takes its subnets along
			}
		}
		_ = projects.Delete(ctx, c.identity, p.Status.ID).ExtractErr()
	}
	if pages, err := keypairs.List(c.nova, nil).AllPages(ctx); err == nil {
		found, _ := keypairs.ExtractKeyPairs(pages)
		for _, k := range found {
			if strings.HasPrefix(k.Name, ns+"_") {
				_ = keypairs.Delete(ctx, c.nova, k.Name, nil).ExtractErr()
			}
		}
	}
}

func waitUntil(t *testing.T, limit time.Duration, what string, cond func() error) {
	testenv.Eventually(t, limit, 500*time.Millisecond, what, cond)
}
