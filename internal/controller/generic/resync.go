package generic

import (
	"context"
	"maps"
	"time"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"

	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// resyncer is the list-based drift check: every period, per ready project, one list call for
// the kind; only objects whose resource is missing or differs are reconciled.
type resyncer[O Object, R any] struct {
	r      *Reconciler[O, R]
	events chan event.GenericEvent
	// polls is what a Can.ListSince kind's check remembers per project ID; only Start's goroutine uses it.
	polls map[string]pollState
	// round is this period's one list of a Can.SameListInEveryProject kind (see once); only Start's goroutine uses it.
	round *sharedList[R]
}

// sharedList is a Can.SameListInEveryProject kind's list of one drift-check period, failed or not.
type sharedList[R any] struct {
	found []*R
	err   error
}

// ChangesSkew is taken off the previous list's time to make the next changes-since list: a
// resource's update time is written by whichever of the cloud's services changed it, whose clock
// may be a little off from the one that answered the list, and a change committed while that
// list ran may carry a time before it. Listing a few seconds twice costs nothing; missing a
// change would leave a failed VM alone until the next full list.
const ChangesSkew = 5 * time.Second

// pollState is what a Can.ListSince kind's check remembers about one project between polls.
type pollState struct {
	listedAt time.Time // when the previous list was taken, by the cloud's clock
	fullAt   time.Time // when the last full list was made, by the local clock
}

// since says what a poll at now lists: everything (zero) on the first poll and once every
// fullEvery, the safety net for what a changes-since list cannot show (a deleted row the cloud
// has already purged, a clock far off); else the changes since the previous list less
// ChangesSkew. fullEvery <= 0 (the drift check turned off) makes every list a full one.
func (p pollState) since(now time.Time, fullEvery time.Duration) time.Time {
	if p.fullAt.IsZero() || p.listedAt.IsZero() || now.Sub(p.fullAt) >= fullEvery {
		return time.Time{}
	}
	return p.listedAt.Add(-ChangesSkew)
}

// listPeriod is the period of the kind's list-based check.
func (r *Reconciler[O, R]) listPeriod() time.Duration {
	if r.ListPeriod > 0 {
		return r.ListPeriod
	}
	return r.ResyncPeriod
}

func (rs *resyncer[O, R]) Start(ctx context.Context) error {
	ticker := time.NewTicker(rs.r.listPeriod())
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			rs.once(ctx)
		}
	}
}

// NeedLeaderElection: only the leader checks for drift.
func (rs *resyncer[O, R]) NeedLeaderElection() bool { return true }

func (rs *resyncer[O, R]) once(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx).WithValues("kind", rs.r.Name)
	rs.round = nil // a new period: a kind with one list for every project lists again
	if rs.r.ClusterScoped {
		rs.check(ctx, "", "")
		return
	}
	var projects kupenstackv1.ProjectList
	if err := rs.r.Client.List(ctx, &projects); err != nil {
		log.Error(err, "drift check: listing projects")
		return
	}
	seen := map[string]bool{}
	for _, p := range projects.Items {
		if p.Status.ID != "" && conditions.IsReady(p.Status.Conditions, p.Generation) {
			seen[p.Status.ID] = true
			rs.check(ctx, p.Spec.Namespace, p.Status.ID)
		}
	}
	maps.DeleteFunc(rs.polls, func(id string, _ pollState) bool { return !seen[id] }) // projects gone
}

// check compares the kind's objects in namespace with one list of projectID's resources.
func (rs *resyncer[O, R]) check(ctx context.Context, namespace, projectID string) {
	objs := rs.r.NewList()
	if err := rs.r.Client.List(ctx, objs, client.InNamespace(namespace)); err != nil || meta.LenList(objs) == 0 {
		return // nothing of this kind here: no OpenStack call
	}
	found, full, err := rs.list(ctx, projectID, time.Now())
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "drift check: listing OpenStack resources", "kind", rs.r.Name, "project", projectID)
		return
	}
	byID := make(map[string]*R, len(found))
	for _, res := range found {
		byID[rs.r.Actuator.ID(res)] = res
	}
	var all []O
	_ = meta.EachListItem(objs, func(o runtime.Object) error {
		obj := o.(O)
		all = append(all, obj)
		id := obj.GetManagedStatus().ID
		if id == "" || obj.GetManagedSpec().ResyncPeriod != nil || unrecoverable(obj) {
			return nil // not created yet, checked on its own period, or waiting for a spec change
		}
		res, ok := byID[id]
		if !ok && !full {
			return nil // unchanged since the previous list
		}
		if !ok || rs.drifted(ctx, projectID, obj, res) {
			rs.events <- event.GenericEvent{Object: obj}
		}
		return nil
	})
	for _, obj := range rs.r.claimDuplicates(all, found, time.Now()) {
		rs.events <- event.GenericEvent{Object: obj}
	}
}

// drifted says whether obj needs a pass: its resource differs from its spec or is no longer
// as ready as the object says, or a pass is needed to tell (a reference that no longer resolves). References are resolved from the cache, so a
// dependency re-created with a new ID shows as drift of every object that names it.
func (rs *resyncer[O, R]) drifted(ctx context.Context, projectID string, obj O, res *R) bool {
	// A Ready object whose resource no longer is (a server stopped, or failed): a pass records it,
	// and heals. Only readiness: the rest of the observation may differ between a list and a read
	// (order, fields a list leaves out), and would wake every object every period. Nor the other
	// way: an object not Ready yet has its own pass coming (and the cache may not show it Ready).
	if conditions.IsReady(obj.GetManagedStatus().Conditions, obj.GetGeneration()) {
		if ready, waiting := rs.r.Actuator.Observe(obj.DeepCopyObject().(O), res); !ready || waiting != "" {
			return true
		}
	}
	if obj.GetManagedSpec().ManagementPolicy == kupenstackv1.ManagementPolicyUnmanaged {
		return false // never updated: observed only when its own pass runs
	}
	deps, waiting, err := rs.r.resolveDependencies(ctx, obj)
	if err != nil || waiting != "" {
		return true
	}
	return len(rs.r.Actuator.Diff(Scope{Clients: rs.r.Clients, ProjectID: projectID, deps: deps}, obj, res)) > 0
}

// list makes the project's list for this poll and says whether it was a full one: with
// Can.ListSince, mostly the changes since the previous list (see pollState.since), with
// Can.SameListInEveryProject the period's one list, else all.
// A failed list leaves the state as it was, so the next poll covers the same changes again.
func (rs *resyncer[O, R]) list(ctx context.Context, projectID string, now time.Time) ([]*R, bool, error) {
	s := Scope{Clients: rs.r.Clients, ProjectID: projectID}
	can := rs.r.Can
	if can.SameListInEveryProject {
		if rs.round == nil {
			resyncLists.WithLabelValues(rs.r.Name).Inc()
			found, err := can.List(ctx, s)
			rs.round = &sharedList[R]{found, err}
		}
		return rs.round.found, true, rs.round.err
	}
	resyncLists.WithLabelValues(rs.r.Name).Inc()
	if can.ListSince == nil {
		found, err := can.List(ctx, s)
		return found, true, err
	}
	p := rs.polls[projectID]
	since := p.since(now, rs.r.ResyncPeriod)
	full := since.IsZero()
	if !full {
		changesLists.WithLabelValues(rs.r.Name).Inc()
	}
	found, at, err := can.ListSince(ctx, s, since)
	if err != nil {
		return nil, false, err
	}
	if full {
		p.fullAt = now
	}
	p.listedAt = at
	rs.polls[projectID] = p
	return found, full, nil
}

// unrecoverable says whether obj is Degraded for a reason only a spec change can fix (a failed
// resize too: the server stays on its flavor until the spec names another): checking it again
// would only repeat the same Warning.
func unrecoverable(obj Object) bool {
	c := meta.FindStatusCondition(obj.GetManagedStatus().Conditions, kupenstackv1.ConditionDegraded)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.GetGeneration() &&
		(c.Reason == kupenstackv1.ReasonUnrecoverableError || c.Reason == kupenstackv1.ReasonResizeFailed)
}
