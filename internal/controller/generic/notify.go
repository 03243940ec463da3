package generic

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var notified = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "kupenstack_notifications_enqueued_total",
	Help: "Objects reconciled at once because an OpenStack notification concerned their resource, by kind.",
}, []string{"kind"})

func init() { metrics.Registry.MustRegister(notified) }

// statusIDKey indexes objects by the OpenStack ID in their status.
const statusIDKey = "kupenstack.io/status-id"

// Notifier routes OpenStack notifications (kind + resource ID) to the objects they concern.
type Notifier struct {
	mu     sync.Mutex
	routes map[string]func(ctx context.Context, id string)
}

// NewNotifier returns a Notifier that every kind of one manager registers with.
func NewNotifier() *Notifier {
	return &Notifier{routes: map[string]func(context.Context, string){}}
}

// Notify reconciles the objects of kind whose OpenStack resource is id, if any.
func (n *Notifier) Notify(ctx context.Context, kind, id string) {
	n.mu.Lock()
	route := n.routes[kind]
	n.mu.Unlock()
	if route != nil {
		route(ctx, id)
	}
}

// route registers the kind: objects are found through an index of their status IDs and woken
// through events, which never blocks the listener (the list checks cover a dropped one).
func (n *Notifier) route(ctx context.Context, mgr ctrl.Manager, kind string, newObj func() client.Object,
	newList func() client.ObjectList, events chan<- event.GenericEvent) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, newObj(), statusIDKey, func(o client.Object) []string {
		if id := o.(Object).GetManagedStatus().ID; id != "" {
			return []string{id}
		}
		return nil
	}); err != nil {
		return err
	}
	c := mgr.GetClient()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.routes[kind] = func(ctx context.Context, id string) {
		list := newList()
		if err := c.List(ctx, list, client.MatchingFields{statusIDKey: id}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "finding the object of a notification", "kind", kind)
			return
		}
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			select {
			case events <- event.GenericEvent{Object: o.(client.Object)}:
				notified.WithLabelValues(kind).Inc()
			default:
			}
			return nil
		})
	}
	return nil
}
