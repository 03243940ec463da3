package generic

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// changedResource is a resource of changesCloud: State is "ok", "ERROR" or "DELETED" (kept, as
// Nova keeps a deleted server's row, so that a changes list still shows it).
type changedResource struct {
	ID, State string
	Updated   time.Time // by the cloud's clock
}

// listCall is one ListSince call as changesCloud saw it.
type listCall struct{ since, at time.Time }

// changesCloud is a ChangeLister (Router objects are only a carrier) whose clock is an hour
// behind the local one, as Nova's could be: a check that took its since from the local clock
// would ask for changes "in the future" and never see any.
type changesCloud struct {
	mu        sync.Mutex
	resources map[string]*changedResource
	next      int
	lists     []listCall
	gets      map[string]int
	creates   int
}

func (c *changesCloud) now() time.Time { return time.Now().Add(-time.Hour) }

func (c *changesCloud) Get(_ context.Context, _ Scope, id string) (*changedResource, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets[id]++
	r, ok := c.resources[id]
	if !ok || r.State == "DELETED" {
		return nil, notFound()
	}
	cp := *r
	return &cp, nil
}

func (c *changesCloud) FindOwned(context.Context, Scope, *kupenstackv1.Router) (*changedResource, error) {
	return nil, nil
}

func (c *changesCloud) FindImport(context.Context, Scope, *kupenstackv1.Router) (*changedResource, error) {
	return nil, nil
}

func (c *changesCloud) Create(context.Context, Scope, *kupenstackv1.Router) (*changedResource, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.creates++
	c.next++
	r := &changedResource{ID: fmt.Sprintf("r-%d", c.next), State: "ok", Updated: c.now()}
	c.resources[r.ID] = r
	cp := *r
	return &cp, nil
}

func (c *changesCloud) Update(_ context.Context, _ Scope, _ *kupenstackv1.Router, r *changedResource, _ Changes) (*changedResource, error) {
	return r, nil
}

func (c *changesCloud) Delete(_ context.Context, _ Scope, r *changedResource) error {
	c.set(r.ID, "DELETED")
	return nil
}

func (c *changesCloud) ID(r *changedResource) string { return r.ID }

func (c *changesCloud) Observe(*kupenstackv1.Router, *changedResource) (bool, string) {
	return true, ""
}

func (c *changesCloud) ListAll(ctx context.Context, s Scope) ([]*changedResource, error) {
	found, _, err := c.ListSince(ctx, s, time.Time{})
	return found, err
}

func (c *changesCloud) ListSince(_ context.Context, _ Scope, since time.Time) ([]*changedResource, time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := c.now()
	c.lists = append(c.lists, listCall{since: since, at: at})
	var out []*changedResource
	for _, r := range c.resources {
		if since.IsZero() && r.State != "DELETED" || !since.IsZero() && !r.Updated.Before(since) {
			cp := *r
			out = append(out, &cp)
		}
	}
	return out, at, nil
}

func (c *changesCloud) Diff(_ Scope, _ *kupenstackv1.Router, r *changedResource) Changes {
	var d Diff
	Value(&d, "status.state", "ok", r.State)
	return d.Changes()
}

// set changes a resource's state now, by the cloud's clock.
func (c *changesCloud) set(id, state string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resources[id].State = state
	c.resources[id].Updated = c.now()
}

func (c *changesCloud) snapshot() (lists []listCall, gets map[string]int, creates int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gets = map[string]int{}
	for id, n := range c.gets {
		gets[id] = n
	}
	return append([]listCall(nil), c.lists...), gets, c.creates
}

var changes = &changesCloud{resources: map[string]*changedResource{}, gets: map[string]int{}}

// TestChangesSincePoll: a ChangeLister's check lists everything once, then only the changes
// since its previous list (by the cloud's clock, less ChangesSkew); a resource that changed to
// a failed state, or was deleted, wakes its object, and unchanged ones wake nothing.
func TestChangesSincePoll(t *testing.T) {
	ns := readyNamespace(t)
	names := []string{"a", "b", "c"}
	for _, name := range names {
		if err := env.Client.Create(env.Ctx, &kupenstackv1.Router{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	ids := map[string]string{}
	waitUntil(t, "all Ready", func() error {
		for _, name := range names {
			var r kupenstackv1.Router
			if err := env.Client.Get(env.Ctx, client.ObjectKey{Namespace: ns, Name: name}, &r); err != nil {
				return err
			}
			if !conditions.IsReady(r.Status.Conditions, r.Generation) {
				return fmt.Errorf("%s not ready", name)
			}
			ids[name] = r.Status.ID
		}
		return nil
	})
	moreLists := func(n int) {
		t.Helper()
		lists, _, _ := changes.snapshot()
		waitUntil(t, fmt.Sprintf("%d more lists", n), func() error {
			if now, _, _ := changes.snapshot(); len(now) < len(lists)+n {
				return fmt.Errorf("%d lists", len(now))
			}
			return nil
		})
	}
	moreLists(3)

	lists, gets, creates := changes.snapshot()
	if !lists[0].since.IsZero() {
		t.Fatalf("first list asked for changes since %s; want a full list", lists[0].since)
	}
	for i := 1; i < len(lists); i++ {
		if want := lists[i-1].at.Add(-ChangesSkew); !lists[i].since.Equal(want) {
			t.Fatalf("list %d: since %s, want the previous list's time less the skew, %s", i, lists[i].since, want)
		}
	}

	// b fails: its object is woken by the next changes list, a and c are not.
	changes.set(ids["b"], "ERROR")
	waitUntil(t, "b woken", func() error {
		if _, now, _ := changes.snapshot(); now[ids["b"]] <= gets[ids["b"]] {
			return fmt.Errorf("gets of b: %d", now[ids["b"]])
		}
		return nil
	})
	moreLists(2)
	if _, now, _ := changes.snapshot(); now[ids["a"]] != gets[ids["a"]] || now[ids["c"]] != gets[ids["c"]] {
		t.Errorf("unchanged resources' objects were woken: gets %v, before %v", now, gets)
	}

	// c is deleted out of band: the changes list shows it DELETED, and it is re-created.
	changes.set(ids["c"], "DELETED")
	waitUntil(t, "c re-created", func() error {
		if _, _, now := changes.snapshot(); now != creates+1 {
			return fmt.Errorf("creates %d, want %d", now, creates+1)
		}
		return nil
	})
	lists, _, _ = changes.snapshot()
	for i, l := range lists[1:] {
		if l.since.IsZero() {
			t.Errorf("list %d of %d was a full one; want only the first within the hour", i+1, len(lists))
		}
	}
}

// waitUntil polls cond until it returns nil, for at most 30 s.
func waitUntil(t *testing.T, what string, cond func() error) {
	testenv.Eventually(t, 30*time.Second, 20*time.Millisecond, what, cond)
}
