package generic

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

var (
	resyncLists = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kupenstack_resync_list_calls_total",
		Help: "List calls made by the periodic drift check, by kind (one per kind and project per period).",
	}, []string{"kind"})
	changesLists = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kupenstack_resync_changes_list_calls_total",
		Help: "Of the drift check's list calls, those that asked only for the resources changed since the previous list (VirtualMachine's health check), by kind.",
	}, []string{"kind"})
	driftRepairs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kupenstack_drift_repairs_total",
		Help: "OpenStack resources brought back in line with their object (updated or re-created), by kind.",
	}, []string{"kind"})
	heals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kupenstack_heals_total",
		Help: "Failed or vanished resources replaced by their restart policy, by kind.",
	}, []string{"kind"})
)

func init() { metrics.Registry.MustRegister(resyncLists, changesLists, driftRepairs, heals) }

// CountDriftRepair counts a change made outside KupenStack that a controller off the engine
// (ProjectQuota) undid, with the engine's own repairs.
func CountDriftRepair(kind string) { driftRepairs.WithLabelValues(kind).Inc() }

// Dependency declares that objects of one kind refer by name to objects of another kind in the
// same namespace. The engine waits until the referenced objects are Ready, passes their IDs to
// the actuator, wakes the referrer when they change, and keeps a referenced object (and its
// OpenStack resource) from being deleted while something still refers to it.
type Dependency[O Object] struct {
	// Kind of the referenced objects, e.g. "Network".
	Kind string
	// New returns an empty referenced object.
	New func() Object
	// Names lists the names obj refers to.
	Names func(obj O) []string
	// ClusterScoped: the referenced kind is cluster-scoped (Flavor), so names are cluster-wide.
	ClusterScoped bool
}

func indexKey(kind string) string { return "kupenstack.io/ref-" + kind }

// Registry connects the kinds: it knows, for each kind, which other kinds may refer to it.
type Registry struct {
	mu         sync.Mutex
	dependents map[string][]func(ctx context.Context, c client.Client, namespace, name string) ([]string, error)
	// wakers wake, one per kind, a namespace's objects whose deletion is blocked.
	wakers []func(ctx context.Context, namespace string)
}

// NewRegistry returns an empty registry; every kind's controller of one manager shares it.
func NewRegistry() *Registry {
	return &Registry{dependents: map[string][]func(context.Context, client.Client, string, string) ([]string, error){}}
}

func (g *Registry) addDependent(kind string, list func(ctx context.Context, c client.Client, namespace, name string) ([]string, error)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dependents[kind] = append(g.dependents[kind], list)
}

// Dependents names the objects that still refer to the object kind/name in namespace.
func (g *Registry) Dependents(ctx context.Context, c client.Client, kind, namespace, name string) ([]string, error) {
	g.mu.Lock()
	lists := g.dependents[kind]
	g.mu.Unlock()
	var out []string
	for _, list := range lists {
		names, err := list(ctx, c, namespace, name)
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
	}
	return out, nil
}

func (g *Registry) addWaker(wake func(ctx context.Context, namespace string)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.wakers = append(g.wakers, wake)
}

// wakeBlocked wakes the objects of every kind in namespace whose deletion waits for something
// that uses their resource: an object of the namespace that went away may have been it.
func (g *Registry) wakeBlocked(ctx context.Context, namespace string) {
	g.mu.Lock()
	wakers := g.wakers
	g.mu.Unlock()
	for _, wake := range wakers {
		wake(ctx, namespace)
	}
}

// blockedIndex indexes the objects whose deletion is blocked (deletionBlocked), so that waking
// them copies only those out of the cache, not every object of a namespace being emptied.
const blockedIndex = "kupenstack.io/deletion-blocked"

// Lister is implemented by actuators whose kind takes part in the list-based drift check.
type Lister[O Object, R any] interface {
	// ListAll lists every resource of the kind in the scope's project, in one call.
	ListAll(ctx context.Context, s Scope) ([]*R, error)
	// InSync says whether res still matches obj's spec.
	InSync(obj O, res *R) bool
}

// ChangeLister is a Lister whose cloud can also list just the resources changed since a time,
// deleted ones included (Nova's changes-since). Its check can then run often and still cost
// little: most polls ask only for the changes since the previous list, and the full list is
// made once per ResyncPeriod (see pollState).
type ChangeLister[O Object, R any] interface {
	Lister[O, R]
	// ListSince lists the scope's resources changed at or after since, deleted ones included (the
	// actuator's InSync must report those as not in sync), or all of them when since is zero. at
	// is when the cloud took the list, by its own clock when it tells (else the local one): the
	// next call's since is derived from it.
	ListSince(ctx context.Context, s Scope, since time.Time) (found []*R, at time.Time, err error)
}

// Setup registers a kind's controller: its own objects, the Project of their namespace, the
// objects they depend on, and the periodic drift check.
func Setup[O Object, R any](ctx context.Context, mgr ctrl.Manager, opts Options, kind Kind[O, R]) error {
	r := &Reconciler[O, R]{Options: opts, Kind: kind, Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(kind.Controller)}
	newList := kind.NewList
	// Only spec, label and annotation changes and deletion start a pass: the engine's own status
	// writes must not, or a request that should be retried slowly would be retried at once.
	b := ctrl.NewControllerManagedBy(mgr).Named(kind.Controller).For(r.New(), builder.WithPredicates(predicate.Or(
		predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{},
		predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return !e.ObjectNew.GetDeletionTimestamp().IsZero()
		}},
	)))

	if !kind.ClusterScoped {
		// A Project becoming ready wakes every object of the kind in its namespace.
		b = b.Watches(&kupenstackv1.Project{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, p client.Object) []reconcile.Request {
				return r.requestsIn(ctx, p.GetName(), nil)
			}))
		// The namespace's quota applied (raised, or put back after drift) wakes the objects
		// OpenStack refused: a request over quota would otherwise wait for the slow retry of
		// rejected requests (openstack.RejectedRetryInterval).
		b = b.Watches(&kupenstackv1.ProjectQuota{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, q client.Object) []reconcile.Request {
				return r.degradedIn(ctx, q.(*kupenstackv1.ProjectQuota).Spec.Namespace)
			}), builder.WithPredicates(quotaApplied))
	}

	if !kind.ClusterScoped {
		var err error
		if b, err = r.watchBlockedDeletions(ctx, mgr, b); err != nil {
			return err
		}
	}

	for _, dep := range r.Dependencies {
		key := indexKey(dep.Kind)
		if err := mgr.GetFieldIndexer().IndexField(ctx, r.New(), key, func(o client.Object) []string {
			return dep.Names(o.(O))
		}); err != nil {
			return fmt.Errorf("indexing %s references: %w", dep.Kind, err)
		}
		b = b.Watches(dep.New(), handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, d client.Object) []reconcile.Request {
				return r.requestsIn(ctx, d.GetNamespace(), client.MatchingFields{key: d.GetName()})
			}))
		r.Registry.addDependent(dep.Kind, func(ctx context.Context, c client.Client, ns, name string) ([]string, error) {
			list := newList()
			if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingFields{key: name}); err != nil {
				return nil, err
			}
			var names []string
			_ = meta.EachListItem(list, func(o runtime.Object) error {
				ref := o.(client.Object)
				if dep.ClusterScoped && ref.GetNamespace() != "" { // the users are in any namespace: say which
					names = append(names, kind.Name+"/"+ref.GetNamespace()+"/"+ref.GetName())
				} else {
					names = append(names, kind.Name+"/"+ref.GetName())
				}
				return nil
			})
			return names, nil
		})
	}

	if opts.Notifier != nil {
		notes := make(chan event.GenericEvent, 1024)
		b = b.WatchesRawSource(source.Channel(notes, &handler.EnqueueRequestForObject{}))
		if err := opts.Notifier.route(ctx, mgr, kind.Name, func() client.Object { return r.New() }, newList, notes); err != nil {
			return fmt.Errorf("routing %s notifications: %w", kind.Name, err)
		}
	}

	for _, w := range kind.Watches {
		b = b.Watches(w.Object, handler.EnqueueRequestsFromMapFunc(w.Map))
	}

	if lister, ok := r.Actuator.(Lister[O, R]); ok && r.listPeriod() > 0 {
		events := make(chan event.GenericEvent, 1024)
		b = b.WatchesRawSource(source.Channel(events, &handler.EnqueueRequestForObject{}))
		if err := mgr.Add(&resyncer[O, R]{r: r, lister: lister, events: events, polls: map[string]pollState{}}); err != nil {
			return err
		}
	}
	return b.WithOptions(controller.Options{MaxConcurrentReconciles: max(opts.Workers, 1), RateLimiter: RetryLimiter()}).Complete(r)
}

// watchBlockedDeletions makes the kind's blocked deletions wake up when any object of the
// namespace goes away, and makes its own objects' going away wake the namespace's blocked ones
// (of every kind sharing the Registry). The references alone (the Dependencies' watches) cannot
// tell what OpenStack finds in use: a VM's server has ports on subnets it names only through
// their network. Those deletions are not woken when something is deleted outside KupenStack:
// DeletionBlockedRetry covers that.
func (r *Reconciler[O, R]) watchBlockedDeletions(ctx context.Context, mgr ctrl.Manager, b *builder.Builder) (*builder.Builder, error) {
	if err := mgr.GetFieldIndexer().IndexField(ctx, r.New(), blockedIndex, func(o client.Object) []string {
		if deletionBlocked(o.(O)) {
			return []string{"true"}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("indexing blocked deletions: %w", err)
	}
	wake := make(chan event.GenericEvent, 1024)
	r.Registry.addWaker(func(ctx context.Context, namespace string) {
		for _, req := range r.requestsIn(ctx, namespace, client.MatchingFields{blockedIndex: "true"}) {
			obj := r.New()
			obj.SetNamespace(req.Namespace)
			obj.SetName(req.Name)
			select {
			case wake <- event.GenericEvent{Object: obj}:
			default: // full: the retry after DeletionBlockedRetry still comes
			}
		}
	})
	gone := handler.Funcs{DeleteFunc: func(ctx context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		r.Registry.wakeBlocked(ctx, e.Object.GetNamespace())
	}}
	return b.WatchesRawSource(source.Channel(wake, &handler.EnqueueRequestForObject{})).Watches(r.New(), gone), nil
}

// RetryLimiter is controller-runtime's default (per object: exponential from 5 ms; overall: 10
// retries/s with bursts of 100) with the per-object backoff capped at TransientRetryMax.
func RetryLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, openstack.TransientRetryMax),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// quotaApplied passes a ProjectQuota's updates that end a pass which found OpenStack matching it
// (its last sync time moved, Ready), and its deletion (the limits went back to the defaults).
var quotaApplied = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(*kupenstackv1.ProjectQuota)
		q, ok := e.ObjectNew.(*kupenstackv1.ProjectQuota)
		return ok && okOld && conditions.IsReady(q.Status.Conditions, q.Generation) &&
			!q.Status.LastSyncTime.Equal(old.Status.LastSyncTime)
	},
}

// degradedIn lists the kind's Degraded objects in namespace as reconcile requests.
func (r *Reconciler[O, R]) degradedIn(ctx context.Context, namespace string) []reconcile.Request {
	list := r.NewList()
	if err := r.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing objects to wake", "kind", r.Name, "namespace", namespace)
		return nil
	}
	var reqs []reconcile.Request
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(O)
		if meta.IsStatusConditionTrue(obj.GetManagedStatus().Conditions, kupenstackv1.ConditionDegraded) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}})
		}
		return nil
	})
	return reqs
}

// requestsIn lists the kind's objects in namespace (optionally filtered) as reconcile requests.
func (r *Reconciler[O, R]) requestsIn(ctx context.Context, namespace string, filter client.ListOption) []reconcile.Request {
	list := r.NewList()
	opts := []client.ListOption{client.InNamespace(namespace)}
	if filter != nil {
		opts = append(opts, filter)
	}
	if err := r.Client.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing objects to wake", "kind", r.Name, "namespace", namespace)
		return nil
	}
	var reqs []reconcile.Request
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}})
		return nil
	})
	return reqs
}

// resyncer is the list-based drift check: every period, per ready project, one list call for
// the kind; only objects whose resource is missing or differs are reconciled.
type resyncer[O Object, R any] struct {
	r      *Reconciler[O, R]
	lister Lister[O, R]
	events chan event.GenericEvent
	// polls is what a ChangeLister's check remembers per project ID; only Start's goroutine uses it.
	polls map[string]pollState
	// round is this period's one list of a SharedLister (see once); only Start's goroutine uses it.
	round *sharedList[R]
}

// SharedLister is a Lister whose list is the same in every project: Nova keeps key pairs per
// user, and the operator is one user for every project, so each project's list would return all
// of them. The drift check then lists once per period and checks every project against that list
// (with 20 namespaces and 10,000 key pairs: one list of 10,000 instead of 20).
type SharedLister interface {
	SameListInEveryProject()
}

// sharedList is a SharedLister's list of one drift-check period, failed or not.
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

// pollState is what a ChangeLister's check remembers about one project between polls.
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
	rs.round = nil // a new period: a SharedLister lists again
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
		if !ok || !rs.lister.InSync(obj, res) {
			rs.events <- event.GenericEvent{Object: obj}
		}
		return nil
	})
	for _, obj := range rs.r.claimDuplicates(all, found, time.Now()) {
		rs.events <- event.GenericEvent{Object: obj}
	}
}

// list makes the project's list for this poll and says whether it was a full one: with a
// ChangeLister, mostly the changes since the previous list (see pollState.since), with a
// SharedLister the period's one list, else all.
// A failed list leaves the state as it was, so the next poll covers the same changes again.
func (rs *resyncer[O, R]) list(ctx context.Context, projectID string, now time.Time) ([]*R, bool, error) {
	s := Scope{Clients: rs.r.Clients, ProjectID: projectID}
	if _, shared := rs.lister.(SharedLister); shared {
		if rs.round == nil {
			resyncLists.WithLabelValues(rs.r.Name).Inc()
			found, err := rs.lister.ListAll(ctx, s)
			rs.round = &sharedList[R]{found, err}
		}
		return rs.round.found, true, rs.round.err
	}
	resyncLists.WithLabelValues(rs.r.Name).Inc()
	changes, ok := rs.lister.(ChangeLister[O, R])
	if !ok {
		found, err := rs.lister.ListAll(ctx, s)
		return found, true, err
	}
	p := rs.polls[projectID]
	since := p.since(now, rs.r.ResyncPeriod)
	full := since.IsZero()
	if !full {
		changesLists.WithLabelValues(rs.r.Name).Inc()
	}
	found, at, err := changes.ListSince(ctx, s, since)
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

// unrecoverable says whether obj is Degraded for a reason only a spec change can fix: checking it
// again would only repeat the same Warning.
func unrecoverable(obj Object) bool {
	c := meta.FindStatusCondition(obj.GetManagedStatus().Conditions, kupenstackv1.ConditionDegraded)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == kupenstackv1.ReasonUnrecoverableError &&
		c.ObservedGeneration == obj.GetGeneration()
}
