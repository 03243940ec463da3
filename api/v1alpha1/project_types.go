package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LabelProject on a Namespace, with value ProjectEnabled, asks for the namespace's OpenStack project
// before any KupenStack object exists in it.
const (
	LabelProject   = "kupenstack.io/project"
	ProjectEnabled = "enabled"
)

// ProjectNamePrefix starts the Keystone name of every project KupenStack creates for a namespace.
const ProjectNamePrefix = "kupenstack-"

// ProjectSpec names the namespace a Project stands for. The operator fills it in.
type ProjectSpec struct {
	// Namespace is the Kubernetes namespace whose objects live in this OpenStack project.
	// It always equals the Project's own name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="namespace must be a namespace name (lower-case letters, digits and '-')"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="namespace is immutable"
	Namespace string `json:"namespace"`
}

// ProjectStatus is what the operator observed of the namespace's OpenStack project.
type ProjectStatus struct {
	// ID is the OpenStack (Keystone) project ID.
	// +optional
	ID string `json:"id,omitempty"`

	// ProjectName is the name of the project in Keystone.
	// +optional
	ProjectName string `json:"projectName,omitempty"`

	// CreatedByKupenstack: KupenStack created the project, so it deletes it with the namespace.
	// A project that existed before (adopted by name) is left in place.
	// +optional
	CreatedByKupenstack bool `json:"createdByKupenstack,omitempty"`

	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Project shows which OpenStack project a Kubernetes namespace maps to. The operator creates one
// per namespace that uses KupenStack; users read it and never need to write it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=openstack-admin
// +kubebuilder:validation:XValidation:rule="self.metadata.name == self.spec.namespace",message="a Project is named after its namespace",fieldPath=".metadata"
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.spec.namespace`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Project struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProjectSpec   `json:"spec"`
	Status ProjectStatus `json:"status,omitempty"`
}

// ProjectList is a list of Projects.
// +kubebuilder:object:root=true
type ProjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Project `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Project{}, &ProjectList{})
}
