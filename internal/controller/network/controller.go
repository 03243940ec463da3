package network

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// ControllerName names the controller in logs, metrics and Events.
const ControllerName = "network"

// +kubebuilder:rbac:groups=kupenstack.io,resources=networks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=networks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=networks/finalizers,verbs=update

// SetupWithManager registers the Network controller.
func SetupWithManager(mgr ctrl.Manager, clients *openstack.Clients, resync time.Duration) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&kupenstackv1.Network{}).
		Complete(&generic.Reconciler[*kupenstackv1.Network, osNetwork]{
			Client:       mgr.GetClient(),
			Recorder:     mgr.GetEventRecorder(ControllerName),
			Clients:      clients,
			Actuator:     actuator{},
			Kind:         "Network",
			New:          func() *kupenstackv1.Network { return &kupenstackv1.Network{} },
			ResyncPeriod: resync,
		})
}
