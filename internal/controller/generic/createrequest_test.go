package generic

import (
	"context"
	"fmt"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

func TestMayHaveCreated(t *testing.T) {
	claims := func(*kupenstackv1.Subnet, *string, time.Time) bool { return false }
	list := func(context.Context, Scope) ([]*string, error) { return nil, nil }
	cases := []struct {
		name             string
		noClaims, noList bool // the drift check cannot find duplicates
		driftCheckOff    bool
		fieldDropped     bool // the API server does not store status.createRequested
		createRequested  bool // in the status, by an earlier process
		sentHere         bool // by this process, the cache perhaps behind
		want             bool
	}{
		{name: "never sent: no list"},
		{name: "sent by an earlier process", createRequested: true, want: true},
		{name: "sent by this process, the cache behind", sentHere: true, want: true},
		{name: "a kind that claims nothing: always", noClaims: true, want: true},
		{name: "a kind that lists nothing: always", noList: true, want: true},
		{name: "the drift check off: always", driftCheckOff: true, want: true},
		{name: "the field not stored: always", fieldDropped: true, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler[*kupenstackv1.Subnet, string]{Options: Options{ResyncPeriod: time.Minute}}
			if !tc.noClaims {
				r.Can.Claims = claims
			}
			if !tc.noList {
				r.Can.List = list
			}
			if tc.driftCheckOff {
				r.ResyncPeriod = 0
			}
			r.unrecorded.Store(tc.fieldDropped)
			s := &kupenstackv1.Subnet{ObjectMeta: metav1.ObjectMeta{UID: types.UID("uid-1")}}
			s.Status.CreateRequested = tc.createRequested
			if tc.sentHere {
				r.createSent.Store(s.UID, struct{}{})
			}
			if got := r.mayHaveCreated(s); got != tc.want {
				t.Errorf("mayHaveCreated = %v, want %v", got, tc.want)
			}
		})
	}
}

func newSubnet(t *testing.T, ns, name string) *kupenstackv1.Subnet {
	t.Helper()
	s := &kupenstackv1.Subnet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       kupenstackv1.SubnetSpec{NetworkRef: "n", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.0.0.0/24"}},
	}
	if err := env.Client.Create(env.Ctx, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func waitSubnet(t *testing.T, s *kupenstackv1.Subnet, what string, ok func(*kupenstackv1.Subnet) error) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, what, func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(s), s); err != nil {
			return err
		}
		return ok(s)
	})
}

func readyWithID(s *kupenstackv1.Subnet) error {
	if s.Status.ID == "" || !conditions.IsReady(s.Status.Conditions, s.Generation) {
		return fmt.Errorf("not ready: %+v", s.Status)
	}
	return nil
}

func ownedBy(uid types.UID) []string {
	lister.mu.Lock()
	defer lister.mu.Unlock()
	var ids []string
	for id, owner := range lister.resources {
		if owner == string(uid) {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestFirstCreateMakesNoList: an object no create was ever sent for is created without a list
// for a resource made for it first (one OpenStack call fewer per object), and its status keeps
// no mark of the create once the ID is there.
func TestFirstCreateMakesNoList(t *testing.T) {
	s := newSubnet(t, readyNamespace(t), "first")
	waitSubnet(t, s, "Ready with an ID", readyWithID)
	// Counted up to the first create: a pass after it may look (its cache behind the ID).
	if n := lister.count("findOwnedBeforeFirstCreate/" + s.Namespace + "/" + s.Name); n != 0 {
		t.Errorf("%d lists for a resource made for the object before its first create; want 0", n)
	}
	if s.Status.CreateRequested {
		t.Error("status.createRequested still set with the ID in the status")
	}
	if owned := ownedBy(s.UID); len(owned) != 1 || owned[0] != s.Status.ID {
		t.Errorf("resources made for the object: %v; want only %s", owned, s.Status.ID)
	}
}

// TestCreateWhoseAnswerWasLost: OpenStack made the resource but its answer never reached the
// pass (a timeout; an operator stopped in between reads the same status). The status says a
// create was requested; the next pass finds the resource made for the object and adopts it
// instead of making a second one, and the mark goes.
func TestCreateWhoseAnswerWasLost(t *testing.T) {
	ns := readyNamespace(t)
	lister.mu.Lock()
	// Degraded, looked at again only when the object changes: the test sees the status between.
	lister.failCreate["lost"] = Degraded("CreateAnswerLost", "the create's answer was lost", 0)
	lister.mu.Unlock()
	s := newSubnet(t, ns, "lost")
	waitSubnet(t, s, "Degraded, the create requested, no ID", func(s *kupenstackv1.Subnet) error {
		c := meta.FindStatusCondition(s.Status.Conditions, kupenstackv1.ConditionDegraded)
		if c == nil || c.Reason != "CreateAnswerLost" || !s.Status.CreateRequested || s.Status.ID != "" {
			return fmt.Errorf("status %+v", s.Status)
		}
		return nil
	})
	made := ownedBy(s.UID)
	if len(made) != 1 {
		t.Fatalf("resources made for the object: %v; want the one whose answer was lost", made)
	}
	creates := lister.count("create/" + ns + "/lost")

	s.Annotations = map[string]string{"touched": "yes"} // wakes a pass
	if err := env.Client.Update(env.Ctx, s); err != nil {
		t.Fatal(err)
	}
	waitSubnet(t, s, "Ready with an ID", readyWithID)
	if s.Status.ID != made[0] {
		t.Errorf("ID %s; want %s, the resource made by the lost create", s.Status.ID, made[0])
	}
	if s.Status.CreateRequested {
		t.Error("status.createRequested still set with the ID in the status")
	}
	if d := lister.count("create/"+ns+"/lost") - creates; d != 0 {
		t.Errorf("%d more creates; want 0", d)
	}
	if owned := ownedBy(s.UID); len(owned) != 1 {
		t.Errorf("resources made for the object: %v; want 1", owned)
	}
	waitForEvent(t, s, "Adopted")
}

// TestCreateRequestedByAnEarlierOperator: an object whose status says a create was requested,
// by an operator that stopped before it wrote the ID (this one never sent it), gets the resource
// made for it, found by a list, and no second one.
func TestCreateRequestedByAnEarlierOperator(t *testing.T) {
	ns := nextNamespace()
	// Not Ready yet: the object waits for its project, and no pass can create meanwhile.
	p := env.NamespaceWithProject(t, ns)
	s := newSubnet(t, ns, "restarted")
	waitSubnet(t, s, "seen, waiting for its project", func(s *kupenstackv1.Subnet) error {
		if meta.FindStatusCondition(s.Status.Conditions, kupenstackv1.ConditionReady) == nil {
			return fmt.Errorf("not seen yet: %+v", s.Status)
		}
		return nil
	})
	// What the earlier operator left: the mark, and the resource its create made.
	if err := env.Client.Status().Patch(env.Ctx, s, client.RawPatch(types.MergePatchType,
		[]byte(`{"status":{"createRequested":true}}`))); err != nil {
		t.Fatal(err)
	}
	lister.mu.Lock()
	lister.resources["earlier-"+ns] = string(s.UID)
	lister.mu.Unlock()
	if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	env.MarkProjectReady(t, p)

	waitSubnet(t, s, "Ready with an ID", readyWithID)
	if s.Status.ID != "earlier-"+ns || s.Status.CreateRequested {
		t.Errorf("status %+v; want the earlier resource adopted and the mark gone", s.Status)
	}
	if n := lister.count("create/" + ns + "/restarted"); n != 0 {
		t.Errorf("%d creates; want 0", n)
	}
	waitForEvent(t, s, "Adopted")
}

// waitForEvent waits for an Event of reason about obj.
func waitForEvent(t *testing.T, obj client.Object, reason string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, "a "+reason+" Event", func() error {
		evs, err := eventsAbout(obj, reason)
		if err != nil || len(evs) > 0 {
			return err
		}
		return fmt.Errorf("none yet")
	})
}

// eventsAbout lists the Events of reason about obj.
func eventsAbout(obj client.Object, reason string) ([]eventsv1.Event, error) {
	var evs eventsv1.EventList
	if err := env.Client.List(env.Ctx, &evs, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, e := range evs.Items {
		if e.Reason == reason && e.Regarding.Name == obj.GetName() {
			out = append(out, e)
		}
	}
	return out, nil
}
