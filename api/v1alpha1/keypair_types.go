package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KeyPairSpec is the desired Nova key pair. Key pairs cannot change in Nova: every field is
// immutable (replace the object to rotate a key).
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged KeyPair must import an existing key pair",fieldPath=".import",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.publicKey)",message="publicKey is required unless the key pair is imported",fieldPath=".publicKey",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(oldSelf.publicKey) == has(self.publicKey)",message="publicKey is immutable",fieldPath=".publicKey"
type KeyPairSpec struct {
	ManagedSpec `json:",inline"`

	// PublicKey in OpenSSH format (type ssh) or a PEM certificate (type x509). Immutable.
	// +kubebuilder:validation:MinLength=16
	// +kubebuilder:validation:MaxLength=16384
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="publicKey is immutable"
	// +kubebuilder:validation:XValidation:rule="self.startsWith('-----BEGIN CERTIFICATE-----') || self.matches('^(ssh-rsa AAAAB3NzaC1yc2E|ssh-dss AAAAB3NzaC1kc3M|ssh-ed25519 AAAAC3NzaC1lZDI1NTE5|ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTY|ecdsa-sha2-nistp384 AAAAE2VjZHNhLXNoYTItbmlzdHAzODQ|ecdsa-sha2-nistp521 AAAAE2VjZHNhLXNoYTItbmlzdHA1MjE|sk-[a-z0-9-]+@openssh[.]com AAAA)[A-Za-z0-9+/]*={0,2}( [^\\n]*)?\\n?$')",message="publicKey must be an OpenSSH public key or a PEM certificate: one line of key type, base64 key data of that type and an optional comment"
	// +optional
	PublicKey string `json:"publicKey,omitempty"`

	// Type: ssh (default) or x509. Immutable.
	// +kubebuilder:validation:Enum=ssh;x509
	// +kubebuilder:default=ssh
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="type is immutable"
	// +optional
	Type string `json:"type,omitempty"`
}

// KeyPairResourceStatus is what Nova reports for the key pair.
type KeyPairResourceStatus struct {
	// Name of the key pair in Nova (servers refer to it by this name).
	Name string `json:"name,omitempty"`
	// Fingerprint of the public key, as Nova computes it.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Type of the key pair: ssh or x509.
	Type string `json:"type,omitempty"`
}

// KeyPairStatus is the observed state of a KeyPair.
type KeyPairStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the key pair as Nova last reported it.
	// +optional
	Resource *KeyPairResourceStatus `json:"resource,omitempty"`
}

// KeyPair is a Nova key pair for the namespace's servers. Nova keeps key pairs per user, not per
// project, so its name in Nova is "<namespace>_<name>": namespaces never collide. The object's name
// is at most 191 characters, without dots: Nova's limit is 255, and a namespace has up to 63
// (63 + 1 + 191 = 255; the rule cannot see the object's own namespace).
// +kubebuilder:object:root=true
// +kubebuilder:validation:XValidation:rule="!self.metadata.name.contains('.')",message="Nova key pair names cannot contain dots",fieldPath=".metadata"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 191",message="metadata.name of a KeyPair is at most 191 characters: its Nova name is <namespace>_<name>, at most 255",fieldPath=".metadata"
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=oskp,categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Nova name",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Fingerprint",type=string,JSONPath=`.status.resource.fingerprint`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KeyPair struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KeyPairSpec   `json:"spec"`
	Status KeyPairStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (k *KeyPair) GetManagedSpec() *ManagedSpec { return &k.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (k *KeyPair) GetManagedStatus() *ManagedStatus { return &k.Status.ManagedStatus }

// KeyPairList is a list of KeyPairs.
// +kubebuilder:object:root=true
type KeyPairList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KeyPair `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KeyPair{}, &KeyPairList{})
}
