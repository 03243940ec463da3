package virtualmachine

import (
	"context"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/hostaggregate"
)

// availabilityZone is the zone the server is created in: spec.availabilityZone, the zone of
// spec.hostAggregateRef, or that of the one HostAggregate spec.nodeSelector selects (the spec
// allows at most one of them).
func (a actuator) availabilityZone(ctx context.Context, vm *kupenstackv1.VirtualMachine) (string, error) {
	if name := vm.Spec.HostAggregateRef; name != "" {
		var agg kupenstackv1.HostAggregate
		if err := a.kube.Get(ctx, client.ObjectKey{Name: name}, &agg); err != nil {
			return "", err
		}
		return hostaggregate.Zone(&agg), nil
	}
	if len(vm.Spec.NodeSelector) > 0 {
		return a.zoneFor(ctx, kupenstackv1.LabelSet(vm.Spec.NodeSelector))
	}
	return vm.Spec.AvailabilityZone, nil
}

// zoneFor finds the availability zone of the one Ready HostAggregate whose node selector includes
// every label of selector: all of its hosts carry those labels.
func (a actuator) zoneFor(ctx context.Context, selector map[string]string) (string, error) {
	var list kupenstackv1.HostAggregateList
	if err := a.kube.List(ctx, &list); err != nil {
		return "", err
	}
	var names []string
	zone := ""
	for _, agg := range list.Items {
		if !includes(kupenstackv1.LabelSet(agg.Spec.NodeSelector), selector) {
			continue
		}
		if !conditions.IsReady(agg.Status.Conditions, agg.Generation) {
			return "", generic.WaitFor(fmt.Sprintf("waiting for HostAggregate/%s, which selects nodes labelled %v, to be ready", agg.Name, selector), 10*time.Second)
		}
		names = append(names, agg.Name)
		zone = hostaggregate.Zone(&agg)
	}
	switch len(names) {
	case 0:
		return "", generic.WaitFor(fmt.Sprintf("waiting for a HostAggregate that selects nodes labelled %v", selector), 30*time.Second)
	case 1:
		return zone, nil
	}
	return "", generic.InvalidConfig(fmt.Sprintf("nodeSelector %v matches several HostAggregates %v; use hostAggregateRef", selector, names))
}

// includes says whether every pair of sub is in set.
func includes(set, sub map[string]string) bool {
	for k, v := range sub {
		if got, ok := set[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// schedulerHints place the server in spec.serverGroupRef's server group (nil without one).
func schedulerHints(s generic.Scope, vm *kupenstackv1.VirtualMachine) servers.SchedulerHintOptsBuilder {
	if sg := vm.Spec.ServerGroupRef; sg != "" {
		return servers.SchedulerHintOpts{Group: s.DependencyID("ServerGroup", sg)}
	}
	return nil
}
