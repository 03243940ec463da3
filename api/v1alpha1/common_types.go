package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ManagementPolicy says whether KupenStack may change the OpenStack resource.
// +kubebuilder:validation:Enum=managed;unmanaged
type ManagementPolicy string

const (
	// ManagementPolicyManaged: KupenStack creates, updates, repairs and (per onDelete) deletes it.
	ManagementPolicyManaged ManagementPolicy = "managed"
	// ManagementPolicyUnmanaged: KupenStack only observes an imported resource; it never writes to it.
	ManagementPolicyUnmanaged ManagementPolicy = "unmanaged"
)

// OnDelete says what happens in OpenStack when the Kubernetes object is deleted.
// +kubebuilder:validation:Enum=delete;detach
type OnDelete string

const (
	// OnDeleteDelete deletes the OpenStack resource with the object.
	OnDeleteDelete OnDelete = "delete"
	// OnDeleteDetach leaves the OpenStack resource in place.
	OnDeleteDetach OnDelete = "detach"
)

// ImportSpec takes over an existing OpenStack resource in the namespace's project instead of
// creating one: by ID, or by name when exactly one resource has it.
// +kubebuilder:validation:XValidation:rule="has(self.id) != has(self.name)",message="import needs exactly one of id or name"
type ImportSpec struct {
	// ID of the OpenStack resource.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9a-fA-F-]{1,64}$')",message="id must be an OpenStack ID: hexadecimal digits and '-', such as 3f2a0c4e-8d1b-4b5e-9a7c-2e6f1d0b9c8a"
	// +optional
	ID string `json:"id,omitempty"`
	// Name of the OpenStack resource.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Name string `json:"name,omitempty"`
}

// ManagedSpec are the fields every OpenStack resource kind shares: how KupenStack manages it.
// +kubebuilder:validation:XValidation:rule="has(oldSelf.import) == has(self.import)",message="import is immutable: it cannot be added or removed after creation",fieldPath=".import"
type ManagedSpec struct {
	// ManagementPolicy: managed (default) or unmanaged (observe an imported resource only).
	// +kubebuilder:default=managed
	// +optional
	ManagementPolicy ManagementPolicy `json:"managementPolicy,omitempty"`

	// OnDelete: delete (default) removes the OpenStack resource with the object; detach leaves it.
	// +kubebuilder:default=delete
	// +optional
	OnDelete OnDelete `json:"onDelete,omitempty"`

	// Import an existing OpenStack resource instead of creating one. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="import is immutable"
	// +optional
	Import *ImportSpec `json:"import,omitempty"`

	// ResyncPeriod: how often OpenStack is compared with the spec to find drift, as a duration
	// (30s, 10m, 1h); 0 turns it off, otherwise between 1s and 720h (30 days). Defaults to the
	// operator's --resync-period (10 minutes).
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(0|(([0-9]{1,5}([.][0-9]{0,9})?|[.][0-9]{1,9})(ns|us|µs|μs|ms|s|m|h)){1,4})$') || duration(self) == duration('0s') || (duration(self) >= duration('1s') && duration(self) <= duration('720h'))",message="resyncPeriod must be 0 (off) or between 1s and 720h"
	// +optional
	ResyncPeriod *Duration `json:"resyncPeriod,omitempty"`
}

// ManagedStatus is the status every OpenStack resource kind shares.
type ManagedStatus struct {
	// ID of the OpenStack resource.
	// +optional
	ID string `json:"id,omitempty"`

	// CreateRequested is true from just before KupenStack first asks OpenStack to create the
	// resource until its ID is in id (a failed create leaves it set): an operator that died in
	// between finds the resource made for this object before it creates another.
	// +optional
	CreateRequested bool `json:"createRequested,omitempty"`

	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// LastSyncTime is when OpenStack was last found to match the spec.
	// +optional
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`

	// Conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ManagedObject is implemented by every OpenStack resource kind; the reconcile engine works on it.
// +kubebuilder:object:generate=false
type ManagedObject interface {
	metav1.Object
	GetManagedSpec() *ManagedSpec
	GetManagedStatus() *ManagedStatus
}

// LabelValue is a Kubernetes label value: at most 63 letters, digits, '-', '_' or '.', starting
// and ending with a letter or digit (or empty).
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:XValidation:rule="self.matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$')",message="must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
type LabelValue string

// AnnotationValue is a Kubernetes annotation value. Its bound is the annotations' total
// (256 KiB): it lets the API server bound the cost of the rule that adds them up.
// +kubebuilder:validation:MaxLength=262144
type AnnotationValue string

// LabelSet is m as plain strings, for label selectors and object labels.
func LabelSet(m map[string]LabelValue) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}
