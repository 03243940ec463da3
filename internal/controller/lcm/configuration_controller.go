// Package lcm holds the controllers of the cloud's life-cycle: the KupenstackConfiguration
// controller (OpenstackNode objects from spec.nodes, rendered component values in the status)
// and the OpenstackNode controller (OpenStack-Helm labels on Kubernetes Nodes, the node's
// desired configuration).
package lcm

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/lcm/desired"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
)

// ConfigurationControllerName names the controller in logs, metrics and Events.
const ConfigurationControllerName = "kupenstackconfiguration"

// ConfigurationReconciler keeps one OpenstackNode per configured node and renders the values of
// every component into the configuration's status.
type ConfigurationReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// ChartLocalPaths, when set, limits the directories spec.charts.localPath may name: another
	// one makes the configuration Degraded (and no component is installed or changed from it).
	ChartLocalPaths *helm.LocalPathPolicy
}

// +kubebuilder:rbac:groups=kupenstack.io,resources=kupenstackconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=kupenstack.io,resources=kupenstackconfigurations/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=openstackcloudconfigurationprofiles,verbs=get;list;watch
// +kubebuilder:rbac:groups=kupenstack.io,resources=openstacknodes,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kupenstack.io,resources=openstackcomponents,verbs=get;list;watch;create;update;patch;delete

var configKey = types.NamespacedName{Name: kupenstackv1.KupenstackConfigurationName}

// ReasonChartPathNotAllowed is the Event reason of a charts.localPath outside the directories the
// operator allows (--chart-local-path-prefixes).
const ReasonChartPathNotAllowed = "ChartPathNotAllowed"

// Reconcile brings the OpenstackNodes in line with spec.nodes and renders the components.
func (r *ConfigurationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.NamespacedName != configKey {
		return ctrl.Result{}, nil // the API server admits no other name
	}
	var cfg kupenstackv1.KupenstackConfiguration
	err := r.Client.Get(ctx, configKey, &cfg)
	if apierrors.IsNotFound(err) || (err == nil && !cfg.DeletionTimestamp.IsZero()) {
		// No cloud configured: no OpenstackNode either (they also go by garbage collection).
		if err := r.syncComponents(ctx, nil, nil); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.syncNodes(ctx, nil, nil)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	// First sight: Ready Unknown at once (kubectl get shows Unknown rather than a blank), and
	// ServicesHealthy Unknown until the validation agent reports, with the node count the spec
	// gives, before the pass writes any outcome.
	seen := cfg.DeepCopy()
	first := conditions.SetUnknownIfNew(&seen.Status.Conditions, cfg.Generation)
	if meta.FindStatusCondition(seen.Status.Conditions, kupenstackv1.ConditionServicesHealthy) == nil {
		meta.SetStatusCondition(&seen.Status.Conditions, metav1.Condition{
			Type: kupenstackv1.ConditionServicesHealthy, Status: metav1.ConditionUnknown, Reason: kupenstackv1.ReasonNotProbed,
			Message:            "no probe has reported yet (the validation agent probes every --validation-period; 0 turns it off)",
			ObservedGeneration: cfg.Generation,
		})
		first = true
	}
	if first {
		seen.Status.Nodes = enabledNodes(cfg.Spec.Nodes)
		patch := client.MergeFromWithOptions(&cfg, client.MergeFromWithOptimisticLock{})
		if err := r.Client.Status().Patch(ctx, seen, patch); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		cfg = *seen
	}
	before := cfg.DeepCopy()
	if err := r.syncNodes(ctx, &cfg, cfg.Spec.Nodes); err != nil {
		return ctrl.Result{}, err
	}
	state := conditions.State{Ready: true}
	var out *values.Output
	var rerr, perr error
	if r.ChartLocalPaths != nil && cfg.Spec.Charts.LocalPath != "" {
		perr = r.ChartLocalPaths.Check(cfg.Spec.Charts.LocalPath)
	}
	if perr == nil {
		out, rerr = r.render(ctx, &cfg)
	}
	switch {
	case perr != nil:
		// Admission cannot know the operator's flag: refused here, before any chart is read.
		state = conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: "spec.charts.localPath: " + perr.Error()}
		r.Recorder.Eventf(&cfg, nil, corev1.EventTypeWarning, ReasonChartPathNotAllowed, "LoadCharts", "%s", state.Message)
	case rerr != nil:
		state = conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: rerr.Error()}
		r.Recorder.Eventf(&cfg, nil, corev1.EventTypeWarning, state.Reason, "Render", "%s", state.Message)
	default:
		if err := r.syncComponents(ctx, &cfg, out); err != nil {
			return ctrl.Result{}, err
		}
		var comps kupenstackv1.OpenstackComponentList
		if err := r.Client.List(ctx, &comps); err != nil {
			return ctrl.Result{}, err
		}
		cfg.Status.Components = componentStatuses(out, comps.Items)
		ready := 0
		for _, c := range cfg.Status.Components {
			if c.Ready {
				ready++
			}
		}
		cfg.Status.ReadyComponents = fmt.Sprintf("%d/%d", ready, len(cfg.Status.Components))
		if ready < len(cfg.Status.Components) {
			state = conditions.State{Waiting: cfg.Status.ReadyComponents + " components ready"}
		}
	}
	cfg.Status.Nodes = enabledNodes(cfg.Spec.Nodes)
	conditions.Set(&cfg.Status.Conditions, cfg.Generation, state)
	cfg.Status.ObservedGeneration = cfg.Generation
	if equality.Semantic.DeepEqual(before.Status, cfg.Status) {
		return ctrl.Result{}, nil
	}
	// Optimistic: the validation agent writes conditions of this status too, and a merge patch
	// replaces the whole conditions list, so a patch made from a stale cache must fail (and be
	// retried) rather than drop the agent's condition.
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Status().Patch(ctx, &cfg, patch))
}

// enabledNodes is status.nodes: the configured nodes that are not disabled.
func enabledNodes(nodes []kupenstackv1.ConfiguredNode) int32 {
	var n int32
	for _, c := range nodes {
		if !c.Disabled {
			n++
		}
	}
	return n
}

// syncNodes makes the OpenstackNode objects match nodes: create, update the spec, delete the rest.
func (r *ConfigurationReconciler) syncNodes(ctx context.Context, cfg *kupenstackv1.KupenstackConfiguration, nodes []kupenstackv1.ConfiguredNode) error {
	var existing kupenstackv1.OpenstackNodeList
	if err := r.Client.List(ctx, &existing); err != nil {
		return err
	}
	want := map[string]kupenstackv1.OpenstackNodeSpec{}
	for _, n := range nodes {
		want[n.Name] = nodeSpec(cfg, n)
	}
	for i := range existing.Items {
		on := &existing.Items[i]
		spec, ok := want[on.Name]
		if !ok {
			if on.DeletionTimestamp.IsZero() {
				if err := r.Client.Delete(ctx, on); client.IgnoreNotFound(err) != nil {
					return err
				}
				if cfg != nil {
					r.Recorder.Eventf(cfg, on, corev1.EventTypeNormal, "NodeRemoved", "Delete", "node %s left the cloud", on.Name)
				}
			}
			continue
		}
		delete(want, on.Name)
		if equality.Semantic.DeepEqual(on.Spec, spec) {
			continue
		}
		orig := on.DeepCopy()
		on.Spec = spec
		if err := r.Client.Patch(ctx, on, client.MergeFrom(orig)); err != nil {
			return err
		}
	}
	for _, name := range sortedNames(want) {
		on := &kupenstackv1.OpenstackNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: want[name]}
		if err := controllerutil.SetControllerReference(cfg, on, r.Client.Scheme()); err != nil {
			return err
		}
		if err := r.Client.Create(ctx, on); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		r.Recorder.Eventf(cfg, on, corev1.EventTypeNormal, "NodeAdded", "Create", "node %s joined the cloud", name)
	}
	return nil
}

func nodeSpec(cfg *kupenstackv1.KupenstackConfiguration, n kupenstackv1.ConfiguredNode) kupenstackv1.OpenstackNodeSpec {
	spec := kupenstackv1.OpenstackNodeSpec{Roles: n.NodeRoles(), Disabled: n.Disabled}
	if n.Profile != nil {
		p := *n.Profile
		if p.Namespace == "" {
			p.Namespace = cfg.Spec.DefaultProfile.Namespace
		}
		spec.Profile = &p
	}
	return spec
}

// render renders the cloud's values from the configuration and its profiles.
func (r *ConfigurationReconciler) render(ctx context.Context, cfg *kupenstackv1.KupenstackConfiguration) (*values.Output, error) {
	return desired.Render(ctx, r.Client, cfg)
}

func componentStatuses(out *values.Output, objects []kupenstackv1.OpenstackComponent) []kupenstackv1.ComponentStatus {
	byName := map[string]*kupenstackv1.OpenstackComponent{}
	for i := range objects {
		byName[objects[i].Name] = &objects[i]
	}
	var st []kupenstackv1.ComponentStatus
	for _, c := range out.Components {
		s := kupenstackv1.ComponentStatus{
			Name: c.Component.Name, Chart: c.Component.Chart, ChartVersion: c.ChartVersion,
			ValuesHash: c.Hash, Images: int32(len(c.ImageTags)),
		}
		if o := byName[c.Component.Name]; o != nil {
			s.Phase, s.Revision = o.Status.Phase, o.Status.Revision
			s.Ready = o.Status.Phase == kupenstackv1.ComponentPhaseReady && conditions.IsReady(o.Status.Conditions, o.Generation)
		}
		st = append(st, s)
	}
	return st
}

// syncComponents keeps one OpenstackComponent per rendered component and deletes the others
// (their finalizer uninstalls the Helm release). A component's spec.suspend is the admin's and
// is kept.
func (r *ConfigurationReconciler) syncComponents(ctx context.Context, cfg *kupenstackv1.KupenstackConfiguration, out *values.Output) error {
	want := map[string]kupenstackv1.OpenstackComponentSpec{}
	if out != nil {
		for _, c := range out.Components {
			want[c.Component.Name] = kupenstackv1.OpenstackComponentSpec{
				Chart: c.Component.Chart, ChartVersion: c.ChartVersion, Release: cfg.Spec.Release,
				Namespace: cfg.Spec.Namespace, DependsOn: c.Component.DependsOn,
				UpgradePhase: int32(c.Component.Phase), ValuesHash: c.Hash,
			}
		}
	}
	var existing kupenstackv1.OpenstackComponentList
	if err := r.Client.List(ctx, &existing); err != nil {
		return err
	}
	for i := range existing.Items {
		oc := &existing.Items[i]
		spec, ok := want[oc.Name]
		if !ok {
			if oc.DeletionTimestamp.IsZero() {
				if err := r.Client.Delete(ctx, oc); client.IgnoreNotFound(err) != nil {
					return err
				}
				if cfg != nil {
					r.Recorder.Eventf(cfg, oc, corev1.EventTypeNormal, "ComponentRemoved", "Delete", "component %s is no longer enabled: uninstalling it", oc.Name)
				}
			}
			continue
		}
		delete(want, oc.Name)
		spec.Suspend = oc.Spec.Suspend
		if equality.Semantic.DeepEqual(oc.Spec, spec) {
			continue
		}
		orig := oc.DeepCopy()
		oc.Spec = spec
		if err := r.Client.Patch(ctx, oc, client.MergeFrom(orig)); err != nil {
			return err
		}
	}
	for _, name := range sortedNames(want) {
		oc := &kupenstackv1.OpenstackComponent{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: want[name]}
		if err := controllerutil.SetControllerReference(cfg, oc, r.Client.Scheme()); err != nil {
			return err
		}
		if err := r.Client.Create(ctx, oc); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// profileUsed says whether the configuration names the profile (as default or a node's).
func profileUsed(cfg *kupenstackv1.KupenstackConfiguration, namespace, name string) bool {
	if cfg.Spec.DefaultProfile.Name == name && cfg.Spec.DefaultProfile.Namespace == namespace {
		return true
	}
	for _, n := range cfg.Spec.Nodes {
		if n.Profile == nil || n.Profile.Name != name {
			continue
		}
		ns := n.Profile.Namespace
		if ns == "" {
			ns = cfg.Spec.DefaultProfile.Namespace
		}
		if ns == namespace {
			return true
		}
	}
	return false
}

// SetupWithManager registers the controller.
func (r *ConfigurationReconciler) SetupWithManager(mgr ctrl.Manager) error {
	toConfig := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: configKey}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(ConfigurationControllerName).
		For(&kupenstackv1.KupenstackConfiguration{}).
		// Any OpenstackNode change (e.g. one deleted by hand) is checked against spec.nodes.
		Watches(&kupenstackv1.OpenstackNode{}, toConfig).
		Watches(&kupenstackv1.OpenstackComponent{}, toConfig).
		Watches(&kupenstackv1.OpenstackCloudConfigurationProfile{}, toConfig).
		Complete(r)
}

// joinSorted is the annotation form of a set of label keys.
func joinSorted(keys map[string]bool) string {
	list := make([]string, 0, len(keys))
	for k := range keys {
		list = append(list, k)
	}
	slices.Sort(list)
	return strings.Join(list, ",")
}
