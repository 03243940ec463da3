package subnet

import (
	"context"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=providersubnets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=providersubnets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=providersubnets/finalizers,verbs=update

// SetupProvider registers the ProviderSubnet controller (admin scope, like its ProviderNetwork).
func SetupProvider(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	a := providerActuator
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.ProviderSubnet, subnets.Subnet]{
		Name:          "ProviderSubnet",
		Controller:    "providersubnet",
		Actuator:      a,
		Can:           generic.Capabilities[*kupenstackv1.ProviderSubnet, subnets.Subnet]{List: a.ListAll, ListOwned: a.ListOwned, Claims: a.Claims},
		New:           func() *kupenstackv1.ProviderSubnet { return &kupenstackv1.ProviderSubnet{} },
		NewList:       func() client.ObjectList { return &kupenstackv1.ProviderSubnetList{} },
		ClusterScoped: true,
		Dependencies:  []generic.Dependency[*kupenstackv1.ProviderSubnet]{generic.Refers[kupenstackv1.ProviderNetwork]("spec.providerNetworkRef", func(s *kupenstackv1.ProviderSubnet) []string { return generic.Ref(s.Spec.ProviderNetworkRef) })},
	})
}

func providerName(sn *kupenstackv1.ProviderSubnet) string { return generic.Name(sn, sn.Spec.Name) }

var providerActuator = actuator[*kupenstackv1.ProviderSubnet]{
	Resource: neutron.Resource[*kupenstackv1.ProviderSubnet, subnets.Subnet]{API: api, NameOf: providerName},
	params: func(sn *kupenstackv1.ProviderSubnet) *kupenstackv1.SubnetParameters {
		return &sn.Spec.SubnetParameters
	},
	networkID: func(s generic.Scope, sn *kupenstackv1.ProviderSubnet) string {
		return s.DependencyID("ProviderNetwork", sn.Spec.ProviderNetworkRef)
	},
	networkField: "spec.providerNetworkRef",
	observe: func(sn *kupenstackv1.ProviderSubnet, st *kupenstackv1.SubnetResourceStatus) {
		sn.Status.Resource = st
	},
}
