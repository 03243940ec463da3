// Package scheme builds the runtime.Scheme shared by the manager and the tests: the built-in
// Kubernetes kinds plus every KupenStack kind.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// New returns a scheme with the Kubernetes and KupenStack kinds registered.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(kupenstackv1.AddToScheme(s))
	return s
}
