package lcm

import (
	"time"

	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
)

// NodeControllerName names the controller in logs, metrics and Events.
const NodeControllerName = "openstacknode"

// NodeFinalizer keeps an OpenstackNode until its labels are off the Kubernetes Node.
const NodeFinalizer = "kupenstack.io/openstack-node"

// NodeReconciler labels the Kubernetes Node of each OpenstackNode for its roles and computes the
// node's desired configuration.
type NodeReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Compute switches nodes' nova-compute services; nil leaves them alone (no cloud to ask).
	Compute ComputeServices
}

// computeWaitRetry is how soon a node waiting on Nova asks again.
const computeWaitRetry = 10 * time.Second

// +kubebuilder:rbac:groups=kupenstack.io,resources=openstacknodes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=openstacknodes/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;update;patch

// componentsBeingRemoved says whether the configuration is gone (or going) while components
// remain, which are being uninstalled.
func (r *NodeReconciler) componentsBeingRemoved(ctx context.Context) (bool, error) {
	var cfg kupenstackv1.KupenstackConfiguration
	err := r.Client.Get(ctx, configKey, &cfg)
	if err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	if err == nil && cfg.DeletionTimestamp.IsZero() {
		return false, nil // a node leaving a cloud that stays
	}
	var comps kupenstackv1.OpenstackComponentList
	if err := r.Client.List(ctx, &comps); err != nil {
		return false, err
	}
	return len(comps.Items) > 0, nil
}

// Reconcile labels the node and writes the OpenstackNode's status.
func (r *NodeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var on kupenstackv1.OpenstackNode
	if err := r.Client.Get(ctx, req.NamespacedName, &on); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !on.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(&on, NodeFinalizer) {
			return ctrl.Result{}, nil
		}
		// When the whole cloud goes, the nodes keep their labels until every component is
		// uninstalled: a chart's pre-delete hook (keystone's credential cleanup) runs on the
		// labelled nodes, and would wait for ever for a node to run on.
		if wait, err := r.componentsBeingRemoved(ctx); err != nil || wait {
			return ctrl.Result{RequeueAfter: 2 * time.Second}, err
		}
		before := on.DeepCopy()
		if wait, err := r.disableCompute(ctx, &on); err != nil {
			return ctrl.Result{}, err
		} else if wait != "" {
			conditions.Set(&on.Status.Conditions, on.Generation, conditions.State{Waiting: wait, WaitReason: kupenstackv1.ReasonDisablingComputeService})
			return ctrl.Result{RequeueAfter: computeWaitRetry}, client.IgnoreNotFound(r.Client.Status().Patch(ctx, &on, client.MergeFrom(before)))
		}
		if _, _, err := r.syncLabels(ctx, &on, nil); err != nil {
			return ctrl.Result{}, err
		}
		controllerutil.RemoveFinalizer(&on, NodeFinalizer)
		return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, &on))
	}
	if controllerutil.AddFinalizer(&on, NodeFinalizer) {
		if err := r.Client.Update(ctx, &on); err != nil {
			return ctrl.Result{}, err
		}
	}
	// First sight: Ready Unknown at once, before the pass (kubectl get shows Unknown, not a blank).
	if seen := on.DeepCopy(); conditions.SetUnknownIfNew(&seen.Status.Conditions, on.Generation) {
		if err := r.Client.Status().Patch(ctx, seen, client.MergeFrom(&on)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		on = *seen
	}
	before := on.DeepCopy()
	state := conditions.State{Ready: true}

	desired, ignored, derr := r.desired(ctx, &on)
	if derr != nil {
		state = conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: derr.Error()}
	} else {
		changed := desired == nil || before.Status.DesiredClusterConfiguration == nil ||
			before.Status.DesiredClusterConfiguration.Hash != desired.Hash
		on.Status.DesiredClusterConfiguration = desired
		// Warn once per change of the node's configuration, not on every pass.
		if len(ignored) > 0 && changed {
			r.Recorder.Eventf(&on, nil, corev1.EventTypeWarning, "IgnoredProfileFields", "Render",
				"the node's profile sets fields that apply to the whole cloud only: %s", strings.Join(ignored, ", "))
		}
	}
	labels := values.NodeLabels(on.Spec.Roles)
	if on.Spec.Disabled {
		labels = nil
	}
	var computeWait, computeWaitReason string
	if labels[values.LabelComputeNode] == "" {
		computeWaitReason = kupenstackv1.ReasonDisablingComputeService
		var err error
		if computeWait, err = r.disableCompute(ctx, &on); err != nil {
			return ctrl.Result{}, err
		}
		if computeWait != "" {
			// The node keeps every label KupenStack set until Nova stops scheduling there: its
			// compute pods, and on a control node the Nova API that must be asked.
			labels = maps.Clone(labels)
			if labels == nil {
				labels = map[string]string{}
			}
			for _, k := range before.Status.AppliedLabels {
				labels[k] = values.LabelEnabled
			}
			maps.Copy(labels, values.NodeLabels([]string{kupenstackv1.NodeRoleCompute}))
		}
	}
	applied, conflicts, err := r.syncLabels(ctx, &on, labels)
	switch {
	case apierrors.IsNotFound(err):
		state = conditions.State{Waiting: fmt.Sprintf("Kubernetes node %s does not exist", on.Name)}
		applied = nil
	case err != nil:
		return ctrl.Result{}, err
	case len(conflicts) > 0:
		state = conditions.State{Ready: false, Reason: kupenstackv1.ReasonInvalidConfiguration,
			Message: "labels set by someone else are in the way (KupenStack leaves them alone): " + strings.Join(conflicts, ", ")}
	}
	if derr != nil && state.Reason == "" {
		state = conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: derr.Error()}
	}
	on.Status.AppliedLabels = applied
	if computeWait == "" && labels[values.LabelComputeNode] != "" && err == nil {
		computeWaitReason = kupenstackv1.ReasonEnablingComputeService
		if computeWait, err = r.enableCompute(ctx, &on, before.Status.AppliedLabels); err != nil {
			return ctrl.Result{}, err
		}
	}
	var result ctrl.Result
	if computeWait != "" {
		result.RequeueAfter = computeWaitRetry
		if state.Reason == "" {
			state = conditions.State{Waiting: computeWait, WaitReason: computeWaitReason}
		}
	}
	conditions.Set(&on.Status.Conditions, on.Generation, state)
	on.Status.ObservedGeneration = on.Generation
	if equality.Semantic.DeepEqual(before.Status, on.Status) {
		return result, nil
	}
	return result, client.IgnoreNotFound(r.Client.Status().Patch(ctx, &on, client.MergeFrom(before)))
}

// desired renders the node's configuration from the KupenstackConfiguration and its profiles.
func (r *NodeReconciler) desired(ctx context.Context, on *kupenstackv1.OpenstackNode) (*kupenstackv1.DesiredClusterConfiguration, []string, error) {
	var cfg kupenstackv1.KupenstackConfiguration
	if err := r.Client.Get(ctx, configKey, &cfg); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	node := values.Node{Name: on.Name, Roles: on.Spec.Roles, Disabled: on.Spec.Disabled}
	if ref := on.Spec.Profile; ref != nil && !on.Spec.Disabled {
		var p kupenstackv1.OpenstackCloudConfigurationProfile
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, &p); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil, fmt.Errorf("profile %s/%s not found", ref.Namespace, ref.Name)
			}
			return nil, nil, err
		}
		node.Profile = &p.Spec
	}
	nv, err := values.RenderNode(cfg.Spec.Components, cfg.Spec.OptionalComponents, node)
	if err != nil {
		return nil, nil, err
	}
	d := &kupenstackv1.DesiredClusterConfiguration{
		Release: cfg.Spec.Release, Components: nv.Components, Hash: nv.Hash,
	}
	if len(nv.Labels) > 0 {
		d.Labels = nv.Labels
	}
	for _, o := range nv.Overrides {
		raw, err := json.Marshal(o.Conf)
		if err != nil {
			return nil, nil, err
		}
		d.Overrides = append(d.Overrides, kupenstackv1.NodeOverride{
			Component: o.Component, DaemonSet: o.DaemonSet, Conf: runtime.RawExtension{Raw: raw},
		})
	}
	return d, nv.Ignored, nil
}

// syncLabels gives the Kubernetes Node exactly the wanted OpenStack-Helm labels among those
// KupenStack manages, recording in an annotation which keys it set. A label someone else set is
// never changed or removed: with the wanted value it is simply left there (and not recorded as
// KupenStack's), with another value it is a conflict. It returns the keys KupenStack now owns.
func (r *NodeReconciler) syncLabels(ctx context.Context, on *kupenstackv1.OpenstackNode, want map[string]string) ([]string, []string, error) {
	var node corev1.Node
	if err := r.Client.Get(ctx, types.NamespacedName{Name: on.Name}, &node); err != nil {
		if apierrors.IsNotFound(err) && want == nil {
			return nil, nil, nil // nothing to take off a node that is gone
		}
		return nil, nil, err
	}
	orig := node.DeepCopy()
	owned := ownedLabels(&node)
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	var conflicts, added, removed []string
	for _, key := range values.ManagedLabelKeys {
		wantValue, wanted := want[key]
		have, present := node.Labels[key]
		switch {
		case wanted && owned[key]:
			if have != wantValue {
				node.Labels[key] = wantValue // ours, changed or removed by hand: restore
				added = append(added, key)
			}
		case wanted && !present:
			node.Labels[key] = wantValue
			owned[key] = true
			added = append(added, key)
		case wanted && have != wantValue:
			conflicts = append(conflicts, key+"="+have)
		case !wanted && owned[key]:
			if present && have == values.LabelEnabled {
				delete(node.Labels, key)
				removed = append(removed, key)
			}
			delete(owned, key)
		}
	}
	if len(owned) == 0 {
		delete(node.Annotations, kupenstackv1.AnnotationManagedLabels)
	} else {
		if node.Annotations == nil {
			node.Annotations = map[string]string{}
		}
		node.Annotations[kupenstackv1.AnnotationManagedLabels] = joinSorted(owned)
	}
	if !equality.Semantic.DeepEqual(orig.Labels, node.Labels) || !equality.Semantic.DeepEqual(orig.Annotations, node.Annotations) {
		// Optimistic lock: labels others write at the same time are never lost.
		if err := r.Client.Patch(ctx, &node, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return nil, nil, err
		}
		if len(added) > 0 {
			r.Recorder.Eventf(on, &node, corev1.EventTypeNormal, "NodeLabelled", "Label", "labelled node %s: %s", on.Name, strings.Join(added, ", "))
		}
		if len(removed) > 0 {
			r.Recorder.Eventf(on, &node, corev1.EventTypeNormal, "NodeUnlabelled", "Unlabel", "removed labels from node %s: %s", on.Name, strings.Join(removed, ", "))
		}
	}
	keys := make([]string, 0, len(owned))
	for k := range owned {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		keys = nil
	}
	return keys, conflicts, nil
}

// ownedLabels reads the annotation: the label keys KupenStack set on the node. Keys it never
// manages are ignored, so a hand-edited annotation cannot make it remove other labels.
func ownedLabels(node *corev1.Node) map[string]bool {
	owned := map[string]bool{}
	for _, k := range strings.Split(node.Annotations[kupenstackv1.AnnotationManagedLabels], ",") {
		if slices.Contains(values.ManagedLabelKeys, strings.TrimSpace(k)) {
			owned[strings.TrimSpace(k)] = true
		}
	}
	return owned
}

// SetupWithManager registers the controller.
func (r *NodeReconciler) SetupWithManager(mgr ctrl.Manager) error {
	sameName := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
	})
	allNodes := func(ctx context.Context) []reconcile.Request {
		var list kupenstackv1.OpenstackNodeList
		if err := mgr.GetClient().List(ctx, &list); err != nil {
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for _, n := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: n.Name}})
		}
		return reqs
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(NodeControllerName).
		For(&kupenstackv1.OpenstackNode{}).
		// Only label and annotation changes matter, not the kubelet's status heartbeats.
		Watches(&corev1.Node{}, sameName, builder.WithPredicates(predicate.Or(
			predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&kupenstackv1.KupenstackConfiguration{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, _ client.Object) []reconcile.Request { return allNodes(ctx) })).
		// Nova's component starting to serve: nodes labelled compute meanwhile are asked about
		// their nova-compute services (enableCompute).
		Watches(&kupenstackv1.OpenstackComponent{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, _ client.Object) []reconcile.Request { return allNodes(ctx) }),
			builder.WithPredicates(novaServingChanged)).
		Watches(&kupenstackv1.OpenstackCloudConfigurationProfile{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, o client.Object) []reconcile.Request {
				var cfg kupenstackv1.KupenstackConfiguration
				if err := mgr.GetClient().Get(ctx, configKey, &cfg); err != nil || !profileUsed(&cfg, o.GetNamespace(), o.GetName()) {
					return nil
				}
				return allNodes(ctx)
			})).
		Complete(r)
}

// novaServingChanged passes the nova component's changes that can turn novaServing true: its
// creation and a first good revision.
var novaServingChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, after := e.ObjectOld.(*kupenstackv1.OpenstackComponent), e.ObjectNew.(*kupenstackv1.OpenstackComponent)
		return after.Name == novaComponent && (before.Status.LastGoodRevision > 0) != (after.Status.LastGoodRevision > 0)
	},
	CreateFunc:  func(e event.CreateEvent) bool { return e.Object.GetName() == novaComponent },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}
