package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PortSpec is the desired Neutron port.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged Port must import an existing port",fieldPath=".import",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.networkRef)",message="networkRef is required unless the port is imported",fieldPath=".networkRef",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(oldSelf.networkRef) == has(self.networkRef)",message="networkRef is immutable",fieldPath=".networkRef"
// +kubebuilder:validation:XValidation:rule="!(has(self.portSecurityEnabled) && !self.portSecurityEnabled && has(self.securityGroupRefs) && size(self.securityGroupRefs) > 0)",message="security groups need port security",fieldPath=".securityGroupRefs"
type PortSpec struct {
	ManagedSpec `json:",inline"`

	// Name in OpenStack; defaults to the object's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == self.trim() && !self.matches('[[:cntrl:]]')",message="name must not start or end with whitespace or contain control characters"
	// +optional
	Name string `json:"name,omitempty"`

	// Description of the port.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	// NetworkRef names the Network object the port is on. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="networkRef is immutable"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	NetworkRef string `json:"networkRef,omitempty"`

	// FixedIPs pick the subnets (and optionally addresses) of the port; Neutron picks when empty.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	FixedIPs []PortFixedIP `json:"fixedIPs,omitempty"`

	// SecurityGroupRefs name SecurityGroup objects; the network's default applies when unset.
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.all(r, r.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'))",message="each item must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	SecurityGroupRefs []string `json:"securityGroupRefs,omitempty"`

	// PortSecurityEnabled; the network's setting applies when unset.
	// +optional
	PortSecurityEnabled *bool `json:"portSecurityEnabled,omitempty"`

	// AllowedAddressPairs let other addresses pass port security (e.g. a VIP).
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	AllowedAddressPairs []AddressPair `json:"allowedAddressPairs,omitempty"`

	// AdminStateUp: false takes the port down administratively; default true.
	// +kubebuilder:default=true
	// +optional
	AdminStateUp *bool `json:"adminStateUp,omitempty"`

	// Tags added to the port in OpenStack (KupenStack adds its own too).
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	Tags []NeutronTag `json:"tags,omitempty"`
}

// PortFixedIP asks for an address on a subnet.
type PortFixedIP struct {
	// SubnetRef names a Subnet object of the port's network.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	SubnetRef string `json:"subnetRef"`
	// IPAddress to use; Neutron picks a free one when unset.
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="ipAddress must be an IP address"
	// +optional
	IPAddress string `json:"ipAddress,omitempty"`
}

// AddressPair is an address (or CIDR) and optional MAC allowed through port security.
type AddressPair struct {
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isIP(self) || isCIDR(self)",message="ipAddress must be an IP address or CIDR"
	// IPAddress (or CIDR) the port may also send from.
	IPAddress string `json:"ipAddress"`
	// +kubebuilder:validation:MaxLength=17
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$')",message="macAddress must be a MAC address: six pairs of hexadecimal digits separated by ':', such as fa:16:3e:00:00:01"
	// +optional
	// MACAddress that goes with it; the port's own MAC address when unset.
	MACAddress string `json:"macAddress,omitempty"`
}

// PortIPStatus is an address of the port.
type PortIPStatus struct {
	// SubnetID is the ID of the subnet the address is from.
	SubnetID string `json:"subnetID"`
	// IPAddress is the address.
	IPAddress string `json:"ipAddress"`
}

// PortResourceStatus is what Neutron reports for the port.
type PortResourceStatus struct {
	// Name of the port in Neutron.
	Name string `json:"name,omitempty"`
	// Description of the port in Neutron.
	Description string `json:"description,omitempty"`
	// Status in Neutron: ACTIVE, DOWN, BUILD or ERROR.
	Status string `json:"status,omitempty"`
	// NetworkID is the ID of the port's network.
	NetworkID string `json:"networkID,omitempty"`
	// MACAddress of the port.
	MACAddress string `json:"macAddress,omitempty"`
	// FixedIPs are the port's addresses.
	FixedIPs []PortIPStatus `json:"fixedIPs,omitempty"`
	// SecurityGroupIDs are the IDs of the port's security groups.
	SecurityGroupIDs []string `json:"securityGroupIDs,omitempty"`
	// DeviceID is the ID of what uses the port (a server, a router); empty when unused.
	DeviceID string `json:"deviceID,omitempty"`
	// DeviceOwner says what kind of thing uses the port, e.g. compute:nova or network:router_interface.
	DeviceOwner string `json:"deviceOwner,omitempty"`
	// AdminStateUp: the port is administratively up.
	AdminStateUp bool `json:"adminStateUp"`
	// Tags of the port in Neutron (KupenStack's own included).
	Tags []string `json:"tags,omitempty"`
}

// PortStatus is the observed state of a Port.
type PortStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the port as Neutron last reported it.
	// +optional
	Resource *PortResourceStatus `json:"resource,omitempty"`
}

// Port is a Neutron port in the namespace's project.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=osport,categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Network",type=string,JSONPath=`.spec.networkRef`
// +kubebuilder:printcolumn:name="IP",type=string,JSONPath=`.status.resource.fixedIPs[0].ipAddress`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.resource.status`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Port struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PortSpec   `json:"spec"`
	Status PortStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (p *Port) GetManagedSpec() *ManagedSpec { return &p.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (p *Port) GetManagedStatus() *ManagedStatus { return &p.Status.ManagedStatus }

// PortList is a list of Ports.
// +kubebuilder:object:root=true
type PortList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Port `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Port{}, &PortList{})
}
