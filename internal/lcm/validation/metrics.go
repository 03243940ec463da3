package validation

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of every probe; they are kept with or without a KupenstackConfiguration.
var (
	serviceHealthy = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kupenstack_service_healthy",
		Help: "1 when the OpenStack service answered its last probe, 0 when not; absent when it is not deployed.",
	}, []string{"service"})
	probeDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kupenstack_service_probe_duration_seconds",
		Help:    "Duration of the validation agent's probes, failed ones included, by service.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"service"})
	probeFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kupenstack_service_probe_failures_total",
		Help: "Failed probes of OpenStack services, by service and reason (Unavailable, Timeout, Unauthorized, ...).",
	}, []string{"service", "reason"})
)

func init() { metrics.Registry.MustRegister(serviceHealthy, probeDuration, probeFailures) }

func record(results []Result) {
	for _, r := range results {
		name := r.Service.Name
		if !r.Counted() {
			serviceHealthy.DeleteLabelValues(name)
			continue
		}
		probeDuration.WithLabelValues(name).Observe(r.Latency.Seconds())
		if r.Healthy {
			serviceHealthy.WithLabelValues(name).Set(1)
			continue
		}
		serviceHealthy.WithLabelValues(name).Set(0)
		probeFailures.WithLabelValues(name, r.Reason).Inc()
	}
}
