// Package component runs one reconcile loop per OpenStack component: it renders the component's
// values, installs or upgrades its Helm release once its dependencies are ready, judges readiness
// from the release's own workloads, repairs deleted objects, rolls a failed upgrade back to the
// last good revision, and uninstalls the release when the component goes away.
package component

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/lcm/drift"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
)

// Finalizer keeps an OpenstackComponent until its Helm release is uninstalled.
const Finalizer = "kupenstack.io/helm-release"

// Labels KupenStack puts on the Helm releases it makes (stored with each revision).
const (
	// labelHash identifies what a revision was made from: an upgrade is needed exactly when it
	// differs from what is wanted now.
	labelHash = "kupenstack.io/hash"
	// labelRelease is the OpenStack release a revision deploys.
	labelRelease = "kupenstack.io/openstack-release"
)

// Requeue periods: workloads are not watched (that would cache every Deployment, DaemonSet and
// Job of the cluster), so a release is looked at again on a period.
const (
	deployingPeriod = 5 * time.Second
	waitingPeriod   = 15 * time.Second
)

// A drift repair is made at most maxRepairs times for the same objects within repairHoldoff
// ready periods.
const (
	maxRepairs    = 3
	repairHoldoff = 10
)

// Reconciler is the loop of one component.
type Reconciler struct {
	Client client.Client
	// APIReader reads the component and its release's objects, of any kind, without a cache.
	APIReader  client.Reader
	RESTConfig *rest.Config
	Recorder   events.EventRecorder
	Charts     *helm.ChartLoader
	// Component is the name of the component this loop owns.
	Component string
	// ReadyPeriod is how often a ready release is checked for drift.
	ReadyPeriod time.Duration
	// Publisher writes the admin clouds.yaml once keystone is ready (nil: never).
	Publisher *CloudPublisher

	mu      sync.Mutex
	clients map[string]*helm.Client
	// drift remembers which objects matched their manifest (the loop has one worker).
	drift *drift.Checker
	// lastRepair is what the last drift repair restored, how many times in a row since when: a
	// repair that does not hold is not repeated every pass.
	lastRepair    string
	repairs       int
	firstRepairAt time.Time
}

// ControllerName of a component's loop, in logs, metrics and Events.
func ControllerName(component string) string { return "lcm-" + component }

// +kubebuilder:rbac:groups=kupenstack.io,resources=openstackcomponents,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=openstackcomponents/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=openstackcomponents/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create
// The Helm releases may hold any kind the charts carry; these are OpenStack-Helm's.
// +kubebuilder:rbac:groups="",resources=configmaps;services;serviceaccounts;persistentvolumeclaims;endpoints,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;daemonsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch,resources=jobs;cronjobs,verbs=get;list;watch;create;update;patch;delete
// The charts' Roles name resources that do not exist (apps/jobs, batch/endpoints, ...), which
// Kubernetes' escalation check would still require the operator to hold: bind and escalate on
// namespaced roles instead.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;update;patch;delete;bind;escalate
// nova's ClusterRoles grant nodes get/list, which the operator holds itself (node labelling):
// no bind or escalate at cluster scope, so a chart cannot grant more cluster-wide than that.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;clusterrolebindings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses;networkpolicies,verbs=get;list;watch;create;update;patch;delete

// Reconcile brings the component's Helm release in line with the configuration.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var comp kupenstackv1.OpenstackComponent
	// Past the cache: a pass decides its Helm action from what the previous pass wrote to the
	// status (the hash that failed, when the revision started), and a cache that lags behind
	// would upgrade again what was just rolled back, or time a new revision from an old start.
	if err := r.APIReader.Get(ctx, req.NamespacedName, &comp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := comp.DeepCopy()
	hc, err := r.helmClient(comp.Spec.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !comp.DeletionTimestamp.IsZero() {
		return r.uninstall(ctx, &comp, hc)
	}
	if controllerutil.AddFinalizer(&comp, Finalizer) {
		if err := r.Client.Update(ctx, &comp); err != nil {
			return ctrl.Result{}, err
		}
		before = comp.DeepCopy()
	}
	// First sight: Ready Unknown at once (kubectl get shows Unknown, not a blank), as the pass
	// may load a chart from a repository and wait for a Helm action.
	if seen := comp.DeepCopy(); conditions.SetUnknownIfNew(&seen.Status.Conditions, comp.Generation) {
		if err := r.Client.Status().Patch(ctx, seen, client.MergeFrom(&comp)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		comp = *seen
		before = comp.DeepCopy()
	}
	p := &pass{r: r, comp: &comp, helm: hc, log: ctrl.LoggerFrom(ctx)}
	result, state := p.sync(ctx)
	conditions.Set(&comp.Status.Conditions, comp.Generation, state)
	setServiceHealth(&comp, p.services)
	p.setChartVersion()
	comp.Status.ObservedGeneration = comp.Generation
	ready := 0.0
	if state.Ready && comp.Status.Phase == kupenstackv1.ComponentPhaseReady {
		ready = 1
	}
	readyGauge.WithLabelValues(r.Component).Set(ready)
	if equality.Semantic.DeepEqual(before.Status, comp.Status) {
		return result, nil
	}
	return result, client.IgnoreNotFound(r.Client.Status().Patch(ctx, &comp, client.MergeFrom(before)))
}

func (r *Reconciler) helmClient(namespace string) (*helm.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.clients[namespace]; ok {
		return c, nil
	}
	c, err := helm.NewClient(r.RESTConfig, namespace, ctrl.Log.WithName("helm").WithValues("component", r.Component))
	if err != nil {
		return nil, err
	}
	if r.clients == nil {
		r.clients = map[string]*helm.Client{}
	}
	r.clients[namespace] = c
	return c, nil
}

// setChartVersion says whether the chart is the version the release table names: another one
// (a local directory or repository holding other charts) may work, but it is not what the
// release was made and tested for. Unknown until a chart is loaded.
func (p *pass) setChartVersion() {
	comp := p.comp
	if p.chartVersion == "" {
		return
	}
	cond := metav1.Condition{Type: kupenstackv1.ConditionChartVersionMatches, Status: metav1.ConditionTrue,
		Reason: "AsReleased", Message: fmt.Sprintf("chart %s %s, as release %s names", comp.Spec.Chart, p.chartVersion, comp.Spec.Release),
		ObservedGeneration: comp.Generation}
	if p.chartVersion != p.wantVersion {
		cond.Status, cond.Reason = metav1.ConditionFalse, kupenstackv1.ReasonChartVersionMismatch
		cond.Message = fmt.Sprintf("chart %s is version %s; release %s is made for %s", comp.Spec.Chart, p.chartVersion, comp.Spec.Release, p.wantVersion)
		if c := meta.FindStatusCondition(comp.Status.Conditions, cond.Type); c == nil || c.Message != cond.Message {
			p.event(corev1.EventTypeWarning, cond.Reason, "LoadChart", "%s", cond.Message)
		}
	}
	meta.SetStatusCondition(&comp.Status.Conditions, cond)
}

// setServiceHealth copies the validation agent's verdict on the component's service (services
// are named like their components) into the ServiceHealthy condition; no verdict, no condition.
func setServiceHealth(comp *kupenstackv1.OpenstackComponent, services []kupenstackv1.ServiceHealth) {
	for _, s := range services {
		if s.Name != comp.Name {
			continue
		}
		status, reason := metav1.ConditionFalse, s.Reason
		if s.Healthy {
			status = metav1.ConditionTrue
		}
		if reason == "" {
			reason = "Unknown"
		}
		meta.SetStatusCondition(&comp.Status.Conditions, metav1.Condition{Type: kupenstackv1.ConditionServiceHealthy,
			Status: status, Reason: reason, Message: s.Message, ObservedGeneration: comp.Generation})
		return
	}
	meta.RemoveStatusCondition(&comp.Status.Conditions, kupenstackv1.ConditionServiceHealthy)
}

func transient(err error) conditions.State {
	return conditions.State{Reason: kupenstackv1.ReasonTransientError, Message: oneLine(err)}
}

// invalid: the configuration must change; retrying the same one would fail the same way.
func invalid(err error) conditions.State {
	return conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: err.Error()}
}

// oneLine flattens Helm's multi-line errors ("1 error occurred:\n\t* ...") for conditions.
func oneLine(err error) string { return flatten(err.Error()) }

func flatten(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	return strings.TrimPrefix(msg, "1 error occurred: * ")
}

func chartSource(c kupenstackv1.ChartSource) helm.Source {
	return helm.Source{LocalPath: c.LocalPath, Repository: c.Repository, OCI: c.OCI}
}

// SetupWithManager registers this component's loop: its own workqueue, so that a long Helm
// action on one component never delays another.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	mine := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == r.Component })
	self := []reconcile.Request{{NamespacedName: types.NamespacedName{Name: r.Component}}}
	toSelf := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request { return self })
	// Another component matters when this one depends on it or follows it in a release upgrade.
	fromOthers := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		var me kupenstackv1.OpenstackComponent
		if o.GetName() == r.Component || r.Client.Get(ctx, types.NamespacedName{Name: r.Component}, &me) != nil {
			return nil
		}
		other, _ := o.(*kupenstackv1.OpenstackComponent)
		if slices.Contains(me.Spec.DependsOn, o.GetName()) || (other != nil && other.Spec.UpgradePhase < me.Spec.UpgradePhase) {
			return self
		}
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName(r.Component)).
		For(&kupenstackv1.OpenstackComponent{}, builder.WithPredicates(mine)).
		Watches(&kupenstackv1.OpenstackComponent{}, fromOthers, builder.WithPredicates(predicate.ResourceVersionChangedPredicate{})).
		Watches(&kupenstackv1.KupenstackConfiguration{}, toSelf, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&kupenstackv1.OpenstackCloudConfigurationProfile{}, toSelf, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(r)
}
