package e2e

import (
	"net/url"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// TestRBACNamespaceIsolation: a user whose Role allows every KupenStack object in namespace A
// can neither read nor write any in namespace B; a Port in A that names a Network existing only
// in B never resolves it; A's OpenStack resources live in A's project only.
func TestRBACNamespaceIsolation(t *testing.T) {
	parallel(t)
	c := adminClients(t)
	ctx := env.Ctx
	nsA, nsB := newNamespace(t), newNamespace(t)
	user := "alice@" + nsA
	create(t,
		&rbacv1.Role{ObjectMeta: objMeta(nsA, "kupenstack-editor"), Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{kupenstackv1.GroupVersion.Group}, Resources: []string{"*"}, Verbs: []string{"*"}}}},
		&rbacv1.RoleBinding{ObjectMeta: objMeta(nsA, "alice"),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "kupenstack-editor"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}},
	)
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	alice, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}

	// In A, alice makes a network and a port on a network that only B has.
	netA := &kupenstackv1.Network{ObjectMeta: objMeta(nsA, "a-net")}
	port := &kupenstackv1.Port{ObjectMeta: objMeta(nsA, "p"), Spec: kupenstackv1.PortSpec{NetworkRef: "b-only"}}
	eventually(t, "alice may create in "+nsA, func() error { return alice.Create(ctx, netA) })
	if err := alice.Create(ctx, port); err != nil {
		t.Fatal(err)
	}
	netB := &kupenstackv1.Network{ObjectMeta: objMeta(nsB, "b-only")}
	create(t, netB)

	// In B (and cluster-wide), alice can do nothing with any kind.
	for _, k := range kindCases {
		if k.clusterScoped {
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(kupenstackv1.GroupVersion.WithKind(k.kind + "List"))
		for where, err := range map[string]error{
			"list in " + nsB:   alice.List(ctx, list, client.InNamespace(nsB)),
			"list everywhere":  alice.List(ctx, list),
			"create in " + nsB: alice.Create(ctx, k.newObj(nsB, "intruder")),
		} {
			if !apierrors.IsForbidden(err) {
				t.Errorf("%s: %s: %v, want Forbidden", k.kind, where, err)
			}
		}
		if err := alice.List(ctx, list, client.InNamespace(nsA)); err != nil {
			t.Errorf("%s: list in %s: %v", k.kind, nsA, err)
		}
	}
	if err := alice.Get(ctx, client.ObjectKeyFromObject(netB), &kupenstackv1.Network{}); !apierrors.IsForbidden(err) {
		t.Errorf("get %s/b-only: %v, want Forbidden", nsB, err)
	}

	// The port waits for a Network/b-only of its own namespace, also once B's is Ready.
	waitReady(t, netA)
	waitReady(t, netB)
	waitCondition(t, port, kupenstackv1.ConditionProgressing, "waiting for Network/b-only to be created")
	time.Sleep(3 * time.Second)
	waitCondition(t, port, kupenstackv1.ConditionProgressing, "waiting for Network/b-only to be created")
	if port.Status.ID != "" {
		t.Errorf("the port resolved another namespace's network: %s", port.Status.ID)
	}

	projA, projB := projectID(t, nsA), projectID(t, nsB)
	for _, check := range []struct {
		what, project, name string
		want                int
	}{
		{"A's network in A's project", projA, "a-net", 1},
		{"A's network in B's project", projB, "a-net", 0},
		{"B's network in A's project", projA, "b-only", 0},
	} {
		found, err := neutronList(ctx, c, "networks", url.Values{"project_id": {check.project}, "name": {check.name}})
		if err != nil || len(found) != check.want {
			t.Errorf("%s: %v (%v), want %d", check.what, found, err, check.want)
		}
	}
	for _, project := range []string{projA, projB} {
		if found, err := neutronList(ctx, c, "ports", url.Values{"project_id": {project}, "name": {"p"}}); err != nil || len(found) != 0 {
			t.Errorf("a port was made for the unresolved Port in project %s: %v (%v)", project, found, err)
		}
	}

	deleteAll(t, nsA, false, port, netA)
	deleteAll(t, nsB, false, netB)
}
