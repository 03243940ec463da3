package component

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	readyGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kupenstack_lcm_component_ready",
		Help: "1 when the component's Helm release is deployed and all its workloads are ready, else 0.",
	}, []string{"component"})
	helmActions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kupenstack_lcm_helm_actions_total",
		Help: "Helm actions run on the components' releases, by action (install, upgrade, rollback, uninstall, repair) and result (success, error).",
	}, []string{"component", "action", "result"})
)

func init() {
	metrics.Registry.MustRegister(readyGauge, helmActions)
}

func countAction(component, action string, err error) {
	result := "success"
	if err != nil {
		result = "error"
	}
	helmActions.WithLabelValues(component, action, result).Inc()
}
