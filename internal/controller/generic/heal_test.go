package generic

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// healCloud is a fake server API where a test can make a resource fail; KeyPair objects are the
// carrier. The policy is read from the object's "policy" label: never, backoff, or replace.
type healCloud struct {
	mu       sync.Mutex
	failed   map[string]bool // ID -> failed
	deleted  []string
	nextID   int
	decision map[string]int // object name -> Heal calls
	// deleteErrors: how many more deletes of an ID fail (the cloud refusing, say, a 409).
	deleteErrors map[string]int
}

var healFake = &healCloud{failed: map[string]bool{}, decision: map[string]int{}, deleteErrors: map[string]int{}}

type healActuator struct{ c *healCloud }

func (a healActuator) Get(_ context.Context, _ Scope, id string) (*string, error) {
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	if _, ok := a.c.failed[id]; !ok {
		return nil, notFound()
	}
	return &id, nil
}
func (healActuator) FindOwned(context.Context, Scope, *kupenstackv1.KeyPair) (*string, error) {
	return nil, nil
}
func (healActuator) FindImport(context.Context, Scope, *kupenstackv1.KeyPair) (*string, error) {
	return nil, nil
}
func (a healActuator) Create(_ context.Context, _ Scope, k *kupenstackv1.KeyPair) (*string, error) {
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	a.c.nextID++
	id := fmt.Sprintf("%s-%d", k.Name, a.c.nextID)
	a.c.failed[id] = false
	return &id, nil
}
func (healActuator) Diff(Scope, *kupenstackv1.KeyPair, *string) Changes { return nil }

func (healActuator) Update(_ context.Context, _ Scope, _ *kupenstackv1.KeyPair, cur *string, _ Changes) (*string, error) {
	return cur, nil
}
func (a healActuator) Delete(_ context.Context, _ Scope, id *string) error {
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	if a.c.deleteErrors[*id] > 0 {
		a.c.deleteErrors[*id]--
		return fmt.Errorf("deleting %s: conflict", *id)
	}
	delete(a.c.failed, *id)
	a.c.deleted = append(a.c.deleted, *id)
	return nil
}
func (healActuator) ID(id *string) string { return *id }

// Observe keeps the heal count that Heal writes into the status (a VM's restart count stands in).
func (healActuator) Observe(k *kupenstackv1.KeyPair, id *string) (bool, string) {
	heals := ""
	if k.Status.Resource != nil {
		heals = k.Status.Resource.Fingerprint
	}
	k.Status.Resource = &kupenstackv1.KeyPairResourceStatus{Name: *id, Fingerprint: heals}
	return true, ""
}
func (a healActuator) Failure(_ *kupenstackv1.KeyPair, id *string) string {
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	if a.c.failed[*id] {
		return *id + " failed"
	}
	return ""
}
func (a healActuator) Heal(k *kupenstackv1.KeyPair, failure string, _ time.Time) HealDecision {
	a.c.mu.Lock()
	a.c.decision[k.Name]++
	calls := a.c.decision[k.Name]
	a.c.mu.Unlock()
	record := func() {
		heals := 0
		if k.Status.Resource != nil {
			fmt.Sscanf(k.Status.Resource.Fingerprint, "heals=%d", &heals)
		} else {
			k.Status.Resource = &kupenstackv1.KeyPairResourceStatus{}
		}
		k.Status.Resource.Fingerprint = fmt.Sprintf("heals=%d", heals+1)
	}
	switch k.Labels["policy"] {
	case "never":
		return HealDecision{Message: failure + "; left"}
	case "backoff":
		if calls == 1 { // the first decision waits, the next replaces
			return HealDecision{After: 300 * time.Millisecond, Message: failure + "; later"}
		}
	}
	return HealDecision{Replace: true, Record: record, Message: failure + "; replacing"}
}

func (c *healCloud) fail(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed[id] = true
}

func (c *healCloud) failDeletes(id string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deleteErrors[id] = n
}

// deleteErrorsLeft is how many more deletes of id the cloud refuses.
func (c *healCloud) deleteErrorsLeft(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deleteErrors[id]
}

func (c *healCloud) exists(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.failed[id]
	return ok
}

func waitKeyPair(t *testing.T, key client.ObjectKey, what string, ok func(*kupenstackv1.KeyPair) bool) *kupenstackv1.KeyPair {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var k kupenstackv1.KeyPair
		err := env.Client.Get(env.Ctx, key, &k)
		if err == nil && ok(&k) {
			return &k
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: err=%v status=%+v", what, err, k.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readyHealKeyPair creates a KeyPair carrying the heal policy and waits until it is Ready: its key
// and its resource's ID. A short per-object check period is what notices a failure here (VMs use a
// list).
func readyHealKeyPair(t *testing.T, ns, name, policy string) (client.ObjectKey, string) {
	t.Helper()
	k := &kupenstackv1.KeyPair{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"policy": policy}},
		Spec: kupenstackv1.KeyPairSpec{PublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA test"}}
	k.Spec.ResyncPeriod = &kupenstackv1.Duration{Duration: time.Second}
	if err := env.Client.Create(env.Ctx, k); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(k)
	return key, waitKeyPair(t, key, "created", func(k *kupenstackv1.KeyPair) bool {
		return k.Status.ID != "" && meta.IsStatusConditionTrue(k.Status.Conditions, kupenstackv1.ConditionReady)
	}).Status.ID
}

// TestHealing drives the engine's healing hook: a failed resource is deleted and replaced, left
// alone with Degraded, or replaced after a backoff; a vanished one is replaced too.
func TestHealing(t *testing.T) {
	ns := readyNamespace(t)
	for _, policy := range []string{"replace", "never", "backoff"} {
		t.Run(policy, func(t *testing.T) {
			key, first := readyHealKeyPair(t, ns, policy, policy)
			healFake.fail(first)

			if policy == "never" {
				got := waitKeyPair(t, key, "degraded", func(k *kupenstackv1.KeyPair) bool {
					return meta.IsStatusConditionTrue(k.Status.Conditions, kupenstackv1.ConditionDegraded)
				})
				if c := meta.FindStatusCondition(got.Status.Conditions, kupenstackv1.ConditionDegraded); c.Reason != kupenstackv1.ReasonUnrecoverableError || c.Message != first+" failed; left" {
					t.Errorf("degraded %+v", c)
				}
				time.Sleep(300 * time.Millisecond)
				if !healFake.exists(first) || got.Status.ID != first {
					t.Fatalf("the failed resource was replaced under policy never")
				}
				return
			}
			if policy == "backoff" {
				waitKeyPair(t, key, "backing off", func(k *kupenstackv1.KeyPair) bool {
					c := meta.FindStatusCondition(k.Status.Conditions, kupenstackv1.ConditionDegraded)
					return c != nil && c.Status == metav1.ConditionTrue && c.Reason == kupenstackv1.ReasonTransientError
				})
			}
			second := waitKeyPair(t, key, "replaced", func(k *kupenstackv1.KeyPair) bool {
				return k.Status.ID != "" && k.Status.ID != first && meta.IsStatusConditionTrue(k.Status.Conditions, kupenstackv1.ConditionReady)
			}).Status.ID
			if healFake.exists(first) {
				t.Errorf("failed resource %s not deleted", first)
			}

			// Vanished: deleted outside KupenStack; replaced through the same decision.
			if err := (healActuator{healFake}).Delete(env.Ctx, Scope{}, &second); err != nil {
				t.Fatal(err)
			}
			third := waitKeyPair(t, key, "re-created", func(k *kupenstackv1.KeyPair) bool {
				return k.Status.ID != "" && k.Status.ID != second && healFake.exists(k.Status.ID)
			})
			// The heal recorded in the status survives the pass that also creates the replacement.
			if got := third.Status.Resource.Fingerprint; got != "heals=2" {
				t.Errorf("heal count in status %q, want heals=2", got)
			}
		})
	}
}

// slowDeleter is a cloud where a delete takes a few reads to finish (like a Nova server), so the
// engine sees the resource still there, being deleted. ServerGroup objects are the carrier.
type slowDeleter struct {
	mu      sync.Mutex
	exists  map[string]bool
	pending map[string]int // ID -> reads until gone
	deletes int
}

func (a *slowDeleter) Get(_ context.Context, _ Scope, id string) (*string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n, ok := a.pending[id]; ok {
		if n == 0 {
			delete(a.pending, id)
			delete(a.exists, id)
		} else {
			a.pending[id] = n - 1
		}
	}
	if !a.exists[id] {
		return nil, notFound()
	}
	return &id, nil
}

func (*slowDeleter) FindOwned(context.Context, Scope, *kupenstackv1.ServerGroup) (*string, error) {
	return nil, nil
}

func (*slowDeleter) FindImport(context.Context, Scope, *kupenstackv1.ServerGroup) (*string, error) {
	return nil, nil
}

func (a *slowDeleter) Create(_ context.Context, _ Scope, g *kupenstackv1.ServerGroup) (*string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := "sg-" + string(g.UID)
	a.exists[id] = true
	return &id, nil
}

func (*slowDeleter) Diff(Scope, *kupenstackv1.ServerGroup, *string) Changes { return nil }

func (*slowDeleter) Update(_ context.Context, _ Scope, _ *kupenstackv1.ServerGroup, cur *string, _ Changes) (*string, error) {
	return cur, nil
}

func (a *slowDeleter) Delete(_ context.Context, _ Scope, id *string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.deletes++
	a.pending[*id] = 3
	return nil
}

func (*slowDeleter) ID(id *string) string { return *id }

func (*slowDeleter) Observe(*kupenstackv1.ServerGroup, *string) (bool, string) { return true, "" }

func (a *slowDeleter) Deleting(id *string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.pending[*id]
	return ok
}

// TestDeleteAskedOnce: while the cloud is deleting a resource, the engine waits for it to go
// instead of sending the delete again on every pass.
func TestDeleteAskedOnce(t *testing.T) {
	ns := readyNamespace(t)
	g := &kupenstackv1.ServerGroup{ObjectMeta: metav1.ObjectMeta{Name: "slow", Namespace: ns}, Spec: kupenstackv1.ServerGroupSpec{Policy: "affinity"}}
	if err := env.Client.Create(env.Ctx, g); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(g)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := env.Client.Get(env.Ctx, key, g); err != nil {
			t.Fatal(err)
		}
		if g.Status.ID != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not created")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := env.Client.Delete(env.Ctx, g); err != nil {
		t.Fatal(err)
	}
	for env.Client.Get(env.Ctx, key, g) == nil {
		if time.Now().After(deadline) {
			t.Fatal("not deleted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	slowDeletes.mu.Lock()
	defer slowDeletes.mu.Unlock()
	if slowDeletes.deletes != 1 {
		t.Errorf("%d delete calls for one resource", slowDeletes.deletes)
	}
}

// TestHealRecordedOnceWhenDeleteFails: the failed resource's delete is refused a few times before
// it succeeds; the replacement is recorded once (a VM's restartCount counts servers replaced, not
// attempts), and only after the delete went through.
func TestHealRecordedOnceWhenDeleteFails(t *testing.T) {
	ns := readyNamespace(t)
	key, first := readyHealKeyPair(t, ns, "delete-fails", "replace")
	// Refused until lifted below: with a fixed count, a loaded machine could see the refusals
	// all used up between the checks and the heal done before the "nothing recorded" read.
	const refusals = 1 << 30
	healFake.failDeletes(first, refusals)
	healFake.fail(first)

	// While the delete is refused (three times at least), nothing is recorded as replaced.
	waitKeyPair(t, key, "delete refused", func(k *kupenstackv1.KeyPair) bool {
		c := meta.FindStatusCondition(k.Status.Conditions, kupenstackv1.ConditionReady)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "conflict") &&
			healFake.deleteErrorsLeft(first) <= refusals-3
	})
	if got := waitKeyPair(t, key, "read", func(*kupenstackv1.KeyPair) bool { return true }); got.Status.Resource.Fingerprint != "" {
		t.Errorf("heal recorded %q while the failed resource's delete was refused", got.Status.Resource.Fingerprint)
	}
	healFake.failDeletes(first, 0)
	got := waitKeyPair(t, key, "replaced", func(k *kupenstackv1.KeyPair) bool {
		return k.Status.ID != "" && k.Status.ID != first && meta.IsStatusConditionTrue(k.Status.Conditions, kupenstackv1.ConditionReady)
	})
	if got.Status.Resource.Fingerprint != "heals=1" {
		t.Errorf("after refused deletes and one replacement the heal count is %q, want heals=1", got.Status.Resource.Fingerprint)
	}
}
