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

// listingActuator manages Subnet objects (only a carrier here) on an in-memory map and counts
// every call, to check what the list-based drift check costs.
type listingActuator struct {
	mu        sync.Mutex
	resources map[string]string // ID -> owner UID
	next      int
	calls     map[string]int
	// failCreate, by object name: the create is made, but its answer is this error (a timeout
	// after OpenStack acted, or the operator gone before it read the answer).
	failCreate map[string]error
}

func (a *listingActuator) count(op string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[op]
}

func (a *listingActuator) Get(_ context.Context, _ Scope, id string) (*string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls["get"]++
	if _, ok := a.resources[id]; !ok {
		return nil, notFound()
	}
	return &id, nil
}

func (a *listingActuator) FindOwned(_ context.Context, _ Scope, s *kupenstackv1.Subnet) (*string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls["findOwned"]++
	a.calls["findOwned/"+s.Namespace+"/"+s.Name]++
	for id, owner := range a.resources {
		if owner == string(s.UID) {
			return &id, nil
		}
	}
	return nil, nil
}

func (a *listingActuator) FindImport(context.Context, Scope, *kupenstackv1.Subnet) (*string, error) {
	return nil, nil
}

func (a *listingActuator) Create(_ context.Context, _ Scope, s *kupenstackv1.Subnet) (*string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls["create"]++
	key := s.Namespace + "/" + s.Name
	if a.calls["create/"+key] == 0 {
		a.calls["findOwnedBeforeFirstCreate/"+key] = a.calls["findOwned/"+key]
	}
	a.calls["create/"+key]++
	a.next++
	id := fmt.Sprintf("sub-%d", a.next)
	a.resources[id] = string(s.UID)
	if err := a.failCreate[s.Name]; err != nil {
		delete(a.failCreate, s.Name)
		return nil, err
	}
	return &id, nil
}

func (a *listingActuator) Diff(Scope, *kupenstackv1.Subnet, *string) Changes { return nil }

func (a *listingActuator) Update(_ context.Context, _ Scope, _ *kupenstackv1.Subnet, id *string, _ Changes) (*string, error) {
	return id, nil
}

func (a *listingActuator) Delete(_ context.Context, _ Scope, id *string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.resources, *id)
	return nil
}

func (a *listingActuator) ID(id *string) string { return *id }

func (a *listingActuator) Observe(*kupenstackv1.Subnet, *string) (bool, string) { return true, "" }

func (a *listingActuator) ListAll(context.Context, Scope) ([]*string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls["list"]++
	var out []*string
	for id := range a.resources {
		out = append(out, &id)
	}
	return out, nil
}

// Claims: a resource is the object's whose UID it was made for.
func (a *listingActuator) Claims(s *kupenstackv1.Subnet, id *string, _ time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.resources[*id] == string(s.UID)
}

func (a *listingActuator) exists(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.resources[id]
	return ok
}

var lister = &listingActuator{resources: map[string]string{}, calls: map[string]int{}, failCreate: map[string]error{}}

// TestDriftCheckCostsOneListPerProject: with many objects in sync, each drift-check round makes
// one list call for the project and no per-object call; a resource deleted out of band is
// found by that list and re-created, and only it.
func TestDriftCheckCostsOneListPerProject(t *testing.T) {
	ns := readyNamespace(t)
	const objects = 20
	for i := range objects {
		s := &kupenstackv1.Subnet{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", i), Namespace: ns},
			Spec:       kupenstackv1.SubnetSpec{NetworkRef: "n", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.0.0.0/24"}},
		}
		if err := env.Client.Create(env.Ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var list kupenstackv1.SubnetList
		if err := env.Client.List(env.Ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		ready := 0
		for _, s := range list.Items {
			if conditions.IsReady(s.Status.Conditions, s.Generation) {
				ready++
			}
		}
		if ready == objects {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d ready", ready, objects)
		}
		time.Sleep(50 * time.Millisecond)
	}

	gets, lists := lister.count("get"), lister.count("list")
	waitCalls := func(op string, atLeast int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for lister.count(op) < atLeast {
			if time.Now().After(deadline) {
				t.Fatalf("%s calls stayed at %d", op, lister.count(op))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitCalls("list", lists+3)
	if d := lister.count("get") - gets; d != 0 {
		t.Fatalf("%d per-object GETs during 3 drift rounds of %d objects in sync; want 0", d, objects)
	}

	creates := lister.count("create")
	lister.mu.Lock()
	for id := range lister.resources { // any one of them
		delete(lister.resources, id)
		break
	}
	lister.mu.Unlock()
	waitCalls("create", creates+1)
	waitCalls("list", lister.count("list")+2)
	if d := lister.count("create") - creates; d != 1 {
		t.Fatalf("%d creates after one out-of-band deletion; want 1", d)
	}
}

// TestPollSince is the change-based check's decision: a full list first and once per fullEvery,
// else the changes since the previous list's time (the cloud's) less ChangesSkew.
func TestPollSince(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cloudAt := now.Add(-time.Hour - 5*time.Second) // the cloud's clock, an hour behind, at the previous list
	cases := []struct {
		name      string
		state     pollState
		fullEvery time.Duration
		want      time.Time // zero: a full list
	}{
		{name: "first poll: full", fullEvery: 10 * time.Minute},
		{name: "after a full list: changes since it, less the skew",
			state: pollState{listedAt: cloudAt, fullAt: now.Add(-5 * time.Second)}, fullEvery: 10 * time.Minute,
			want: cloudAt.Add(-ChangesSkew)},
		{name: "just before the full-list period: still changes",
			state: pollState{listedAt: cloudAt, fullAt: now.Add(-10*time.Minute + time.Millisecond)}, fullEvery: 10 * time.Minute,
			want: cloudAt.Add(-ChangesSkew)},
		{name: "full-list period over: full",
			state: pollState{listedAt: cloudAt, fullAt: now.Add(-10 * time.Minute)}, fullEvery: 10 * time.Minute},
		{name: "drift check off (0): always full",
			state: pollState{listedAt: cloudAt, fullAt: now.Add(-time.Second)}, fullEvery: 0},
		{name: "no time from the previous list: full",
			state: pollState{fullAt: now.Add(-5 * time.Second)}, fullEvery: 10 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.state.since(now, tc.fullEvery); !got.Equal(tc.want) {
				t.Errorf("since = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestDriftCheckDeletesDuplicates: a second resource made for an object that has its own (a create
// that outlived an operator restart) is found by the drift check's list and deleted by the
// object's next pass, with an Event; the object keeps its resource, and a resource that is
// nobody's is left alone.
func TestDriftCheckDeletesDuplicates(t *testing.T) {
	ns := readyNamespace(t)
	s := &kupenstackv1.Subnet{
		ObjectMeta: metav1.ObjectMeta{Name: "dup", Namespace: ns},
		Spec:       kupenstackv1.SubnetSpec{NetworkRef: "n", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.0.0.0/24"}},
	}
	if err := env.Client.Create(env.Ctx, s); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, 50*time.Millisecond, "the subnet Ready", func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(s), s); err != nil {
			return err
		}
		if s.Status.ID == "" || !conditions.IsReady(s.Status.Conditions, s.Generation) {
			return fmt.Errorf("not ready: %+v", s.Status)
		}
		return nil
	})
	creates := lister.count("create")
	lister.mu.Lock()
	lister.resources["late-"+ns] = string(s.UID)
	lister.resources["nobodys-"+ns] = "some-other-uid"
	lister.mu.Unlock()

	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, "the duplicate deleted", func() error {
		if lister.exists("late-" + ns) {
			return fmt.Errorf("still there")
		}
		return nil
	})
	waitForEvent(t, s, "DeletingDuplicate")
	// Some more drift rounds: nothing else goes, nothing is made.
	lists := lister.count("list")
	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, "3 more drift rounds", func() error {
		if lister.count("list") < lists+3 {
			return fmt.Errorf("%d lists", lister.count("list")-lists)
		}
		return nil
	})
	if !lister.exists(s.Status.ID) {
		t.Errorf("the object's own resource %s was deleted", s.Status.ID)
	}
	if !lister.exists("nobodys-" + ns) {
		t.Errorf("a resource that is nobody's was deleted")
	}
	if d := lister.count("create") - creates; d != 0 {
		t.Errorf("%d creates; want 0", d)
	}
}
