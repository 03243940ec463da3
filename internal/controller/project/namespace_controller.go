// Package project maps Kubernetes namespaces to OpenStack projects: every namespace that uses
// KupenStack gets a cluster-scoped Project object that records its OpenStack project.
package project

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// NamespaceControllerName names the controller in logs, metrics and Events.
const NamespaceControllerName = "namespace"

// NamespaceReconciler creates the Project object of each namespace that asks for an OpenStack
// project. The Project is owned by its Namespace, so Kubernetes garbage-collects it with the
// namespace; the Project's own finalizer then decides what happens in OpenStack.
type NamespaceReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=kupenstack.io,resources=projects,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes sure an opted-in namespace has its Project.
func (r *NamespaceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ns corev1.Namespace
	if err := r.Client.Get(ctx, req.NamespacedName, &ns); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ns.DeletionTimestamp.IsZero() || !WantsProject(&ns) {
		return ctrl.Result{}, nil
	}
	project := NewProjectFor(&ns)
	if err := controllerutil.SetControllerReference(&ns, project, r.Client.Scheme()); err != nil {
		return ctrl.Result{}, fmt.Errorf("owning Project %s: %w", ns.Name, err)
	}
	switch err := r.Client.Create(ctx, project); {
	case apierrors.IsAlreadyExists(err):
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("creating Project %s: %w", ns.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("created Project for namespace")
	r.Recorder.Eventf(&ns, project, corev1.EventTypeNormal, "ProjectCreated", "CreateProject",
		"namespace %s now maps to an OpenStack project (see: kubectl get project %s)", ns.Name, ns.Name)
	return ctrl.Result{}, nil
}

// WantsProject says whether a namespace has opted in to an OpenStack project by label.
func WantsProject(ns *corev1.Namespace) bool {
	return ns.Labels[kupenstackv1.LabelProject] == kupenstackv1.ProjectEnabled
}

// NewProjectFor returns the Project object that stands for a namespace.
func NewProjectFor(ns *corev1.Namespace) *kupenstackv1.Project {
	return &kupenstackv1.Project{
		ObjectMeta: metav1.ObjectMeta{Name: ns.Name},
		Spec:       kupenstackv1.ProjectSpec{Namespace: ns.Name},
	}
}

// SetupWithManager registers the controller; it also watches Projects so that a Project deleted
// by hand is re-created while its namespace still asks for one.
func (r *NamespaceReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(NamespaceControllerName).
		For(&corev1.Namespace{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetLabels()[kupenstackv1.LabelProject] == kupenstackv1.ProjectEnabled
		}))).
		Owns(&kupenstackv1.Project{}).
		Complete(r)
}
