package v1alpha1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KupenstackConfigurationName is the name of the one KupenstackConfiguration of a cluster; the
// API server rejects any other name, so a second configuration cannot exist.
const KupenstackConfigurationName = "kupenstack"

// Node roles of a configured node.
const (
	NodeRoleControl = "control"
	NodeRoleCompute = "compute"
)

// ProfileReference names an OpenstackCloudConfigurationProfile.
type ProfileReference struct {
	// Name of the profile.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Namespace of the profile. In a node's profile it defaults to the namespace of defaultProfile.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ConfiguredNode is a Kubernetes node that takes part in the OpenStack cloud.
// +kubebuilder:validation:XValidation:rule="has(self.type) != has(self.roles)",message="a node needs exactly one of type (e.g. \"control,compute\") or roles (e.g. [control, compute])"
type ConfiguredNode struct {
	// Name of the Kubernetes Node.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`

	// Type is the node's roles in the seeds' comma-separated form: "control", "compute" or
	// "control,compute". Use either type or roles.
	// +kubebuilder:validation:XValidation:rule="self in ['control', 'compute', 'control,compute', 'compute,control']",message="type must be control, compute or control,compute"
	// +optional
	Type string `json:"type,omitempty"`

	// Roles is the node's roles as a list ([control], [compute] or [control, compute]). Use either
	// type or roles.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:Enum=control;compute
	// +listType=set
	// +optional
	Roles []string `json:"roles,omitempty"`

	// Disabled takes the node out of the cloud: it loses its OpenStack-Helm labels (so no
	// OpenStack pod is scheduled there any more) and its per-node overrides, and keeps its
	// OpenstackNode object. A compute node's nova-compute service is disabled in Nova first, and
	// enabled again when the node is enabled.
	// +optional
	Disabled bool `json:"disabled,omitempty"`

	// Profile, when set, is merged over defaultProfile for this node only (see docs/lcm.md for
	// what a per-node profile can change).
	// +optional
	Profile *ProfileReference `json:"profile,omitempty"`
}

// ChartSource says where the OpenStack-Helm charts come from: exactly one of a classic Helm chart
// repository, an OCI registry or a directory on the operator's file system.
// +kubebuilder:validation:XValidation:rule="[has(self.repository), has(self.oci), has(self.localPath)].filter(x, x).size() == 1",message="charts needs exactly one of repository, oci or localPath"
type ChartSource struct {
	// Repository is the URL of a Helm chart repository (with an index.yaml).
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[^\\\\s]+$')",message="repository must be an http or https URL"
	// +optional
	Repository string `json:"repository,omitempty"`

	// OCI is the registry path under which each chart is pushed (oci://host/path); a chart is
	// pulled from <oci>/<chart>.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^oci://[^\\\\s]+$')",message="oci must start with oci://"
	// +optional
	OCI string `json:"oci,omitempty"`

	// LocalPath is an absolute directory on the operator's file system holding one directory per
	// chart (e.g. a checkout of openstack-helm mounted into the operator's pod), or packaged
	// charts as a chart repository keeps them (<chart>-<version>.tgz). It must lie under one of
	// the directories the operator allows (--chart-local-path-prefixes, by default /charts and
	// /opt/openstack-helm), else the configuration is Degraded.
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="localPath must be an absolute path"
	// +optional
	LocalPath string `json:"localPath,omitempty"`
}

// KupenstackConfigurationSpec is the OpenStack cloud KupenStack deploys on this cluster.
// +kubebuilder:validation:XValidation:rule="!has(self.components) || !has(self.optionalComponents)",message="set components (the whole list) or optionalComponents (added to the core ones), not both",fieldPath=".optionalComponents"
type KupenstackConfigurationSpec struct {
	// Release is the OpenStack release to run, e.g. 2026.1. The operator knows which chart
	// versions and image tags make up each release it supports (2025.1, 2025.2 and 2026.1);
	// another release makes the configuration Degraded.
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]{4}\\\\.[12]$')",message="release must look like 2026.1"
	Release string `json:"release"`

	// Namespace the OpenStack services are deployed to; default openstack. Immutable: moving a
	// running cloud to another namespace is not supported.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="namespace must be a namespace name (lower-case letters, digits and '-')"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="namespace is immutable"
	// +kubebuilder:default=openstack
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Charts is where the charts come from; by default the official OpenStack-Helm chart
	// repository.
	// +kubebuilder:default={repository: "https://tarballs.opendev.org/openstack/openstack-helm"}
	// +optional
	Charts ChartSource `json:"charts"`

	// DefaultProfile configures every component on every node.
	// +kubebuilder:validation:XValidation:rule="has(self.__namespace__)",message="defaultProfile needs a namespace"
	DefaultProfile ProfileReference `json:"defaultProfile"`

	// Nodes are the Kubernetes nodes that run OpenStack, with their roles. A node is known by its
	// name (its OpenstackNode, its labels, its OpenStack services), so an entry's name cannot be
	// changed in place (an edit that changes exactly one name and nothing else in the list is
	// refused): to replace a node, remove its entry (the node leaves the cloud) and add the other
	// node as a new entry. Adding, removing and reordering entries is free.
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:XValidation:rule="self.size() != oldSelf.size() || !self.existsOne(i, n, n.name != oldSelf[i].name)",message="a node's name cannot be changed in place: remove the old node's entry (it leaves the cloud) and add the new node as an entry of its own"
	// +listType=map
	// +listMapKey=name
	// +optional
	Nodes []ConfiguredNode `json:"nodes,omitempty"`

	// Components, when set, is the whole list of components to deploy, core or optional, in
	// place of the core ones plus optionalComponents: e.g. [mariadb, rabbitmq, memcached,
	// keystone] for an identity service alone. Known components: mariadb, rabbitmq, memcached,
	// keystone, glance, cinder, placement, nova, neutron, openvswitch, libvirt, horizon. A component's install dependencies must be
	// listed too (keystone needs mariadb, rabbitmq and memcached; see docs/lcm.md), else the
	// configuration is Degraded. Deployed components left out are removed.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=12
	// +kubebuilder:validation:items:Enum=mariadb;rabbitmq;memcached;keystone;glance;cinder;placement;nova;neutron;openvswitch;libvirt;horizon
	// +listType=set
	// +optional
	Components []string `json:"components,omitempty"`

	// OptionalComponents to deploy besides the core ones (mariadb, rabbitmq, memcached,
	// keystone, glance, placement, nova, neutron, openvswitch, libvirt): cinder and/or horizon.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Enum=cinder;horizon
	// +listType=set
	// +optional
	OptionalComponents []string `json:"optionalComponents,omitempty"`

	// ProgressDeadline is how long a component's workloads may take to become ready after an
	// install or upgrade. An upgrade that is not ready by then is rolled back to the last good
	// revision (reason UpgradeFailed); a first install is reported (reason
	// ProgressDeadlineExceeded) and still waited for, having nothing to go back to.
	// A duration (10m, 1h30m) between 10s and 24h; default 15m.
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(0|(([0-9]{1,5}([.][0-9]{0,9})?|[.][0-9]{1,9})(ns|us|µs|μs|ms|s|m|h)){1,4})$') || (duration(self) >= duration('10s') && duration(self) <= duration('24h'))",message="progressDeadline must be between 10s and 24h"
	// +kubebuilder:default="15m"
	// +optional
	ProgressDeadline *Duration `json:"progressDeadline,omitempty"`
}

// ComponentStatus is where one component (one Helm release) stands.
type ComponentStatus struct {
	// Name of the component (mariadb, keystone, nova, ...).
	Name string `json:"name"`
	// Chart and ChartVersion the release is rendered from.
	Chart string `json:"chart,omitempty"`
	// ChartVersion the release is rendered from (the release table's version of the chart).
	ChartVersion string `json:"chartVersion,omitempty"`
	// ValuesHash identifies the rendered values: it changes exactly when the release needs an
	// upgrade.
	ValuesHash string `json:"valuesHash,omitempty"`
	// Images is the number of images.tags entries the profile sets for the component; the
	// release table decides the chart's other images when the chart is loaded (the component's
	// status lists them all).
	Images int32 `json:"images,omitempty"`
	// Phase, Revision and Ready mirror the component's OpenstackComponent.
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	// Revision of the component's Helm release.
	Revision int32 `json:"revision,omitempty"`
	// +optional
	// Ready: the component's OpenstackComponent is Ready.
	Ready bool `json:"ready,omitempty"`
}

// KupenstackConfigurationStatus is what the operator observed of the cloud.
type KupenstackConfigurationStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Nodes is the number of enabled configured nodes (default 0, shown as 0 rather than blank).
	// +kubebuilder:default=0
	// +optional
	Nodes int32 `json:"nodes"`
	// ReadyComponents is "<ready>/<total>" of the components (default Unknown, until they are
	// rendered).
	// +kubebuilder:default=Unknown
	// +optional
	ReadyComponents string `json:"readyComponents,omitempty"`
	// Components are the rendered components, in install order.
	// +listType=map
	// +listMapKey=name
	// +optional
	Components []ComponentStatus `json:"components,omitempty"`
	// Conditions: Ready, Progressing, Degraded; ServicesHealthy from the validation agent.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Services is the validation agent's verdict on each OpenStack service (see docs/lcm.md).
	// +listType=map
	// +listMapKey=name
	// +optional
	Services []ServiceHealth `json:"services,omitempty"`
}

// KupenstackConfiguration is the cloud's life-cycle configuration: which OpenStack release to
// run, where its charts come from, on which nodes and with which profile. There is exactly one,
// named kupenstack.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=openstack-admin,shortName=ksconfig
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'kupenstack'",message="there is one KupenstackConfiguration per cluster and it must be named kupenstack",fieldPath=".metadata"
// +kubebuilder:printcolumn:name="Release",type=string,JSONPath=`.spec.release`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodes`
// +kubebuilder:printcolumn:name="Components",type=string,JSONPath=`.status.readyComponents`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Services",type=string,JSONPath=`.status.conditions[?(@.type=="ServicesHealthy")].status`
// +kubebuilder:printcolumn:name="Profile",type=string,JSONPath=`.spec.defaultProfile.name`,priority=1
// +kubebuilder:printcolumn:name="Service Health",type=string,JSONPath=`.status.conditions[?(@.type=="ServicesHealthy")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KupenstackConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec KupenstackConfigurationSpec `json:"spec"`
	// Status is what the operator observed. It defaults to {} so that its counts read 0, not
	// a blank, before the operator first writes it.
	// +kubebuilder:default={}
	Status KupenstackConfigurationStatus `json:"status,omitempty"`
}

// KupenstackConfigurationList is a list of KupenstackConfigurations.
// +kubebuilder:object:root=true
type KupenstackConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KupenstackConfiguration `json:"items"`
}

// NodeRoles returns the node's roles from whichever form was used (type or roles), without
// duplicates, control first.
func (n ConfiguredNode) NodeRoles() []string {
	var control, compute bool
	parts := n.Roles
	if n.Type != "" {
		parts = strings.Split(n.Type, ",")
	}
	for _, r := range parts {
		switch strings.TrimSpace(r) {
		case NodeRoleControl:
			control = true
		case NodeRoleCompute:
			compute = true
		}
	}
	var roles []string
	if control {
		roles = append(roles, NodeRoleControl)
	}
	if compute {
		roles = append(roles, NodeRoleCompute)
	}
	return roles
}

func init() {
	SchemeBuilder.Register(&KupenstackConfiguration{}, &KupenstackConfigurationList{})
}
