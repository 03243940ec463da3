package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SecurityGroupSpec is the desired Neutron security group. Its rules are reconciled as a set:
// rules in OpenStack that are not in the spec are removed, Neutron's default egress rules included.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged SecurityGroup must import an existing security group",fieldPath=".import",reason=FieldValueRequired
type SecurityGroupSpec struct {
	ManagedSpec `json:",inline"`

	// Name in OpenStack; defaults to the object's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == self.trim() && !self.matches('[[:cntrl:]]')",message="name must not start or end with whitespace or contain control characters"
	// +optional
	Name string `json:"name,omitempty"`

	// Description of the security group.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	// Rules of the group.
	// +kubebuilder:validation:MaxItems=128
	// +listType=atomic
	// +optional
	Rules []SecurityGroupRule `json:"rules,omitempty"`

	// Tags added to the group in OpenStack (KupenStack adds its own too).
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	Tags []NeutronTag `json:"tags,omitempty"`
}

// SecurityGroupRule allows one kind of traffic. For tcp, udp, sctp, dccp and udplite,
// portRangeMin and portRangeMax bound the destination ports; for icmp and ipv6-icmp they are the
// ICMP type and code (as in Neutron).
// +kubebuilder:validation:XValidation:rule="!(has(self.portRangeMin) || has(self.portRangeMax)) || (has(self.protocol) && self.protocol in ['tcp', 'udp', 'sctp', 'dccp', 'udplite']) || (has(self.protocol) && self.protocol in ['icmp', 'ipv6-icmp'])",message="port ranges need a protocol with ports (tcp, udp, sctp, dccp, udplite), or icmp/ipv6-icmp for an ICMP type and code",fieldPath=".protocol"
// +kubebuilder:validation:XValidation:rule="!(has(self.protocol) && self.protocol in ['tcp', 'udp', 'sctp', 'dccp', 'udplite']) || !has(self.portRangeMin) || has(self.portRangeMax)",message="portRangeMin and portRangeMax go together",fieldPath=".portRangeMax",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!(has(self.protocol) && self.protocol in ['tcp', 'udp', 'sctp', 'dccp', 'udplite']) || !has(self.portRangeMax) || has(self.portRangeMin)",message="portRangeMin and portRangeMax go together",fieldPath=".portRangeMin",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!(has(self.protocol) && self.protocol in ['tcp', 'udp', 'sctp', 'dccp', 'udplite']) || !has(self.portRangeMin) || !has(self.portRangeMax) || self.portRangeMin <= self.portRangeMax",message="portRangeMin must not exceed portRangeMax",fieldPath=".portRangeMin"
// +kubebuilder:validation:XValidation:rule="!(has(self.protocol) && self.protocol in ['tcp', 'udp', 'sctp', 'dccp', 'udplite']) || !has(self.portRangeMin) || self.portRangeMin >= 1",message="ports are 1 to 65535 (0 is not a port)",fieldPath=".portRangeMin"
// +kubebuilder:validation:XValidation:rule="!(has(self.protocol) && self.protocol in ['icmp', 'ipv6-icmp']) || !has(self.portRangeMin) || self.portRangeMin <= 255",message="an ICMP type (portRangeMin) and code (portRangeMax) are 0 to 255",fieldPath=".portRangeMin"
// +kubebuilder:validation:XValidation:rule="!(has(self.protocol) && self.protocol in ['icmp', 'ipv6-icmp']) || !has(self.portRangeMax) || self.portRangeMax <= 255",message="an ICMP type (portRangeMin) and code (portRangeMax) are 0 to 255",fieldPath=".portRangeMax"
// +kubebuilder:validation:XValidation:rule="!(has(self.protocol) && self.protocol in ['icmp', 'ipv6-icmp']) || !has(self.portRangeMax) || has(self.portRangeMin)",message="an ICMP code (portRangeMax) needs a type (portRangeMin)",fieldPath=".portRangeMax"
// +kubebuilder:validation:XValidation:rule="!has(self.protocol) || self.protocol != 'ipv6-icmp' || (has(self.ethertype) && self.ethertype == 'IPv6')",message="protocol ipv6-icmp needs ethertype IPv6",fieldPath=".protocol"
// +kubebuilder:validation:XValidation:rule="!(has(self.remoteIPPrefix) && has(self.remoteGroupRef))",message="remoteIPPrefix and remoteGroupRef are mutually exclusive",fieldPath=".remoteIPPrefix"
// +kubebuilder:validation:XValidation:rule="!has(self.remoteIPPrefix) || !isCIDR(self.remoteIPPrefix) || (cidr(self.remoteIPPrefix).ip().family() == 6) == (has(self.ethertype) && self.ethertype == 'IPv6')",message="remoteIPPrefix does not match the ethertype",fieldPath=".remoteIPPrefix"
type SecurityGroupRule struct {
	// Direction of the traffic: ingress or egress.
	// +kubebuilder:validation:Enum=ingress;egress
	Direction string `json:"direction"`

	// Ethertype: IPv4 (default) or IPv6.
	// +kubebuilder:validation:Enum=IPv4;IPv6
	// +kubebuilder:default=IPv4
	// +optional
	Ethertype string `json:"ethertype,omitempty"`

	// Protocol: tcp, udp, icmp, ipv6-icmp, sctp, dccp, udplite, gre, esp, ah or vrrp; any
	// protocol when unset.
	// +kubebuilder:validation:Enum=tcp;udp;icmp;ipv6-icmp;sctp;dccp;udplite;gre;esp;ah;vrrp
	// +optional
	Protocol string `json:"protocol,omitempty"`

	// PortRangeMin: the first destination port (1-65535), or the ICMP type (0-255).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	// +optional
	PortRangeMin *int `json:"portRangeMin,omitempty"`
	// PortRangeMax: the last destination port (1-65535), or the ICMP code (0-255).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	// +optional
	PortRangeMax *int `json:"portRangeMax,omitempty"`

	// RemoteIPPrefix the traffic comes from (ingress) or goes to (egress).
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="remoteIPPrefix must be a CIDR"
	// +optional
	RemoteIPPrefix string `json:"remoteIPPrefix,omitempty"`

	// RemoteGroupRef names a SecurityGroup in the same namespace (this group's own name allowed)
	// whose members the traffic comes from or goes to.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	RemoteGroupRef string `json:"remoteGroupRef,omitempty"`

	// Description of the rule.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`
}

// SecurityGroupRuleStatus is a rule as Neutron reports it.
type SecurityGroupRuleStatus struct {
	// ID of the rule in Neutron.
	ID string `json:"id"`
	// Direction of the traffic the rule allows: ingress or egress.
	Direction string `json:"direction"`
	// Ethertype of the traffic: IPv4 or IPv6.
	Ethertype string `json:"ethertype"`
	// Protocol of the traffic (tcp, udp, icmp, ...); empty: any.
	Protocol string `json:"protocol,omitempty"`
	// PortRangeMin is the first port of the range (ICMP: the type).
	PortRangeMin int `json:"portRangeMin,omitempty"`
	// PortRangeMax is the last port of the range (ICMP: the code).
	PortRangeMax int `json:"portRangeMax,omitempty"`
	// RemoteIPPrefix is the CIDR the traffic comes from or goes to.
	RemoteIPPrefix string `json:"remoteIPPrefix,omitempty"`
	// RemoteGroupID is the ID of the security group whose members the traffic comes from or goes to.
	RemoteGroupID string `json:"remoteGroupID,omitempty"`
}

// SecurityGroupResourceStatus is what Neutron reports for the group.
type SecurityGroupResourceStatus struct {
	// Name of the security group in Neutron.
	Name string `json:"name,omitempty"`
	// Description of the security group in Neutron.
	Description string `json:"description,omitempty"`
	// Stateful: return traffic of allowed connections is allowed too.
	Stateful bool `json:"stateful"`
	// Rules are every rule of the group in Neutron, the default egress rules included.
	Rules []SecurityGroupRuleStatus `json:"rules,omitempty"`
	// Tags of the security group in Neutron (KupenStack's own included).
	Tags []string `json:"tags,omitempty"`
}

// SecurityGroupStatus is the observed state of a SecurityGroup.
type SecurityGroupStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the group as Neutron last reported it.
	// +optional
	Resource *SecurityGroupResourceStatus `json:"resource,omitempty"`
}

// SecurityGroup is a Neutron security group in the namespace's project.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ossg,categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type SecurityGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:default={}
	Spec   SecurityGroupSpec   `json:"spec,omitempty"`
	Status SecurityGroupStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (g *SecurityGroup) GetManagedSpec() *ManagedSpec { return &g.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (g *SecurityGroup) GetManagedStatus() *ManagedStatus { return &g.Status.ManagedStatus }

// SecurityGroupList is a list of SecurityGroups.
// +kubebuilder:object:root=true
type SecurityGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SecurityGroup `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SecurityGroup{}, &SecurityGroupList{})
}
