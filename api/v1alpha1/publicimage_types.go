package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PublicImageSpec is the desired public Glance image: the same fields as an Image's but the
// visibility, which is always public. The data and its formats are immutable.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged PublicImage must import an existing image",fieldPath=".import",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.source)",message="source is required unless the image is imported",fieldPath=".source",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(oldSelf.source) == has(self.source)",message="source is immutable",fieldPath=".source"
type PublicImageSpec struct {
	ManagedSpec  `json:",inline"`
	ImageContent `json:",inline"`
}

// PublicImage is a Glance image every project sees (visibility public), uploaded once with the
// operator's admin scope and owned by its project. Public images are cloud-wide and admin-only,
// so the kind is cluster-scoped: grant create/update on publicimages to cloud admins only.
// Tenants' VirtualMachines and Volumes name it in publicImageRef.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=ospubimage,categories=openstack-admin
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.resource.status`
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.status.resource.size`
// +kubebuilder:printcolumn:name="Visibility",type=string,JSONPath=`.status.resource.visibility`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PublicImage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PublicImageSpec `json:"spec"`
	Status ImageStatus     `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (i *PublicImage) GetManagedSpec() *ManagedSpec { return &i.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (i *PublicImage) GetManagedStatus() *ManagedStatus { return &i.Status.ManagedStatus }

// GetImageContent returns the image's name, data and attributes.
func (i *PublicImage) GetImageContent() *ImageContent { return &i.Spec.ImageContent }

// GetImageStatus returns the observed state.
func (i *PublicImage) GetImageStatus() *ImageStatus { return &i.Status }

// PublicImageList is a list of PublicImages.
// +kubebuilder:object:root=true
type PublicImageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PublicImage `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PublicImage{}, &PublicImageList{})
}
