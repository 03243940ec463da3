package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServerGroupPolicy is how Nova places the group's servers relative to each other.
// +kubebuilder:validation:Enum=affinity;anti-affinity;soft-affinity;soft-anti-affinity
type ServerGroupPolicy string

// ServerGroupSpec is the desired Nova server group. Nova cannot change a server group: every field
// is immutable.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged ServerGroup must import an existing server group",fieldPath=".import",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.policy)",message="policy is required unless the server group is imported",fieldPath=".policy",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.maxServersPerHost) || (has(self.policy) && self.policy == 'anti-affinity')",message="maxServersPerHost applies to the anti-affinity policy only",fieldPath=".maxServersPerHost"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.policy) == has(self.policy)",message="a server group cannot change; create another one",fieldPath=".policy"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.maxServersPerHost) == has(self.maxServersPerHost)",message="a server group cannot change; create another one",fieldPath=".maxServersPerHost"
type ServerGroupSpec struct {
	ManagedSpec `json:",inline"`

	// Policy: affinity (same host), anti-affinity (different hosts), or their soft (best
	// effort) forms soft-affinity and soft-anti-affinity. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="policy is immutable"
	// +optional
	Policy ServerGroupPolicy `json:"policy,omitempty"`

	// (Maximum: Nova takes any positive integer; 1000 is far above the servers one compute host
	// runs, and equals a VirtualMachineSet's replicas bound, so a larger value is a typo, not a
	// policy.)

	// MaxServersPerHost relaxes anti-affinity to at most this many of the group's servers on one
	// host (1 to 1000). Immutable.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="maxServersPerHost is immutable"
	// +optional
	MaxServersPerHost *int32 `json:"maxServersPerHost,omitempty"`
}

// ServerGroupResourceStatus is what Nova reports for the server group.
type ServerGroupResourceStatus struct {
	// Name of the server group in Nova.
	Name string `json:"name,omitempty"`
	// Policy of the server group: affinity, anti-affinity, soft-affinity or soft-anti-affinity.
	Policy string `json:"policy,omitempty"`
	// Members are the IDs of the servers in the group.
	Members []string `json:"members,omitempty"`
}

// ServerGroupStatus is the observed state of a ServerGroup.
type ServerGroupStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the server group as Nova last reported it.
	// +optional
	Resource *ServerGroupResourceStatus `json:"resource,omitempty"`
}

// ServerGroup is a Nova server group: VirtualMachines that name it are placed by its policy. Nova
// server groups have no tags, so the group is named after the object in the namespace's project,
// where only KupenStack creates resources.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ossrvgrp,categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=`.spec.policy`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ServerGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ServerGroupSpec   `json:"spec"`
	Status ServerGroupStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (g *ServerGroup) GetManagedSpec() *ManagedSpec { return &g.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (g *ServerGroup) GetManagedStatus() *ManagedStatus { return &g.Status.ManagedStatus }

// ServerGroupList is a list of ServerGroups.
// +kubebuilder:object:root=true
type ServerGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServerGroup `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ServerGroup{}, &ServerGroupList{})
}
