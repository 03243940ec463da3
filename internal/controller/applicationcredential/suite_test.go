package applicationcredential

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/openstack"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// fakeKeystone is the operator user's application credentials in memory, for the cases a real
// cloud cannot be made to produce on demand (a revocation refused, a credential made just before
// a crash); the controller runs against the real Keystone in test/e2e.
type fakeKeystone struct {
	mu    sync.Mutex
	creds map[string]fakeCred
	n     int
	// created are the requests of every Create, by project.
	created []createCall
	// revoked are the IDs deleted, each with the credential the Secret named when it happened.
	revoked []revokeCall
	// deleteErr is returned by Delete, listErr by List, while set.
	deleteErr, listErr error
	// secretOf returns the credential ID the Secret of an object holds now (set by the suite).
	secretOf func(projectID string) string
}

type fakeCred struct {
	Credential
	projectID string
	roles     []string
}

type createCall struct {
	projectID string
	req       Request
}

type revokeCall struct{ id, secretHeld string }

func (f *fakeKeystone) Create(_ context.Context, projectID string, r Request) (Credential, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	c := Credential{ID: fmt.Sprintf("cred-%d", f.n), Name: r.Name, ProjectID: projectID,
		Secret: fmt.Sprintf("s3cret-value-%d", f.n), ExpiresAt: r.ExpiresAt}
	f.creds[c.ID] = fakeCred{Credential: Credential{ID: c.ID, Name: c.Name, ProjectID: projectID, ExpiresAt: c.ExpiresAt}, projectID: projectID, roles: r.Roles}
	f.created = append(f.created, createCall{projectID, r})
	return c, nil
}

func (f *fakeKeystone) List(_ context.Context, prefix string) ([]Credential, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listErr != nil {
		return nil, f.listErr
	}
	var out []Credential
	for _, c := range f.creds {
		if strings.HasPrefix(c.Name, prefix) {
			out = append(out, c.Credential)
		}
	}
	return out, nil
}

func (f *fakeKeystone) Delete(_ context.Context, id string) error {
	f.mu.Lock()
	err, c := f.deleteErr, f.creds[id]
	f.mu.Unlock()
	if err != nil {
		return err
	}
	held := ""
	if f.secretOf != nil && c.projectID != "" {
		held = f.secretOf(c.projectID)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.creds, id)
	f.revoked = append(f.revoked, revokeCall{id, held})
	return nil
}

func (f *fakeKeystone) Location(context.Context) (openstack.Location, error) {
	return openstack.Location{AuthURL: "https://keystone.example:5000/v3", Region: "RegionOne", Interface: "internal"}, nil
}

func (f *fakeKeystone) failDelete(err error) { f.mu.Lock(); f.deleteErr = err; f.mu.Unlock() }
func (f *fakeKeystone) failList(err error)   { f.mu.Lock(); f.listErr = err; f.mu.Unlock() }

// plant makes a credential behind the controller's back, as one made just before a crash.
func (f *fakeKeystone) plant(name, projectID string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	id := fmt.Sprintf("cred-%d", f.n)
	f.creds[id] = fakeCred{Credential: Credential{ID: id, Name: name, ProjectID: projectID}, projectID: projectID}
	return id
}

func (f *fakeKeystone) exists(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.creds[id]
	return ok
}

// forget deletes a credential behind the controller's back.
func (f *fakeKeystone) forget(id string) { f.mu.Lock(); delete(f.creds, id); f.mu.Unlock() }

func (f *fakeKeystone) calls(projectID string) ([]Request, []revokeCall) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var reqs []Request
	for _, c := range f.created {
		if c.projectID == projectID {
			reqs = append(reqs, c.req)
		}
	}
	return reqs, append([]revokeCall(nil), f.revoked...)
}

var (
	fakeKS = &fakeKeystone{creds: map[string]fakeCred{}}
	clk    = clocktesting.NewFakePassiveClock(time.Now())

	env = testenv.New(func(mgr ctrl.Manager) error {
		return (&Reconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(ControllerName),
			Keystone: fakeKS, ResyncPeriod: time.Hour, Clock: clk,
		}).SetupWithManager(mgr)
	})
)

func TestMain(m *testing.M) {
	// Each test has a namespace of its own, whose project ID is "project-<namespace>", and one
	// object named "tools" whose Secret is "tools" unless the test says otherwise.
	fakeKS.secretOf = func(projectID string) string {
		var s corev1.Secret
		if env.Client.Get(env.Ctx, client.ObjectKey{Namespace: strings.TrimPrefix(projectID, "project-"), Name: "tools"}, &s) != nil {
			return ""
		}
		return s.Annotations[CredentialIDAnnotation]
	}
	os.Exit(env.Run(m))
}

var nsCount int

// namespace creates a namespace with a ready Project (no project controller runs here), returning
// both.
func namespace(t *testing.T) (string, string) {
	t.Helper()
	nsCount++
	ns := fmt.Sprintf("appcred-%d", nsCount)
	return ns, env.NamespaceWithReadyProject(t, ns)
}

func newCred(ns string, spec kupenstackv1.ApplicationCredentialSpec) *kupenstackv1.ApplicationCredential {
	return &kupenstackv1.ApplicationCredential{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tools"}, Spec: spec}
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(env.Ctx, obj); err != nil {
		t.Fatal(err)
	}
}

func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, what, cond)
}

// wait waits until the object passes check and returns it.
func wait(t *testing.T, ns, what string, check func(*kupenstackv1.ApplicationCredential) error) *kupenstackv1.ApplicationCredential {
	t.Helper()
	var a kupenstackv1.ApplicationCredential
	eventually(t, what, func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Namespace: ns, Name: "tools"}, &a); err != nil {
			return err
		}
		if a.Status.ObservedGeneration != a.Generation {
			return fmt.Errorf("generation %d not observed yet", a.Generation)
		}
		return check(&a)
	})
	return &a
}

func ready(a *kupenstackv1.ApplicationCredential) error {
	if !conditions.IsReady(a.Status.Conditions, a.Generation) || a.Status.Current == nil {
		return fmt.Errorf("not ready: %+v", a.Status.Conditions)
	}
	return nil
}

// poke wakes the object as a resync would: the clock moved, nothing else did.
func poke(t *testing.T, ns string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test/poke":"%d"}}}`, time.Now().UnixNano())
	a := newCred(ns, kupenstackv1.ApplicationCredentialSpec{})
	if err := env.Client.Patch(env.Ctx, a, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

func secretOf(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// eventsOf counts the Events of each reason recorded for obj, and returns their messages.
func eventsOf(t *testing.T, obj client.Object) (map[string]int, []string) {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(env.Ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		t.Fatal(err)
	}
	count, notes := map[string]int{}, []string(nil)
	for _, e := range list.Items {
		if e.Regarding.UID == obj.GetUID() {
			count[e.Reason]++
			notes = append(notes, e.Reason+": "+e.Note)
		}
	}
	return count, notes
}

func unavailable() error { return gophercloud.ErrUnexpectedResponseCode{Actual: 503} }

// waitEvents waits until obj has exactly the Events of each reason wanted (they are recorded
// asynchronously), and returns every Event's message.
func waitEvents(t *testing.T, obj client.Object, want map[string]int) []string {
	t.Helper()
	var notes []string
	eventually(t, fmt.Sprintf("events %v", want), func() error {
		var count map[string]int
		count, notes = eventsOf(t, obj)
		for reason, n := range want {
			if count[reason] != n {
				return fmt.Errorf("%d %s Events, want %d: %q", count[reason], reason, n, notes)
			}
		}
		return nil
	})
	return notes
}
