package network

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=networks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=networks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=networks/finalizers,verbs=update

// Setup registers the Network controller.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.Network, osNetwork]{
		Name:       "Network",
		Controller: "network",
		Actuator:   actuator{neutron.Resource[*kupenstackv1.Network, osNetwork]{API: api, NameOf: name}},
		New:        func() *kupenstackv1.Network { return &kupenstackv1.Network{} },
		NewList:    func() client.ObjectList { return &kupenstackv1.NetworkList{} },
	})
}
