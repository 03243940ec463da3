package component

import (
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
)

// dependentsPoll is how often an uninstall waiting for its dependents to go looks again.
const dependentsPoll = 3 * time.Second

// uninstall removes the release once no other component depends on it, then the finalizer.
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
	// Dependents go first: their pre-delete hooks (keystone's credential-cleanup reads the
	// database) wait for this component's Services. Uninstalled at the same time, the hook's
	// init container waited for a MariaDB that was already gone.
	var all kupenstackv1.OpenstackComponentList
	if err := r.Client.List(ctx, &all); err != nil {
		return ctrl.Result{}, err
	}
	for _, o := range all.Items {
		if o.Name != comp.Name && slices.Contains(o.Spec.DependsOn, comp.Name) {
			ctrl.LoggerFrom(ctx).V(1).Info("uninstall waits for a dependent", "dependent", o.Name)
			return ctrl.Result{RequeueAfter: dependentsPoll}, nil
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
	if err := r.deleteHookJobs(ctx, comp); err != nil {
		return ctrl.Result{}, err
	}
	r.Recorder.Eventf(comp, nil, corev1.EventTypeNormal, "Uninstalled", "Uninstall", "Helm release %s/%s uninstalled", comp.Spec.Namespace, comp.Name)
	readyGauge.DeleteLabelValues(r.Component)
	controllerutil.RemoveFinalizer(comp, Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, comp))
}

// deleteHookJobs deletes the hook Jobs Helm leaves behind after an uninstall (OpenStack-Helm's
// db-init, db-sync, bootstrap... are hooks with the before-hook-creation delete policy, which
// Helm applies only before running the hook again), and so their pods: the release's Jobs carry
// helm-toolkit's app.kubernetes.io/instance=<release> label and a helm.sh/hook annotation.
func (r *Reconciler) deleteHookJobs(ctx context.Context, comp *kupenstackv1.OpenstackComponent) error {
	var jobs batchv1.JobList
	if err := r.Client.List(ctx, &jobs, client.InNamespace(comp.Spec.Namespace),
		client.MatchingLabels{"app.kubernetes.io/instance": comp.Name}); err != nil {
		return err
	}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if _, hook := j.Annotations["helm.sh/hook"]; !hook {
			continue
		}
		if err := r.Client.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting hook Job %s/%s: %w", j.Namespace, j.Name, err)
		}
	}
	return nil
}
