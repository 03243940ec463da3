package generic

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// UntaggedGrace is how old an untagged resource of an object's name must be before it counts as
// that object's duplicate. Its own creator tags it in the pass that made it: a younger one may be
// another object's (two objects may give their resources the same name) on its way to its tag.
const UntaggedGrace = time.Minute

var duplicatesDeleted = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "kupenstack_duplicates_deleted_total",
	Help: "OpenStack resources deleted because they were made for an object that already had its resource (a create outliving an operator restart), by kind.",
}, []string{"kind"})

func init() { metrics.Registry.MustRegister(duplicatesDeleted) }

// duplicates are the IDs of resources the drift check found made for an object besides the one
// in its status, by object UID, until the object's next pass deletes them. The zero value is
// ready to use.
type duplicates struct {
	mu  sync.Mutex
	ids map[types.UID][]string
}

// add records ids for uid and says whether uid had none pending (its pass is to be woken).
func (d *duplicates) add(uid types.UID, ids ...string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ids == nil {
		d.ids = map[types.UID][]string{}
	}
	first := len(d.ids[uid]) == 0
	for _, id := range ids {
		if !slices.Contains(d.ids[uid], id) {
			d.ids[uid] = append(d.ids[uid], id)
		}
	}
	return first
}

func (d *duplicates) take(uid types.UID) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	ids := d.ids[uid]
	delete(d.ids, uid)
	return ids
}

// claimDuplicates looks, among the listed resources that no object's status names, for those an
// object claims, and returns the objects to wake to delete them. Objects without a resource yet
// are left out: their pass may still adopt what is listed.
func (r *Reconciler[O, R]) claimDuplicates(objs []O, found []*R, now time.Time) []O {
	claims := r.Can.Claims
	if claims == nil {
		return nil
	}
	inStatus := make(map[string]bool, len(objs))
	var owners []O
	for _, obj := range objs {
		spec := obj.GetManagedSpec()
		if id := obj.GetManagedStatus().ID; id != "" {
			inStatus[id] = true
			if spec.Import == nil && spec.ManagementPolicy != kupenstackv1.ManagementPolicyUnmanaged && obj.GetDeletionTimestamp().IsZero() {
				owners = append(owners, obj)
			}
		}
	}
	var wake []O
	for _, res := range found {
		id := r.Actuator.ID(res)
		if inStatus[id] || r.deleting(res) {
			continue
		}
		for _, obj := range owners {
			if claims(obj, res, now) {
				if r.dups.add(obj.GetUID(), id) {
					wake = append(wake, obj)
				}
				break
			}
		}
	}
	return wake
}

// deleteDuplicates deletes the duplicates the drift check found for obj, whose resource is
// current. Each is read again first: only one that still exists, is not being deleted and is
// still claimed goes. What fails is kept for the next pass.
func (r *Reconciler[O, R]) deleteDuplicates(ctx context.Context, s Scope, obj O, current *R) error {
	ids := r.dups.take(obj.GetUID())
	claims := r.Can.Claims
	if len(ids) == 0 || claims == nil || r.deleting(current) {
		return nil
	}
	for i, id := range ids {
		if id == r.Actuator.ID(current) {
			continue
		}
		res, err := r.Actuator.Get(ctx, s, id)
		if err == nil && (r.deleting(res) || !claims(obj, res, time.Now())) {
			continue
		}
		if err == nil {
			r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "DeletingDuplicate", "Delete",
				"deleting %s %s, also created for this object (its %s is %s)", r.Name, id, r.Name, r.Actuator.ID(current))
			if err = r.Actuator.Delete(ctx, s, res); err == nil {
				duplicatesDeleted.WithLabelValues(r.Name).Inc()
			}
		}
		if err != nil && !openstack.IsNotFound(err) {
			r.dups.add(obj.GetUID(), ids[i:]...)
			return err
		}
	}
	return nil
}
