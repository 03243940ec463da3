package hostaggregate

import (
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/aggregates"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

func TestDiff(t *testing.T) {
	node := func(name, disk string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"disk": disk}}}
	}
	// cmp-1 and cmp-2 are selected compute hosts; gpu-1 is selected too but runs no nova-compute;
	// hdd-1 is a compute host the selector does not pick.
	a := actuator{kube: fake.NewClientBuilder().WithScheme(scheme.Scheme).
		WithObjects(node("cmp-1", "ssd"), node("cmp-2", "ssd"), node("gpu-1", "ssd"), node("hdd-1", "hdd")).Build()}
	obj := func(mod func(*kupenstackv1.HostAggregate)) *kupenstackv1.HostAggregate {
		h := &kupenstackv1.HostAggregate{ObjectMeta: metav1.ObjectMeta{Name: "ssd", UID: "u1"}, Spec: kupenstackv1.HostAggregateSpec{
			NodeSelector: map[string]kupenstackv1.LabelValue{"disk": "ssd"}, Metadata: map[string]string{"disk": "ssd"}}}
		h.Status.SelectedNodes = []string{"cmp-1", "cmp-2", "gpu-1"}
		h.Status.NodesWithoutCompute = []string{"gpu-1"}
		if mod != nil {
			mod(h)
		}
		return h
	}
	res := func(mod func(*aggregate)) *aggregate {
		r := &aggregate{Aggregate: aggregates.Aggregate{ID: 7, Name: "ssd", AvailabilityZone: "ssd", Hosts: []string{"cmp-2", "cmp-1"},
			Metadata: map[string]string{"disk": "ssd", ownerKey: "u1", zoneKey: "ssd"}}, computes: []string{"cmp-1", "cmp-2", "hdd-1"}}
		if mod != nil {
			mod(r)
		}
		return r
	}
	for _, tc := range []struct {
		name string
		obj  *kupenstackv1.HostAggregate
		res  *aggregate
		want []string
	}{
		{"unchanged (hosts in another order)", obj(nil), res(nil), nil},
		{"zone changed", obj(nil), res(func(r *aggregate) { r.AvailabilityZone, r.Metadata[zoneKey] = "nova", "nova" }), []string{"spec.availabilityZone"}},
		{"zone of the spec changed", obj(func(h *kupenstackv1.HostAggregate) { h.Spec.AvailabilityZone = "fast" }), res(nil), []string{"spec.availabilityZone"}},
		{"metadata changed", obj(nil), res(func(r *aggregate) { r.Metadata["disk"] = "hdd" }), []string{"spec.metadata"}},
		{"metadata added", obj(nil), res(func(r *aggregate) { r.Metadata["x"] = "y" }), []string{"spec.metadata"}},
		{"metadata removed", obj(nil), res(func(r *aggregate) { delete(r.Metadata, "disk") }), []string{"spec.metadata"}},
		{"owner mark removed", obj(nil), res(func(r *aggregate) { delete(r.Metadata, ownerKey) }), []string{"spec.metadata"}},
		{"host removed", obj(nil), res(func(r *aggregate) { r.Hosts = []string{"cmp-1"} }), []string{"spec.nodeSelector"}},
		{"host added", obj(nil), res(func(r *aggregate) { r.Hosts = append(r.Hosts, "hdd-1") }), []string{"spec.nodeSelector"}},
		{"selector changed", obj(func(h *kupenstackv1.HostAggregate) { h.Spec.NodeSelector["disk"] = "hdd" }), res(nil), []string{"spec.nodeSelector"}},
		{"node without compute no longer selected", obj(func(h *kupenstackv1.HostAggregate) {
			h.Status.SelectedNodes = append(h.Status.SelectedNodes, "old-1")
			h.Status.NodesWithoutCompute = append(h.Status.NodesWithoutCompute, "old-1")
		}), res(nil), []string{"spec.nodeSelector"}},
		{"selected node started nova-compute", obj(nil), res(func(r *aggregate) { r.computes = append(r.computes, "gpu-1") }), []string{"spec.nodeSelector"}},
		{"host stopped being a compute host", obj(nil), res(func(r *aggregate) { r.computes = []string{"cmp-1"} }), []string{"spec.nodeSelector"}},
		{"status not yet up to date", obj(func(h *kupenstackv1.HostAggregate) {
			h.Status.SelectedNodes, h.Status.NodesWithoutCompute = nil, nil
		}), res(nil), []string{"spec.nodeSelector"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := a.Diff(generic.TestScope(nil), tc.obj, tc.res)
			if !slices.Equal(got.Fields(), tc.want) {
				t.Errorf("Diff = %q, want %q (%+v)", got.Fields(), tc.want, got)
			}
		})
	}
}
