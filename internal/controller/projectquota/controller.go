// Package projectquota keeps the OpenStack quota of a namespace's project as a cluster admin
// declared it in a ProjectQuota, and reports the project's usage against each limit.
//
// A quota is a property of a project, not a resource with an ID that is created and deleted, so
// the kind does not run on the generic engine; it shares its conditions, error classification,
// retries and drift metric.
package projectquota

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/project"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// ControllerName names the controller in logs, metrics and Events.
const ControllerName = "projectquota"

// Finalizer keeps a ProjectQuota until the limits it declared are back to the cloud's defaults.
const Finalizer = "kupenstack.io/project-quota"

// kind names the kind in the drift metric.
const kind = "ProjectQuota"

// Reconciler applies ProjectQuotas.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Services Services
	// ResyncPeriod is how often OpenStack is compared with the spec when spec.resyncPeriod is unset.
	ResyncPeriod time.Duration
}

// +kubebuilder:rbac:groups=kupenstack.io,resources=projectquotas,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=projectquotas/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=projectquotas/finalizers,verbs=update
// +kubebuilder:rbac:groups=kupenstack.io,resources=projects,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes the project's quota in OpenStack match the ProjectQuota.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var q kupenstackv1.ProjectQuota
	if err := r.Client.Get(ctx, req.NamespacedName, &q); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !q.DeletionTimestamp.IsZero() {
		return r.delete(ctx, &q)
	}
	if controllerutil.AddFinalizer(&q, Finalizer) {
		if err := r.Client.Update(ctx, &q); err != nil {
			return ctrl.Result{}, err
		}
	}
	if seen := q.DeepCopy(); conditions.SetUnknownIfNew(&seen.Status.Conditions, q.Generation) {
		if err := r.Client.Status().Patch(ctx, seen, client.MergeFrom(&q)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		q = *seen
	}
	before := q.DeepCopy()
	state, requeue, err := r.apply(ctx, &q)
	if err != nil {
		state = project.ErrorState(err)
	}
	if state.Reason != "" {
		r.Recorder.Eventf(&q, nil, corev1.EventTypeWarning, state.Reason, "Reconcile", "%s", state.Message)
	}
	conditions.Set(&q.Status.Conditions, q.Generation, state)
	q.Status.ObservedGeneration = q.Generation
	if state.Ready && state.Reason == "" && state.Waiting == "" {
		now := metav1.Now()
		q.Status.LastSyncTime = &now
	}
	if err := r.Client.Status().Patch(ctx, &q, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, err
	}
	return project.RequeueFor(ctrl.Result{RequeueAfter: requeue}, err)
}

// apply sets the limits that differ from the spec and reads the usage into the status.
func (r *Reconciler) apply(ctx context.Context, q *kupenstackv1.ProjectQuota) (conditions.State, time.Duration, error) {
	if err := q.Spec.ResyncPeriod.Err(); err != nil {
		// Stored before admission checked the field.
		return conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration,
			Message: "spec.resyncPeriod: " + err.Error() + "; correct or remove it"}, 0, nil
	}
	projectID, waiting, err := r.project(ctx, q.Spec.Namespace)
	if err != nil || waiting != "" {
		// The watches on Namespaces and Projects wake the quota when that changes.
		return conditions.State{Waiting: waiting}, 0, err
	}
	// Limits that differ although this generation was applied to this project already: OpenStack
	// changed, not the spec.
	drifted := conditions.IsReady(q.Status.Conditions, q.Generation) && q.Status.ProjectID == projectID
	q.Status.ProjectID = projectID
	var changed, fields []string // what was set, even when a later section fails
	defer func() {
		if len(changed) == 0 {
			return
		}
		what := "set the quota of project %s: %s"
		if drifted {
			for _, field := range fields {
				generic.CountDriftRepair(kind, field)
			}
			what = "the quota of project %s was changed outside KupenStack; set it back: %s"
		}
		r.Recorder.Eventf(q, nil, corev1.EventTypeNormal, "Updated", "Update", what, projectID, strings.Join(changed, ", "))
	}()
	for _, sec := range sections {
		svc := sec.service(r.Services)
		declared, limits := sec.declared(&q.Spec)
		usage, err := svc.Get(ctx, projectID)
		if err != nil && !declared && missingService(err) {
			sec.observe(&q.Status, nil) // a cloud without block storage: nothing to report
			continue
		}
		if err != nil {
			return conditions.State{}, 0, fmt.Errorf("reading the %s quota of project %s: %w", sec.name(), projectID, err)
		}
		diff, changes := Limits{}, []string(nil)
		for _, l := range limits {
			if now := usage[l.service]; now.Limit != l.value {
				diff[l.service] = l.value
				changes = append(changes, fmt.Sprintf("%s.%s %d → %d", sec.name(), l.field, now.Limit, l.value))
				fields = append(fields, "spec."+sec.name()+"."+l.field)
			}
		}
		if len(diff) > 0 {
			if err := svc.Set(ctx, projectID, diff); err != nil {
				sec.observe(&q.Status, usage)
				return conditions.State{}, 0, fmt.Errorf("setting the %s quota of project %s: %w", sec.name(), projectID, err)
			}
			changed = append(changed, changes...)
			// Read back: the status shows what OpenStack now has, not what was asked for.
			if usage, err = svc.Get(ctx, projectID); err != nil {
				return conditions.State{}, 0, fmt.Errorf("reading the %s quota of project %s: %w", sec.name(), projectID, err)
			}
		}
		sec.observe(&q.Status, usage)
	}
	return conditions.State{Ready: true}, r.resyncAfter(q), nil
}

// project returns the ID of the namespace's OpenStack project, making the Project when the
// namespace has none yet (the quota is then in place before the namespace's first object), or
// says what it waits for.
func (r *Reconciler) project(ctx context.Context, namespace string) (string, string, error) {
	var ns corev1.Namespace
	switch err := r.Client.Get(ctx, client.ObjectKey{Name: namespace}, &ns); {
	case apierrors.IsNotFound(err):
		return "", fmt.Sprintf("waiting for namespace %s to be created", namespace), nil
	case err != nil:
		return "", "", err
	case !ns.DeletionTimestamp.IsZero():
		return "", fmt.Sprintf("namespace %s is being deleted", namespace), nil
	}
	p, err := project.Ensure(ctx, r.Client, namespace)
	switch {
	case err != nil:
		return "", "", err
	case !p.DeletionTimestamp.IsZero():
		return "", fmt.Sprintf("the OpenStack project of namespace %s is being deleted", namespace), nil
	case p.Status.ID == "" || !conditions.IsReady(p.Status.Conditions, p.Generation):
		return "", fmt.Sprintf("waiting for the OpenStack project of namespace %s (kubectl get project %s)", namespace, namespace), nil
	}
	return p.Status.ID, "", nil
}

// delete resets the sections the ProjectQuota declares to the cloud's defaults, in the project it
// last applied them to, then lets the object go.
func (r *Reconciler) delete(ctx context.Context, q *kupenstackv1.ProjectQuota) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(q, Finalizer) {
		return ctrl.Result{}, nil
	}
	if id := q.Status.ProjectID; id != "" {
		var reset []string
		for _, sec := range sections {
			if declared, _ := sec.declared(&q.Spec); !declared {
				continue
			}
			err := sec.service(r.Services).Reset(ctx, id)
			if err != nil && !openstack.IsNotFound(err) && !missingService(err) {
				err = fmt.Errorf("resetting the %s quota of project %s: %w", sec.name(), id, err)
				r.Recorder.Eventf(q, nil, corev1.EventTypeWarning, "DeleteFailed", "Delete", "%v", err)
				return project.RequeueFor(ctrl.Result{}, err)
			}
			reset = append(reset, sec.name())
		}
		if len(reset) > 0 {
			r.Recorder.Eventf(q, nil, corev1.EventTypeNormal, "Reset", "Delete",
				"reset the %s quota of project %s to the cloud's defaults", strings.Join(reset, ", "), id)
		}
	}
	controllerutil.RemoveFinalizer(q, Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, q))
}

// resyncAfter is the jittered time until the next comparison with OpenStack.
func (r *Reconciler) resyncAfter(q *kupenstackv1.ProjectQuota) time.Duration {
	period := r.ResyncPeriod
	if p := q.Spec.ResyncPeriod; p != nil {
		period = p.Duration
		if period > 0 && period < time.Second {
			period = time.Second // stored before admission's minimum: no hot loop against OpenStack
		}
	}
	if period <= 0 {
		return 0
	}
	return generic.Jittered(period)
}

// missingService says whether err is the cloud having no such service in its catalog.
func missingService(err error) bool {
	var notFound *gophercloud.ErrEndpointNotFound
	return errors.As(err, &notFound)
}

// SetupWithManager registers the controller: ProjectQuotas, and the Namespaces and Projects they
// wait for (each named like the ProjectQuota of its namespace).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	sameName := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetName()}}}
	})
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		// Not its own status writes: a rejected request would be retried at once instead of slowly.
		For(&kupenstackv1.ProjectQuota{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{},
			predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() }},
		))).
		Watches(&corev1.Namespace{}, sameName).
		Watches(&kupenstackv1.Project{}, sameName).
		WithOptions(controller.Options{RateLimiter: generic.RetryLimiter()}).
		Complete(r)
}
