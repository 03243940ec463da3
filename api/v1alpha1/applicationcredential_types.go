package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApplicationCredentialRole is a role the credential's tokens carry in the namespace's project.
// Only the two a tenant's tools need: the operator's own roles (admin in its project) are never
// handed out.
// +kubebuilder:validation:Enum=member;reader
type ApplicationCredentialRole string

// The roles an ApplicationCredential may ask for.
const (
	ApplicationCredentialRoleMember ApplicationCredentialRole = "member"
	ApplicationCredentialRoleReader ApplicationCredentialRole = "reader"
)

// ApplicationCredentialSpec is what the namespace's tools get: a clouds.yaml in a Secret of the
// namespace, scoped to the namespace's project.
// +kubebuilder:validation:XValidation:rule="has(oldSelf.secretName) == has(self.secretName)",message="secretName is immutable",fieldPath=".secretName"
// +kubebuilder:validation:XValidation:rule="!has(self.rotateEvery) || !has(self.expiresAfter) || !self.rotateEvery.matches('^(0|(([0-9]{1,5}([.][0-9]{0,9})?|[.][0-9]{1,9})(ns|us|µs|μs|ms|s|m|h)){1,4})$') || !self.expiresAfter.matches('^(0|(([0-9]{1,5}([.][0-9]{0,9})?|[.][0-9]{1,9})(ns|us|µs|μs|ms|s|m|h)){1,4})$') || duration(self.rotateEvery) < duration(self.expiresAfter)",message="rotateEvery must be shorter than expiresAfter: a credential is replaced before it expires",fieldPath=".rotateEvery"
type ApplicationCredentialSpec struct {
	// Roles the credential's tokens carry in the namespace's project: member (the default: read
	// and write the project's resources) and/or reader (read only). Changing them replaces the
	// credential, as a rotation does.
	// +kubebuilder:default={member}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	// +listType=set
	// +optional
	Roles []ApplicationCredentialRole `json:"roles,omitempty"`

	// SecretName: the Secret of the namespace that receives the clouds.yaml (key clouds.yaml,
	// cloud name openstack). Defaults to the object's name. The operator owns that Secret: a
	// Secret of that name that it did not make is never overwritten. Immutable.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="secretName must be a Secret name (lower-case letters, digits, '-' and '.')"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="secretName is immutable"
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// ExpiresAfter: each credential expires in Keystone this long after it was made (at least
	// 10m, at most 87600h). Unset: credentials do not expire. The operator replaces the credential
	// before then: at rotateEvery, or when two thirds of expiresAfter have passed.
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(0|(([0-9]{1,5}([.][0-9]{0,9})?|[.][0-9]{1,9})(ns|us|µs|μs|ms|s|m|h)){1,4})$') || (duration(self) >= duration('10m') && duration(self) <= duration('87600h'))",message="expiresAfter must be between 10m and 87600h"
	// +optional
	ExpiresAfter *Duration `json:"expiresAfter,omitempty"`

	// RotateEvery: a new credential replaces the current one this long after it was made (at
	// least 1m, at most 87600h). Unset: only on request (rotation) or before expiry.
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(0|(([0-9]{1,5}([.][0-9]{0,9})?|[.][0-9]{1,9})(ns|us|µs|μs|ms|s|m|h)){1,4})$') || (duration(self) >= duration('1m') && duration(self) <= duration('87600h'))",message="rotateEvery must be between 1m and 87600h"
	// +optional
	RotateEvery *Duration `json:"rotateEvery,omitempty"`

	// Rotation: change it (to any other value, a counter or a date) to rotate the credential now.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Rotation string `json:"rotation,omitempty"`

	// RevokeGracePeriod: how long a replaced credential keeps working after the Secret holds its
	// successor, so that tools that read the Secret pick the new one up first (a mounted Secret
	// is refreshed by the kubelet within about a minute). Between 0s and 24h; defaults to 2m.
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(0|(([0-9]{1,5}([.][0-9]{0,9})?|[.][0-9]{1,9})(ns|us|µs|μs|ms|s|m|h)){1,4})$') || duration(self) <= duration('24h')",message="revokeGracePeriod must be at most 24h"
	// +optional
	RevokeGracePeriod *Duration `json:"revokeGracePeriod,omitempty"`
}

// ApplicationCredentialRef is one Keystone application credential the object made. Its secret is
// only in the Secret.
type ApplicationCredentialRef struct {
	// ID of the application credential in Keystone.
	ID string `json:"id"`
	// Name of the application credential in Keystone (the operator's user owns it).
	Name string `json:"name"`
	// CreatedAt: when the operator made it.
	CreatedAt metav1.Time `json:"createdAt"`
	// ExpiresAt: when Keystone stops accepting it; unset when it does not expire.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
	// Roles it was made with: member and/or reader.
	// +optional
	Roles []ApplicationCredentialRole `json:"roles,omitempty"`
	// RevokeAt: for a replaced credential, when the operator deletes it from Keystone.
	// +optional
	RevokeAt *metav1.Time `json:"revokeAt,omitempty"`
}

// ApplicationCredentialStatus is the observed state of an ApplicationCredential.
type ApplicationCredentialStatus struct {
	// ProjectID is the Keystone project the credentials are scoped to (the namespace's).
	// +optional
	ProjectID string `json:"projectID,omitempty"`

	// SecretName is the Secret that holds the current credential's clouds.yaml.
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// Current is the credential the Secret holds.
	// +optional
	Current *ApplicationCredentialRef `json:"current,omitempty"`

	// Previous are replaced credentials that still work until their revokeAt.
	// +listType=atomic
	// +optional
	Previous []ApplicationCredentialRef `json:"previous,omitempty"`

	// Rotation is the spec.rotation the current credential was made for.
	// +optional
	Rotation string `json:"rotation,omitempty"`

	// LastRotationTime is when a credential last replaced another.
	// +optional
	LastRotationTime *metav1.Time `json:"lastRotationTime,omitempty"`

	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ApplicationCredential is a Keystone application credential for the tools of a namespace: the
// operator makes it in the namespace's project with only the roles asked for, and writes a
// clouds.yaml that uses it into a Secret of the namespace. It is rotated on request
// (spec.rotation) or on a schedule without a gap, and revoked when the object is deleted.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=appcred,categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=`.status.secretName`
// +kubebuilder:printcolumn:name="Credential ID",type=string,JSONPath=`.status.current.id`
// +kubebuilder:printcolumn:name="Expires",type=date,JSONPath=`.status.current.expiresAt`,priority=1
// +kubebuilder:printcolumn:name="Last Rotation",type=date,JSONPath=`.status.lastRotationTime`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ApplicationCredential struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:default={}
	// +optional
	Spec   ApplicationCredentialSpec   `json:"spec"`
	Status ApplicationCredentialStatus `json:"status,omitempty"`
}

// TargetSecretName is the Secret the spec asks for: secretName, else the object's name.
func (a *ApplicationCredential) TargetSecretName() string {
	if a.Spec.SecretName != "" {
		return a.Spec.SecretName
	}
	return a.Name
}

// ApplicationCredentialList is a list of ApplicationCredentials.
// +kubebuilder:object:root=true
type ApplicationCredentialList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ApplicationCredential `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ApplicationCredential{}, &ApplicationCredentialList{})
}
