package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every limit of a ProjectQuota is optional: unset leaves OpenStack's value as it is. -1 is
// unlimited. At most 2147483647, the largest limit Nova, Neutron and Cinder store.

// ComputeQuota are Nova's limits of the project. Key pairs are not here: Nova counts them per
// user, and every namespace's key pairs belong to the operator's one user, so a project's limit
// would bound the key pairs of every namespace together.
type ComputeQuota struct {
	// Instances: servers (VirtualMachines).
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Instances *int64 `json:"instances,omitempty"`
	// Cores: virtual CPUs of all servers together.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Cores *int64 `json:"cores,omitempty"`
	// RAMMiB: memory of all servers together, in MiB (Nova's ram).
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	RAMMiB *int64 `json:"ramMiB,omitempty"`
	// ServerGroups: server groups.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	ServerGroups *int64 `json:"serverGroups,omitempty"`
	// ServerGroupMembers: servers in each server group.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	ServerGroupMembers *int64 `json:"serverGroupMembers,omitempty"`
}

// NetworkQuota are Neutron's limits of the project.
type NetworkQuota struct {
	// Networks: networks.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Networks *int64 `json:"networks,omitempty"`
	// Subnets: subnets.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Subnets *int64 `json:"subnets,omitempty"`
	// Ports: ports, those Nova makes for servers and those routers and DHCP use included.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Ports *int64 `json:"ports,omitempty"`
	// Routers: routers.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Routers *int64 `json:"routers,omitempty"`
	// FloatingIPs: floating IPs.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	FloatingIPs *int64 `json:"floatingIPs,omitempty"`
	// SecurityGroups: security groups, the project's default group included.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	SecurityGroups *int64 `json:"securityGroups,omitempty"`
	// SecurityGroupRules: rules of all security groups together, the default group's included.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	SecurityGroupRules *int64 `json:"securityGroupRules,omitempty"`
}

// VolumeQuota are Cinder's limits of the project.
type VolumeQuota struct {
	// Volumes: volumes.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Volumes *int64 `json:"volumes,omitempty"`
	// Gigabytes: size of all volumes and snapshots together, in GiB.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Gigabytes *int64 `json:"gigabytes,omitempty"`
	// Snapshots: volume snapshots.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	Snapshots *int64 `json:"snapshots,omitempty"`
}

// ProjectQuotaSpec is the quota of one namespace's OpenStack project. A section left out is not
// managed: the operator neither changes nor, when the ProjectQuota is deleted, resets it.
type ProjectQuotaSpec struct {
	// Namespace whose project the quota is for. It always equals the ProjectQuota's own name.
	// Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="namespace must be a namespace name (lower-case letters, digits and '-')"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="namespace is immutable"
	Namespace string `json:"namespace"`

	// Compute limits (Nova).
	// +optional
	Compute *ComputeQuota `json:"compute,omitempty"`

	// Network limits (Neutron).
	// +optional
	Network *NetworkQuota `json:"network,omitempty"`

	// Volume limits (Cinder).
	// +optional
	Volume *VolumeQuota `json:"volume,omitempty"`

	// ResyncPeriod: how often OpenStack's quotas are compared with the spec (and a change made
	// outside KupenStack undone) and the usage in the status refreshed, as a duration (30s, 10m,
	// 1h); 0 turns it off, otherwise between 1s and 720h (30 days). Defaults to the operator's
	// --resync-period (10 minutes).
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(0|(([0-9]{1,5}([.][0-9]{0,9})?|[.][0-9]{1,9})(ns|us|µs|μs|ms|s|m|h)){1,4})$') || duration(self) == duration('0s') || (duration(self) >= duration('1s') && duration(self) <= duration('720h'))",message="resyncPeriod must be 0 (off) or between 1s and 720h"
	// +optional
	ResyncPeriod *Duration `json:"resyncPeriod,omitempty"`
}

// QuotaUsage is one limit of the project and how much of it is used, as OpenStack reports them.
type QuotaUsage struct {
	// Limit in OpenStack; -1 is unlimited.
	Limit int64 `json:"limit"`
	// InUse: how much of it the project uses.
	InUse int64 `json:"inUse"`
}

// ComputeQuotaStatus is Nova's side of the project's quota.
type ComputeQuotaStatus struct {
	// Instances: servers.
	Instances QuotaUsage `json:"instances"`
	// Cores: virtual CPUs.
	Cores QuotaUsage `json:"cores"`
	// RAMMiB: memory, in MiB.
	RAMMiB QuotaUsage `json:"ramMiB"`
	// ServerGroups: server groups.
	ServerGroups QuotaUsage `json:"serverGroups"`
	// ServerGroupMembers: servers per server group (Nova reports no usage for it: always 0).
	ServerGroupMembers QuotaUsage `json:"serverGroupMembers"`
}

// NetworkQuotaStatus is Neutron's side of the project's quota.
type NetworkQuotaStatus struct {
	// Networks: networks.
	Networks QuotaUsage `json:"networks"`
	// Subnets: subnets.
	Subnets QuotaUsage `json:"subnets"`
	// Ports: ports.
	Ports QuotaUsage `json:"ports"`
	// Routers: routers.
	Routers QuotaUsage `json:"routers"`
	// FloatingIPs: floating IPs.
	FloatingIPs QuotaUsage `json:"floatingIPs"`
	// SecurityGroups: security groups.
	SecurityGroups QuotaUsage `json:"securityGroups"`
	// SecurityGroupRules: security group rules.
	SecurityGroupRules QuotaUsage `json:"securityGroupRules"`
}

// VolumeQuotaStatus is Cinder's side of the project's quota.
type VolumeQuotaStatus struct {
	// Volumes: volumes.
	Volumes QuotaUsage `json:"volumes"`
	// Gigabytes: size of volumes and snapshots, in GiB.
	Gigabytes QuotaUsage `json:"gigabytes"`
	// Snapshots: volume snapshots.
	Snapshots QuotaUsage `json:"snapshots"`
}

// ProjectQuotaStatus is the project's quota as OpenStack last reported it: every limit (those the
// spec leaves out too) and its usage.
type ProjectQuotaStatus struct {
	// ProjectID is the OpenStack (Keystone) project the quota applies to.
	// +optional
	ProjectID string `json:"projectID,omitempty"`

	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// LastSyncTime is when OpenStack's quotas were last found to match the spec, and the usage read.
	// +optional
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`

	// Compute: Nova's limits and usage.
	// +optional
	Compute *ComputeQuotaStatus `json:"compute,omitempty"`

	// Network: Neutron's limits and usage.
	// +optional
	Network *NetworkQuotaStatus `json:"network,omitempty"`

	// Volume: Cinder's limits and usage (absent when the cloud has no block storage).
	// +optional
	Volume *VolumeQuotaStatus `json:"volume,omitempty"`

	// Conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ProjectQuota is the OpenStack quota of a namespace's project, declared by a cluster admin. It
// is cluster-scoped and named after the namespace, so that no role bound in a namespace can grant
// a tenant the right to raise its own quota. The operator keeps OpenStack's limits matching the
// spec and shows usage against limit in the status; deleting the ProjectQuota resets the limits of
// the sections it declares to the cloud's defaults.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=osquota,categories=openstack-admin
// +kubebuilder:validation:XValidation:rule="self.metadata.name == self.spec.namespace",message="a ProjectQuota is named after its namespace",fieldPath=".metadata"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Instances Used",type=integer,JSONPath=`.status.compute.instances.inUse`
// +kubebuilder:printcolumn:name="Instances Limit",type=integer,JSONPath=`.status.compute.instances.limit`
// +kubebuilder:printcolumn:name="Cores Used",type=integer,JSONPath=`.status.compute.cores.inUse`
// +kubebuilder:printcolumn:name="Cores Limit",type=integer,JSONPath=`.status.compute.cores.limit`
// +kubebuilder:printcolumn:name="RAM MiB Used",type=integer,JSONPath=`.status.compute.ramMiB.inUse`,priority=1
// +kubebuilder:printcolumn:name="RAM MiB Limit",type=integer,JSONPath=`.status.compute.ramMiB.limit`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Project ID",type=string,JSONPath=`.status.projectID`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ProjectQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProjectQuotaSpec   `json:"spec"`
	Status ProjectQuotaStatus `json:"status,omitempty"`
}

// ProjectQuotaList is a list of ProjectQuotas.
// +kubebuilder:object:root=true
type ProjectQuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProjectQuota `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ProjectQuota{}, &ProjectQuotaList{})
}
