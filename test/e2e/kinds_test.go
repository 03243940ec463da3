package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/pagination"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/keypair"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// osClients are admin clients of the test cloud, to look at (and break) OpenStack behind the
// operator's back.
type osClients struct{ neutron, nova *gophercloud.ServiceClient }

func adminClients(t *testing.T) osClients {
	t.Helper()
	provider, cloud := connect(t)
	neutron, err := gcopenstack.NewNetworkV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	nova, err := gcopenstack.NewComputeV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	nova.Microversion = "2.61"
	return osClients{neutron: neutron, nova: nova}
}

// kindCase describes one OpenStack kind to the table tests: how to make an object of it (and
// what that object needs), and how to find, read and delete its resources in OpenStack directly.
type kindCase struct {
	kind          string
	clusterScoped bool
	// stableID: the resource's ID is chosen by KupenStack (a key pair's name, a flavor's ID), so
	// a re-created resource has the same ID.
	stableID bool
	// deps are the objects an object of the kind needs in namespace ns.
	deps func(ns string) []client.Object
	// newObj makes an object called name in ns; a cluster-scoped one is named ns-name instead.
	newObj func(ns, name string) generic.Object
	// find lists the IDs of the OpenStack resources made for obj in project projectID, by what the
	// operator names them (not by owner tag: a crash can leave them untagged).
	find func(ctx context.Context, c osClients, projectID string, obj generic.Object) ([]string, error)
	// get reads the resource (an openstack.IsNotFound error when it is gone).
	get func(ctx context.Context, c osClients, id string) error
	// remove deletes the resource.
	remove func(ctx context.Context, c osClients, id string) error
}

// dependencies are the objects an object of the kind needs in ns (none for most kinds).
func (k kindCase) dependencies(ns string) []client.Object {
	if k.deps == nil {
		return nil
	}
	return k.deps(ns)
}

// project is the Keystone project of ns once it exists; "" for cluster-scoped kinds.
func (k kindCase) project(t *testing.T, ns string) string {
	t.Helper()
	if k.clusterScoped {
		return ""
	}
	return projectID(t, ns)
}

var cidrCounter atomic.Int32

func objMeta(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

func publicNetwork(ns string) client.Object {
	return &kupenstackv1.Network{ObjectMeta: objMeta(ns, "public"), Spec: kupenstackv1.NetworkSpec{ManagedSpec: kupenstackv1.ManagedSpec{
		ManagementPolicy: kupenstackv1.ManagementPolicyUnmanaged, Import: &kupenstackv1.ImportSpec{Name: "public"}}}}
}

func privateNetwork(ns string) []client.Object {
	return []client.Object{&kupenstackv1.Network{ObjectMeta: objMeta(ns, "net")}}
}

// privateSubnet is a network with a subnet (a Port without fixedIPs waits for one).
func privateSubnet(ns string) []client.Object {
	return append(privateNetwork(ns), &kupenstackv1.Subnet{ObjectMeta: objMeta(ns, "net-v4"), Spec: kupenstackv1.SubnetSpec{
		NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: fmt.Sprintf("10.62.%d.0/24", cidrCounter.Add(1)%250)},
	}})
}

// ids collects the IDs of one page-listed resource type.
func ids[R any](pages pagination.Page, err error, extract func(pagination.Page) ([]R, error), id func(R) string) ([]string, error) {
	if err != nil {
		return nil, err
	}
	found, err := extract(pages)
	var out []string
	for _, r := range found {
		out = append(out, id(r))
	}
	return out, err
}

// neutronKind is a Neutron kind whose resources are found by project and name; collection is
// its API path ("security-groups").
func neutronKind(kind, collection string, deps func(ns string) []client.Object, newObj func(ns, name string) generic.Object) kindCase {
	return kindCase{
		kind: kind, deps: deps, newObj: newObj,
		find: func(ctx context.Context, c osClients, project string, obj generic.Object) ([]string, error) {
			return neutronList(ctx, c, collection, url.Values{"project_id": {project}, "name": {obj.GetName()}})
		},
		get: func(ctx context.Context, c osClients, id string) error {
			_, err := c.neutron.Get(ctx, c.neutron.ServiceURL(collection, id), nil, nil)
			return err
		},
		remove: func(ctx context.Context, c osClients, id string) error {
			_, err := c.neutron.Delete(ctx, c.neutron.ServiceURL(collection, id), nil)
			return err
		},
	}
}

// neutronList lists the IDs of a Neutron collection's resources that match query.
func neutronList(ctx context.Context, c osClients, collection string, query url.Values) ([]string, error) {
	var body map[string][]struct {
		ID string `json:"id"`
	}
	if _, err := c.neutron.Get(ctx, c.neutron.ServiceURL(collection)+"?"+query.Encode(), &body, nil); err != nil {
		return nil, err
	}
	var out []string
	for _, r := range body[strings.ReplaceAll(collection, "-", "_")] {
		out = append(out, r.ID)
	}
	return out, nil
}

// neutronDescription reads the description of a resource of a Neutron collection.
func neutronDescription(collection string) func(ctx context.Context, c osClients, id string) (string, error) {
	singular := strings.ReplaceAll(strings.TrimSuffix(collection, "s"), "-", "_")
	return func(ctx context.Context, c osClients, id string) (string, error) {
		var body map[string]struct {
			Description string `json:"description"`
		}
		_, err := c.neutron.Get(ctx, c.neutron.ServiceURL(collection, id), &body, nil)
		return body[singular].Description, err
	}
}

func floatingIPKind() kindCase {
	k := neutronKind("FloatingIP", "floatingips",
		func(ns string) []client.Object { return []client.Object{publicNetwork(ns)} },
		// Floating IPs have no name: the description, unique per object, finds them.
		func(ns, name string) generic.Object {
			return &kupenstackv1.FloatingIP{ObjectMeta: objMeta(ns, name), Spec: kupenstackv1.FloatingIPSpec{
				FloatingNetworkRef: "public", Description: ns + "/" + name}}
		})
	k.find = func(ctx context.Context, c osClients, project string, obj generic.Object) ([]string, error) {
		return neutronList(ctx, c, "floatingips", url.Values{"project_id": {project}, "description": {obj.GetNamespace() + "/" + obj.GetName()}})
	}
	return k
}

var kindCases = []kindCase{
	neutronKind("Network", "networks", nil,
		func(ns, name string) generic.Object { return &kupenstackv1.Network{ObjectMeta: objMeta(ns, name)} }),
	neutronKind("Subnet", "subnets", privateNetwork, func(ns, name string) generic.Object {
		return &kupenstackv1.Subnet{ObjectMeta: objMeta(ns, name), Spec: kupenstackv1.SubnetSpec{
			NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: fmt.Sprintf("10.61.%d.0/24", cidrCounter.Add(1)%250)},
		}}
	}),
	neutronKind("Router", "routers", nil,
		func(ns, name string) generic.Object { return &kupenstackv1.Router{ObjectMeta: objMeta(ns, name)} }),
	neutronKind("SecurityGroup", "security-groups", nil,
		func(ns, name string) generic.Object {
			return &kupenstackv1.SecurityGroup{ObjectMeta: objMeta(ns, name)}
		}),
	neutronKind("Port", "ports", privateSubnet, func(ns, name string) generic.Object {
		return &kupenstackv1.Port{ObjectMeta: objMeta(ns, name), Spec: kupenstackv1.PortSpec{NetworkRef: "net"}}
	}),
	floatingIPKind(),
	{
		kind:     "KeyPair",
		stableID: true,
		newObj: func(ns, name string) generic.Object {
			return &kupenstackv1.KeyPair{ObjectMeta: objMeta(ns, name), Spec: kupenstackv1.KeyPairSpec{PublicKey: testPublicKey}}
		},
		find: func(ctx context.Context, c osClients, _ string, obj generic.Object) ([]string, error) {
			name := keypair.NovaName(obj.(*kupenstackv1.KeyPair))
			err := keypairs.Get(ctx, c.nova, name, nil).Err
			if openstack.IsNotFound(err) {
				return nil, nil
			}
			return []string{name}, err
		},
		get: func(ctx context.Context, c osClients, id string) error { return keypairs.Get(ctx, c.nova, id, nil).Err },
		remove: func(ctx context.Context, c osClients, id string) error {
			return keypairs.Delete(ctx, c.nova, id, nil).ExtractErr()
		},
	},
	{
		kind:          "Flavor",
		clusterScoped: true,
		stableID:      true, // the object's UID
		newObj: func(ns, name string) generic.Object {
			return &kupenstackv1.Flavor{ObjectMeta: objMeta("", ns+"-"+name), Spec: kupenstackv1.FlavorSpec{VCPUs: 1, RAMMiB: 64, DiskGiB: 1}}
		},
		find: func(ctx context.Context, c osClients, _ string, obj generic.Object) ([]string, error) {
			pages, err := flavors.ListDetail(c.nova, flavors.ListOpts{AccessType: flavors.AllAccess}).AllPages(ctx)
			all, err := ids(pages, err, flavors.ExtractFlavors, func(r flavors.Flavor) string { return r.Name + "\x00" + r.ID })
			var out []string
			for _, nameID := range all {
				if name, id, _ := strings.Cut(nameID, "\x00"); name == obj.GetName() {
					out = append(out, id)
				}
			}
			return out, err
		},
		get: func(ctx context.Context, c osClients, id string) error { return flavors.Get(ctx, c.nova, id).Err },
		remove: func(ctx context.Context, c osClients, id string) error {
			return flavors.Delete(ctx, c.nova, id).ExtractErr()
		},
	},
}

func kindCaseOf(kind string) kindCase {
	for _, k := range kindCases {
		if k.kind == kind {
			return k
		}
	}
	panic("no kind case " + kind)
}

// create creates objects in order.
func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(env.Ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// waitReady waits until obj is Ready for its current generation and refreshes it.
func waitReady(t *testing.T, obj generic.Object) {
	t.Helper()
	eventually(t, fmt.Sprintf("%T %s ready", obj, obj.GetName()), func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		if st := obj.GetManagedStatus(); st.ID == "" || !conditions.IsReady(st.Conditions, obj.GetGeneration()) {
			return fmt.Errorf("id %q, conditions %+v", st.ID, st.Conditions)
		}
		return nil
	})
}

// projectID waits until namespace ns has its Keystone project; "" for cluster-scoped kinds.
func projectID(t *testing.T, ns string) string {
	t.Helper()
	var proj kupenstackv1.Project
	eventually(t, "project of "+ns, func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: ns}, &proj); err != nil {
			return err
		}
		if proj.Status.ID == "" {
			return fmt.Errorf("no project ID yet")
		}
		return nil
	})
	return proj.Status.ID
}

// eventsFor returns how many Events (counting each series' repeats once) of each reason were
// recorded for obj.
func eventsFor(t *testing.T, obj client.Object) map[string]int {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(env.Ctx, &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range list.Items {
		if e.Regarding.UID == obj.GetUID() {
			out[e.Reason]++
		}
	}
	return out
}

// deleteAll deletes objs, waits until they are gone, then deletes the namespace's Project (for
// namespaced kinds) and waits for it too.
func deleteAll(t *testing.T, ns string, clusterScoped bool, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := client.IgnoreNotFound(env.Client.Delete(env.Ctx, o)); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range objs {
		waitGone(t, o)
	}
	if !clusterScoped {
		deleteProject(t, ns)
	}
}
