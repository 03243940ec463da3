package validation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// Name names the agent in logs and as the reporter of its Events.
const Name = "validation"

// Event reasons on the KupenstackConfiguration.
const (
	EventServiceUnhealthy = "ServiceUnhealthy"
	EventServiceHealthy   = "ServiceHealthy"
)

// Defaults of the Agent's settings.
const (
	DefaultTimeout = 10 * time.Second
	// DefaultStatusRefresh bounds how stale a steady entry's lastProbeTime may get: a write every
	// ten minutes shows the agent is alive without a write per probe.
	DefaultStatusRefresh = 10 * time.Minute
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=kupenstackconfigurations,verbs=get
// +kubebuilder:rbac:groups=kupenstack.io,resources=kupenstackconfigurations/status,verbs=get;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Agent probes the cloud every Period; it is a manager Runnable, run by the leader only.
type Agent struct {
	Clients *openstack.Clients
	// Reader reads the KupenstackConfiguration directly, not through a cache: the CRD need not be
	// installed (no life-cycle), and one read per period is cheaper than a watch.
	Reader client.Reader
	// Writer patches the configuration's status.
	Writer   client.Client
	Recorder events.EventRecorder
	Period   time.Duration
	// Timeout of each probe; DefaultTimeout when zero.
	Timeout time.Duration
	// StatusRefresh: DefaultStatusRefresh when zero.
	StatusRefresh time.Duration
	Log           logr.Logger

	// last is the previous round's verdicts, to find transitions for Events.
	last map[string]Result
}

// NeedLeaderElection: only one replica writes status and Events.
func (a *Agent) NeedLeaderElection() bool { return true }

// Start probes at once, then every Period, until ctx ends.
func (a *Agent) Start(ctx context.Context) error {
	ticker := time.NewTicker(a.Period)
	defer ticker.Stop()
	for {
		a.Round(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

var configKey = types.NamespacedName{Name: kupenstackv1.KupenstackConfigurationName}

// Round probes every service once and reports the verdicts.
func (a *Agent) Round(ctx context.Context) []Result {
	cfg := a.configuration(ctx)
	var expected map[string]bool // an existing cloud: the core services
	if cfg != nil {
		expected = map[string]bool{}
		for _, c := range values.Selected(cfg.Spec.Components, cfg.Spec.OptionalComponents) {
			expected[c.Name] = true
		}
	}
	timeout := a.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	results := ProbeAll(ctx, a.Clients, timeout, expected)
	if ctx.Err() != nil {
		return results // shutting down: the verdicts say nothing about the cloud
	}
	record(results)
	if a.last == nil && cfg != nil {
		a.last = lastFromStatus(cfg.Status.Services)
	}
	a.announce(cfg, results)
	if cfg != nil {
		if err := a.writeStatus(ctx, results); err != nil {
			a.Log.Error(err, "writing the services' health to the KupenstackConfiguration")
		}
	}
	a.last = map[string]Result{}
	for _, r := range results {
		a.last[r.Service.Name] = r
	}
	return results
}

// configuration returns the KupenstackConfiguration, or nil when there is none (or no CRD).
func (a *Agent) configuration(ctx context.Context) *kupenstackv1.KupenstackConfiguration {
	var cfg kupenstackv1.KupenstackConfiguration
	err := a.Reader.Get(ctx, configKey, &cfg)
	switch {
	case err == nil && cfg.DeletionTimestamp.IsZero():
		return &cfg
	case err == nil, apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return nil
	default:
		a.Log.Error(err, "reading the KupenstackConfiguration; probing without it")
		return nil
	}
}

// lastFromStatus turns stored verdicts into the previous round, so that a restarted operator
// does not announce again what it already announced.
func lastFromStatus(services []kupenstackv1.ServiceHealth) map[string]Result {
	last := map[string]Result{}
	for _, s := range services {
		last[s.Name] = Result{Healthy: s.Healthy, Reason: s.Reason}
	}
	return last
}

// announce emits an Event (or, with no configuration to attach it to, a log line) for each
// service whose verdict changed since the previous round.
func (a *Agent) announce(cfg *kupenstackv1.KupenstackConfiguration, results []Result) {
	for _, r := range results {
		prev, known := a.last[r.Service.Name]
		wasUnhealthy := known && !prev.Healthy && prev.Reason != ReasonNotDeployed
		eventType, reason, note := "", "", ""
		switch {
		case r.Healthy && wasUnhealthy:
			eventType, reason, note = corev1.EventTypeNormal, EventServiceHealthy, r.Message
		case !r.Healthy && r.Counted() && (!wasUnhealthy || prev.Reason != r.Reason):
			eventType, reason, note = corev1.EventTypeWarning, EventServiceUnhealthy, r.Reason+": "+r.Message
		default:
			continue
		}
		a.Log.Info("service health changed", "service", r.Service.Name, "healthy", r.Healthy, "reason", r.Reason, "message", r.Message)
		if cfg != nil && a.Recorder != nil {
			a.Recorder.Eventf(cfg, nil, eventType, reason, "Probe", "%s", note)
		}
	}
}

// writeStatus patches status.services and the ServicesHealthy condition when they differ from
// the stored ones. The patch carries the resourceVersion read, so it never overwrites what the
// configuration controller wrote in between; a conflict re-reads and tries again.
func (a *Agent) writeStatus(ctx context.Context, results []Result) error {
	refresh := a.StatusRefresh
	if refresh == 0 {
		refresh = DefaultStatusRefresh
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cfg kupenstackv1.KupenstackConfiguration
		if err := a.Reader.Get(ctx, configKey, &cfg); err != nil {
			return client.IgnoreNotFound(err)
		}
		before := cfg.DeepCopy()
		cfg.Status.Services = ServicesStatus(cfg.Status.Services, results, refresh)
		meta.SetStatusCondition(&cfg.Status.Conditions, ServicesCondition(results, cfg.Generation))
		if equality.Semantic.DeepEqual(before.Status, cfg.Status) {
			return nil
		}
		return a.Writer.Status().Patch(ctx, &cfg, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
}

// ServicesStatus is the new status.services: an entry whose verdict (healthy, reason, message)
// is unchanged is kept as it is until its lastProbeTime is older than refresh.
func ServicesStatus(old []kupenstackv1.ServiceHealth, results []Result, refresh time.Duration) []kupenstackv1.ServiceHealth {
	out := make([]kupenstackv1.ServiceHealth, 0, len(results))
	for _, r := range results {
		now := metav1.NewTime(r.Time.Truncate(time.Second))
		entry := kupenstackv1.ServiceHealth{
			Name: r.Service.Name, Healthy: r.Healthy, Reason: r.Reason, Message: r.Message,
			LastProbeTime: now, LastTransitionTime: now, LatencyMilliseconds: r.Latency.Milliseconds(),
		}
		i := slices.IndexFunc(old, func(s kupenstackv1.ServiceHealth) bool { return s.Name == r.Service.Name })
		if i >= 0 {
			prev := old[i]
			sameVerdict := prev.Healthy == r.Healthy && prev.Reason == r.Reason
			if sameVerdict && prev.Message == r.Message && r.Time.Sub(prev.LastProbeTime.Time) < refresh {
				entry = prev
			} else if sameVerdict {
				entry.LastTransitionTime = prev.LastTransitionTime
			}
		}
		out = append(out, entry)
	}
	return out
}

// ServicesCondition is True when every expected or deployed service is healthy; otherwise its
// message names each unhealthy one, and its reason is theirs when they share it.
func ServicesCondition(results []Result, generation int64) metav1.Condition {
	var healthy, unhealthy []string
	reason := ""
	for _, r := range results {
		switch {
		case !r.Counted():
		case r.Healthy:
			healthy = append(healthy, r.Service.Name)
		default:
			unhealthy = append(unhealthy, fmt.Sprintf("%s: %s", r.Reason, r.Message))
			if reason == "" || reason == r.Reason {
				reason = r.Reason
			} else {
				reason = "ServicesUnhealthy"
			}
		}
	}
	c := metav1.Condition{Type: kupenstackv1.ConditionServicesHealthy, ObservedGeneration: generation}
	if len(unhealthy) == 0 {
		c.Status, c.Reason = metav1.ConditionTrue, ReasonHealthy
		c.Message = strings.Join(healthy, ", ") + " healthy"
		return c
	}
	c.Status, c.Reason = metav1.ConditionFalse, reason
	c.Message = strings.Join(unhealthy, "; ")
	return c
}
