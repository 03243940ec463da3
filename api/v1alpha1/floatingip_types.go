package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FloatingIPSpec is the desired Neutron floating IP.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged FloatingIP must import an existing floating IP",fieldPath=".import",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.floatingNetworkRef) || has(self.providerNetworkRef)",message="one of floatingNetworkRef or providerNetworkRef is required unless the floating IP is imported",fieldPath=".floatingNetworkRef",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!(has(self.floatingNetworkRef) && has(self.providerNetworkRef))",message="floatingNetworkRef and providerNetworkRef are mutually exclusive",fieldPath=".providerNetworkRef"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.floatingNetworkRef) == has(self.floatingNetworkRef)",message="floatingNetworkRef is immutable",fieldPath=".floatingNetworkRef"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.providerNetworkRef) == has(self.providerNetworkRef)",message="providerNetworkRef is immutable",fieldPath=".providerNetworkRef"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.floatingIPAddress) == has(self.floatingIPAddress)",message="floatingIPAddress is immutable",fieldPath=".floatingIPAddress"
// +kubebuilder:validation:XValidation:rule="!has(self.fixedIPAddress) || has(self.portRef)",message="fixedIPAddress needs portRef",fieldPath=".fixedIPAddress"
type FloatingIPSpec struct {
	ManagedSpec `json:",inline"`

	// Description of the floating IP.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	// FloatingNetworkRef names the Network object (one importing an external network) the address
	// comes from. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="floatingNetworkRef is immutable"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	FloatingNetworkRef string `json:"floatingNetworkRef,omitempty"`

	// ProviderNetworkRef names the (cluster-scoped) ProviderNetwork, an external network the
	// cloud's admin declared, the address comes from. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="providerNetworkRef is immutable"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	ProviderNetworkRef string `json:"providerNetworkRef,omitempty"`

	// FloatingIPAddress asks for a specific address. Immutable.
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="floatingIPAddress must be an IP address"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="floatingIPAddress is immutable"
	// +optional
	FloatingIPAddress string `json:"floatingIPAddress,omitempty"`

	// PortRef names the Port object to associate with; unset leaves the address unassociated.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	PortRef string `json:"portRef,omitempty"`

	// FixedIPAddress picks one of the port's addresses when it has several.
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="fixedIPAddress must be an IP address"
	// +optional
	FixedIPAddress string `json:"fixedIPAddress,omitempty"`

	// Tags added to the floating IP in OpenStack (KupenStack adds its own too).
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	Tags []NeutronTag `json:"tags,omitempty"`
}

// FloatingIPResourceStatus is what Neutron reports for the floating IP.
type FloatingIPResourceStatus struct {
	// FloatingIPAddress is the public address.
	FloatingIPAddress string `json:"floatingIPAddress,omitempty"`
	// FloatingNetworkID is the ID of the external network the address comes from.
	FloatingNetworkID string `json:"floatingNetworkID,omitempty"`
	// PortID is the ID of the port the address is associated with (empty: not associated).
	PortID string `json:"portID,omitempty"`
	// FixedIPAddress is the port's address the floating IP translates to.
	FixedIPAddress string `json:"fixedIPAddress,omitempty"`
	// RouterID is the ID of the router that does the translation.
	RouterID string `json:"routerID,omitempty"`
	// Status in Neutron: ACTIVE, DOWN or ERROR.
	Status string `json:"status,omitempty"`
	// Description of the floating IP in Neutron.
	Description string `json:"description,omitempty"`
	// Tags of the floating IP in Neutron (KupenStack's own included).
	Tags []string `json:"tags,omitempty"`
}

// FloatingIPStatus is the observed state of a FloatingIP.
type FloatingIPStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the floating IP as Neutron last reported it.
	// +optional
	Resource *FloatingIPResourceStatus `json:"resource,omitempty"`
}

// FloatingIP is a Neutron floating IP in the namespace's project.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=osfip,categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Address",type=string,JSONPath=`.status.resource.floatingIPAddress`
// +kubebuilder:printcolumn:name="Port",type=string,JSONPath=`.spec.portRef`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FloatingIP struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FloatingIPSpec   `json:"spec"`
	Status FloatingIPStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (f *FloatingIP) GetManagedSpec() *ManagedSpec { return &f.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (f *FloatingIP) GetManagedStatus() *ManagedStatus { return &f.Status.ManagedStatus }

// FloatingIPList is a list of FloatingIPs.
// +kubebuilder:object:root=true
type FloatingIPList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FloatingIP `json:"items"`
}

func init() {
	SchemeBuilder.Register(&FloatingIP{}, &FloatingIPList{})
}
