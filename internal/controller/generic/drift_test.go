package generic

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/testutil/metricstest"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// TestDriftRepairedNamesTheField: a field changed in OpenStack is set back with a DriftRepaired
// Event naming it and a count per kind and field; a spec change is an Updated Event instead, and
// counts no drift.
func TestDriftRepairedNamesTheField(t *testing.T) {
	n, before := descriptionSetBack(t, nil)
	key := client.ObjectKeyFromObject(n)

	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(env.Ctx, key, n); err != nil {
			return err
		}
		n.Spec.Description = "b"
		n.Spec.ResyncPeriod = nil
		return env.Client.Update(env.Ctx, n)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, "an Updated Event", func() error {
		if note := eventNote(t, n, "Updated"); !strings.HasSuffix(note, "to match the spec: spec.description") {
			return fmt.Errorf("Updated Event %q", note)
		}
		return nil
	})
	if after := metricstest.Sum(t, "kupenstack_drift_repairs_total", map[string]string{"kind": "Network", "field": "spec.description"}); after != before+1 {
		t.Errorf("a spec change was counted as drift: %v → %v", before, after)
	}
}

// refActuator's resource is the ID of the Network its Subnet names: Diff compares the reference
// by the ID it resolves to now.
type refActuator struct {
	*listingActuator
	failed bool // Observe says the resource is not ready
}

func (a *refActuator) Observe(*kupenstackv1.Subnet, *string) (bool, string) { return !a.failed, "" }

func (*refActuator) Diff(s Scope, sub *kupenstackv1.Subnet, networkID *string) Changes {
	var d Diff
	Value(&d, "spec.networkRef", s.DependencyID("Network", sub.Spec.NetworkRef), *networkID)
	return d.Changes()
}

// TestDriftCheckResolvesReferences: the list-based drift check resolves references as a pass
// does, so a dependency re-created with a new ID is drift of the objects naming it; one whose
// reference cannot be resolved is handed to a pass, which says why; so is one whose resource is
// no longer as ready as the object says (a server stopped), managed or not.
func TestDriftCheckResolvesReferences(t *testing.T) {
	ns := readyNamespace(t)
	// A Port stands for the network: no controller of this test runs for Ports to change it.
	net := &kupenstackv1.Port{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: ns}, Spec: kupenstackv1.PortSpec{NetworkRef: "n"}}
	if err := env.Client.Create(env.Ctx, net); err != nil {
		t.Fatal(err)
	}
	markReady := func(id string) {
		net.Status.ID = id
		conditions.Set(&net.Status.Conditions, net.Generation, conditions.State{Ready: true})
		if err := env.Client.Status().Update(env.Ctx, net); err != nil {
			t.Fatal(err)
		}
	}
	markReady("net-1")
	act := &refActuator{}
	rs := &resyncer[*kupenstackv1.Subnet, string]{r: &Reconciler[*kupenstackv1.Subnet, string]{
		Client: env.Client,
		Kind: Kind[*kupenstackv1.Subnet, string]{Name: "Subnet", Actuator: act,
			Dependencies: []Dependency[*kupenstackv1.Subnet]{{Kind: "Network", New: func() Object { return &kupenstackv1.Port{} },
				Names: func(s *kupenstackv1.Subnet) []string { return Ref(s.Spec.NetworkRef) }}}},
	}}
	sub := &kupenstackv1.Subnet{ObjectMeta: metav1.ObjectMeta{Name: "sub", Namespace: ns, Generation: 1}, Spec: kupenstackv1.SubnetSpec{NetworkRef: "net"}}
	conditions.Set(&sub.Status.Conditions, 1, conditions.State{Ready: true})
	inNet1 := "net-1"
	ctx := context.Background()
	if rs.drifted(ctx, "p", sub, &inNet1) {
		t.Error("in sync, but reported as drifted")
	}
	markReady("net-2") // the Network was re-created
	if !rs.drifted(ctx, "p", sub, &inNet1) {
		t.Error("the network it names was re-created, but the subnet was not reported")
	}
	sub.Spec.NetworkRef = "missing"
	if !rs.drifted(ctx, "p", sub, &inNet1) {
		t.Error("a reference that does not resolve must be handed to a pass")
	}
	sub.Spec.ManagementPolicy = kupenstackv1.ManagementPolicyUnmanaged
	if rs.drifted(ctx, "p", sub, &inNet1) {
		t.Error("an unmanaged object is never updated, so never drifted")
	}
	act.failed = true
	if !rs.drifted(ctx, "p", sub, &inNet1) {
		t.Error("Ready, but its resource is not: a pass must record it")
	}
}

// eventNote is the note of obj's newest Event with reason ("" when there is none).
func eventNote(t *testing.T, obj client.Object, reason string) string {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(env.Ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		t.Fatal(err)
	}
	note, at := "", time.Time{}
	for _, e := range list.Items {
		if e.Regarding.UID == obj.GetUID() && e.Reason == reason && !e.EventTime.Time.Before(at) {
			note, at = e.Note, e.EventTime.Time
		}
	}
	return note
}

// TestDriftRepairedAfterAFailedRepair: when the first attempt to set a drifted field back fails
// (a volume still detaching refuses to attach), the pass that succeeds later still reports the
// change as drift, not as an update to match the spec: the spec did not change.
func TestDriftRepairedAfterAFailedRepair(t *testing.T) {
	n, _ := descriptionSetBack(t, fmt.Errorf("the volume is still detaching"))
	if note := eventNote(t, n, "Updated"); note != "" {
		t.Errorf("the repair was reported as an update to match the spec: %q", note)
	}
}

// descriptionSetBack makes a Ready Network, changes its description in the cloud and waits for
// it to be set back with a DriftRepaired Event and one more count. With failFirst, the first
// attempt to set it back fails with that error. It returns the object and the count before.
func descriptionSetBack(t *testing.T, failFirst error) (*kupenstackv1.Network, float64) {
	t.Helper()
	ns := readyNamespace(t)
	n := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "drifted", Namespace: ns}}
	n.Spec.Description = "a"
	n.Spec.ResyncPeriod = &kupenstackv1.Duration{Duration: time.Second}
	if err := env.Client.Create(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(n)
	n = waitFor(t, key, "ready", func(n *kupenstackv1.Network) bool { return conditions.IsReady(n.Status.Conditions, n.Generation) })
	before := metricstest.Sum(t, "kupenstack_drift_repairs_total", map[string]string{"kind": "Network", "field": "spec.description"})

	if failFirst != nil {
		cloud.inject("update", failFirst)
	}
	r, _ := cloud.get(n.Status.ID)
	r.Description = "changed by an admin"
	cloud.put(r)
	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, "the description set back", func() error {
		if r, _ := cloud.get(n.Status.ID); r.Description != "a" {
			return fmt.Errorf("description %q", r.Description)
		}
		if note := eventNote(t, n, "DriftRepaired"); !strings.HasSuffix(note, "set back: spec.description") {
			return fmt.Errorf("DriftRepaired Event %q", note)
		}
		return nil
	})
	if after := metricstest.Sum(t, "kupenstack_drift_repairs_total", map[string]string{"kind": "Network", "field": "spec.description"}); after != before+1 {
		t.Errorf("kupenstack_drift_repairs_total{kind=Network,field=spec.description}: %v → %v, want one more", before, after)
	}
	return n, before
}
