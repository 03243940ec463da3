package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// AnnotationManagedLabels on a Kubernetes Node lists (comma-separated) the label keys KupenStack
// set on it; only those are ever changed or removed by KupenStack.
const AnnotationManagedLabels = "kupenstack.io/managed-labels"

// ComputeServiceDisabled is status.computeService while KupenStack holds the node's nova-compute
// service disabled.
const ComputeServiceDisabled = "Disabled"

// ReasonDisablingComputeService: the node's compute labels stay until Nova has disabled the
// node's nova-compute service (Nova cannot be reached, or refused).
const ReasonDisablingComputeService = "DisablingComputeService"

// ReasonEnablingComputeService: the node is a compute node again and Nova could not be asked to
// enable the nova-compute service KupenStack disabled.
const ReasonEnablingComputeService = "EnablingComputeService"

// OpenstackNodeSpec is copied by the operator from the KupenstackConfiguration's nodes[] entry
// (a change made here is undone at the next reconcile: edit the configuration instead).
// +kubebuilder:validation:XValidation:rule="!has(self.profile) || has(self.profile.__namespace__)",message="profile needs a namespace (the operator resolves it from defaultProfile)",fieldPath=".profile"
type OpenstackNodeSpec struct {
	// Roles of the node: control and/or compute.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:Enum=control;compute
	// +listType=set
	// +optional
	Roles []string `json:"roles,omitempty"`

	// Disabled: the node is out of the cloud (no OpenStack-Helm labels, no per-node overrides).
	// Default false.
	// +optional
	Disabled bool `json:"disabled,omitempty"`

	// Profile is the node's own profile, if any, with its namespace resolved.
	// +optional
	Profile *ProfileReference `json:"profile,omitempty"`
}

// NodeOverride is one entry the node contributes to a chart's per-node overrides,
// conf.overrides.<chart>_<daemonSet>.hosts[] = {name: <node>, conf: <conf>}, or in the root form
// (libvirt) overrides.<chart>_<daemonSet>.labels."kubernetes.io/hostname::<node>".values.conf.
type NodeOverride struct {
	// Component (chart) the override goes to.
	Component string `json:"component"`
	// DaemonSet key of the override, as the chart spells it (<chart>_<daemonset>, e.g.
	// nova_compute, neutron_ovs-agent, libvirt_libvirt).
	DaemonSet string `json:"daemonSet"`
	// Conf is the per-node configuration, merged by the chart over the component's conf.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Conf runtime.RawExtension `json:"conf"`
}

// DesiredClusterConfiguration is what the node should get from the cloud's configuration.
type DesiredClusterConfiguration struct {
	// Release of OpenStack.
	Release string `json:"release,omitempty"`
	// Labels are the OpenStack-Helm node labels the node must carry for its roles.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Components that run pods on the node (DaemonSets selected by its labels).
	// +listType=set
	// +optional
	Components []string `json:"components,omitempty"`
	// Overrides are the node's per-node override entries.
	// +optional
	Overrides []NodeOverride `json:"overrides,omitempty"`
	// Hash of the above: it changes exactly when the node's configuration changes.
	Hash string `json:"hash,omitempty"`
}

// OpenstackNodeStatus is what the operator did for the node.
type OpenstackNodeStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// DesiredClusterConfiguration is the configuration computed for this node.
	// +optional
	DesiredClusterConfiguration *DesiredClusterConfiguration `json:"desiredClusterConfiguration,omitempty"`
	// ComputeService is "Disabled" while KupenStack holds the node's nova-compute service
	// disabled: it disabled it before taking the node's compute labels off (node disabled,
	// compute role dropped or node removed), so that the scheduler stopped placing servers there.
	// It enables the service again when the node is back as a compute node; a service an
	// administrator disabled is never enabled by KupenStack.
	// +kubebuilder:validation:Enum=Disabled
	// +optional
	ComputeService string `json:"computeService,omitempty"`
	// ComputeLabelledAt is when KupenStack put the compute label back on the node while its
	// nova-compute service was held disabled, or while Nova's component was not serving (the
	// service is then looked at once it serves). The service is enabled again once Nova has heard
	// from the node's new nova-compute since, or counts it down: until then Nova's API, asked to
	// enable it, would call the nova-compute that left and hold the request for a minute.
	// +optional
	ComputeLabelledAt *metav1.Time `json:"computeLabelledAt,omitempty"`
	// AppliedLabels are the label keys KupenStack set on the Kubernetes Node.
	// +listType=set
	// +optional
	AppliedLabels []string `json:"appliedLabels,omitempty"`
	// Conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OpenstackNode is one Kubernetes node of the OpenStack cloud. The operator creates, updates and
// deletes it from the KupenstackConfiguration's nodes; users only read it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=openstack-admin,shortName=osnode
// +kubebuilder:printcolumn:name="Roles",type=string,JSONPath=`.spec.roles`
// +kubebuilder:printcolumn:name="Disabled",type=boolean,JSONPath=`.spec.disabled`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Compute",type=string,JSONPath=`.status.computeService`,priority=1
// +kubebuilder:printcolumn:name="Profile",type=string,JSONPath=`.spec.profile.name`,priority=1
// +kubebuilder:printcolumn:name="Hash",type=string,JSONPath=`.status.desiredClusterConfiguration.hash`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type OpenstackNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OpenstackNodeSpec   `json:"spec,omitempty"`
	Status OpenstackNodeStatus `json:"status,omitempty"`
}

// OpenstackNodeList is a list of OpenstackNodes.
// +kubebuilder:object:root=true
type OpenstackNodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenstackNode `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OpenstackNode{}, &OpenstackNodeList{})
}
