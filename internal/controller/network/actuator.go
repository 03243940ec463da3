// Package network maps the Network kind (a tenant's network in its namespace's project) and the
// ProviderNetwork kind (the cloud admin's provider network, cluster-scoped) to Neutron networks.
// Both are the same Neutron resource; the provider kind adds its segment and the external and
// shared flags (providernetwork.go).
package network

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/mtu"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsecurity"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/provider"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=networks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=networks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=networks/finalizers,verbs=update

// Setup registers the Network controller.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	a := tenantActuator
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.Network, osNetwork]{
		Name:       "Network",
		Controller: "network",
		Actuator:   a,
		Can:        generic.Capabilities[*kupenstackv1.Network, osNetwork]{List: a.ListAll, ListOwned: a.ListOwned, Claims: a.Claims},
		New:        func() *kupenstackv1.Network { return &kupenstackv1.Network{} },
		NewList:    func() client.ObjectList { return &kupenstackv1.NetworkList{} },
	})
}

var tenantActuator = actuator[*kupenstackv1.Network]{
	Resource: neutron.Resource[*kupenstackv1.Network, osNetwork]{API: api, NameOf: name},
	params:   func(n *kupenstackv1.Network) *kupenstackv1.NetworkParameters { return &n.Spec.NetworkParameters },
	observe: func(n *kupenstackv1.Network, res *osNetwork) {
		st := resourceStatus(res)
		n.Status.Resource = &st
	},
}

// osNetwork is a Neutron network with the extension fields KupenStack manages.
type osNetwork struct {
	networks.Network
	mtu.NetworkMTUExt
	portsecurity.PortSecurityExt
	external.NetworkExternalExt
	provider.NetworkProviderExt
}

// api are Neutron's network calls, with the extension fields.
var api = neutron.API[osNetwork]{
	GetFn: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) (*osNetwork, error) {
		var n osNetwork
		return &n, networks.Get(ctx, sc, id).ExtractInto(&n)
	},
	ListFn: func(ctx context.Context, sc *gophercloud.ServiceClient, f neutron.Filter) ([]osNetwork, error) {
		pages, err := networks.List(sc, networks.ListOpts{ProjectID: f.ProjectID, Tags: f.Tags, Name: f.Name}).AllPages(ctx)
		if err != nil {
			return nil, err
		}
		var found []osNetwork
		return found, networks.ExtractNetworksInto(pages, &found)
	},
	DeleteFn: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
		return networks.Delete(ctx, sc, id).ExtractErr()
	},
	IDOf:      func(r *osNetwork) string { return r.ID },
	TagsOf:    func(r *osNetwork) []string { return r.Tags },
	CreatedAt: func(r *osNetwork) time.Time { return r.CreatedAt },
	NameOf:    func(r *osNetwork) string { return r.Name },
}

// actuator maps one network kind: params are the fields both kinds share, segment the provider
// kind's own (nil for a tenant's Network), observe writes the kind's status.
type actuator[O generic.Object] struct {
	neutron.Resource[O, osNetwork]
	params  func(O) *kupenstackv1.NetworkParameters
	segment func(O) *kupenstackv1.ProviderNetworkSpec
	observe func(O, *osNetwork)
}

var (
	_ generic.Actuator[*kupenstackv1.Network, osNetwork]         = actuator[*kupenstackv1.Network]{}
	_ generic.Actuator[*kupenstackv1.ProviderNetwork, osNetwork] = actuator[*kupenstackv1.ProviderNetwork]{}
)

func name(n *kupenstackv1.Network) string { return generic.Name(n, n.Spec.Name) }

// provider is obj's ProviderNetwork spec, nil for a tenant's Network.
func (a actuator[O]) provider(obj O) *kupenstackv1.ProviderNetworkSpec {
	if a.segment == nil {
		return nil
	}
	return a.segment(obj)
}

func (a actuator[O]) Create(ctx context.Context, s generic.Scope, obj O) (*osNetwork, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	p := a.params(obj)
	create := networks.CreateOpts{
		Name:         a.NameOf(obj),
		Description:  p.Description,
		AdminStateUp: p.AdminStateUp,
	}
	var opts networks.CreateOptsBuilder = create
	if pv := a.provider(obj); pv != nil {
		create.Shared = &pv.Shared
		opts = external.CreateOptsExt{CreateOptsBuilder: segmentOpts{create, pv}, External: &pv.External}
	}
	if p.MTU != nil {
		opts = mtu.CreateOptsExt{CreateOptsBuilder: opts, MTU: *p.MTU}
	}
	if p.PortSecurityEnabled != nil {
		opts = portsecurity.NetworkCreateOptsExt{CreateOptsBuilder: opts, PortSecurityEnabled: p.PortSecurityEnabled}
	}
	var created osNetwork
	// Tags (the owner tag included) follow in Update: Zed's Neutron takes none on create.
	return &created, networks.Create(ctx, sc, opts).ExtractInto(&created)
}

// segmentOpts adds the provider attributes of one segment to a network's create body.
// gophercloud's provider.CreateOptsExt sends them as a "segments" list, which needs the
// multi-provider extension; the single-segment attributes work with every ML2 driver.
type segmentOpts struct {
	networks.CreateOptsBuilder
	spec *kupenstackv1.ProviderNetworkSpec
}

func (o segmentOpts) ToNetworkCreateMap() (map[string]any, error) {
	body, err := o.CreateOptsBuilder.ToNetworkCreateMap()
	if err != nil {
		return nil, err
	}
	n := body["network"].(map[string]any)
	n["provider:network_type"] = o.spec.NetworkType
	if o.spec.PhysicalNetwork != "" {
		n["provider:physical_network"] = o.spec.PhysicalNetwork
	}
	if o.spec.SegmentationID != nil {
		n["provider:segmentation_id"] = *o.spec.SegmentationID
	}
	return body, nil
}

// Diff compares every field of the spec that Neutron can change after creation. Fields the spec
// leaves unset (admin state, MTU, port security, a provider network's segment ID) are Neutron's
// defaults, not drift.
func (a actuator[O]) Diff(_ generic.Scope, obj O, res *osNetwork) generic.Changes {
	var d generic.Diff
	p := a.params(obj)
	generic.Value(&d, "spec.name", a.NameOf(obj), res.Name)
	generic.Value(&d, "spec.description", p.Description, res.Description)
	generic.Optional(&d, "spec.adminStateUp", p.AdminStateUp, res.AdminStateUp)
	generic.Optional(&d, "spec.mtu", p.MTU, res.MTU)
	generic.Optional(&d, "spec.portSecurityEnabled", p.PortSecurityEnabled, res.PortSecurityEnabled)
	generic.Set(&d, "spec.tags", neutron.Tags(obj, p.Tags), res.Tags)
	if pv := a.provider(obj); pv != nil {
		generic.Value(&d, "spec.shared", pv.Shared, res.Shared)
		generic.Value(&d, "spec.external", pv.External, res.External)
		// An unset type or physical network is the one Neutron chose.
		if pv.NetworkType != "" {
			generic.Value(&d, "spec.networkType", pv.NetworkType, res.NetworkType)
		}
		if pv.PhysicalNetwork != "" {
			generic.Value(&d, "spec.physicalNetwork", pv.PhysicalNetwork, res.PhysicalNetwork)
		}
		if pv.SegmentationID != nil {
			generic.Value(&d, "spec.segmentationID", strconv.Itoa(*pv.SegmentationID), res.SegmentationID)
		}
	}
	return d.Changes()
}

// Update makes the changes Diff found. Of the segment, Neutron can set back only the segment ID
// (unless a mechanism driver cannot move the bound ports; ML2/OVS can): the rest makes the
// network Degraded.
func (a actuator[O]) Update(ctx context.Context, s generic.Scope, obj O, cur *osNetwork, changes generic.Changes) (*osNetwork, error) {
	pv := a.provider(obj)
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	p := a.params(obj)
	if res, done, err := neutron.UpdateTags(ctx, sc, "networks", cur.ID, neutron.Tags(obj, p.Tags), cur.Tags, cur, changes,
		func(n osNetwork, tags []string) osNetwork { n.Tags = tags; return n }); done {
		return res, err
	}
	upd := networks.UpdateOpts{}
	dirty := false
	if changes.Has("spec.name") {
		want := a.NameOf(obj)
		upd.Name, dirty = &want, true
	}
	if changes.Has("spec.description") {
		upd.Description, dirty = &p.Description, true
	}
	if changes.Has("spec.adminStateUp") {
		upd.AdminStateUp, dirty = p.AdminStateUp, true
	}
	if changes.Has("spec.shared") {
		upd.Shared, dirty = &pv.Shared, true
	}
	var opts networks.UpdateOptsBuilder = upd
	if changes.Has("spec.external") {
		opts, dirty = external.UpdateOptsExt{UpdateOptsBuilder: opts, External: &pv.External}, true
	}
	if changes.Has("spec.mtu") {
		opts, dirty = mtu.UpdateOptsExt{UpdateOptsBuilder: opts, MTU: *p.MTU}, true
	}
	if changes.Has("spec.portSecurityEnabled") {
		opts, dirty = portsecurity.NetworkUpdateOptsExt{UpdateOptsBuilder: opts, PortSecurityEnabled: p.PortSecurityEnabled}, true
	}
	if dirty {
		if err := networks.Update(ctx, sc, cur.ID, opts).Err; err != nil {
			return cur, err
		}
	}
	if changes.Has("spec.segmentationID") && !changes.Has("spec.networkType") {
		// On its own: Neutron's refusal (a driver that cannot move bound ports) must not hold up the rest.
		body := map[string]any{"network": map[string]any{"provider:segmentation_id": *pv.SegmentationID}}
		if _, err := sc.Put(ctx, sc.ServiceURL("networks", cur.ID), body, nil, &gophercloud.RequestOpts{OkCodes: []int{200}}); err != nil {
			if gophercloud.ResponseCodeIs(err, http.StatusBadRequest) || openstack.IsConflict(err) {
				return cur, generic.Degraded(kupenstackv1.ReasonDriftNotRepairable, fmt.Sprintf(
					"spec.segmentationID is %s in Neutron, the spec says %d, and Neutron refused to set it back (%v): an admin can set it back once Neutron allows it (no port bound on the network), or delete and re-create the ProviderNetwork",
					cur.SegmentationID, *pv.SegmentationID, err), 0)
			}
			return cur, err
		}
	}
	// Re-read: the tags call and the update answer each carry only part of the change.
	updated, err := a.Get(ctx, s, cur.ID)
	if err != nil {
		return cur, err
	}
	if pv != nil {
		for _, f := range [][3]string{
			{"spec.networkType", pv.NetworkType, updated.NetworkType},
			{"spec.physicalNetwork", pv.PhysicalNetwork, updated.PhysicalNetwork},
		} {
			if changes.Has(f[0]) {
				return updated, generic.Degraded(kupenstackv1.ReasonDriftNotRepairable, fmt.Sprintf(
					"%s is %q in Neutron, the spec says %q, and Neutron cannot change it: delete and re-create the ProviderNetwork (its subnets and their users with it)",
					f[0], f[2], f[1]), 0)
			}
		}
	}
	return updated, nil
}

// ListAll lists every network the scope can see, not only its own project's: imported shared
// and external networks are checked too.
func (a actuator[O]) ListAll(ctx context.Context, s generic.Scope) ([]*osNetwork, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	return generic.Pointers(api.ListFn(ctx, sc, neutron.Filter{}))
}

func (a actuator[O]) Observe(obj O, res *osNetwork) (bool, string) {
	a.observe(obj, res)
	if res.Status != "ACTIVE" {
		return false, "network status is " + res.Status
	}
	return true, ""
}

// resourceStatus is the part of a network's status both kinds report.
func resourceStatus(res *osNetwork) kupenstackv1.NetworkResourceStatus {
	ps := res.PortSecurityEnabled
	return kupenstackv1.NetworkResourceStatus{
		Name:                res.Name,
		Description:         res.Description,
		Status:              res.Status,
		AdminStateUp:        res.AdminStateUp,
		MTU:                 res.MTU,
		PortSecurityEnabled: &ps,
		External:            res.External,
		Shared:              res.Shared,
		Subnets:             res.Subnets,
		Tags:                res.Tags,
	}
}
