// Package v1alpha1 holds the kupenstack.io/v1alpha1 API: the OpenStack resources users declare in
// their namespaces and the objects that describe the cloud's life-cycle.
// +kubebuilder:object:generate=true
// +groupName=kupenstack.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the API group and version of every KupenStack kind.
	GroupVersion = schema.GroupVersion{Group: "kupenstack.io", Version: "v1alpha1"}

	// SchemeBuilder registers the KupenStack kinds with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the KupenStack kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
