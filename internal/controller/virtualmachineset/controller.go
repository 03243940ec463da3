// Package virtualmachineset keeps the VirtualMachines of a VirtualMachineSet: as many as its
// replicas, made from its template, rolled to a changed template within its strategy's bounds.
// Each VM heals itself; the set only counts, creates and deletes VirtualMachine objects.
package virtualmachineset

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=virtualmachinesets,verbs=get;list;watch
// +kubebuilder:rbac:groups=kupenstack.io,resources=virtualmachinesets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=virtualmachines,verbs=create;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// ControllerName names the controller in logs, metrics and Events.
const ControllerName = "virtualmachineset"

// HashLabel carries the hash of the template a VM was made from (like a Pod's pod-template-hash).
const HashLabel = "kupenstack.io/template-hash"

// Reconciler reconciles VirtualMachineSets.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Now is the clock (tests move it); time.Now when nil.
	Now func() time.Time
}

// SetupWithManager registers the controller: sets, and the VMs they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&kupenstackv1.VirtualMachineSet{}).
		Owns(&kupenstackv1.VirtualMachine{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)}).
		Complete(r)
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// templateHash is a short, stable hash of the template: VMs whose label differs are out of date.
func templateHash(t kupenstackv1.VirtualMachineTemplate) string {
	data, _ := json.Marshal(t) // a struct of plain fields: cannot fail
	h := fnv.New32a()
	_, _ = h.Write(data)
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// Reconcile is one pass for one set.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var set kupenstackv1.VirtualMachineSet
	if err := r.Client.Get(ctx, req.NamespacedName, &set); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !set.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // the garbage collector deletes the VMs it owns
	}
	before := set.DeepCopy()
	state, requeue, err := r.reconcile(ctx, &set)
	conditions.Set(&set.Status.Conditions, set.Generation, state)
	set.Status.ObservedGeneration = set.Generation
	if perr := r.Client.Status().Patch(ctx, &set, client.MergeFrom(before)); perr != nil {
		return ctrl.Result{}, perr
	}
	return ctrl.Result{RequeueAfter: requeue}, err
}

func (r *Reconciler) reconcile(ctx context.Context, set *kupenstackv1.VirtualMachineSet) (conditions.State, time.Duration, error) {
	// Admission refuses these; a set stored before its rules existed waits here for a fix.
	selector, err := set.Spec.Selector.AsSelector()
	var bad string
	switch {
	case err != nil:
		bad = fmt.Sprintf("selector: %v", err)
	case selector.Empty():
		bad = "selector must not be empty: it would select every VM of the namespace"
	case !selector.Matches(labels.Set(kupenstackv1.LabelSet(set.Spec.Template.Metadata.Labels))):
		bad = "the selector does not match the template's labels"
	}
	if bad != "" {
		r.Recorder.Eventf(set, nil, corev1.EventTypeWarning, kupenstackv1.ReasonInvalidConfiguration, "Reconcile", "%s", bad)
		return invalid(bad), 0, nil
	}
	set.Status.Selector = selector.String()
	hash := templateHash(set.Spec.Template)
	set.Status.TemplateHash = hash

	var list kupenstackv1.VirtualMachineList
	if err := r.Client.List(ctx, &list, client.InNamespace(set.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return conditions.State{}, 0, err
	}
	now := r.now()
	minReady := time.Duration(set.Spec.MinReadySeconds) * time.Second
	var members []member
	var ready, available, updated int32
	var nextAvailable time.Duration // when a Ready VM becomes available
	byName := map[string]*kupenstackv1.VirtualMachine{}
	for i := range list.Items {
		vm := &list.Items[i]
		if !metav1.IsControlledBy(vm, set) || !vm.DeletionTimestamp.IsZero() {
			continue
		}
		m := member{name: vm.Name, updated: vm.Labels[HashLabel] == hash, created: vm.CreationTimestamp.Time}
		if c := meta.FindStatusCondition(vm.Status.Conditions, kupenstackv1.ConditionReady); c != nil &&
			c.Status == metav1.ConditionTrue && c.ObservedGeneration == vm.Generation {
			m.ready = true
			readyFor := now.Sub(c.LastTransitionTime.Time)
			m.available = readyFor >= minReady
			if !m.available && (nextAvailable == 0 || minReady-readyFor < nextAvailable) {
				nextAvailable = minReady - readyFor
			}
		}
		members = append(members, m)
		byName[vm.Name] = vm
		if m.ready {
			ready++
		}
		if m.available {
			available++
		}
		if m.updated {
			updated++
		}
	}
	set.Status.Replicas, set.Status.ReadyReplicas = int32(len(members)), ready
	set.Status.AvailableReplicas, set.Status.UpdatedReplicas = available, updated

	// Everything in a terminating namespace is going: a VM made to replace one being deleted would
	// only hold the namespace's deletion up (and the API server refuses it, a Warning each time).
	if terminating, err := r.namespaceTerminating(ctx, set.Namespace); err != nil || terminating {
		return namespaceDeleted(set.Namespace), 0, err
	}

	replicas := int32(1)
	if set.Spec.Replicas != nil {
		replicas = *set.Spec.Replicas
	}
	p, err := planFor(set.Spec.Strategy, int(replicas), members)
	if err != nil {
		// A bound stored before admission checked it: the set waits for a fix and touches no VM.
		r.Recorder.Eventf(set, nil, corev1.EventTypeWarning, kupenstackv1.ReasonInvalidConfiguration, "Reconcile", "%v", err)
		return invalid(err.Error()), 0, nil
	}
	for _, name := range p.delete {
		if err := r.Client.Delete(ctx, byName[name]); client.IgnoreNotFound(err) != nil {
			return conditions.State{}, 0, err
		}
		r.Recorder.Eventf(set, byName[name], corev1.EventTypeNormal, "Deleted", "Scale", "deleted VirtualMachine %s", name)
	}
	for range p.create {
		vm, err := r.newVM(set, hash)
		if err != nil {
			return conditions.State{}, 0, err
		}
		if err := r.Client.Create(ctx, vm); err != nil {
			if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) { // began since the check above
				return namespaceDeleted(set.Namespace), 0, nil
			}
			if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
				r.Recorder.Eventf(set, nil, corev1.EventTypeWarning, "CreateFailed", "Scale", "%v", err)
				return conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: err.Error()}, time.Minute, nil
			}
			return conditions.State{}, 0, err
		}
		r.Recorder.Eventf(set, vm, corev1.EventTypeNormal, "Created", "Scale", "created VirtualMachine %s", vm.Name)
	}

	done := len(p.delete) == 0 && p.create == 0 && updated == replicas && available == replicas && int32(len(members)) == replicas
	if done {
		return conditions.State{Ready: true}, 0, nil
	}
	msg := fmt.Sprintf("%d of %d VMs up to date and available", min(updated, available), replicas)
	// VM changes wake the set; only the passing of minReadySeconds needs a timer.
	return conditions.State{Ready: ready >= replicas && updated >= replicas, Waiting: msg}, nextAvailable, nil
}

// namespaceTerminating says whether the namespace is being deleted.
func (r *Reconciler) namespaceTerminating(ctx context.Context, name string) (bool, error) {
	var ns corev1.Namespace
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &ns); err != nil {
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}
	return !ns.DeletionTimestamp.IsZero(), nil
}

func namespaceDeleted(namespace string) conditions.State {
	return conditions.State{Waiting: fmt.Sprintf("namespace %s is being deleted: no VM is created or replaced", namespace)}
}

func invalid(msg string) conditions.State {
	return conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: msg}
}

// newVM makes a VM of the current template, owned by the set.
func (r *Reconciler) newVM(set *kupenstackv1.VirtualMachineSet, hash string) (*kupenstackv1.VirtualMachine, error) {
	vm := &kupenstackv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   set.Namespace,
			Name:        fmt.Sprintf("%s-%s-%s", set.Name, hash, rand.String(5)),
			Labels:      map[string]string{},
			Annotations: map[string]string{},
		},
		Spec: *set.Spec.Template.Spec.DeepCopy(),
	}
	for k, v := range set.Spec.Template.Metadata.Labels {
		vm.Labels[k] = string(v)
	}
	// After the template's: admission refuses a template that sets it, but a set stored before
	// that rule must not label its VMs with a hash that is never the current one (endless rollout).
	vm.Labels[HashLabel] = hash
	for k, v := range set.Spec.Template.Metadata.Annotations {
		vm.Annotations[k] = string(v)
	}
	if vm.Spec.Name != "" { // each server gets its own name: the VM's
		vm.Spec.Name = ""
	}
	return vm, controllerutil.SetControllerReference(set, vm, r.Client.Scheme())
}
