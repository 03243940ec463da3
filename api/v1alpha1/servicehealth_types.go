package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ConditionServicesHealthy is the KupenstackConfiguration condition the validation agent writes:
// True when every expected or deployed OpenStack service answered its last probe.
const ConditionServicesHealthy = "ServicesHealthy"

// ReasonNotProbed is ServicesHealthy's reason (status Unknown) from the moment the operator sees a
// configuration until the validation agent's first report, so that kubectl's SERVICES column
// reads Unknown rather than a blank.
const ReasonNotProbed = "NotProbed"

// ServiceHealth is the validation agent's last verdict on one OpenStack service. It is rewritten
// when the verdict changes, and otherwise only now and then to refresh lastProbeTime, so that a
// steady cloud causes no status writes per probe; the metrics have every probe.
type ServiceHealth struct {
	// Name of the service's component: keystone, nova, neutron, glance, placement or cinder.
	Name string `json:"name"`
	// Healthy is true when the service answered its probe (a token issue or a one-item list).
	Healthy bool `json:"healthy"`
	// Reason is Healthy, NotDeployed (not in the catalog and not expected: not counted as
	// unhealthy), NotInCatalog, Unauthorized, Unavailable, Timeout, AuthenticationFailed or Error.
	Reason string `json:"reason"`
	// Message names the service, its endpoint host and what went wrong.
	// +optional
	Message string `json:"message,omitempty"`
	// LastProbeTime is when the probe that wrote this entry ran.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
	// LastTransitionTime is when healthy or reason last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// LatencyMilliseconds is how long the probe that wrote this entry took.
	// +optional
	LatencyMilliseconds int64 `json:"latencyMilliseconds,omitempty"`
}
