package component

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
)

// uninstall removes the release, then the finalizer.
func (r *Reconciler) uninstall(ctx context.Context, comp *kupenstackv1.OpenstackComponent, hc *helm.Client) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(comp, Finalizer) {
		return ctrl.Result{}, nil
	}
	if comp.Status.Phase != kupenstackv1.ComponentPhaseUninstalling {
		before := comp.DeepCopy()
		comp.Status.Phase = kupenstackv1.ComponentPhaseUninstalling
		if err := r.Client.Status().Patch(ctx, comp, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	if last, err := hc.Last(comp.Name); err == nil && last != nil {
		if _, err := hc.UnlockPending(last); err != nil {
			return ctrl.Result{}, err
		}
	}
	err := hc.Uninstall(comp.Name)
	countAction(r.Component, "uninstall", err)
	if err != nil {
		r.Recorder.Eventf(comp, nil, corev1.EventTypeWarning, "UninstallFailed", "Uninstall", "uninstalling Helm release %s/%s: %v", comp.Spec.Namespace, comp.Name, err)
		return ctrl.Result{}, err
	}
	r.Recorder.Eventf(comp, nil, corev1.EventTypeNormal, "Uninstalled", "Uninstall", "Helm release %s/%s uninstalled", comp.Spec.Namespace, comp.Name)
	readyGauge.DeleteLabelValues(r.Component)
	controllerutil.RemoveFinalizer(comp, Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, comp))
}
