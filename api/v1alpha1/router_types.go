package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RouterSpec is the desired Neutron router.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged Router must import an existing router",fieldPath=".import",reason=FieldValueRequired
type RouterSpec struct {
	ManagedSpec `json:",inline"`

	// Name in OpenStack; defaults to the object's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == self.trim() && !self.matches('[[:cntrl:]]')",message="name must not start or end with whitespace or contain control characters"
	// +optional
	Name string `json:"name,omitempty"`

	// Description of the router.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	// AdminStateUp: false takes the router down administratively; default true.
	// +kubebuilder:default=true
	// +optional
	AdminStateUp *bool `json:"adminStateUp,omitempty"`

	// ExternalGateway connects the router to an external network.
	// +optional
	ExternalGateway *RouterGateway `json:"externalGateway,omitempty"`

	// Interfaces attach the router to subnets, one port each.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=subnetRef
	// +optional
	Interfaces []RouterInterface `json:"interfaces,omitempty"`

	// Tags added to the router in OpenStack (KupenStack adds its own too).
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	Tags []NeutronTag `json:"tags,omitempty"`
}

// RouterGateway names the external network of a router: the cloud admin's ProviderNetwork, or a
// Network object of the namespace (one that imports an external network).
// +kubebuilder:validation:XValidation:rule="has(self.networkRef) != has(self.providerNetworkRef)",message="exactly one of networkRef or providerNetworkRef is required"
type RouterGateway struct {
	// NetworkRef names a Network object in the same namespace (one that imports an external
	// network: import.name and managementPolicy unmanaged).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	NetworkRef string `json:"networkRef,omitempty"`

	// ProviderNetworkRef names a (cluster-scoped) ProviderNetwork object, an external network
	// the cloud's admin declared.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	ProviderNetworkRef string `json:"providerNetworkRef,omitempty"`
}

// RouterInterface attaches the router to a subnet.
type RouterInterface struct {
	// SubnetRef names a Subnet object in the same namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	SubnetRef string `json:"subnetRef"`
}

// RouterInterfaceStatus is one attached subnet as Neutron reports it.
type RouterInterfaceStatus struct {
	// SubnetID is the ID of the subnet the interface is on.
	SubnetID string `json:"subnetID"`
	// PortID is the ID of the interface's port.
	PortID string `json:"portID"`
	// IPAddress is the router's address on the subnet.
	IPAddress string `json:"ipAddress,omitempty"`
}

// RouterResourceStatus is what Neutron reports for the router.
type RouterResourceStatus struct {
	// Name of the router in Neutron.
	Name string `json:"name,omitempty"`
	// Description of the router in Neutron.
	Description string `json:"description,omitempty"`
	// Status in Neutron: ACTIVE, DOWN, BUILD or ERROR.
	Status string `json:"status,omitempty"`
	// AdminStateUp: the router is administratively up.
	AdminStateUp bool `json:"adminStateUp"`
	// ExternalGatewayNetworkID is the ID of the external network the router's gateway is on (empty: no gateway).
	ExternalGatewayNetworkID string `json:"externalGatewayNetworkID,omitempty"`
	// ExternalIPs are the router's addresses on the external network.
	ExternalIPs []string `json:"externalIPs,omitempty"`
	// Interfaces are the router's interfaces on subnets.
	Interfaces []RouterInterfaceStatus `json:"interfaces,omitempty"`
	// Tags of the router in Neutron (KupenStack's own included).
	Tags []string `json:"tags,omitempty"`
}

// RouterStatus is the observed state of a Router.
type RouterStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the router as Neutron last reported it.
	// +optional
	Resource *RouterResourceStatus `json:"resource,omitempty"`
}

// Router is a Neutron router in the namespace's project.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=osrouter,categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Gateway",type=string,JSONPath=`.spec.externalGateway.networkRef`
// +kubebuilder:printcolumn:name="Provider Gateway",type=string,JSONPath=`.spec.externalGateway.providerNetworkRef`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Router struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:default={}
	Spec   RouterSpec   `json:"spec,omitempty"`
	Status RouterStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (r *Router) GetManagedSpec() *ManagedSpec { return &r.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (r *Router) GetManagedStatus() *ManagedStatus { return &r.Status.ManagedStatus }

// RouterList is a list of Routers.
// +kubebuilder:object:root=true
type RouterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Router `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Router{}, &RouterList{})
}
