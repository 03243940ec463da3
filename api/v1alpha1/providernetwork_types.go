package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProviderNetworkSpec is the desired Neutron provider network: a network the cloud's admin maps
// onto the physical network (flat, VLAN) or an overlay with a chosen segment, typically the
// external network tenants' routers and floating IPs use, or a network shared with every project.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged ProviderNetwork must import an existing network",fieldPath=".import",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.networkType)",message="networkType is required unless the network is imported",fieldPath=".networkType",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.networkType) || !(self.networkType in ['flat', 'vlan']) || has(self.physicalNetwork)",message="flat and vlan networks need a physicalNetwork",fieldPath=".physicalNetwork",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.physicalNetwork) || (has(self.networkType) && self.networkType in ['flat', 'vlan'])",message="physicalNetwork applies to flat and vlan networks only",fieldPath=".physicalNetwork"
// +kubebuilder:validation:XValidation:rule="!has(self.segmentationID) || (has(self.networkType) && self.networkType in ['vlan', 'vxlan', 'geneve', 'gre'])",message="segmentationID applies to vlan, vxlan, geneve and gre networks only",fieldPath=".segmentationID"
// +kubebuilder:validation:XValidation:rule="!has(self.segmentationID) || !has(self.networkType) || self.networkType != 'vlan' || self.segmentationID <= 4094",message="a VLAN ID is 1 to 4094",fieldPath=".segmentationID"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.networkType) == has(self.networkType)",message="networkType is immutable",fieldPath=".networkType"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.physicalNetwork) == has(self.physicalNetwork)",message="physicalNetwork is immutable",fieldPath=".physicalNetwork"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.segmentationID) == has(self.segmentationID)",message="segmentationID is immutable",fieldPath=".segmentationID"
type ProviderNetworkSpec struct {
	ManagedSpec `json:",inline"`

	NetworkParameters `json:",inline"`

	// NetworkType is how Neutron carries the network: flat (untagged on physicalNetwork), vlan
	// (tagged on physicalNetwork), vxlan, geneve or gre (overlays) or local (this host only).
	// Immutable.
	// +kubebuilder:validation:Enum=flat;vlan;vxlan;geneve;gre;local
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="networkType is immutable"
	// +optional
	NetworkType string `json:"networkType,omitempty"`

	// PhysicalNetwork is the name of the physical network (as the cloud's Neutron agents map it
	// to a bridge or interface) that a flat or vlan network is on. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="physicalNetwork is immutable"
	// +optional
	PhysicalNetwork string `json:"physicalNetwork,omitempty"`

	// SegmentationID is the VLAN ID (1-4094) or the tunnel's VNI/key; Neutron picks a free one
	// from its ranges when unset. Immutable.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16777215
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="segmentationID is immutable"
	// +optional
	SegmentationID *int `json:"segmentationID,omitempty"`

	// External: routers may use the network as their gateway and floating IPs come from it.
	// +optional
	External bool `json:"external,omitempty"`

	// Shared: every project may put ports on the network.
	// +optional
	Shared bool `json:"shared,omitempty"`
}

// ProviderNetworkResourceStatus is what Neutron reports for a provider network.
type ProviderNetworkResourceStatus struct {
	NetworkResourceStatus `json:",inline"`
	// NetworkType in Neutron (provider:network_type).
	NetworkType string `json:"networkType,omitempty"`
	// PhysicalNetwork in Neutron (provider:physical_network).
	PhysicalNetwork string `json:"physicalNetwork,omitempty"`
	// SegmentationID in Neutron (provider:segmentation_id).
	SegmentationID int `json:"segmentationID,omitempty"`
}

// ProviderNetworkStatus is the observed state of a ProviderNetwork.
type ProviderNetworkStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the network as Neutron last reported it.
	// +optional
	Resource *ProviderNetworkResourceStatus `json:"resource,omitempty"`
}

// ProviderNetwork is a Neutron provider network of the cloud's admin (cluster-scoped, in the
// operator's admin project): external networks for routers and floating IPs, networks shared
// with every project. Tenants refer to it by name (a Router's externalGateway.providerNetworkRef,
// a FloatingIP's providerNetworkRef); only cluster admins can declare one.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=osprovnet,categories=openstack-admin
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.networkType`
// +kubebuilder:printcolumn:name="Physical",type=string,JSONPath=`.spec.physicalNetwork`
// +kubebuilder:printcolumn:name="External",type=boolean,JSONPath=`.spec.external`
// +kubebuilder:printcolumn:name="Shared",type=boolean,JSONPath=`.spec.shared`,priority=1
// +kubebuilder:printcolumn:name="Segment",type=integer,JSONPath=`.status.resource.segmentationID`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ProviderNetwork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderNetworkSpec   `json:"spec"`
	Status ProviderNetworkStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (n *ProviderNetwork) GetManagedSpec() *ManagedSpec { return &n.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (n *ProviderNetwork) GetManagedStatus() *ManagedStatus { return &n.Status.ManagedStatus }

// ProviderNetworkList is a list of ProviderNetworks.
// +kubebuilder:object:root=true
type ProviderNetworkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderNetwork `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ProviderNetwork{}, &ProviderNetworkList{})
}
