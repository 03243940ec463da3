package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FlavorSpec is the desired Nova flavor. Nova cannot resize a flavor: the sizes, name and
// visibility are immutable; description and extra specs can change.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged Flavor must import an existing flavor",fieldPath=".import",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.vcpus)",message="vcpus is required unless the flavor is imported",fieldPath=".vcpus",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.ramMiB)",message="ramMiB is required unless the flavor is imported",fieldPath=".ramMiB",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(oldSelf.vcpus) == has(self.vcpus)",message="flavor sizes are immutable",fieldPath=".vcpus"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.ramMiB) == has(self.ramMiB)",message="flavor sizes are immutable",fieldPath=".ramMiB"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.diskGiB) == has(self.diskGiB)",message="flavor sizes are immutable",fieldPath=".diskGiB"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.ephemeralGiB) == has(self.ephemeralGiB)",message="flavor sizes are immutable",fieldPath=".ephemeralGiB"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.swapMiB) == has(self.swapMiB)",message="flavor sizes are immutable",fieldPath=".swapMiB"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.name) == has(self.name)",message="name is immutable",fieldPath=".name"
type FlavorSpec struct {
	ManagedSpec `json:",inline"`

	// Name in Nova; defaults to the object's name. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="name is immutable"
	// +kubebuilder:validation:XValidation:rule="self == self.trim() && !self.matches('[[:cntrl:]]')",message="name must not start or end with whitespace or contain control characters"
	// +optional
	Name string `json:"name,omitempty"`

	// Description of the flavor.
	// +kubebuilder:validation:MaxLength=65535
	// +optional
	Description string `json:"description,omitempty"`

	// VCPUs of each server. Immutable.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="vcpus is immutable"
	// +optional
	VCPUs int `json:"vcpus,omitempty"`

	// RAMMiB of each server. Immutable.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="ramMiB is immutable"
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	RAMMiB int `json:"ramMiB,omitempty"`

	// DiskGiB of the root disk; 0 means servers must boot from a volume. Immutable.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="diskGiB is immutable"
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	DiskGiB int `json:"diskGiB,omitempty"`

	// EphemeralGiB of the ephemeral disk. Immutable.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="ephemeralGiB is immutable"
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	EphemeralGiB int `json:"ephemeralGiB,omitempty"`

	// SwapMiB of swap. Immutable.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="swapMiB is immutable"
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	SwapMiB int `json:"swapMiB,omitempty"`

	// IsPublic: every project may use it; default true. Immutable.
	// +kubebuilder:default=true
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="isPublic is immutable"
	// +optional
	IsPublic *bool `json:"isPublic,omitempty"`

	// ExtraSpecs (e.g. hw:cpu_policy) are reconciled as a set. Keys are 1 to 255 letters, digits,
	// spaces, '-', '_', ':' or '.'; values at most 255 characters (Nova's rules).
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[-a-zA-Z0-9_:. ]{1,255}$'))",message="extra spec keys are 1 to 255 letters, digits, spaces, '-', '_', ':' or '.'"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 255)",message="extra spec values are at most 255 characters"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('kupenstack:'))",message="extra specs starting with kupenstack: are reserved"
	// +optional
	ExtraSpecs map[string]string `json:"extraSpecs,omitempty"`
}

// FlavorResourceStatus is what Nova reports for the flavor.
type FlavorResourceStatus struct {
	// Name of the flavor in Nova.
	Name string `json:"name,omitempty"`
	// Description of the flavor in Nova.
	Description string `json:"description,omitempty"`
	// VCPUs: virtual CPUs of a server of this flavor.
	VCPUs int `json:"vcpus"`
	// RAMMiB: memory of a server of this flavor, in MiB.
	RAMMiB int `json:"ramMiB"`
	// DiskGiB: size of the root disk, in GiB (0: the image's size).
	DiskGiB int `json:"diskGiB"`
	// EphemeralGiB: size of the ephemeral disk, in GiB.
	EphemeralGiB int `json:"ephemeralGiB"`
	// SwapMiB: size of the swap disk, in MiB.
	SwapMiB int `json:"swapMiB"`
	// IsPublic: every project may use the flavor.
	IsPublic bool `json:"isPublic"`
	// ExtraSpecs are the flavor's extra specs (key/value scheduling and hardware hints).
	ExtraSpecs map[string]string `json:"extraSpecs,omitempty"`
}

// FlavorStatus is the observed state of a Flavor.
type FlavorStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the flavor as Nova last reported it.
	// +optional
	Resource *FlavorResourceStatus `json:"resource,omitempty"`
}

// Flavor is a Nova flavor. Flavors are cloud-wide and admin-only, so the kind is cluster-scoped:
// grant create/update on flavors to cloud admins only.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=osflavor,categories=openstack-admin
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="VCPUs",type=integer,JSONPath=`.spec.vcpus`
// +kubebuilder:printcolumn:name="RAM MiB",type=integer,JSONPath=`.spec.ramMiB`
// +kubebuilder:printcolumn:name="Disk GiB",type=integer,JSONPath=`.spec.diskGiB`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Flavor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FlavorSpec   `json:"spec"`
	Status FlavorStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (f *Flavor) GetManagedSpec() *ManagedSpec { return &f.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (f *Flavor) GetManagedStatus() *ManagedStatus { return &f.Status.ManagedStatus }

// FlavorList is a list of Flavors.
// +kubebuilder:object:root=true
type FlavorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Flavor `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Flavor{}, &FlavorList{})
}
