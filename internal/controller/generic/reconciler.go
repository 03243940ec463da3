// Package generic is the reconcile engine shared by every OpenStack resource kind. It owns the
// parts that are the same for all kinds: the namespace's project, finalizers, import and
// adoption, out-of-band deletion, status and conditions, Events, error classification and
// resync. A kind only supplies an Actuator: its mapping between spec and OpenStack calls.
package generic

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/controller/project"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// Object is a Kubernetes object that declares one OpenStack resource.
type Object interface {
	client.Object
	kupenstackv1.ManagedObject
}

// Scope is where an actuator acts: the cloud's clients, the namespace's project and the
// OpenStack IDs of the objects it refers to.
type Scope struct {
	Clients   *openstack.Clients
	ProjectID string
	deps      map[string]string
	// event records an Event on the object being reconciled (nil in unit tests).
	event func(eventType, reason, action, message string)
}

// DependencyID is the OpenStack ID of the referenced object kind/name (resolved and Ready).
func (s Scope) DependencyID(kind, name string) string { return s.deps[kind+"/"+name] }

// Event records an Event on the object being reconciled: for steps of a long operation that an
// actuator carries out over several passes (a VM's resize), which the engine cannot name.
func (s Scope) Event(eventType, reason, action, message string) {
	if s.event != nil {
		s.event(eventType, reason, action, message)
	}
}

// Actuator maps one kind to OpenStack. R is the OpenStack resource as the actuator reads it.
// Methods return OpenStack errors unchanged; the engine classifies them.
type Actuator[O Object, R any] interface {
	// Get reads the resource with this ID (a 404 error when it is gone).
	Get(ctx context.Context, s Scope, id string) (*R, error)
	// FindOwned finds a resource created for obj whose ID never reached its status (a crash
	// right after the create call); nil when there is none.
	FindOwned(ctx context.Context, s Scope, obj O) (*R, error)
	// FindImport finds the resource obj's spec.import names; nil when there is none (yet).
	FindImport(ctx context.Context, s Scope, obj O) (*R, error)
	// Create creates the resource; it must do nothing that can fail after the create call.
	Create(ctx context.Context, s Scope, obj O) (*R, error)
	// Diff lists the fields in which res differs from obj's spec, references compared by the IDs
	// they resolve to now (s.DependencyID). It is pure: the drift check calls it for every
	// object of a list, and only those with changes are reconciled.
	Diff(s Scope, obj O, res *R) Changes
	// Update makes the changes Diff found (never none); it returns the resource as it now is.
	Update(ctx context.Context, s Scope, obj O, res *R, changes Changes) (*R, error)
	// Delete deletes the resource (the engine then waits until Get says 404).
	Delete(ctx context.Context, s Scope, res *R) error
	// ID is the resource's OpenStack ID.
	ID(res *R) string
	// Observe writes the resource into obj's status and says whether it is ready; when not, the
	// message says what OpenStack is still doing.
	Observe(obj O, res *R) (ready bool, waiting string)
}

// Options are the operator-wide settings every kind's reconciler shares.
type Options struct {
	Clients *openstack.Clients
	// ResyncPeriod is the period of the list-based drift check; spec.resyncPeriod gives one
	// object its own, per-object check instead.
	ResyncPeriod time.Duration
	// Registry connects the kinds of one manager (for deletion guards).
	Registry *Registry
	// Notifier, when set, wakes objects at once on OpenStack notifications about their resource.
	Notifier *Notifier
	// Workers is how many objects of one kind are reconciled at once (1 when unset). OpenStack
	// calls take long, so one slow server must not hold up every other VM.
	Workers int
	// DeletionBlockedRetry is how soon a deletion OpenStack refused as in use is tried again
	// (DefaultDeletionBlockedRetry when unset; tests lengthen it to see the wake-ups alone).
	DeletionBlockedRetry time.Duration
}

// DefaultDeletionBlockedRetry is how soon a deletion OpenStack refused with 409 (a network with
// ports, a subnet with addresses in use, a security group on a port, a router with interfaces)
// is tried again. What blocks it is normally being deleted at the same moment (a namespace's
// objects all go together) and gone in seconds: the slow retry of rejected requests would add
// minutes for each such ordering conflict.
const DefaultDeletionBlockedRetry = 5 * time.Second

// Kind describes one OpenStack resource kind to the engine.
type Kind[O Object, R any] struct {
	// Name of the kind, e.g. "Network", for Events and messages.
	Name string
	// Controller names the controller in logs and metrics, e.g. "network".
	Controller string
	Actuator   Actuator[O, R]
	New        func() O
	NewList    func() client.ObjectList
	// Dependencies are the kinds this kind refers to.
	Dependencies []Dependency[O]
	// ClusterScoped kinds (flavors) are cloud-wide: they act with the operator's admin scope,
	// not in a namespace's project.
	ClusterScoped bool
	// ListPeriod, when set, is the kind's own period for the list-based check instead of the
	// operator-wide ResyncPeriod (VMs are checked for failures far more often).
	ListPeriod time.Duration
	// Watches are other objects whose changes wake objects of this kind.
	Watches []Watch
	// Can are the kind's optional capabilities.
	Can Capabilities[O, R]
}

// Watch wakes the objects Map returns whenever an Object of its type changes.
type Watch struct {
	Object client.Object
	Map    handler.MapFunc
}

// HealDecision is what a kind's Healing decided about a failure.
type HealDecision struct {
	// Replace now.
	Replace bool
	// After, when not replacing now, is when to decide again (backoff); 0 means the failure stays
	// (restart policy Never).
	After time.Duration
	// Message says what happened and what comes next, for the Event and the conditions.
	Message string
	// Record, with Replace, writes the replacement into the object's status (a VM's restart
	// count). The engine calls it once the failed resource is deleted, so a delete that fails
	// and is retried records nothing.
	Record func()
}

// Reconciler runs a Kind's Actuator.
type Reconciler[O Object, R any] struct {
	Options
	Kind[O, R]
	Client   client.Client
	Recorder events.EventRecorder
	// dups are the duplicates the drift check found, for the objects' next passes (Can.Claims).
	dups duplicates
	// appliedAt is, per object UID, the newest generation a pass has left Ready (see inPlace).
	appliedAt sync.Map
	// repairing is, per object UID, the drift a repair that waits has reported as begun, so the
	// passes that wait for it do not report it again.
	repairing sync.Map
	// createSent holds the UIDs of the objects this process has sent a create for (see
	// mayHaveCreated): the cache may not show the status write that records it yet.
	createSent sync.Map
	// unrecorded: the API server drops status.createRequested (see recordCreateRequest).
	unrecorded atomic.Bool
}

// Finalizer is the finalizer of every OpenStack resource kind.
const Finalizer = "kupenstack.io/openstack-resource"

// pollInterval is how soon a resource that OpenStack is still building is looked at again.
const pollInterval = 2 * time.Second

// outcome is where one reconcile pass ended.
type outcome struct {
	state   conditions.State
	requeue time.Duration
	err     error // returned to controller-runtime for exponential backoff
}

func (o outcome) result() (ctrl.Result, error) {
	if o.err != nil {
		return ctrl.Result{}, o.err
	}
	return ctrl.Result{RequeueAfter: o.requeue}, nil
}

// Reconcile is one pass for one object.
func (r *Reconciler[O, R]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.New()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return r.reconcileDelete(ctx, obj)
	}
	if controllerutil.AddFinalizer(obj, Finalizer) {
		if err := r.Client.Update(ctx, obj); err != nil {
			return ctrl.Result{}, err
		}
	}
	// First sight: say at once that nothing is known yet (kubectl get shows Ready Unknown, not a
	// blank), as the pass may take a while (a project to create, a server to build).
	if seen := obj.DeepCopyObject().(O); conditions.SetUnknownIfNew(&seen.GetManagedStatus().Conditions, obj.GetGeneration()) {
		if err := r.Client.Status().Patch(ctx, seen, client.MergeFrom(obj)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		obj = seen
	}
	before := obj.DeepCopyObject().(O)
	out := r.reconcileNormal(ctx, obj, before)
	if out.state.Reason != "" {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, out.state.Reason, "Reconcile", "%s", out.state.Message)
	}
	st := obj.GetManagedStatus()
	conditions.Set(&st.Conditions, obj.GetGeneration(), out.state)
	st.ObservedGeneration = obj.GetGeneration()
	if out.state.Ready && out.state.Reason == "" && out.state.Waiting == "" {
		now := metav1.Now()
		st.LastSyncTime = &now
	}
	if err := r.Client.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, err
	}
	if out.state.Ready && out.state.Reason == "" && out.state.Waiting == "" {
		r.appliedAt.Store(obj.GetUID(), obj.GetGeneration())
	}
	return out.result()
}

// inPlace says whether obj's generation was in place in OpenStack once already, so that what
// differs from it now was changed there: obj is Ready for its generation, or this operator has
// seen it so. The operator's own record outlives a pass that is not Ready, such as a repair that
// failed once (a volume still detaching refuses to attach) and the passes that wait for a repair,
// and it is ahead of the cache, which may not have the status write of the pass just before.
func (r *Reconciler[O, R]) inPlace(obj O) bool {
	if conditions.IsReady(obj.GetManagedStatus().Conditions, obj.GetGeneration()) {
		return true
	}
	gen, ok := r.appliedAt.Load(obj.GetUID())
	return ok && gen.(int64) == obj.GetGeneration()
}

func (r *Reconciler[O, R]) scope(ctx context.Context, namespace string) (Scope, string, error) {
	if r.ClusterScoped {
		return Scope{Clients: r.Clients}, "", nil
	}
	p, err := project.Ensure(ctx, r.Client, namespace)
	if err != nil {
		return Scope{}, "", err
	}
	if p.Status.ID == "" || !conditions.IsReady(p.Status.Conditions, p.Generation) {
		return Scope{}, fmt.Sprintf("waiting for the OpenStack project of namespace %s (kubectl get project %s)", namespace, namespace), nil
	}
	return Scope{Clients: r.Clients, ProjectID: p.Status.ID}, "", nil
}

// reconcileNormal brings OpenStack in line with obj; before is obj as this pass found it.
func (r *Reconciler[O, R]) reconcileNormal(ctx context.Context, obj O, before O) outcome {
	if err := obj.GetManagedSpec().ResyncPeriod.Err(); err != nil {
		// Stored before admission checked the field: this object waits for a fix, the others go on.
		return errorOutcome(InvalidConfig("spec.resyncPeriod: " + err.Error() + "; correct or remove it"))
	}
	s, waiting, err := r.scope(ctx, obj.GetNamespace())
	if err != nil {
		return errorOutcome(err)
	}
	if waiting != "" {
		return outcome{state: conditions.State{Waiting: waiting}, requeue: pollInterval}
	}
	if s.deps, waiting, err = r.resolveDependencies(ctx, obj); err != nil {
		return errorOutcome(err)
	}
	s.event = func(eventType, reason, action, message string) {
		r.Recorder.Eventf(obj, nil, eventType, reason, action, "%s", message)
	}
	if waiting != "" {
		// The watch on the referenced kind wakes this object when that changes.
		return outcome{state: conditions.State{Waiting: waiting}}
	}
	res, out := r.getOrCreate(ctx, s, obj, before)
	if res == nil {
		return out
	}
	if err := r.deleteDuplicates(ctx, s, obj, res); err != nil {
		return errorOutcome(err)
	}
	if obj.GetManagedSpec().ManagementPolicy != kupenstackv1.ManagementPolicyUnmanaged {
		id := r.Actuator.ID(res)
		if res, err = r.update(ctx, s, obj, res); err != nil {
			if r.vanished(ctx, s, id, err) {
				// Not the spec's fault: the next pass finds the resource gone and replaces it
				// (or not, by the kind's policy) as for any deletion outside KupenStack.
				return outcome{state: conditions.State{Waiting: fmt.Sprintf(
					"%s %s was deleted outside KupenStack while being updated", r.Name, id)}, requeue: time.Millisecond}
			}
			return errorOutcome(err)
		}
	}
	ready, waiting := r.Actuator.Observe(obj, res)
	if waiting != "" {
		return outcome{state: conditions.State{Ready: ready, Waiting: waiting}, requeue: pollInterval}
	}
	return outcome{state: conditions.State{Ready: ready}, requeue: r.resyncAfter(obj)}
}

// update makes the changes the kind's Diff finds. When the object's generation was in place
// already, the changes were made in OpenStack: drift, reported with an Event and a count per field
// once repaired, or once a repair that takes several passes has begun (but for Work, which is
// reported as an update). A repair that fails is reported by the pass that makes it.
func (r *Reconciler[O, R]) update(ctx context.Context, s Scope, obj O, res *R) (*R, error) {
	changes := r.Actuator.Diff(s, obj, res)
	if len(changes) == 0 {
		r.repairing.Delete(obj.GetUID())
		return res, nil
	}
	updated, err := r.Actuator.Update(ctx, s, obj, res, changes)
	// A repair that takes several passes (a resize reverted) has begun when Update says to wait.
	var wait waitError
	started := err != nil && errors.As(err, &wait)
	if err != nil && !started {
		// What Update made before it failed (the fields repaired before one that cannot be) is
		// in the resource it returned, when it returned one.
		if updated != nil {
			res = updated
		}
		r.Actuator.Observe(obj, res)
		return nil, err
	}
	if updated == nil {
		updated = res
	}
	id := r.Actuator.ID(updated)
	updates := changes
	if r.inPlace(obj) {
		if drift := changes.Drift(); len(drift) > 0 && r.newRepair(obj, drift, started) {
			for _, field := range drift.Fields() {
				driftRepairs.WithLabelValues(r.Name, field).Inc()
			}
			what := "set back"
			if started {
				what = "setting back"
			}
			ctrl.LoggerFrom(ctx).Info("repairing drift", "kind", r.Name, "id", id, "changes", fmt.Sprintf("%+v", []Change(drift)))
			r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "DriftRepaired", "Update",
				"%s %s was changed outside KupenStack; %s: %s", r.Name, id, what, drift)
		}
		updates = slices.DeleteFunc(slices.Clone(changes), func(c Change) bool { return !c.Work })
	}
	if started {
		// The operation's own steps say what it does (a resize's Events); Updated waits for the end.
		r.Actuator.Observe(obj, updated)
		return nil, err
	}
	if len(updates) > 0 {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Updated", "Update",
			"updated %s %s to match the spec: %s", r.Name, id, updates)
	}
	return updated, nil
}

// vanished says whether err, from updating the resource id, is OpenStack's 404 for the resource
// itself, deleted since this pass found it; a 404 for something it refers to (a volume to attach)
// is the spec's to fix, and stays Degraded.
func (r *Reconciler[O, R]) vanished(ctx context.Context, s Scope, id string, err error) bool {
	if !openstack.IsNotFound(err) {
		return false
	}
	_, getErr := r.Actuator.Get(ctx, s, id)
	return openstack.IsNotFound(getErr)
}

// newRepair says whether drift is to be reported: not when a repair that waits (started) has
// reported the same drift as begun already, in an earlier pass.
func (r *Reconciler[O, R]) newRepair(obj O, drift Changes, started bool) bool {
	fields := strings.Join(drift.Fields(), ",")
	if started {
		prev, loaded := r.repairing.Swap(obj.GetUID(), fields)
		return !loaded || prev.(string) != fields
	}
	prev, loaded := r.repairing.LoadAndDelete(obj.GetUID())
	return !loaded || prev.(string) != fields
}

// getOrCreate finds the object's OpenStack resource, or creates it. A nil resource means the
// pass ends with the returned outcome.
func (r *Reconciler[O, R]) getOrCreate(ctx context.Context, s Scope, obj O, before O) (*R, outcome) {
	spec, st := obj.GetManagedSpec(), obj.GetManagedStatus()
	managed := spec.ManagementPolicy != kupenstackv1.ManagementPolicyUnmanaged
	if st.ID != "" {
		res, err := r.Actuator.Get(ctx, s, st.ID)
		switch {
		case err == nil:
			if h := r.Can.Heal; h != nil && managed && spec.Import == nil {
				if failure := h.Failure(obj, res); failure != "" {
					return nil, r.heal(ctx, s, obj, res, h.Decide(obj, failure, time.Now()))
				}
			}
			return res, outcome{}
		case !openstack.IsNotFound(err):
			return nil, errorOutcome(err)
		case !managed:
			return nil, outcome{state: conditions.State{Reason: kupenstackv1.ReasonUnrecoverableError,
				Message: fmt.Sprintf("the imported %s %s no longer exists in OpenStack", r.Name, st.ID)}}
		}
		if spec.Import != nil {
			st.ID = ""
			return nil, outcome{state: conditions.State{Reason: kupenstackv1.ReasonUnrecoverableError,
				Message: fmt.Sprintf("the imported %s was deleted in OpenStack", r.Name)}}
		}
		if h := r.Can.Heal; h != nil {
			d := h.Decide(obj, fmt.Sprintf("%s %s was deleted outside KupenStack", r.Name, st.ID), time.Now())
			if !d.Replace {
				return nil, notReplaced(d)
			}
			d.record()
			heals.WithLabelValues(r.Name).Inc()
			r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "DeletedOutOfBand", "Recreate", "%s", d.Message)
		} else {
			r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "DeletedOutOfBand", "Recreate",
				"%s %s was deleted outside KupenStack; creating it again", r.Name, st.ID)
		}
		driftRepairs.WithLabelValues(r.Name, FieldResource).Inc()
		st.ID = ""
	}

	var res *R
	var err error
	switch {
	case spec.Import != nil:
		if res, err = r.Actuator.FindImport(ctx, s, obj); err != nil {
			return nil, errorOutcome(err)
		}
		if res == nil {
			return nil, outcome{state: conditions.State{Waiting: fmt.Sprintf("waiting for the %s to import to exist in OpenStack", r.Name)},
				requeue: 15 * time.Second}
		}
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Imported", "Import", "imported %s %s", r.Name, r.Actuator.ID(res))
	case !managed:
		return nil, outcome{state: conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration,
			Message: "an unmanaged object must import an existing resource"}}
	default:
		if r.mayHaveCreated(obj) {
			if res, err = r.Actuator.FindOwned(ctx, s, obj); err != nil {
				return nil, errorOutcome(err)
			}
		}
		if res != nil {
			r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Adopted", "Adopt",
				"adopted %s %s, created earlier for this object", r.Name, r.Actuator.ID(res))
		} else {
			if err := r.recordCreateRequest(ctx, obj, before); err != nil {
				return nil, outcome{err: err}
			}
			if res, err = r.Actuator.Create(ctx, s, obj); err != nil {
				return nil, errorOutcome(err)
			}
			r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Created", "Create", "created %s %s", r.Name, r.Actuator.ID(res))
		}
	}
	// Persist the ID at once: everything after this may fail. The patch is against the object as
	// the pass found it, so it also carries what the pass changed so far (a heal's restart
	// count): the API server's answer replaces obj, and would otherwise drop those changes.
	st.ID = r.Actuator.ID(res)
	st.CreateRequested = false
	// Until this pass ends, the object must not look Ready with the old resource's observation.
	conditions.Set(&st.Conditions, obj.GetGeneration(), conditions.State{
		Waiting: fmt.Sprintf("%s %s exists; bringing it in line with the spec", r.Name, st.ID)})
	if err := r.Client.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return nil, outcome{err: err}
	}
	return res, outcome{}
}

// mayHaveCreated says whether a resource made for obj may exist that its status does not name, so
// that the pass must look for it (FindOwned, a list call) before it creates one: when a create
// was requested for obj, by this process or, as the status records, an earlier one. A first
// create then costs no list. The record's one gap is an object an operator without it (an older
// version, or CRDs without the field) was creating when it stopped: kinds whose drift check
// would not find such a duplicate (no Can.Claims, or the check turned off) always look.
func (r *Reconciler[O, R]) mayHaveCreated(obj O) bool {
	if r.Can.Claims == nil || !r.Can.listed() || r.listPeriod() <= 0 || r.unrecorded.Load() ||
		obj.GetManagedStatus().CreateRequested {
		return true
	}
	_, sent := r.createSent.Load(obj.GetUID())
	return sent
}

// recordCreateRequest records, before the create call, that a resource may exist for obj from
// now on: in this process, and in the status for the next one, should this one die before the
// ID is written. Only the field is patched; obj and before (what the pass's later patches are
// made against) are given it too, so that writing the ID clears it.
func (r *Reconciler[O, R]) recordCreateRequest(ctx context.Context, obj O, before O) error {
	r.createSent.Store(obj.GetUID(), struct{}{})
	if obj.GetManagedStatus().CreateRequested {
		return nil
	}
	marker := client.RawPatch(types.MergePatchType, []byte(`{"status":{"createRequested":true}}`))
	marked := obj.DeepCopyObject().(O)
	if err := r.Client.Status().Patch(ctx, marked, marker); err != nil {
		return err
	}
	if !marked.GetManagedStatus().CreateRequested && !r.unrecorded.Swap(true) {
		// The CRD lacks the field (Helm does not upgrade a chart's CRDs), and the API server
		// dropped it without an error: nothing records a create, so every pass looks.
		ctrl.LoggerFrom(ctx).Info("status.createRequested is not stored (CRDs older than the operator?): every create looks for an earlier one first",
			"kind", r.Name)
	}
	obj.GetManagedStatus().CreateRequested = true
	before.GetManagedStatus().CreateRequested = true
	return nil
}

// heal carries out a Healing's decision about a failed resource: it deletes it (the next pass
// creates the replacement; FindOwned must not return a resource that is being deleted), or
// reports why it stays.
func (r *Reconciler[O, R]) heal(ctx context.Context, s Scope, obj O, res *R, d HealDecision) outcome {
	if !d.Replace {
		r.Actuator.Observe(obj, res)
		return notReplaced(d)
	}
	if err := r.Actuator.Delete(ctx, s, res); err != nil && !openstack.IsNotFound(err) {
		r.Actuator.Observe(obj, res)
		return errorOutcome(fmt.Errorf("replacing the failed %s %s: %w", r.Name, r.Actuator.ID(res), err))
	}
	d.record()
	heals.WithLabelValues(r.Name).Inc()
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "Replacing", "Replace", "%s", d.Message)
	r.Actuator.Observe(obj, res)
	obj.GetManagedStatus().ID = ""
	return outcome{state: conditions.State{Waiting: d.Message}, requeue: time.Second}
}

func (d HealDecision) record() {
	if d.Record != nil {
		d.Record()
	}
}

// notReplaced is the outcome of a failure that is not (yet) repaired: backing off, or left as
// it is by the restart policy.
func notReplaced(d HealDecision) outcome {
	if d.After > 0 {
		return outcome{state: conditions.State{Reason: kupenstackv1.ReasonTransientError, Message: d.Message}, requeue: d.After}
	}
	return outcome{state: conditions.State{Reason: kupenstackv1.ReasonUnrecoverableError, Message: d.Message}}
}

// resolveDependencies finds the OpenStack IDs of the objects obj refers to, or says which one
// it is waiting for.
func (r *Reconciler[O, R]) resolveDependencies(ctx context.Context, obj O) (map[string]string, string, error) {
	ids := map[string]string{}
	for _, dep := range r.Dependencies {
		for _, name := range dep.Names(obj) {
			ref := dep.New()
			key := client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}
			if dep.ClusterScoped {
				key.Namespace = ""
			}
			err := r.Client.Get(ctx, key, ref)
			if apierrors.IsNotFound(err) {
				return nil, fmt.Sprintf("waiting for %s/%s to be created (%s)", dep.Kind, name, dep.Field), nil
			}
			if err != nil {
				return nil, "", err
			}
			st := ref.GetManagedStatus()
			if !ref.GetDeletionTimestamp().IsZero() {
				return nil, fmt.Sprintf("%s/%s is being deleted (%s)", dep.Kind, name, dep.Field), nil
			}
			if st.ID == "" || !conditions.IsReady(st.Conditions, ref.GetGeneration()) {
				return nil, fmt.Sprintf("waiting for %s/%s to be ready (%s)", dep.Kind, name, dep.Field), nil
			}
			ids[dep.Kind+"/"+name] = st.ID
		}
	}
	return ids, "", nil
}

func (r *Reconciler[O, R]) reconcileDelete(ctx context.Context, obj O) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return ctrl.Result{}, nil
	}
	r.dups.take(obj.GetUID()) // deletion takes every resource made for obj (Can.ListOwned)
	r.appliedAt.Delete(obj.GetUID())
	r.repairing.Delete(obj.GetUID())
	r.createSent.Delete(obj.GetUID())
	// Deletion guard: OpenStack would refuse (or orphan) a resource still in use.
	if users, err := r.Registry.Dependents(ctx, r.Client, r.Name, obj.GetNamespace(), obj.GetName()); err != nil || len(users) > 0 {
		if err != nil {
			return ctrl.Result{}, err
		}
		return r.patchWaiting(ctx, obj, conditions.State{Waiting: fmt.Sprintf("deletion waits until nothing refers to it: %v", users),
			WaitReason: kupenstackv1.ReasonDeletionBlocked}, 5*time.Second)
	}
	spec, st := obj.GetManagedSpec(), obj.GetManagedStatus()
	release := spec.ManagementPolicy == kupenstackv1.ManagementPolicyUnmanaged || spec.OnDelete == kupenstackv1.OnDeleteDetach
	if !release {
		done, err := r.deleteResource(ctx, obj)
		var wait waitError
		if errors.As(err, &wait) { // e.g. a volume still attached: not a failure
			return r.patchWaiting(ctx, obj, conditions.State{Waiting: wait.msg}, wait.after)
		}
		if openstack.IsConflict(err) {
			// In use by something OpenStack knows and the references may not show (a server's
			// port on a subnet the VM names only through its network): an ordering conflict
			// that ends by itself, not a request to fix. Any deletion in the namespace wakes it
			// (wakeBlocked), the retry is the net for what is deleted outside KupenStack.
			msg := fmt.Sprintf("OpenStack refused the deletion (409: the %s is still in use or busy); trying again: %v", r.Name, err)
			if c := meta.FindStatusCondition(obj.GetManagedStatus().Conditions, kupenstackv1.ConditionProgressing); c == nil || c.Message != msg {
				// Once per cause, not on every retry.
				r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, kupenstackv1.ReasonDeletionBlocked, "Delete", "%s", msg)
			}
			retry := blockedRetry(r.deletionBlockedRetry(), time.Since(obj.GetDeletionTimestamp().Time))
			return r.patchWaiting(ctx, obj, conditions.State{Waiting: msg, WaitReason: kupenstackv1.ReasonDeletionBlocked}, retry)
		}
		if err != nil || !done {
			if err != nil {
				r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "DeleteFailed", "Delete", "%v", err)
			}
			out := errorOutcome(err)
			if err == nil {
				out = outcome{requeue: time.Second}
			}
			return out.result()
		}
	} else if st.ID != "" {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Detached", "Delete", "left %s %s in OpenStack", r.Name, st.ID)
	}
	controllerutil.RemoveFinalizer(obj, Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, obj))
}

// patchWaiting records why a deletion waits (state is a wait, not Ready); a blocked deletion is
// also woken by the deletion of any object in its namespace (wakeBlocked).
func (r *Reconciler[O, R]) patchWaiting(ctx context.Context, obj O, state conditions.State, after time.Duration) (ctrl.Result, error) {
	before := obj.DeepCopyObject().(O)
	st := obj.GetManagedStatus()
	conditions.Set(&st.Conditions, obj.GetGeneration(), state)
	if err := r.Client.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

func (r *Reconciler[O, R]) deletionBlockedRetry() time.Duration {
	if r.DeletionBlockedRetry > 0 {
		return r.DeletionBlockedRetry
	}
	return DefaultDeletionBlockedRetry
}

// MaxDeletionBlockedRetry bounds how far apart the retries of a long-blocked deletion get.
const MaxDeletionBlockedRetry = 2 * time.Minute

// blockedRetry is when to retry a deletion OpenStack has refused with 409 for blockedFor: at base
// at first (what blocks it normally goes in seconds), then an eighth of the time blocked, up to
// MaxDeletionBlockedRetry. A resource held by something that never goes (a port made outside
// KupenStack) is then not asked for every 5 s forever; the wake-ups of wakeBlocked still come at
// once when an object of the namespace goes.
func blockedRetry(base, blockedFor time.Duration) time.Duration {
	return max(base, min(blockedFor/8, MaxDeletionBlockedRetry))
}

// deletionBlocked says whether obj is being deleted and its deletion waits for something that
// uses its resource (see the reasons' use in reconcileDelete).
func deletionBlocked(obj Object) bool {
	if obj.GetDeletionTimestamp().IsZero() {
		return false
	}
	c := meta.FindStatusCondition(obj.GetManagedStatus().Conditions, kupenstackv1.ConditionProgressing)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == kupenstackv1.ReasonDeletionBlocked
}

// deleteResource deletes the OpenStack resource and reports whether it is gone.
func (r *Reconciler[O, R]) deleteResource(ctx context.Context, obj O) (bool, error) {
	s := Scope{Clients: r.Clients}
	if !r.ClusterScoped {
		var p kupenstackv1.Project
		if err := r.Client.Get(ctx, client.ObjectKey{Name: obj.GetNamespace()}, &p); err != nil || p.Status.ID == "" {
			// No project was ever made, so nothing was created in one.
			return client.IgnoreNotFound(err) == nil, client.IgnoreNotFound(err)
		}
		s.ProjectID = p.Status.ID
	}
	var res *R
	var err error
	if id := obj.GetManagedStatus().ID; id != "" {
		res, err = r.Actuator.Get(ctx, s, id)
	} else {
		res, err = r.Actuator.FindOwned(ctx, s, obj) // created, but the ID never reached the status
	}
	switch {
	case err == nil && res == nil, openstack.IsNotFound(err): // never created, or gone
		gone := err != nil
		if left, err := r.deleteLeftovers(ctx, s, obj); err != nil || left {
			return false, err
		}
		if gone {
			r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Deleted", "Delete", "deleted %s %s", r.Name, obj.GetManagedStatus().ID)
		}
		return true, nil
	case err != nil:
		return false, err
	}
	if r.deleting(res) {
		return false, nil // asked already: wait for it to go, without asking again
	}
	if err := r.Actuator.Delete(ctx, s, res); err != nil && !openstack.IsNotFound(err) {
		return false, err
	}
	if obj.GetManagedStatus().ID == "" {
		// Re-read by ID next time.
		before := obj.DeepCopyObject().(O)
		obj.GetManagedStatus().ID = r.Actuator.ID(res)
		if err := r.Client.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
			return false, err
		}
	}
	return false, nil
}

// deleting says whether OpenStack is deleting res already (kinds without the notion: never).
func (r *Reconciler[O, R]) deleting(res *R) bool {
	return r.Can.Deleting != nil && r.Can.Deleting(res)
}

// deleteLeftovers deletes the resources created for obj other than the one its status names (see
// Can.ListOwned) and says whether any is left to wait for.
func (r *Reconciler[O, R]) deleteLeftovers(ctx context.Context, s Scope, obj O) (bool, error) {
	if r.Can.ListOwned == nil || obj.GetManagedSpec().Import != nil {
		return false, nil
	}
	left, err := r.Can.ListOwned(ctx, s, obj)
	if err != nil {
		return false, err
	}
	for _, res := range left {
		if r.deleting(res) {
			continue
		}
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "DeletingDuplicate", "Delete",
			"deleting %s %s, also created for this object", r.Name, r.Actuator.ID(res))
		if err := r.Actuator.Delete(ctx, s, res); err != nil && !openstack.IsNotFound(err) {
			return true, err
		}
	}
	return len(left) > 0, nil
}

// minResyncPeriod is the shortest spec.resyncPeriod admission accepts (besides 0, off).
const minResyncPeriod = time.Second

// resyncAfter is the jittered time until this object's own drift check: only for objects with
// their own spec.resyncPeriod, or kinds without the list-based check.
func (r *Reconciler[O, R]) resyncAfter(obj O) time.Duration {
	period := r.ResyncPeriod
	if p := obj.GetManagedSpec().ResyncPeriod; p != nil {
		// Admission keeps it at 0 (off) or at least minResyncPeriod; a shorter one stored before
		// that rule existed must not make a hot loop against OpenStack.
		period = p.Duration
		if period > 0 && period < minResyncPeriod {
			period = minResyncPeriod
		}
	} else if r.Can.listed() {
		return 0
	}
	if period <= 0 {
		return 0
	}
	return Jittered(period)
}

// Jittered is period and up to a tenth more, so that the checks of objects created together spread out.
func Jittered(period time.Duration) time.Duration {
	return period + time.Duration(rand.Int64N(int64(period)/10+1))
}

// errorOutcome classifies an error: rejected requests are Degraded with OpenStack's message and
// retried slowly; throttled ones wait for Retry-After; the rest back off exponentially.
func errorOutcome(err error) outcome {
	if err == nil {
		return outcome{}
	}
	var wait waitError
	if errors.As(err, &wait) {
		return outcome{state: conditions.State{Waiting: wait.msg, WaitReason: wait.reason}, requeue: wait.after}
	}
	var deg degradedError
	if errors.As(err, &deg) {
		return outcome{state: conditions.State{Reason: deg.reason, Message: deg.msg}, requeue: deg.after}
	}
	if IsInvalidConfig(err) {
		return outcome{state: conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: err.Error()},
			requeue: openstack.RejectedRetryInterval}
	}
	class, delay := openstack.Classify(err)
	switch class {
	case openstack.Rejected:
		return outcome{state: conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: err.Error()}, requeue: delay}
	case openstack.Throttled:
		return outcome{state: conditions.State{Reason: kupenstackv1.ReasonTransientError, Message: err.Error()}, requeue: delay}
	}
	return outcome{state: conditions.State{Reason: kupenstackv1.ReasonTransientError, Message: err.Error()}, err: err}
}
