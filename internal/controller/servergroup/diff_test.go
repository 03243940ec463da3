package servergroup

import (
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// TestDiffNone: Nova server groups cannot change, so nothing is ever a change to make, not even
// members (Nova's, from the servers' placement).
func TestDiffNone(t *testing.T) {
	g := &kupenstackv1.ServerGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"}, Spec: kupenstackv1.ServerGroupSpec{
		Policy: "anti-affinity"}}
	policy := "anti-affinity"
	for _, res := range []*servergroups.ServerGroup{
		{ID: "g1", Name: "web", Policy: &policy},
		{ID: "g1", Name: "web", Policy: &policy, Members: []string{"s1", "s2"}},
	} {
		if got := (actuator{}).Diff(generic.TestScope(nil), g, res); len(got) > 0 {
			t.Errorf("Diff(%+v) = %+v", res, got)
		}
	}
}
