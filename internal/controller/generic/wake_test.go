package generic

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// TestWakeOn: the Watch's map lists the kind's objects in the changed object's namespace, from the
// API server, and wakes those the predicate selects; none of another namespace.
func TestWakeOn(t *testing.T) {
	env.Require(t)
	ctx, c := env.Ctx, env.Client
	ns, other := readyNamespace(t), readyNamespace(t)
	for _, p := range []struct{ namespace, name, network string }{
		{ns, "on-net", "net"}, {ns, "on-net-too", "net"}, {ns, "elsewhere", "net2"}, {other, "other-namespace", "net"},
	} {
		port := &kupenstackv1.Port{ObjectMeta: metav1.ObjectMeta{Namespace: p.namespace, Name: p.name},
			Spec: kupenstackv1.PortSpec{NetworkRef: p.network}}
		if err := c.Create(ctx, port); err != nil {
			t.Fatal(err)
		}
	}
	w := WakeOn(c, func() client.ObjectList { return &kupenstackv1.PortList{} },
		func(s *kupenstackv1.Subnet, o client.Object) bool {
			return o.(*kupenstackv1.Port).Spec.NetworkRef == s.Spec.NetworkRef
		})
	if _, ok := w.Object.(*kupenstackv1.Subnet); !ok {
		t.Fatalf("the Watch is on %T, want *Subnet", w.Object)
	}
	subnet := &kupenstackv1.Subnet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sub"}, Spec: kupenstackv1.SubnetSpec{NetworkRef: "net"}}
	var got []string
	for _, r := range w.Map(ctx, subnet) {
		if r.Namespace != ns {
			t.Errorf("woke %s, outside the subnet's namespace", r)
		}
		got = append(got, r.Name)
	}
	slices.Sort(got)
	if want := []string{"on-net", "on-net-too"}; !slices.Equal(got, want) {
		t.Errorf("woke %v, want %v", got, want)
	}
}
