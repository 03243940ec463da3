package generic

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// fakeCloud is an in-memory stand-in for one OpenStack resource type, used only to inject faults
// a real cloud cannot be made to produce on demand; the same engine runs against the real cloud
// in test/e2e.
type fakeCloud struct {
	mu        sync.Mutex
	resources map[string]*fakeResource // by ID
	nextID    int
	failNext  map[string]error // operation -> error to return once
	failAll   map[string]error // operation -> error to return until cleared
	calls     map[string]int   // operation -> count
	// vanishOnUpdate deletes the resource in the next update and answers 404, as Neutron does
	// when a network is deleted between a pass's read and its update.
	vanishOnUpdate bool
}

type fakeResource struct {
	ID, Name, Description, OwnerUID string
}

func (c *fakeCloud) op(name string) error {
	c.calls[name]++
	if err, ok := c.failAll[name]; ok {
		return err
	}
	if err, ok := c.failNext[name]; ok {
		delete(c.failNext, name)
		return err
	}
	return nil
}

func (c *fakeCloud) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[name]
}

func (c *fakeCloud) inject(op string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failNext[op] = err
}

func (c *fakeCloud) block(op string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		delete(c.failAll, op)
		return
	}
	c.failAll[op] = err
}

func (c *fakeCloud) put(r fakeResource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resources[r.ID] = &r
}

func (c *fakeCloud) get(id string) (fakeResource, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.resources[id]
	if !ok {
		return fakeResource{}, false
	}
	return *r, true
}

func notFound() error { return gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusNotFound} }

// fakeActuator maps Network objects onto fakeCloud (the kind is only a carrier here).
type fakeActuator struct{ cloud *fakeCloud }

func (a fakeActuator) Get(_ context.Context, _ Scope, id string) (*fakeResource, error) {
	a.cloud.mu.Lock()
	defer a.cloud.mu.Unlock()
	if err := a.cloud.op("get"); err != nil {
		return nil, err
	}
	r, ok := a.cloud.resources[id]
	if !ok {
		return nil, notFound()
	}
	cp := *r
	return &cp, nil
}

func (a fakeActuator) FindOwned(_ context.Context, _ Scope, n *kupenstackv1.Network) (*fakeResource, error) {
	a.cloud.mu.Lock()
	defer a.cloud.mu.Unlock()
	for _, r := range a.cloud.resources {
		if r.OwnerUID == string(n.UID) {
			cp := *r
			return &cp, nil
		}
	}
	return nil, nil
}

func (a fakeActuator) FindImport(_ context.Context, _ Scope, n *kupenstackv1.Network) (*fakeResource, error) {
	a.cloud.mu.Lock()
	defer a.cloud.mu.Unlock()
	for _, r := range a.cloud.resources {
		if r.Name == n.Spec.Import.Name || r.ID == n.Spec.Import.ID {
			cp := *r
			return &cp, nil
		}
	}
	return nil, nil
}

func (a fakeActuator) Create(_ context.Context, _ Scope, n *kupenstackv1.Network) (*fakeResource, error) {
	a.cloud.mu.Lock()
	defer a.cloud.mu.Unlock()
	if err := a.cloud.op("create"); err != nil {
		return nil, err
	}
	a.cloud.nextID++
	r := &fakeResource{ID: fmt.Sprintf("id-%d", a.cloud.nextID), Name: n.Name, Description: n.Spec.Description, OwnerUID: string(n.UID)}
	a.cloud.resources[r.ID] = r
	cp := *r
	return &cp, nil
}

func (fakeActuator) Diff(_ Scope, n *kupenstackv1.Network, cur *fakeResource) Changes {
	var d Diff
	Value(&d, "spec.description", n.Spec.Description, cur.Description)
	return d.Changes()
}

func (a fakeActuator) Update(_ context.Context, s Scope, n *kupenstackv1.Network, cur *fakeResource, _ Changes) (*fakeResource, error) {
	a.cloud.mu.Lock()
	defer a.cloud.mu.Unlock()
	if err := a.cloud.op("update"); err != nil {
		return cur, err
	}
	if a.cloud.vanishOnUpdate {
		a.cloud.vanishOnUpdate = false
		delete(a.cloud.resources, cur.ID)
		return cur, notFound()
	}
	a.cloud.resources[cur.ID].Description = n.Spec.Description
	if n.Spec.Description == "noted" {
		s.Event(corev1.EventTypeNormal, "Noted", "Update", "the actuator's own event")
	}
	cp := *a.cloud.resources[cur.ID]
	return &cp, nil
}

func (a fakeActuator) Delete(_ context.Context, _ Scope, r *fakeResource) error {
	a.cloud.mu.Lock()
	defer a.cloud.mu.Unlock()
	if err := a.cloud.op("delete"); err != nil {
		return err
	}
	delete(a.cloud.resources, r.ID)
	return nil
}

func (fakeActuator) ID(r *fakeResource) string { return r.ID }

func (fakeActuator) Observe(n *kupenstackv1.Network, r *fakeResource) (bool, string) {
	n.Status.Resource = &kupenstackv1.NetworkResourceStatus{Name: r.Name, Description: r.Description, Status: "ACTIVE"}
	return true, ""
}

var (
	slowDeletes = &slowDeleter{exists: map[string]bool{}, pending: map[string]int{}}
	cloud       = &fakeCloud{resources: map[string]*fakeResource{}, failNext: map[string]error{}, failAll: map[string]error{}, calls: map[string]int{}}
	env         = testenv.New(func(mgr ctrl.Manager) error {
		if err := Setup(context.Background(), mgr, Options{Registry: NewRegistry(), ResyncPeriod: time.Hour},
			Kind[*kupenstackv1.Network, fakeResource]{
				Name: "Network", Controller: "fake-network", Actuator: fakeActuator{cloud},
				New:     func() *kupenstackv1.Network { return &kupenstackv1.Network{} },
				NewList: func() client.ObjectList { return &kupenstackv1.NetworkList{} },
			}); err != nil {
			return err
		}
		if err := Setup(context.Background(), mgr, Options{Registry: NewRegistry(), ResyncPeriod: time.Hour},
			Kind[*kupenstackv1.ServerGroup, string]{
				Name: "ServerGroup", Controller: "fake-servergroup", Actuator: slowDeletes,
				Can:     Capabilities[*kupenstackv1.ServerGroup, string]{Deleting: slowDeletes.Deleting},
				New:     func() *kupenstackv1.ServerGroup { return &kupenstackv1.ServerGroup{} },
				NewList: func() client.ObjectList { return &kupenstackv1.ServerGroupList{} },
			}); err != nil {
			return err
		}
		if err := Setup(context.Background(), mgr, Options{Registry: NewRegistry(), ResyncPeriod: time.Hour},
			Kind[*kupenstackv1.KeyPair, string]{
				Name: "KeyPair", Controller: "fake-keypair", Actuator: healActuator{healFake},
				Can: Capabilities[*kupenstackv1.KeyPair, string]{
					Heal: &Healing[*kupenstackv1.KeyPair, string]{Failure: healActuator{healFake}.Failure, Decide: healActuator{healFake}.Heal},
				},
				New:     func() *kupenstackv1.KeyPair { return &kupenstackv1.KeyPair{} },
				NewList: func() client.ObjectList { return &kupenstackv1.KeyPairList{} },
			}); err != nil {
			return err
		}
		// A blocked deletion retried only hourly, so that only its wake-up can end it in a test.
		if err := Setup(context.Background(), mgr, Options{Registry: NewRegistry(), ResyncPeriod: time.Hour, DeletionBlockedRetry: time.Hour},
			Kind[*kupenstackv1.SecurityGroup, string]{
				Name: "SecurityGroup", Controller: "fake-securitygroup", Actuator: inUseFake,
				New:     func() *kupenstackv1.SecurityGroup { return &kupenstackv1.SecurityGroup{} },
				NewList: func() client.ObjectList { return &kupenstackv1.SecurityGroupList{} },
			}); err != nil {
			return err
		}
		// A change-based check every 100 ms, with its full list only hourly, for changes_test.go.
		if err := Setup(context.Background(), mgr, Options{Registry: NewRegistry(), ResyncPeriod: time.Hour},
			Kind[*kupenstackv1.Router, changedResource]{
				Name: "Router", Controller: "fake-router", Actuator: changes, ListPeriod: 100 * time.Millisecond,
				Can:     Capabilities[*kupenstackv1.Router, changedResource]{List: changes.ListAll, ListSince: changes.ListSince},
				New:     func() *kupenstackv1.Router { return &kupenstackv1.Router{} },
				NewList: func() client.ObjectList { return &kupenstackv1.RouterList{} },
			}); err != nil {
			return err
		}
		// A short drift-check period, for resync_test.go.
		return Setup(context.Background(), mgr, Options{Registry: NewRegistry(), ResyncPeriod: 200 * time.Millisecond},
			Kind[*kupenstackv1.Subnet, string]{
				Name: "Subnet", Controller: "fake-subnet", Actuator: lister,
				Can:     Capabilities[*kupenstackv1.Subnet, string]{List: lister.ListAll, Claims: lister.Claims},
				New:     func() *kupenstackv1.Subnet { return &kupenstackv1.Subnet{} },
				NewList: func() client.ObjectList { return &kupenstackv1.SubnetList{} },
			})
	})
)

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

var nsCount int

// readyNamespace makes a namespace whose Project is already Ready (no project controller runs here).
func readyNamespace(t *testing.T) string {
	t.Helper()
	ns := nextNamespace()
	env.NamespaceWithReadyProject(t, ns)
	return ns
}

// nextNamespace is the name of a namespace no test of this package has used.
func nextNamespace() string {
	nsCount++
	return fmt.Sprintf("engine-%d", nsCount)
}

func waitFor(t *testing.T, key client.ObjectKey, what string, ok func(*kupenstackv1.Network) bool) *kupenstackv1.Network {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n kupenstackv1.Network
		err := env.Client.Get(env.Ctx, key, &n)
		if err == nil && ok(&n) {
			return &n
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: err=%v status=%+v", what, err, n.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func condition(n *kupenstackv1.Network, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(n.Status.Conditions, typ); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func TestRejectedCreateIsDegradedThenRecovers(t *testing.T) {
	ns := readyNamespace(t)
	// Rejected until the spec changes: a pass woken by something else (the Project's status, say)
	// meets the same quota, as it would in OpenStack, instead of taking a one-shot fault's place.
	cloud.block("create", gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusConflict, Body: []byte("Quota exceeded for resources: ['network']")})
	defer cloud.block("create", nil)
	n := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "quota", Namespace: ns}, Spec: kupenstackv1.NetworkSpec{NetworkParameters: kupenstackv1.NetworkParameters{Description: "a"}}}
	if err := env.Client.Create(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(n)
	got := waitFor(t, key, "degraded", func(n *kupenstackv1.Network) bool {
		return condition(n, kupenstackv1.ConditionDegraded).Status == metav1.ConditionTrue
	})
	d := condition(got, kupenstackv1.ConditionDegraded)
	if d.Reason != kupenstackv1.ReasonInvalidConfiguration || !strings.Contains(d.Message, "Quota exceeded") {
		t.Fatalf("Degraded = %+v, want InvalidConfiguration with OpenStack's message", d)
	}
	if condition(got, kupenstackv1.ConditionReady).Status != metav1.ConditionFalse || got.Status.ID != "" {
		t.Fatalf("a failed create must not look ready: %+v", got.Status)
	}
	// A spec change (new generation) retries at once and succeeds.
	cloud.block("create", nil)
	got.Spec.Description = "b"
	if err := env.Client.Update(env.Ctx, got); err != nil {
		t.Fatal(err)
	}
	got = waitFor(t, key, "ready", func(n *kupenstackv1.Network) bool {
		return conditions.IsReady(n.Status.Conditions, n.Generation)
	})
	if condition(got, kupenstackv1.ConditionDegraded).Status != metav1.ConditionFalse || got.Status.ID == "" {
		t.Fatalf("recovered object still degraded: %+v", got.Status)
	}
}

func TestTransientErrorRetriesWithBackoff(t *testing.T) {
	ns := readyNamespace(t)
	before := cloud.count("create")
	cloud.inject("create", gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusServiceUnavailable})
	n := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "flaky", Namespace: ns}}
	if err := env.Client.Create(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, client.ObjectKeyFromObject(n), "ready after retry", func(n *kupenstackv1.Network) bool {
		return conditions.IsReady(n.Status.Conditions, n.Generation)
	})
	if calls := cloud.count("create") - before; calls != 2 {
		t.Fatalf("create called %d times, want 2 (one failure, one retry)", calls)
	}
	if _, ok := cloud.get(got.Status.ID); !ok {
		t.Fatal("no resource after the retry")
	}
}

func TestAdoptsResourceCreatedBeforeACrash(t *testing.T) {
	ns := readyNamespace(t)
	n := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "crash", Namespace: ns}}
	// Creation fails until the resource "already exists" for this object, as after a crash
	// between the create call and the status write.
	cloud.block("create", gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusServiceUnavailable})
	defer cloud.block("create", nil)
	if err := env.Client.Create(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	cloud.put(fakeResource{ID: "pre-existing", Name: "crash", OwnerUID: string(n.UID)})
	got := waitFor(t, client.ObjectKeyFromObject(n), "adopted", func(n *kupenstackv1.Network) bool { return n.Status.ID != "" })
	if got.Status.ID != "pre-existing" {
		t.Fatalf("ID = %s, want the pre-existing resource adopted", got.Status.ID)
	}
	cloud.mu.Lock()
	owned := 0
	for _, r := range cloud.resources {
		if r.OwnerUID == string(n.UID) {
			owned++
		}
	}
	cloud.mu.Unlock()
	if owned != 1 {
		t.Fatalf("%d resources for one object, want exactly 1", owned)
	}
}

func TestUnmanagedImportNeverWrites(t *testing.T) {
	ns := readyNamespace(t)
	cloud.put(fakeResource{ID: "legacy-id", Name: "legacy", Description: "by hand"})
	writes := func() int { return cloud.count("create") + cloud.count("update") + cloud.count("delete") }
	before := writes()
	n := &kupenstackv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: ns},
		Spec: kupenstackv1.NetworkSpec{
			ManagedSpec: kupenstackv1.ManagedSpec{ManagementPolicy: kupenstackv1.ManagementPolicyUnmanaged, Import: &kupenstackv1.ImportSpec{Name: "legacy"}},
			NetworkParameters: kupenstackv1.NetworkParameters{
				Description: "different",
			},
		},
	}
	if err := env.Client.Create(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(n)
	waitFor(t, key, "imported", func(n *kupenstackv1.Network) bool {
		return n.Status.ID == "legacy-id" && conditions.IsReady(n.Status.Conditions, n.Generation)
	})
	if err := env.Client.Delete(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for env.Client.Get(env.Ctx, key, &kupenstackv1.Network{}) == nil {
		if time.Now().After(deadline) {
			t.Fatal("object not deleted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if w := writes() - before; w != 0 {
		t.Fatalf("%d writes to OpenStack for an unmanaged object", w)
	}
	if r, ok := cloud.get("legacy-id"); !ok || r.Description != "by hand" {
		t.Fatalf("unmanaged resource changed or deleted: %+v %v", r, ok)
	}
}

func TestOutOfBandDeletionIsRepairedAndDeleteCleansUp(t *testing.T) {
	ns := readyNamespace(t)
	n := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "repair", Namespace: ns}}
	n.Spec.ResyncPeriod = &kupenstackv1.Duration{Duration: time.Second}
	if err := env.Client.Create(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(n)
	first := waitFor(t, key, "ready", func(n *kupenstackv1.Network) bool { return n.Status.ID != "" })
	cloud.mu.Lock()
	delete(cloud.resources, first.Status.ID)
	cloud.mu.Unlock()
	second := waitFor(t, key, "recreated", func(n *kupenstackv1.Network) bool {
		return n.Status.ID != "" && n.Status.ID != first.Status.ID
	})
	if err := env.Client.Delete(env.Ctx, second); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for env.Client.Get(env.Ctx, key, &kupenstackv1.Network{}) == nil {
		if time.Now().After(deadline) {
			t.Fatal("object not deleted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, ok := cloud.get(second.Status.ID); ok {
		t.Fatal("resource left behind after the object was deleted")
	}
}

// TestDeletedWhileBeingUpdated: a resource deleted outside KupenStack between a pass's read and
// its update (OpenStack's 404 to the update) is created again at once, as any deletion outside
// KupenStack is, not held Degraded as if the spec were wrong; a 404 to an update of a resource that
// still exists (something it refers to is gone) stays the spec's to fix.
func TestDeletedWhileBeingUpdated(t *testing.T) {
	ns := readyNamespace(t)
	n := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "vanishing", Namespace: ns}, Spec: kupenstackv1.NetworkSpec{NetworkParameters: kupenstackv1.NetworkParameters{Description: "a"}}}
	if err := env.Client.Create(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(n)
	first := waitFor(t, key, "ready", func(n *kupenstackv1.Network) bool { return conditions.IsReady(n.Status.Conditions, n.Generation) })

	cloud.mu.Lock()
	cloud.vanishOnUpdate = true
	cloud.mu.Unlock()
	first.Spec.Description = "b"
	if err := env.Client.Update(env.Ctx, first); err != nil {
		t.Fatal(err)
	}
	// Within waitFor's 30 s: a 404 taken for a rejected spec waits RejectedRetryInterval (2 min).
	second := waitFor(t, key, "created again with the new description", func(n *kupenstackv1.Network) bool {
		return conditions.IsReady(n.Status.Conditions, n.Generation) && n.Status.ID != first.Status.ID
	})
	if r, ok := cloud.get(second.Status.ID); !ok || r.Description != "b" {
		t.Errorf("new resource %+v (found %v), want description b", r, ok)
	}
	var events eventsv1.EventList
	if err := env.Client.List(env.Ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	reasons := map[string]int{}
	for _, e := range events.Items {
		reasons[e.Reason]++
	}
	if reasons["DeletedOutOfBand"] != 1 || reasons[kupenstackv1.ReasonInvalidConfiguration] != 0 {
		t.Errorf("events %v, want one DeletedOutOfBand and no InvalidConfiguration", reasons)
	}

	cloud.block("update", notFound())
	defer cloud.block("update", nil)
	second.Spec.Description = "c"
	if err := env.Client.Update(env.Ctx, second); err != nil {
		t.Fatal(err)
	}
	third := waitFor(t, key, "degraded", func(n *kupenstackv1.Network) bool {
		return condition(n, kupenstackv1.ConditionDegraded).Reason == kupenstackv1.ReasonInvalidConfiguration
	})
	if third.Status.ID != second.Status.ID {
		t.Errorf("ID %s → %s: a resource that exists was replaced over a 404 of its update", second.Status.ID, third.Status.ID)
	}
}

// TestDeletionThatMustWait: an actuator's WaitFor on delete (a volume still attached) shows as
// Progressing with its message, not as a failed deletion, and the deletion completes by itself.
func TestDeletionThatMustWait(t *testing.T) {
	ns := readyNamespace(t)
	n := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "busy", Namespace: ns}}
	if err := env.Client.Create(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(n)
	id := waitFor(t, key, "ready", func(n *kupenstackv1.Network) bool { return n.Status.ID != "" }).Status.ID
	cloud.block("delete", WaitFor("attached to server x; waiting for the detach", 100*time.Millisecond))
	if err := env.Client.Delete(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	waitFor(t, key, "waiting", func(n *kupenstackv1.Network) bool {
		c := condition(n, kupenstackv1.ConditionProgressing)
		return c.Status == metav1.ConditionTrue && strings.Contains(c.Message, "waiting for the detach") &&
			condition(n, kupenstackv1.ConditionDegraded).Status != metav1.ConditionTrue
	})
	failed, err := eventsAbout(n, "DeleteFailed")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range failed {
		t.Errorf("a deletion that waits was reported as failed: %s", e.Note)
	}
	cloud.block("delete", nil)
	deadline := time.Now().Add(30 * time.Second)
	for env.Client.Get(env.Ctx, key, &kupenstackv1.Network{}) == nil {
		if time.Now().After(deadline) {
			t.Fatal("object not deleted once the wait was over")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, ok := cloud.get(id); ok {
		t.Error("resource left behind")
	}
}

// TestActuatorReasons: an actuator names the reason of a long wait (WaitForReason) and of a
// failure (Degraded), which is not retried until the spec changes, and records its own Events.
func TestActuatorReasons(t *testing.T) {
	ns := readyNamespace(t)
	n := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "reasons", Namespace: ns}, Spec: kupenstackv1.NetworkSpec{NetworkParameters: kupenstackv1.NetworkParameters{Description: "a"}}}
	if err := env.Client.Create(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(n)
	got := waitFor(t, key, "ready", func(n *kupenstackv1.Network) bool { return conditions.IsReady(n.Status.Conditions, n.Generation) })
	change := func(desc string) {
		t.Helper()
		got.Spec.Description = desc
		if err := env.Client.Update(env.Ctx, got); err != nil {
			t.Fatal(err)
		}
	}

	cloud.block("update", WaitForReason(kupenstackv1.ReasonResizing, "resizing the thing", 50*time.Millisecond))
	defer cloud.block("update", nil)
	change("b")
	got = waitFor(t, key, "progressing with the actuator's reason", func(n *kupenstackv1.Network) bool {
		c := condition(n, kupenstackv1.ConditionProgressing)
		return c.Status == metav1.ConditionTrue && c.Reason == kupenstackv1.ReasonResizing && c.Message == "resizing the thing" &&
			c.ObservedGeneration == n.Generation && condition(n, kupenstackv1.ConditionDegraded).Status == metav1.ConditionFalse
	})

	cloud.block("update", Degraded(kupenstackv1.ReasonResizeFailed, "Nova refused it", 0))
	got = waitFor(t, key, "degraded with the actuator's reason", func(n *kupenstackv1.Network) bool {
		c := condition(n, kupenstackv1.ConditionDegraded)
		return c.Status == metav1.ConditionTrue && c.Reason == kupenstackv1.ReasonResizeFailed && c.Message == "Nova refused it"
	})
	if p := condition(got, kupenstackv1.ConditionProgressing); p.Status != metav1.ConditionFalse {
		t.Errorf("Progressing = %+v, want False: the failure needs a spec change", p)
	}
	// No retry: the wait's last requeue may still land, then nothing until the spec changes.
	time.Sleep(300 * time.Millisecond)
	before := cloud.count("update")
	time.Sleep(time.Second)
	if calls := cloud.count("update") - before; calls > 0 {
		t.Errorf("update called %d times over a Degraded failure without a spec change", calls)
	}

	cloud.block("update", nil)
	change("noted")
	waitFor(t, key, "ready again", func(n *kupenstackv1.Network) bool { return conditions.IsReady(n.Status.Conditions, n.Generation) })
	var events eventsv1.EventList
	if err := env.Client.List(env.Ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	reasons := map[string]bool{}
	for _, e := range events.Items {
		if e.Regarding.Name == n.Name {
			reasons[e.Reason] = true
		}
	}
	if !reasons["Noted"] || !reasons[kupenstackv1.ReasonResizeFailed] {
		t.Errorf("events %v, want the actuator's Noted and the ResizeFailed warning", reasons)
	}
}
