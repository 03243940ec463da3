// Package component runs one reconcile loop per OpenStack component: it renders the component's
// values, installs or upgrades its Helm release once its dependencies are ready, judges readiness
// from the release's own workloads, repairs deleted objects, rolls a failed upgrade back to the
// last good revision, and uninstalls the release when the component goes away.
package component

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"github.com/kupenstack/kupenstack/internal/lcm/credentials"
	"github.com/kupenstack/kupenstack/internal/lcm/desired"
	"github.com/kupenstack/kupenstack/internal/lcm/drift"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
	"github.com/kupenstack/kupenstack/internal/lcm/workloads"
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

// pass is one reconciliation of one component.
type pass struct {
	// services is the validation agent's report, from the configuration's status.
	services []kupenstackv1.ServiceHealth
	r        *Reconciler
	comp     *kupenstackv1.OpenstackComponent
	helm     *helm.Client
	log      logr.Logger
	// history of the release before this pass's action, oldest first.
	history []*release.Release
	// deadline is the configuration's progress deadline (0: none).
	deadline time.Duration
	// chartVersion is the version of the chart loaded, wantVersion the release table's.
	chartVersion, wantVersion string
}

func (p *pass) event(kind, reason, action, format string, args ...any) {
	p.r.Recorder.Eventf(p.comp, nil, kind, reason, action, format, args...)
}

// setPhase records the phase and, before a long Helm action, shows it at once.
func (p *pass) setPhase(ctx context.Context, phase string, persist bool) {
	if p.comp.Status.Phase == phase {
		return
	}
	before := p.comp.DeepCopy()
	p.comp.Status.Phase = phase
	if persist {
		if err := p.r.Client.Status().Patch(ctx, p.comp, client.MergeFrom(before)); err != nil {
			p.log.V(1).Info("showing the phase", "phase", phase, "error", err.Error())
		}
	}
}

func (p *pass) sync(ctx context.Context) (ctrl.Result, conditions.State) {
	comp := p.comp
	comp.Status.HelmRelease = comp.Spec.Namespace + "/" + comp.Name
	if comp.Spec.Suspend {
		return ctrl.Result{}, conditions.State{Ready: conditions.IsReady(comp.Status.Conditions, comp.Generation), Waiting: "suspended: no Helm action until spec.suspend is false"}
	}
	var cfg kupenstackv1.KupenstackConfiguration
	if err := p.r.Client.Get(ctx, types.NamespacedName{Name: kupenstackv1.KupenstackConfigurationName}, &cfg); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, conditions.State{Waiting: "no KupenstackConfiguration"}
		}
		return ctrl.Result{}, transient(err)
	}
	p.services = cfg.Status.Services
	if cfg.Spec.ProgressDeadline != nil {
		p.deadline = cfg.Spec.ProgressDeadline.Duration
	}
	out, err := desired.Render(ctx, p.r.Client, &cfg)
	if err != nil {
		return ctrl.Result{}, conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: err.Error()}
	}
	var cv *values.ComponentValues
	for i := range out.Components {
		if out.Components[i].Component.Name == comp.Name {
			cv = &out.Components[i]
		}
	}
	if cv == nil {
		return ctrl.Result{}, conditions.State{Waiting: "the configuration does not enable this component"}
	}
	// Act only on a consistent picture: the release gating reads the other components' specs,
	// which the configuration controller writes, so this component's spec must already say what
	// the configuration says (a loop woken by the configuration itself can run first).
	if comp.Spec.Release != cfg.Spec.Release || comp.Spec.ValuesHash != cv.Hash {
		return ctrl.Result{RequeueAfter: time.Second}, conditions.State{Waiting: "waiting for the configuration controller to update this component"}
	}
	src := chartSource(cfg.Spec.Charts)
	ch, err := p.r.Charts.Load(src, cv.Component.Chart, cv.ChartVersion)
	if err != nil {
		reason := kupenstackv1.ReasonTransientError
		if src.LocalPath != "" {
			reason = kupenstackv1.ReasonInvalidConfiguration // a missing directory does not fix itself
		}
		return ctrl.Result{RequeueAfter: time.Minute}, conditions.State{Reason: reason, Message: err.Error()}
	}
	p.chartVersion, p.wantVersion = ch.Metadata.Version, cv.ChartVersion
	// Per-node overrides under a key the chart does not have would be silently ignored.
	if err := cv.Component.CheckNodeDaemonSets(helm.NodeDaemonSets(ch)); err != nil {
		return ctrl.Result{}, conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: err.Error()}
	}
	// Exactly the secrets this chart declares, generated once for the whole cloud.
	pw, err := credentials.Ensure(ctx, p.r.Client, comp.Spec.Namespace, desired.SecretKeys(cv, ch.Values))
	if err != nil {
		return ctrl.Result{}, transient(err)
	}
	vals, err := desired.ChartValues(cv, ch.Values, pw)
	if err != nil {
		return ctrl.Result{}, conditions.State{Reason: kupenstackv1.ReasonInvalidConfiguration, Message: err.Error()}
	}
	// The OpenStack release is part of what a revision is made from even when the component's
	// values do not change with it (infrastructure images), so that a release upgrade moves
	// every component, phase after phase.
	hash := values.Hash(map[string]any{"values": vals, "chart": helm.Digest(ch), "release": comp.Spec.Release})
	labels := map[string]string{labelHash: hash, labelRelease: comp.Spec.Release}

	history, err := p.helm.History(comp.Name)
	if err != nil {
		return ctrl.Result{}, transient(err)
	}
	p.history = history
	var last *release.Release
	if len(history) > 0 {
		last = history[len(history)-1]
	}
	if unlocked, err := p.helm.UnlockPending(last); err != nil {
		return ctrl.Result{}, transient(err)
	} else if unlocked {
		p.event(corev1.EventTypeWarning, "ReleaseUnlocked", "Recover", "revision %d was left %s by an interrupted action; marked failed to carry on", last.Version, "pending")
	}
	deployed := helm.LastDeployed(history)
	retry := comp.Annotations[kupenstackv1.AnnotationRetry] != "" && comp.Annotations[kupenstackv1.AnnotationRetry] != comp.Status.RetriedWith
	blocked := hash == comp.Status.FailedHash && !retry

	switch {
	case deployed == nil:
		if blocked {
			return ctrl.Result{}, conditions.State{Reason: kupenstackv1.ReasonInstallFailed, Message: comp.Status.LastError + " (set the " + kupenstackv1.AnnotationRetry + " annotation to retry)"}
		}
		if why := p.dependenciesPending(ctx, false); why != "" {
			p.setPhase(ctx, kupenstackv1.ComponentPhaseWaiting, false)
			return ctrl.Result{RequeueAfter: waitingPeriod}, conditions.State{Waiting: why}
		}
		if last != nil { // an install that failed: start again from nothing
			if err := p.helm.Uninstall(comp.Name); err != nil {
				countAction(p.r.Component, "uninstall", err)
				return ctrl.Result{}, transient(err)
			}
		}
		p.setPhase(ctx, kupenstackv1.ComponentPhaseInstalling, true)
		rel, err := p.helm.Install(ctx, comp.Name, ch, vals, labels, "kupenstack: install")
		countAction(p.r.Component, "install", err)
		p.acted(retry)
		if err != nil {
			comp.Status.FailedHash, comp.Status.LastError = hash, oneLine(err)
			comp.Status.Phase = kupenstackv1.ComponentPhaseFailed
			p.event(corev1.EventTypeWarning, kupenstackv1.ReasonInstallFailed, "Install", "installing chart %s: %s", cv.Component.Chart, oneLine(err))
			return ctrl.Result{}, conditions.State{Reason: kupenstackv1.ReasonInstallFailed, Message: oneLine(err)}
		}
		p.event(corev1.EventTypeNormal, "Installed", "Install", "chart %s %s installed as revision %d", ch.Name(), ch.Metadata.Version, rel.Version)
		p.recordRevision(rel, cv)
		return p.judge(ctx, rel, cv, ch, vals, labels)
	case last.Labels[labelHash] != hash || last.Info.Status != release.StatusDeployed:
		if blocked {
			return ctrl.Result{}, conditions.State{Reason: kupenstackv1.ReasonUpgradeFailed, Message: comp.Status.LastError + " (change the configuration or set the " + kupenstackv1.AnnotationRetry + " annotation to retry)"}
		}
		releaseUpgrade := deployed.Labels[labelRelease] != comp.Spec.Release
		if why := p.dependenciesPending(ctx, releaseUpgrade); why != "" {
			p.setPhase(ctx, kupenstackv1.ComponentPhaseWaiting, false)
			return ctrl.Result{RequeueAfter: waitingPeriod}, conditions.State{Waiting: why}
		}
		p.setPhase(ctx, kupenstackv1.ComponentPhaseUpgrading, true)
		rel, err := p.helm.Upgrade(ctx, comp.Name, ch, vals, labels, "kupenstack: upgrade")
		countAction(p.r.Component, "upgrade", err)
		p.acted(retry)
		if err != nil {
			return p.rollback(err, hash, deployed)
		}
		p.event(corev1.EventTypeNormal, "Upgraded", "Upgrade", "upgraded to revision %d (chart %s %s, release %s)", rel.Version, ch.Name(), ch.Metadata.Version, comp.Spec.Release)
		p.recordRevision(rel, cv)
		return p.judge(ctx, rel, cv, ch, vals, labels)
	default:
		p.recordRevision(last, cv)
		return p.judge(ctx, last, cv, ch, vals, labels)
	}
}

// acted records that a retry asked for with the annotation was made.
func (p *pass) acted(retry bool) {
	now := metav1.Now()
	p.comp.Status.LastActionTime = &now
	if retry {
		p.comp.Status.RetriedWith = p.comp.Annotations[kupenstackv1.AnnotationRetry]
	}
}

// rollback returns a failed upgrade to the last good revision and stops there: the same values
// are not tried again until they change or a retry is asked for.
func (p *pass) rollback(cause error, hash string, deployed *release.Release) (ctrl.Result, conditions.State) {
	comp := p.comp
	target := int(comp.Status.LastGoodRevision)
	if target == 0 {
		target = deployed.Version
	}
	comp.Status.FailedHash, comp.Status.LastError = hash, oneLine(cause)
	msg := "upgrade failed: " + oneLine(cause)
	if err := p.helm.Rollback(comp.Name, target); err != nil {
		countAction(p.r.Component, "rollback", err)
		comp.Status.Phase = kupenstackv1.ComponentPhaseFailed
		msg = fmt.Sprintf("%s; rolling back to revision %d failed too: %s", msg, target, oneLine(err))
		p.event(corev1.EventTypeWarning, kupenstackv1.ReasonUpgradeFailed, "Rollback", "%s", msg)
		return ctrl.Result{RequeueAfter: time.Minute}, conditions.State{Reason: kupenstackv1.ReasonUpgradeFailed, Message: msg}
	}
	countAction(p.r.Component, "rollback", nil)
	now := metav1.Now()
	comp.Status.LastActionTime = &now // the rolled-back revision gets its own deadline
	comp.Status.Phase = kupenstackv1.ComponentPhaseRolledBack
	msg = fmt.Sprintf("%s; rolled back to revision %d", msg, target)
	comp.Status.LastError = msg
	if last, err := p.helm.Last(comp.Name); err == nil && last != nil {
		comp.Status.Revision = int32(last.Version)
	}
	p.event(corev1.EventTypeWarning, kupenstackv1.ReasonUpgradeFailed, "Rollback", "%s", msg)
	return ctrl.Result{}, conditions.State{Reason: kupenstackv1.ReasonUpgradeFailed, Message: msg}
}

// deadlineExceeded handles a revision whose workloads did not become ready within the progress
// deadline: one that changed what the last good revision was made of is rolled back to it like a
// failed upgrade; otherwise (a first install, a repair) there is nothing better to go back to,
// so it is reported and still waited for.
func (p *pass) deadlineExceeded(rel *release.Release, waiting string) (ctrl.Result, conditions.State) {
	msg := fmt.Sprintf("revision %d not ready within the progress deadline of %s: %s", rel.Version, p.deadline, waiting)
	for _, good := range p.history {
		if int32(good.Version) == p.comp.Status.LastGoodRevision && good.Version != rel.Version && good.Labels[labelHash] != rel.Labels[labelHash] {
			return p.rollback(errors.New(msg), rel.Labels[labelHash], good)
		}
	}
	return ctrl.Result{RequeueAfter: deployingPeriod}, conditions.State{Reason: kupenstackv1.ReasonProgressDeadlineExceeded, Message: msg}
}

func (p *pass) recordRevision(rel *release.Release, cv *values.ComponentValues) {
	st := &p.comp.Status
	st.Revision = int32(rel.Version)
	st.AppliedHash = rel.Labels[labelHash]
	st.Release = rel.Labels[labelRelease]
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		st.ChartVersion = rel.Chart.Metadata.Version
	}
	// Every caller passes a revision made from cv: just installed or upgraded, or unchanged.
	st.Images = cv.ImageTags
}

// judge looks at the release's objects: missing ones are restored (drift), then the workloads
// decide between Deploying, Failed and Ready.
func (p *pass) judge(ctx context.Context, rel *release.Release, cv *values.ComponentValues, ch *chart.Chart, vals map[string]any, labels map[string]string) (ctrl.Result, conditions.State) {
	comp := p.comp
	objs, err := helm.Objects(rel.Manifest, comp.Spec.Namespace)
	if err != nil {
		return ctrl.Result{}, transient(err)
	}
	sum, err := workloads.Check(ctx, p.r.APIReader, objs)
	if err != nil {
		return ctrl.Result{}, transient(err)
	}
	comp.Status.Workloads = fmt.Sprintf("%d/%d", sum.Ready, sum.Total)
	if sum.AllReady() {
		// Everything else is fine: look for fields changed by hand in any object (cheap for
		// objects unchanged since they last matched).
		if p.r.drift == nil {
			p.r.drift = &drift.Checker{Client: p.r.Client, Reader: p.r.APIReader}
		}
		changed, err := p.r.drift.Check(ctx, rel.Version, objs, sum.Versions)
		if err != nil {
			return ctrl.Result{}, transient(err)
		}
		sum.Modified = changed
	}
	if len(sum.Missing) > 0 || len(sum.Modified) > 0 {
		names := make([]string, 0, len(sum.Missing)+len(sum.Modified))
		for _, m := range sum.Missing {
			names = append(names, m.String())
		}
		names = append(names, sum.Modified...)
		what := strings.Join(names, ", ")
		holdoff := repairHoldoff * p.r.ReadyPeriod
		if what != p.r.lastRepair || time.Since(p.r.firstRepairAt) > holdoff {
			p.r.lastRepair, p.r.repairs, p.r.firstRepairAt = what, 0, time.Now()
		}
		if p.r.repairs >= maxRepairs {
			// The repairs do not hold (something else keeps changing these objects): another
			// upgrade now would only add a revision per pass; try again after the hold-off.
			comp.Status.Phase = kupenstackv1.ComponentPhaseFailed
			comp.Status.LastError = "changed again right after being restored: " + what
			return ctrl.Result{RequeueAfter: p.r.ReadyPeriod}, conditions.State{Reason: kupenstackv1.ReasonDriftNotRepaired, Message: comp.Status.LastError}
		}
		// An upgrade to the same chart and values repairs both: Helm creates the objects of the
		// manifest that do not exist, and its three-way merge sets back what differs from it.
		repaired, err := p.helm.Upgrade(ctx, comp.Name, ch, vals, labels, "kupenstack: restore "+strings.Join(names, ", "))
		countAction(p.r.Component, "repair", err)
		if err != nil {
			p.event(corev1.EventTypeWarning, "DriftRepairFailed", "Repair", "restoring %s: %v", what, err)
			return ctrl.Result{RequeueAfter: waitingPeriod}, transient(err)
		}
		p.event(corev1.EventTypeNormal, "DriftRepaired", "Repair", "restored %s (revision %d)", what, repaired.Version)
		comp.Status.Revision = int32(repaired.Version)
		p.r.repairs++
		return ctrl.Result{RequeueAfter: deployingPeriod}, conditions.State{Waiting: "restored " + what}
	}
	if len(sum.Failed) > 0 {
		comp.Status.Phase = kupenstackv1.ComponentPhaseFailed
		comp.Status.LastError = strings.Join(sum.Failed, "; ")
		return ctrl.Result{RequeueAfter: waitingPeriod}, conditions.State{Reason: kupenstackv1.ReasonWorkloadFailed, Message: comp.Status.LastError}
	}
	if len(sum.NotReady) > 0 {
		comp.Status.Phase = kupenstackv1.ComponentPhaseDeploying
		waiting := "waiting for " + strings.Join(first(sum.NotReady, 3), "; ")
		// The deadline is for a revision's first rollout; a revision that was ready once and
		// lost a pod since is just waited for.
		started := comp.Status.LastActionTime
		if p.deadline > 0 && started != nil && time.Since(started.Time) > p.deadline && int32(rel.Version) != comp.Status.LastGoodRevision {
			return p.deadlineExceeded(rel, waiting)
		}
		return ctrl.Result{RequeueAfter: deployingPeriod}, conditions.State{Waiting: waiting}
	}
	if comp.Status.Phase != kupenstackv1.ComponentPhaseReady {
		p.event(corev1.EventTypeNormal, "Ready", "Deploy", "revision %d ready: %s workloads", rel.Version, comp.Status.Workloads)
	}
	comp.Status.Phase = kupenstackv1.ComponentPhaseReady
	comp.Status.LastGoodRevision = int32(rel.Version)
	comp.Status.LastError = ""
	if p.r.Publisher != nil && comp.Name == "keystone" {
		if err := p.r.Publisher.Publish(ctx, comp.Spec.Namespace); err != nil {
			return ctrl.Result{RequeueAfter: waitingPeriod}, transient(fmt.Errorf("publishing the admin clouds.yaml: %w", err))
		}
	}
	return ctrl.Result{RequeueAfter: p.r.ReadyPeriod}, conditions.State{Ready: true}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("%d more", len(s)-n))
	}
	return s
}

// dependenciesPending says what the component waits for before a Helm action, or "". For a
// release upgrade, every component of an earlier upgrade phase must also run the new release
// and be ready.
func (p *pass) dependenciesPending(ctx context.Context, releaseUpgrade bool) string {
	var all kupenstackv1.OpenstackComponentList
	if err := p.r.Client.List(ctx, &all); err != nil {
		return "listing components: " + err.Error()
	}
	byName := map[string]*kupenstackv1.OpenstackComponent{}
	for i := range all.Items {
		byName[all.Items[i].Name] = &all.Items[i]
	}
	var waiting []string
	for _, d := range p.comp.Spec.DependsOn {
		dep, ok := byName[d]
		if !ok || !isReady(dep) {
			waiting = append(waiting, d)
		}
	}
	if len(waiting) > 0 {
		return "waiting for dependencies: " + strings.Join(waiting, ", ")
	}
	if !releaseUpgrade {
		return ""
	}
	for _, c := range all.Items {
		if c.Spec.UpgradePhase < p.comp.Spec.UpgradePhase && (c.Status.Release != p.comp.Spec.Release || !isReady(&c)) {
			waiting = append(waiting, c.Name)
		}
	}
	slices.Sort(waiting)
	if len(waiting) > 0 {
		return fmt.Sprintf("release upgrade to %s: waiting for the earlier phases: %s", p.comp.Spec.Release, strings.Join(waiting, ", "))
	}
	return ""
}

func isReady(c *kupenstackv1.OpenstackComponent) bool {
	return c.Status.Phase == kupenstackv1.ComponentPhaseReady && conditions.IsReady(c.Status.Conditions, c.Generation)
}

func transient(err error) conditions.State {
	return conditions.State{Reason: kupenstackv1.ReasonTransientError, Message: oneLine(err)}
}

// oneLine flattens Helm's multi-line errors ("1 error occurred:\n\t* ...") for conditions.
func oneLine(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
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
