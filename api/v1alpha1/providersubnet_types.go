package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProviderSubnetSpec is the desired Neutron subnet of a ProviderNetwork.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged ProviderSubnet must import an existing subnet",fieldPath=".import",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.providerNetworkRef)",message="providerNetworkRef is required unless the subnet is imported",fieldPath=".providerNetworkRef",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(oldSelf.providerNetworkRef) == has(self.providerNetworkRef)",message="providerNetworkRef is immutable",fieldPath=".providerNetworkRef"
type ProviderSubnetSpec struct {
	ManagedSpec `json:",inline"`

	// ProviderNetworkRef names the ProviderNetwork object the subnet belongs to. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="providerNetworkRef is immutable"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	ProviderNetworkRef string `json:"providerNetworkRef,omitempty"`

	SubnetParameters `json:",inline"`
}

// ProviderSubnetStatus is the observed state of a ProviderSubnet.
type ProviderSubnetStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the subnet as Neutron last reported it.
	// +optional
	Resource *SubnetResourceStatus `json:"resource,omitempty"`
}

// ProviderSubnet is a Neutron subnet of a ProviderNetwork (cluster-scoped, the cloud admin's):
// the addresses routers' gateways and floating IPs get on an external network, or the ports of a
// shared network.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=osprovsubnet,categories=openstack-admin
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Network",type=string,JSONPath=`.spec.providerNetworkRef`
// +kubebuilder:printcolumn:name="CIDR",type=string,JSONPath=`.spec.cidr`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ProviderSubnet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderSubnetSpec   `json:"spec"`
	Status ProviderSubnetStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (s *ProviderSubnet) GetManagedSpec() *ManagedSpec { return &s.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (s *ProviderSubnet) GetManagedStatus() *ManagedStatus { return &s.Status.ManagedStatus }

// ProviderSubnetList is a list of ProviderSubnets.
// +kubebuilder:object:root=true
type ProviderSubnetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderSubnet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ProviderSubnet{}, &ProviderSubnetList{})
}
