// Package hostaggregate maps the HostAggregate kind to a Nova host aggregate whose hosts follow
// the labels of the Kubernetes nodes.
package hostaggregate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/aggregates"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/services"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/nova"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=hostaggregates,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=hostaggregates/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=hostaggregates/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// ownerKey is the aggregate metadata key that marks an aggregate as created for an object.
const ownerKey = "kupenstack:owner-uid"

// Setup registers the HostAggregate controller: node label changes re-compute every aggregate's
// hosts (there are few aggregates).
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	kube := mgr.GetClient()
	a := actuator{kube: kube}
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.HostAggregate, aggregate]{
		Name:          "HostAggregate",
		Controller:    "hostaggregate",
		Actuator:      a,
		Can:           generic.Capabilities[*kupenstackv1.HostAggregate, aggregate]{List: a.ListAll},
		New:           func() *kupenstackv1.HostAggregate { return &kupenstackv1.HostAggregate{} },
		NewList:       func() client.ObjectList { return &kupenstackv1.HostAggregateList{} },
		ClusterScoped: true,
		Watches: []generic.Watch{{Object: &corev1.Node{}, Map: func(ctx context.Context, _ client.Object) []reconcile.Request {
			var list kupenstackv1.HostAggregateList
			if err := kube.List(ctx, &list); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "listing host aggregates for a node change")
				return nil
			}
			reqs := make([]reconcile.Request, len(list.Items))
			for i, a := range list.Items {
				reqs[i] = reconcile.Request{NamespacedName: types.NamespacedName{Name: a.Name}}
			}
			return reqs
		}}},
	})
}

type actuator struct{ kube client.Reader }

var (
	_ generic.Actuator[*kupenstackv1.HostAggregate, aggregate] = actuator{}
)

// aggregate is a Nova aggregate as the actuator reads it: with the cloud's compute hosts of the
// same moment, so that Diff can tell which selected nodes should be hosts without a Nova call.
type aggregate struct {
	aggregates.Aggregate
	// computes are the hosts that run nova-compute.
	computes []string
}

// computeHosts are the hosts that run nova-compute.
func computeHosts(ctx context.Context, sc *gophercloud.ServiceClient) ([]string, error) {
	pages, err := services.List(sc, services.ListOpts{Binary: "nova-compute"}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	found, err := services.ExtractServices(pages)
	var hosts []string
	for _, c := range found {
		hosts = append(hosts, c.Host)
	}
	return hosts, err
}

// read adds the compute hosts to an aggregate Nova returned.
func read(ctx context.Context, sc *gophercloud.ServiceClient, agg *aggregates.Aggregate, err error) (*aggregate, error) {
	if err != nil {
		return nil, err
	}
	computes, err := computeHosts(ctx, sc)
	if err != nil {
		return nil, err
	}
	return &aggregate{Aggregate: *agg, computes: computes}, nil
}

func compute(ctx context.Context, s generic.Scope) (*gophercloud.ServiceClient, error) {
	return nova.ClientFor(ctx, s, "", "2.41")
}

// Zone is the availability zone the aggregate exposes.
func Zone(a *kupenstackv1.HostAggregate) string {
	if a.Spec.AvailabilityZone != "" {
		return a.Spec.AvailabilityZone
	}
	return a.Name
}

func numericID(id string) (int, error) {
	n, err := strconv.Atoi(id)
	if err != nil {
		return 0, generic.InvalidConfig(fmt.Sprintf("host aggregate IDs are numbers, not %q", id))
	}
	return n, nil
}

func (actuator) Get(ctx context.Context, s generic.Scope, id string) (*aggregate, error) {
	n, err := numericID(id)
	if err != nil {
		return nil, err
	}
	sc, err := compute(ctx, s)
	if err != nil {
		return nil, err
	}
	agg, err := aggregates.Get(ctx, sc, n).Extract()
	return read(ctx, sc, agg, err)
}

// ListAll lists the aggregates, with one list of the compute hosts for all of them.
func (actuator) ListAll(ctx context.Context, s generic.Scope) ([]*aggregate, error) {
	sc, err := compute(ctx, s)
	if err != nil {
		return nil, err
	}
	pages, err := aggregates.List(sc).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	found, err := aggregates.ExtractAggregates(pages)
	if err != nil {
		return nil, err
	}
	computes, err := computeHosts(ctx, sc)
	if err != nil {
		return nil, err
	}
	out := make([]*aggregate, len(found))
	for i := range found {
		out[i] = &aggregate{Aggregate: found[i], computes: computes}
	}
	return out, nil
}

func (a actuator) byName(ctx context.Context, s generic.Scope, name string) ([]aggregate, error) {
	all, err := a.ListAll(ctx, s)
	var out []aggregate
	for _, agg := range all {
		if agg.Name == name {
			out = append(out, *agg)
		}
	}
	return out, err
}

// FindOwned finds the aggregate carrying this object's UID. Nova aggregate names are unique, so
// one of the object's name without the mark belongs to someone else: never taken over silently.
func (a actuator) FindOwned(ctx context.Context, s generic.Scope, h *kupenstackv1.HostAggregate) (*aggregate, error) {
	found, err := a.byName(ctx, s, h.Name)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	if found[0].Metadata[ownerKey] != string(h.UID) {
		return nil, generic.InvalidConfig(fmt.Sprintf("Nova already has a host aggregate named %s; import it or rename the object", h.Name))
	}
	return &found[0], nil
}

func (a actuator) FindImport(ctx context.Context, s generic.Scope, h *kupenstackv1.HostAggregate) (*aggregate, error) {
	return generic.FindImport(h.Spec.Import,
		func(id string) (*aggregate, error) { return a.Get(ctx, s, id) },
		func(name string) ([]aggregate, error) { return a.byName(ctx, s, name) })
}

// Create creates the aggregate with its zone and owner mark; hosts and metadata follow in Update.
func (actuator) Create(ctx context.Context, s generic.Scope, h *kupenstackv1.HostAggregate) (*aggregate, error) {
	sc, err := compute(ctx, s)
	if err != nil {
		return nil, err
	}
	agg, err := aggregates.Create(ctx, sc, aggregates.CreateOpts{Name: h.Name, AvailabilityZone: Zone(h)}).Extract()
	if err != nil {
		return nil, err
	}
	// Not atomic with the create: a crash in between leaves an unmarked aggregate of this name,
	// which FindOwned then refuses; the owner sees InvalidConfiguration and can import it.
	agg, err = aggregates.SetMetadata(ctx, sc, agg.ID, aggregates.SetMetadataOpts{Metadata: map[string]any{ownerKey: string(h.UID)}}).Extract()
	return read(ctx, sc, agg, err)
}

// wantHosts are the nodes the selector picks that are compute hosts, and the nodes it picks.
func (a actuator) wantHosts(h *kupenstackv1.HostAggregate, computes []string) (hosts, selected []string, err error) {
	var nodes corev1.NodeList
	// The manager's client reads nodes from its cache: no API call.
	if err := a.kube.List(context.Background(), &nodes, client.MatchingLabels(kupenstackv1.LabelSet(h.Spec.NodeSelector))); err != nil {
		return nil, nil, err
	}
	for _, n := range nodes.Items {
		selected = append(selected, n.Name)
		if slices.Contains(computes, n.Name) {
			hosts = append(hosts, n.Name)
		}
	}
	slices.Sort(hosts)
	slices.Sort(selected)
	return hosts, selected, nil
}

// zoneKey is the metadata key in which Nova shows the aggregate's zone; the zone is its own field.
const zoneKey = "availability_zone"

// wantMetadata is the metadata the aggregate should carry besides its zone: the user's and the
// owner mark.
func wantMetadata(h *kupenstackv1.HostAggregate) map[string]string {
	want := maps.Clone(h.Spec.Metadata)
	if want == nil {
		want = map[string]string{}
	}
	want[ownerKey] = string(h.UID)
	return want
}

// haveMetadata is the aggregate's metadata besides its zone.
func haveMetadata(res *aggregate) map[string]string {
	have := maps.Clone(res.Metadata)
	delete(have, zoneKey)
	return have
}

// Diff compares the zone, the metadata and the hosts: the nodes the selector picks now (from the
// manager's node cache) that run nova-compute (as read with the aggregate). A changed selection
// of nodes without nova-compute changes no host but is one too: Update brings
// status.selectedNodes and nodesWithoutCompute up to date.
func (a actuator) Diff(_ generic.Scope, h *kupenstackv1.HostAggregate, res *aggregate) generic.Changes {
	var d generic.Diff
	generic.Value(&d, "spec.availabilityZone", Zone(h), res.AvailabilityZone)
	generic.Map(&d, "spec.metadata", wantMetadata(h), haveMetadata(res))
	hosts, selected, err := a.wantHosts(h, res.computes)
	if err != nil {
		// Without the nodes the hosts cannot be compared; the next pass will.
		return d.Changes()
	}
	switch {
	case !generic.SameSet(selected, h.Status.SelectedNodes) || !generic.SameSet(without(selected, hosts), h.Status.NodesWithoutCompute):
		// Nodes were labelled or started nova-compute: work for the selector, not drift.
		d.AddWork("spec.nodeSelector", hosts, res.Hosts)
	case !generic.SameSet(hosts, res.Hosts):
		d.Add("spec.nodeSelector", hosts, res.Hosts)
	}
	return d.Changes()
}

// without is the elements of all that are not in some.
func without(all, some []string) []string {
	var out []string
	for _, x := range all {
		if !slices.Contains(some, x) {
			out = append(out, x)
		}
	}
	return out
}

// Update makes the changes Diff found: the hosts become exactly the selected compute hosts.
func (a actuator) Update(ctx context.Context, s generic.Scope, h *kupenstackv1.HostAggregate, cur *aggregate, changes generic.Changes) (*aggregate, error) {
	sc, err := compute(ctx, s)
	if err != nil {
		return nil, err
	}
	if changes.Has("spec.availabilityZone") {
		if _, err := aggregates.Update(ctx, sc, cur.ID, aggregates.UpdateOpts{AvailabilityZone: Zone(h)}).Extract(); err != nil {
			return nil, fmt.Errorf("setting the availability zone: %w", err)
		}
	}
	if changes.Has("spec.metadata") {
		want, have := wantMetadata(h), haveMetadata(cur)
		patch := map[string]any{}
		for k, v := range want {
			if hv, ok := have[k]; !ok || hv != v {
				patch[k] = v
			}
		}
		for k := range have {
			if _, ok := want[k]; !ok {
				patch[k] = nil // removes the key
			}
		}
		if _, err := aggregates.SetMetadata(ctx, sc, cur.ID, aggregates.SetMetadataOpts{Metadata: patch}).Extract(); err != nil {
			return nil, fmt.Errorf("setting the metadata: %w", err)
		}
	}
	if changes.Has("spec.nodeSelector") {
		hosts, selected, err := a.wantHosts(h, cur.computes)
		if err != nil {
			return nil, err
		}
		h.Status.SelectedNodes, h.Status.NodesWithoutCompute = selected, without(selected, hosts)
		for _, host := range cur.Hosts {
			if !slices.Contains(hosts, host) {
				if _, err := aggregates.RemoveHost(ctx, sc, cur.ID, aggregates.RemoveHostOpts{Host: host}).Extract(); err != nil {
					return nil, fmt.Errorf("removing host %s: %w", host, err)
				}
			}
		}
		for _, host := range hosts {
			if !slices.Contains(cur.Hosts, host) {
				if _, err := aggregates.AddHost(ctx, sc, cur.ID, aggregates.AddHostOpts{Host: host}).Extract(); err != nil {
					return nil, fmt.Errorf("adding host %s: %w", host, err)
				}
			}
		}
	}
	agg, err := aggregates.Get(ctx, sc, cur.ID).Extract()
	return read(ctx, sc, agg, err)
}

// Delete removes the hosts first: Nova refuses to delete an aggregate that has any.
func (actuator) Delete(ctx context.Context, s generic.Scope, res *aggregate) error {
	sc, err := compute(ctx, s)
	if err != nil {
		return err
	}
	for _, host := range res.Hosts {
		if _, err := aggregates.RemoveHost(ctx, sc, res.ID, aggregates.RemoveHostOpts{Host: host}).Extract(); err != nil {
			return fmt.Errorf("removing host %s: %w", host, err)
		}
	}
	return aggregates.Delete(ctx, sc, res.ID).ExtractErr()
}

func (actuator) ID(res *aggregate) string { return strconv.Itoa(res.ID) }

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func (actuator) Observe(h *kupenstackv1.HostAggregate, res *aggregate) (bool, string) {
	h.Status.Resource = &kupenstackv1.HostAggregateResourceStatus{
		Name: res.Name, AvailabilityZone: res.AvailabilityZone, Hosts: sortedCopy(res.Hosts), Metadata: res.Metadata,
	}
	return true, ""
}
