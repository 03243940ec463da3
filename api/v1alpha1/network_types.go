package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NetworkSpec is the desired Neutron network.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged Network must import an existing network",fieldPath=".import",reason=FieldValueRequired
type NetworkSpec struct {
	ManagedSpec `json:",inline"`

	NetworkParameters `json:",inline"`
}

// NetworkParameters are the fields of a Neutron network that a Network and a ProviderNetwork share.
type NetworkParameters struct {
	// Name in OpenStack; defaults to the object's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == self.trim() && !self.matches('[[:cntrl:]]')",message="name must not start or end with whitespace or contain control characters"
	// +optional
	Name string `json:"name,omitempty"`

	// Description of the network.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	// AdminStateUp: false takes the network down administratively; default true.
	// +kubebuilder:default=true
	// +optional
	AdminStateUp *bool `json:"adminStateUp,omitempty"`

	// MTU of the network; Neutron chooses one when unset.
	// +kubebuilder:validation:Minimum=68
	// +kubebuilder:validation:Maximum=9216
	// +optional
	MTU *int `json:"mtu,omitempty"`

	// PortSecurityEnabled is the default for the network's ports.
	// +optional
	PortSecurityEnabled *bool `json:"portSecurityEnabled,omitempty"`

	// Tags added to the network in OpenStack (KupenStack adds its own too).
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	Tags []NeutronTag `json:"tags,omitempty"`
}

// NeutronTag is a tag on a Neutron resource.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=255
// +kubebuilder:validation:XValidation:rule="!self.startsWith('kupenstack-')",message="tags starting with kupenstack- are reserved"
type NeutronTag string

// NetworkResourceStatus is what Neutron reports for the network.
type NetworkResourceStatus struct {
	// Name of the network in Neutron.
	Name string `json:"name,omitempty"`
	// Description of the network in Neutron.
	Description string `json:"description,omitempty"`
	// Status in Neutron: ACTIVE, DOWN, BUILD or ERROR.
	Status string `json:"status,omitempty"`
	// AdminStateUp: the network is administratively up.
	AdminStateUp bool `json:"adminStateUp"`
	// MTU of the network, in bytes.
	MTU int `json:"mtu,omitempty"`
	// PortSecurityEnabled: new ports get security groups and anti-spoofing rules by default.
	PortSecurityEnabled *bool `json:"portSecurityEnabled,omitempty"`
	// External: the network is an external (provider) network routers can use as a gateway.
	External bool `json:"external,omitempty"`
	// Shared: every project may use the network.
	Shared bool `json:"shared,omitempty"`
	// Subnets are the IDs of the network's subnets.
	Subnets []string `json:"subnets,omitempty"`
	// Tags of the network in Neutron (KupenStack's own included).
	Tags []string `json:"tags,omitempty"`
}

// NetworkStatus is the observed state of a Network.
type NetworkStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the network as Neutron last reported it.
	// +optional
	Resource *NetworkResourceStatus `json:"resource,omitempty"`
}

// Network is a Neutron network in the namespace's OpenStack project.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=osnet,categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.resource.status`
// +kubebuilder:printcolumn:name="MTU",type=integer,JSONPath=`.status.resource.mtu`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Network struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:default={}
	Spec   NetworkSpec   `json:"spec,omitempty"`
	Status NetworkStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (n *Network) GetManagedSpec() *ManagedSpec { return &n.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (n *Network) GetManagedStatus() *ManagedStatus { return &n.Status.ManagedStatus }

// NetworkList is a list of Networks.
// +kubebuilder:object:root=true
type NetworkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Network `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Network{}, &NetworkList{})
}
