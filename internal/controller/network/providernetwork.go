package network

import (
	"context"
	"strconv"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=providernetworks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=providernetworks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=providernetworks/finalizers,verbs=update

// SetupProvider registers the ProviderNetwork controller: the cloud admin's networks, made with
// the operator's admin scope (in its own project) like the other cluster-scoped kinds.
func SetupProvider(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	a := providerActuator
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.ProviderNetwork, osNetwork]{
		Name:          "ProviderNetwork",
		Controller:    "providernetwork",
		Actuator:      a,
		Can:           generic.Capabilities[*kupenstackv1.ProviderNetwork, osNetwork]{List: a.ListAll, ListOwned: a.ListOwned, Claims: a.Claims},
		New:           func() *kupenstackv1.ProviderNetwork { return &kupenstackv1.ProviderNetwork{} },
		NewList:       func() client.ObjectList { return &kupenstackv1.ProviderNetworkList{} },
		ClusterScoped: true,
	})
}

func providerName(n *kupenstackv1.ProviderNetwork) string { return generic.Name(n, n.Spec.Name) }

var providerActuator = actuator[*kupenstackv1.ProviderNetwork]{
	Resource: neutron.Resource[*kupenstackv1.ProviderNetwork, osNetwork]{API: api, NameOf: providerName},
	params: func(n *kupenstackv1.ProviderNetwork) *kupenstackv1.NetworkParameters {
		return &n.Spec.NetworkParameters
	},
	segment: func(n *kupenstackv1.ProviderNetwork) *kupenstackv1.ProviderNetworkSpec { return &n.Spec },
	observe: func(n *kupenstackv1.ProviderNetwork, res *osNetwork) {
		seg, _ := strconv.Atoi(res.SegmentationID) // empty for flat and local networks
		n.Status.Resource = &kupenstackv1.ProviderNetworkResourceStatus{
			NetworkResourceStatus: resourceStatus(res),
			NetworkType:           res.NetworkType,
			PhysicalNetwork:       res.PhysicalNetwork,
			SegmentationID:        seg,
		}
	},
}
