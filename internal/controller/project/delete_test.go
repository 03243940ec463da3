package project

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// fakeKeystoneNeutron answers the calls a Project's deletion makes: Keystone's token and
// project deletion, Neutron's security group list and delete. It records the deletions in order.
type fakeKeystoneNeutron struct {
	mu sync.Mutex
	// groups are the security groups by ID: their project and name.
	groups map[string][2]string
	// groupDelete, when not 0, is the status every security group delete answers.
	groupDelete int
	deleted     []string
}

func newFakeKeystoneNeutron(t *testing.T) (*fakeKeystoneNeutron, *openstack.Clients) {
	f := &fakeKeystoneNeutron{groups: map[string][2]string{}}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("POST /v3/auth/tokens", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Subject-Token", "token")
		w.WriteHeader(http.StatusCreated)
		endpoint := func(typ, url string) string {
			return fmt.Sprintf(`{"type": %q, "id": %q, "name": %q, "endpoints": [{"id": "e-%s", "interface": "public", "region": "RegionOne", "region_id": "RegionOne", "url": %q}]}`,
				typ, typ, typ, typ, url)
		}
		fmt.Fprintf(w, `{"token": {"expires_at": "2999-01-01T00:00:00Z", "catalog": [%s, %s]}}`,
			endpoint("identity", srv.URL+"/v3"), endpoint("network", srv.URL+"/networking"))
	})
	mux.HandleFunc("DELETE /v3/projects/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.deleted = append(f.deleted, "project "+r.PathValue("id"))
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /networking/{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"versions": [{"id": "v2.0", "status": "CURRENT"}]}`)
	})
	mux.HandleFunc("GET /networking/v2.0/security-groups", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		q := r.URL.Query()
		list := []map[string]string{}
		for id, g := range f.groups {
			if (q.Get("project_id") == "" || q.Get("project_id") == g[0]) && (q.Get("name") == "" || q.Get("name") == g[1]) {
				list = append(list, map[string]string{"id": id, "project_id": g[0], "tenant_id": g[0], "name": g[1]})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"security_groups": list})
	})
	mux.HandleFunc("DELETE /networking/v2.0/security-groups/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		id := r.PathValue("id")
		switch {
		case f.groupDelete != 0:
			w.WriteHeader(f.groupDelete)
		case f.groups[id] == [2]string{}:
			w.WriteHeader(http.StatusNotFound)
		default:
			delete(f.groups, id)
			f.deleted = append(f.deleted, "security group "+id)
			w.WriteHeader(http.StatusNoContent)
		}
	})
	clouds := fmt.Sprintf("clouds:\n  test:\n    region_name: RegionOne\n    auth:\n      auth_url: %s/v3\n      username: admin\n      password: secret\n      project_id: admin\n      user_domain_id: default\n", srv.URL)
	return f, openstack.NewClients(func(context.Context) ([]byte, error) { return []byte(clouds), nil }, "test", 1000, 1000)
}

func (f *fakeKeystoneNeutron) deletions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.deleted)
}

// deletedProject makes a Project whose Keystone project KupenStack created, and deletes it (its
// finalizer keeps it, being deleted).
func deletedProject(t *testing.T, name, id string) *kupenstackv1.Project {
	t.Helper()
	p := &kupenstackv1.Project{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{Finalizer}}, Spec: kupenstackv1.ProjectSpec{Namespace: name}}
	if err := env.Client.Create(env.Ctx, p); err != nil {
		t.Fatal(err)
	}
	p.Status.ID, p.Status.ProjectName, p.Status.CreatedByKupenstack = id, KeystoneName(name), true
	if err := env.Client.Status().Update(env.Ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(env.Ctx, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func deleteReconciler(c *openstack.Clients) *ProjectReconciler {
	return &ProjectReconciler{Client: env.Client, Recorder: events.NewFakeRecorder(100), Clients: c,
		NamespaceInUse: func(context.Context, string) (bool, error) { return false, nil }}
}

// TestDeletionRemovesDefaultSecurityGroup: deleting a namespace's project also deletes the
// security group Neutron made in it (named default), before the Keystone project; other
// projects' groups stay. It was left behind, one per namespace ever deleted.
func TestDeletionRemovesDefaultSecurityGroup(t *testing.T) {
	env.Require(t)
	f, clients := newFakeKeystoneNeutron(t)
	f.groups["sg-default"] = [2]string{"p-sg", "default"}
	f.groups["sg-web"] = [2]string{"p-sg", "web"}          // a KupenStack object's: deleted with it
	f.groups["sg-other"] = [2]string{"p-other", "default"} // another project's
	p := deletedProject(t, "delete-default-sg", "p-sg")
	r := deleteReconciler(clients)
	if _, err := r.Reconcile(env.Ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(p)}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"security group sg-default", "project p-sg"}; !slices.Equal(f.deletions(), want) {
		t.Errorf("deleted %v, want %v", f.deletions(), want)
	}
	if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(p), p); !apierrors.IsNotFound(err) {
		t.Errorf("Project still there (%v): %+v", err, p.Finalizers)
	}
}

// TestDeletionToleratesMissingDefaultGroup: a group already gone (404 on delete) does not hold the
// project's deletion up.
func TestDeletionToleratesMissingDefaultGroup(t *testing.T) {
	env.Require(t)
	f, clients := newFakeKeystoneNeutron(t)
	f.groups["sg-gone"] = [2]string{"p-gone", "default"}
	f.groupDelete = http.StatusNotFound
	p := deletedProject(t, "delete-default-sg-gone", "p-gone")
	if _, err := deleteReconciler(clients).Reconcile(env.Ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(p)}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"project p-gone"}; !slices.Equal(f.deletions(), want) {
		t.Errorf("deleted %v, want %v", f.deletions(), want)
	}
}

// TestDeletionWaitsForDefaultGroupInUse: a default group still in use (ports of servers deleted
// a moment ago) holds the Keystone project's deletion a while, retried every few seconds.
func TestDeletionWaitsForDefaultGroupInUse(t *testing.T) {
	env.Require(t)
	f, clients := newFakeKeystoneNeutron(t)
	f.groups["sg-busy"] = [2]string{"p-busy", "default"}
	f.groupDelete = http.StatusConflict
	p := deletedProject(t, "delete-default-sg-busy", "p-busy")
	res, err := deleteReconciler(clients).Reconcile(env.Ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(p)})
	if err != nil || res.RequeueAfter <= 0 || res.RequeueAfter > 10*time.Second {
		t.Fatalf("result %+v, %v; want a retry within seconds", res, err)
	}
	if d := f.deletions(); len(d) != 0 {
		t.Errorf("deleted %v while the default group is in use", d)
	}
	f.mu.Lock()
	f.groupDelete = 0
	f.mu.Unlock()
	if _, err := deleteReconciler(clients).Reconcile(env.Ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(p)}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"security group sg-busy", "project p-busy"}; !slices.Equal(f.deletions(), want) {
		t.Errorf("deleted %v, want %v", f.deletions(), want)
	}
}
