package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Phases of an OpenstackComponent, as status.phase.
const (
	ComponentPhasePending      = "Pending" // the operator has not looked at it yet
	ComponentPhaseWaiting      = "WaitingForDependencies"
	ComponentPhaseInstalling   = "Installing"
	ComponentPhaseUpgrading    = "Upgrading"
	ComponentPhaseDeploying    = "Deploying" // the release is applied; its workloads are not ready yet
	ComponentPhaseReady        = "Ready"
	ComponentPhaseFailed       = "Failed"
	ComponentPhaseRolledBack   = "RolledBack"
	ComponentPhaseUninstalling = "Uninstalling"
)

// Reasons of an OpenstackComponent's conditions.
const (
	// ReasonInstallFailed: Helm could not install the release.
	ReasonInstallFailed = "InstallFailed"
	// ReasonUpgradeFailed: the upgrade failed and the release was rolled back to its last good
	// revision; it is retried when the values change or kupenstack.io/retry is set.
	ReasonUpgradeFailed = "UpgradeFailed"
	// ReasonWorkloadFailed: a Job of the release failed.
	ReasonWorkloadFailed = "WorkloadFailed"
	// ReasonDriftNotRepaired: objects restored from the release were changed again at once
	// (something else manages them); KupenStack stops restoring them until they match.
	ReasonDriftNotRepaired = "DriftNotRepaired"
	// ReasonProgressDeadlineExceeded: a newly installed release's workloads did not become
	// ready within the progress deadline (an upgrade that does not is rolled back instead:
	// UpgradeFailed).
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
)

// ConditionServiceHealthy on an OpenstackComponent repeats the validation agent's verdict on the
// component's OpenStack service (status.services of the KupenstackConfiguration).
const ConditionServiceHealthy = "ServiceHealthy"

// ConditionChartVersionMatches on an OpenstackComponent: the chart loaded is the version the
// release table names for the release (False, reason ChartVersionMismatch, is a warning: the
// release is still deployed from the chart found).
const (
	ConditionChartVersionMatches = "ChartVersionMatches"
	ReasonChartVersionMismatch   = "ChartVersionMismatch"
)

// AnnotationRetry on an OpenstackComponent retries a failed install or upgrade with the same
// values: set it to any new value.
const AnnotationRetry = "kupenstack.io/retry"

// OpenstackComponentSpec is what the configuration wants of one component; the operator writes
// it from the KupenstackConfiguration. Users only set suspend: the rest is rewritten by the
// operator at its next reconcile.
type OpenstackComponentSpec struct {
	// Chart is the OpenStack-Helm chart of the component: mariadb, rabbitmq, memcached, keystone,
	// glance, cinder, placement, nova, neutron, openvswitch, libvirt or horizon.
	// +kubebuilder:validation:Enum=mariadb;rabbitmq;memcached;keystone;glance;cinder;placement;nova;neutron;openvswitch;libvirt;horizon
	Chart string `json:"chart"`
	// ChartVersion wanted, a semantic version such as 2026.1.0 (for a local chart directory, the
	// directory's chart is used as is).
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$`
	// +optional
	ChartVersion string `json:"chartVersion,omitempty"`
	// Release is the OpenStack release the values are rendered for, e.g. 2026.1.
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]{4}\\\\.[12]$')",message="release must look like 2026.1"
	Release string `json:"release"`
	// Namespace of the Helm release (the configuration's spec.namespace).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="namespace must be a namespace name (lower-case letters, digits and '-')"
	Namespace string `json:"namespace"`
	// DependsOn are the components that must be ready before this one is installed: mariadb,
	// rabbitmq, memcached, keystone, glance, cinder, placement, nova, neutron, openvswitch,
	// libvirt or horizon.
	// +kubebuilder:validation:MaxItems=12
	// +kubebuilder:validation:items:Enum=mariadb;rabbitmq;memcached;keystone;glance;cinder;placement;nova;neutron;openvswitch;libvirt;horizon
	// +listType=set
	// +optional
	DependsOn []string `json:"dependsOn,omitempty"`
	// UpgradePhase orders a release upgrade: a phase starts when every earlier one is done
	// (1 infrastructure, 2 identity, 3 image and placement, 4 compute and network, 5 dashboard).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	UpgradePhase int32 `json:"upgradePhase"`
	// ValuesHash identifies the rendered values (credentials excluded): lower-case hexadecimal.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[0-9a-f]+$`
	ValuesHash string `json:"valuesHash"`
	// Suspend stops every Helm action on the component (maintenance); the status is still kept.
	// The one field of the spec the admin sets; default false.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// OpenstackComponentStatus is where the component's Helm release stands.
type OpenstackComponentStatus struct {
	// +optional
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase is a one-word summary (default Pending: the operator has not looked at the component
	// yet; then WaitingForDependencies, Installing, Upgrading, Deploying, Ready, Failed,
	// RolledBack, Uninstalling).
	// +kubebuilder:default=Pending
	// +optional
	Phase string `json:"phase,omitempty"`
	// HelmRelease is the namespace/name of the Helm release.
	// +optional
	HelmRelease string `json:"helmRelease,omitempty"`
	// Revision is the release's current revision (default 0: none installed yet).
	// +kubebuilder:default=0
	// +optional
	Revision int32 `json:"revision"`
	// LastGoodRevision is the newest revision whose workloads were all ready.
	// +optional
	LastGoodRevision int32 `json:"lastGoodRevision,omitempty"`
	// ChartVersion of the deployed revision (default None: no revision deployed).
	// +kubebuilder:default=None
	// +optional
	ChartVersion string `json:"chartVersion,omitempty"`
	// +optional
	// Release is the OpenStack release of the deployed revision.
	Release string `json:"release,omitempty"`
	// AppliedHash identifies what the current revision was made from (values with credentials,
	// and the chart's content).
	// +optional
	AppliedHash string `json:"appliedHash,omitempty"`
	// FailedHash is what the last failed action was made from: not tried again until it changes
	// or kupenstack.io/retry is set.
	// +optional
	FailedHash string `json:"failedHash,omitempty"`
	// RetriedWith is the kupenstack.io/retry value already acted on.
	// +optional
	RetriedWith string `json:"retriedWith,omitempty"`
	// Images are the images of the deployed revision (images.tags).
	// +optional
	Images map[string]string `json:"images,omitempty"`
	// Workloads is "<ready>/<total>" of the release's Deployments, StatefulSets, DaemonSets and
	// Jobs (default Unknown, until they are first looked at).
	// +kubebuilder:default=Unknown
	// +optional
	Workloads string `json:"workloads,omitempty"`
	// LastError is the last Helm or workload error (never credentials).
	// +optional
	LastError string `json:"lastError,omitempty"`
	// LastActionTime is when the last Helm action finished.
	// +optional
	LastActionTime *metav1.Time `json:"lastActionTime,omitempty"`
	// Conditions: Ready, Progressing, Degraded, and ServiceHealthy from the validation agent.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OpenstackComponent is one component of the cloud (mariadb, keystone, nova, ...) deployed as one
// Helm release. The operator keeps one per enabled component of the KupenstackConfiguration.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=openstack-admin,shortName=oscomp
// +kubebuilder:validation:XValidation:rule="self.metadata.name == self.spec.chart",message="an OpenstackComponent is named after its chart (mariadb, keystone, nova, ...)",fieldPath=".metadata"
// +kubebuilder:printcolumn:name="Chart",type=string,JSONPath=`.spec.chart`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.chartVersion`
// +kubebuilder:printcolumn:name="Revision",type=integer,JSONPath=`.status.revision`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Workloads",type=string,JSONPath=`.status.workloads`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Error",type=string,JSONPath=`.status.lastError`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type OpenstackComponent struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OpenstackComponentSpec `json:"spec"`
	// Status is what the operator observed. It defaults to {} so that its columns read 0,
	// Unknown, Pending or None, not a blank, before the operator first writes it.
	// +kubebuilder:default={}
	Status OpenstackComponentStatus `json:"status,omitempty"`
}

// OpenstackComponentList is a list of OpenstackComponents.
// +kubebuilder:object:root=true
type OpenstackComponentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenstackComponent `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OpenstackComponent{}, &OpenstackComponentList{})
}
