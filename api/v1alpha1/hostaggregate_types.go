package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HostAggregateSpec is a Nova host aggregate whose hosts are the Kubernetes nodes its selector
// picks: the compute hosts of an OpenStack-Helm cloud are its nodes, named after them.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged HostAggregate must import an existing aggregate",fieldPath=".import",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.nodeSelector)",message="nodeSelector is required unless the aggregate is imported",fieldPath=".nodeSelector",reason=FieldValueRequired
type HostAggregateSpec struct {
	ManagedSpec `json:",inline"`

	// NodeSelector picks Kubernetes nodes by their labels (all must match); those that run
	// nova-compute become the aggregate's hosts, and it follows label changes.
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!k.contains('/') || k.split('/')[0].size() <= 253))",message="nodeSelector keys must be label keys: an optional DNS prefix and '/', then a name of at most 63 letters, digits, '-', '_' or '.'"
	// +optional
	NodeSelector map[string]LabelValue `json:"nodeSelector,omitempty"`

	// AvailabilityZone the aggregate exposes; VirtualMachines that name the aggregate are placed in
	// it. Defaults to the object's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="!self.contains(':')",message="availabilityZone cannot contain ':'"
	// +optional
	AvailabilityZone string `json:"availabilityZone,omitempty"`

	// Metadata of the aggregate (e.g. for flavor extra-spec filters); KupenStack adds its own key.
	// Keys are 1 to 255 letters, digits, spaces, '-', '_', ':' or '.'; values at most 255 characters.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[-a-zA-Z0-9_:. ]{1,255}$'))",message="metadata keys are 1 to 255 letters, digits, spaces, '-', '_', ':' or '.'"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 255)",message="metadata values are at most 255 characters"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('kupenstack:') && k != 'availability_zone')",message="metadata keys kupenstack:* and availability_zone are reserved"
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
}

// HostAggregateResourceStatus is what Nova reports for the aggregate.
type HostAggregateResourceStatus struct {
	// Name of the aggregate in Nova.
	Name string `json:"name,omitempty"`
	// AvailabilityZone the aggregate defines (empty: none).
	AvailabilityZone string `json:"availabilityZone,omitempty"`
	// Hosts are the compute hosts in the aggregate.
	Hosts []string `json:"hosts,omitempty"`
	// Metadata of the aggregate (key/value pairs the scheduler matches against flavors).
	Metadata map[string]string `json:"metadata,omitempty"`
}

// HostAggregateStatus is the observed state of a HostAggregate.
type HostAggregateStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the aggregate as Nova last reported it.
	// +optional
	Resource *HostAggregateResourceStatus `json:"resource,omitempty"`
	// SelectedNodes are the Kubernetes nodes the selector picks.
	// +optional
	SelectedNodes []string `json:"selectedNodes,omitempty"`
	// NodesWithoutCompute are selected nodes that Nova does not know as compute hosts (yet).
	// +optional
	NodesWithoutCompute []string `json:"nodesWithoutCompute,omitempty"`
}

// HostAggregate maps Kubernetes node labels to a Nova host aggregate and availability zone, so
// VirtualMachines can be placed with hostAggregateRef. Cluster-scoped: it is cloud-wide.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=osagg,categories=openstack-admin
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Zone",type=string,JSONPath=`.spec.availabilityZone`
// +kubebuilder:printcolumn:name="Hosts",type=string,JSONPath=`.status.resource.hosts`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type HostAggregate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   HostAggregateSpec   `json:"spec"`
	Status HostAggregateStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (a *HostAggregate) GetManagedSpec() *ManagedSpec { return &a.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (a *HostAggregate) GetManagedStatus() *ManagedStatus { return &a.Status.ManagedStatus }

// HostAggregateList is a list of HostAggregates.
// +kubebuilder:object:root=true
type HostAggregateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HostAggregate `json:"items"`
}

func init() {
	SchemeBuilder.Register(&HostAggregate{}, &HostAggregateList{})
}
