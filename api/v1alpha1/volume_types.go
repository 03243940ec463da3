package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VolumeSpec is the desired Cinder volume. It can grow (Cinder extends it) but never shrink; its
// type, availability zone and image are fixed at creation.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged Volume must import an existing volume",fieldPath=".import",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.sizeGiB)",message="sizeGiB is required unless the volume is imported",fieldPath=".sizeGiB",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.sizeGiB) || has(self.sizeGiB)",message="sizeGiB cannot be removed",fieldPath=".sizeGiB"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.imageRef) == has(self.imageRef)",message="imageRef is immutable",fieldPath=".imageRef"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.publicImageRef) == has(self.publicImageRef)",message="publicImageRef is immutable",fieldPath=".publicImageRef"
// +kubebuilder:validation:XValidation:rule="!has(self.imageRef) || !has(self.publicImageRef)",message="imageRef and publicImageRef are mutually exclusive",fieldPath=".publicImageRef"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.volumeType) == has(self.volumeType)",message="volumeType is immutable",fieldPath=".volumeType"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.availabilityZone) == has(self.availabilityZone)",message="availabilityZone is immutable",fieldPath=".availabilityZone"
type VolumeSpec struct {
	ManagedSpec `json:",inline"`

	// Name in Cinder; defaults to the object's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == self.trim() && !self.matches('[[:cntrl:]]')",message="name must not start or end with whitespace or contain control characters"
	// +optional
	Name string `json:"name,omitempty"`

	// Description of the volume.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	// SizeGiB of the volume. It may grow (the volume is extended, also while attached) but
	// never shrink.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="sizeGiB can grow but never shrink"
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	SizeGiB int `json:"sizeGiB,omitempty"`

	// VolumeType in Cinder (name or ID); the cloud's default when unset. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="volumeType is immutable"
	// +optional
	VolumeType string `json:"volumeType,omitempty"`

	// ImageRef names an Image object of the namespace whose data the volume starts with (a
	// bootable volume); the volume waits until the Image is Ready, and the Image cannot be deleted
	// while the Volume refers to it. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="imageRef is immutable"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	ImageRef string `json:"imageRef,omitempty"`

	// PublicImageRef names a (cluster-scoped) PublicImage whose data the volume starts with,
	// instead of imageRef; the PublicImage cannot be deleted while the Volume refers to it.
	// Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="publicImageRef is immutable"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	PublicImageRef string `json:"publicImageRef,omitempty"`

	// AvailabilityZone of the volume; Cinder chooses when unset. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="availabilityZone is immutable"
	// +kubebuilder:validation:XValidation:rule="!self.contains(':')",message="availabilityZone cannot contain ':' (Nova's zone:host form forces a host, which only admins may do)"
	// +optional
	AvailabilityZone string `json:"availabilityZone,omitempty"`

	// Metadata of the volume in Cinder; reconciled as a whole (KupenStack adds its own key).
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) >= 1 && size(k) <= 255)",message="metadata keys are 1 to 255 characters"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('kupenstack-'))",message="metadata keys starting with kupenstack- are reserved"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 255)",message="metadata values must be at most 255 characters"
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
}

// VolumeAttachmentStatus is one attachment of the volume to a server.
type VolumeAttachmentStatus struct {
	// ServerID is the ID of the server the volume is attached to.
	ServerID string `json:"serverID"`
	// Device is the volume's device name on the server, e.g. /dev/vdb.
	Device string `json:"device,omitempty"`
}

// VolumeResourceStatus is what Cinder reports for the volume.
type VolumeResourceStatus struct {
	// Name of the volume in Cinder.
	Name string `json:"name,omitempty"`
	// Description of the volume in Cinder.
	Description string `json:"description,omitempty"`
	// Status in Cinder: creating, downloading, available, in-use, extending, error, ...
	Status string `json:"status,omitempty"`
	// SizeGiB is the volume's size, in GiB.
	SizeGiB int `json:"sizeGiB,omitempty"`
	// VolumeType of the volume.
	VolumeType string `json:"volumeType,omitempty"`
	// AvailabilityZone the volume is in.
	AvailabilityZone string `json:"availabilityZone,omitempty"`
	// Bootable: a server can boot from the volume.
	Bootable bool `json:"bootable"`
	// ImageID is the ID of the image the volume was made from (empty: a blank volume).
	ImageID string `json:"imageID,omitempty"`
	// Attachments are the servers the volume is attached to.
	Attachments []VolumeAttachmentStatus `json:"attachments,omitempty"`
	// Metadata of the volume in Cinder.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// VolumeStatus is the observed state of a Volume.
type VolumeStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the volume as Cinder last reported it.
	// +optional
	Resource *VolumeResourceStatus `json:"resource,omitempty"`
}

// Volume is a Cinder volume in the namespace's project.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=osvol,categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.resource.status`
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.status.resource.sizeGiB`
// +kubebuilder:printcolumn:name="Bootable",type=boolean,JSONPath=`.status.resource.bootable`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Volume struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VolumeSpec   `json:"spec"`
	Status VolumeStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (v *Volume) GetManagedSpec() *ManagedSpec { return &v.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (v *Volume) GetManagedStatus() *ManagedStatus { return &v.Status.ManagedStatus }

// VolumeList is a list of Volumes.
// +kubebuilder:object:root=true
type VolumeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Volume `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Volume{}, &VolumeList{})
}
