package keypair

import (
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// TestDiffNone: a Nova key pair has nothing that can be set back; not even one re-made outside
// KupenStack with another key is a change Update could make.
func TestDiffNone(t *testing.T) {
	k := &kupenstackv1.KeyPair{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "me"}, Spec: kupenstackv1.KeyPairSpec{
		PublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA me"}}
	for _, res := range []*keypairs.KeyPair{
		{Name: "team_me", PublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA"},
		{Name: "team_me", PublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB other", Type: "ssh"},
	} {
		if got := (actuator{}).Diff(generic.TestScope(nil), k, res); len(got) > 0 {
			t.Errorf("Diff(%+v) = %+v", res, got)
		}
	}
}
