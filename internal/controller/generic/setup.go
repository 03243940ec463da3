package generic

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/api/meta"
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
		Help: "Changes made outside KupenStack that were undone, by kind and spec field (\"resource\": the resource was deleted and is re-created).",
	}, []string{"kind", "field"})
	heals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kupenstack_heals_total",
		Help: "Failed or vanished resources replaced by their restart policy, by kind.",
	}, []string{"kind"})
)

func init() { metrics.Registry.MustRegister(resyncLists, changesLists, driftRepairs, heals) }

// FieldResource is the drift repairs' field label for a resource deleted outside KupenStack and
// created again.
const FieldResource = "resource"

// CountDriftRepair counts a change made outside KupenStack that a controller off the engine
// (ProjectQuota) undid, with the engine's own repairs.
func CountDriftRepair(kind, field string) { driftRepairs.WithLabelValues(kind, field).Inc() }

// Dependency declares that objects of one kind refer by name to objects of another kind (in the
// same namespace, or cluster-wide when that kind is cluster-scoped). The engine waits until the
// referenced objects are Ready, passes their IDs to the actuator, wakes the referrer when they
// change, and keeps a referenced object (and its OpenStack resource) from being deleted while
// something still refers to it. Declare one with Refers.
type Dependency[O Object] struct {
	// Kind of the referenced objects, e.g. "Network".
	Kind string
	// Field is where obj names them, as a user writes it ("spec.networkRef"), for messages.
	Field string
	// New returns an empty referenced object.
	New func() Object
	// Names lists the names obj refers to.
	Names func(obj O) []string
	// ClusterScoped: the referenced kind is cluster-scoped (Flavor), so names are cluster-wide.
	// Setup finds it out from the API server.
	ClusterScoped bool
}

// Refers declares that field of O names objects of kind D, names listing them: the kind's name
// and its objects come from the type, so a declaration cannot name one kind and build another.
func Refers[D any, PD interface {
	*D
	Object
}, O Object](field string, names func(O) []string) Dependency[O] {
	return Dependency[O]{Kind: reflect.TypeFor[D]().Name(), Field: field, New: func() Object { return PD(new(D)) }, Names: names}
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

	r.Dependencies = slices.Clone(kind.Dependencies) // a kind's declaration may be shared: filled in here
	for i := range r.Dependencies {
		namespaced, err := mgr.GetClient().IsObjectNamespaced(r.Dependencies[i].New())
		if err != nil {
			return fmt.Errorf("finding the scope of %s: %w", r.Dependencies[i].Kind, err)
		}
		r.Dependencies[i].ClusterScoped = !namespaced
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

	if r.Can.listed() && r.listPeriod() > 0 {
		events := make(chan event.GenericEvent, 1024)
		b = b.WatchesRawSource(source.Channel(events, &handler.EnqueueRequestForObject{}))
		if err := mgr.Add(&resyncer[O, R]{r: r, events: events, polls: map[string]pollState{}}); err != nil {
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
