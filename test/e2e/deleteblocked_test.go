package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// TestNetworkDeletionBlockedByOutsidePort: Neutron refuses (409) to delete a network that a
// port made outside KupenStack is on. The Network stays Progressing (DeletionBlocked, with
// Neutron's message), not Degraded, and goes within seconds of the port's removal: it used to
// wait the 2 minutes of a rejected request, for every such conflict of a namespace's deletion.
func TestNetworkDeletionBlockedByOutsidePort(t *testing.T) {
	parallel(t)
	provider, cloud := connect(t)
	ctx := env.Ctx
	neutronAdmin, err := gcopenstack.NewNetworkV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	net := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "blocked", Namespace: ns}}
	if err := env.Client.Create(ctx, net); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(net)
	eventually(t, "network ready", func() error {
		if err := env.Client.Get(ctx, key, net); err != nil {
			return err
		}
		if !conditions.IsReady(net.Status.Conditions, net.Generation) {
			return fmt.Errorf("conditions %+v", net.Status.Conditions)
		}
		return nil
	})
	port, err := ports.Create(ctx, neutronAdmin, ports.CreateOpts{NetworkID: net.Status.ID, Name: "outside-kupenstack"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	portGone := false
	t.Cleanup(func() {
		if !portGone {
			_ = ports.Delete(ctx, neutronAdmin, port.ID).ExtractErr()
		}
	})

	if err := env.Client.Delete(ctx, net); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deletion blocked", func() error {
		var n kupenstackv1.Network
		if err := env.Client.Get(ctx, key, &n); err != nil {
			return err
		}
		c := meta.FindStatusCondition(n.Status.Conditions, kupenstackv1.ConditionProgressing)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != kupenstackv1.ReasonDeletionBlocked || !strings.Contains(c.Message, "in use") {
			return fmt.Errorf("conditions %+v", n.Status.Conditions)
		}
		if meta.IsStatusConditionTrue(n.Status.Conditions, kupenstackv1.ConditionDegraded) {
			t.Errorf("a network waiting for a port to go is Degraded: %+v", n.Status.Conditions)
		}
		return nil
	})
	if _, err := networks.Get(ctx, neutronAdmin, net.Status.ID).Extract(); err != nil {
		t.Fatalf("the network went while a port was on it: %v", err)
	}

	if err := ports.Delete(ctx, neutronAdmin, port.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	portGone = true
	removed := time.Now()
	for {
		err := env.Client.Get(ctx, key, &kupenstackv1.Network{})
		if apierrors.IsNotFound(err) {
			break
		}
		// The retry of a blocked deletion comes every 5 s; 15 s leaves room for a loaded machine.
		if time.Since(removed) > 15*time.Second {
			t.Fatalf("Network still there %s after its port went (%v)", time.Since(removed).Round(time.Second), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("network deleted %s after its port", time.Since(removed).Round(100*time.Millisecond))
	if err := networks.Get(ctx, neutronAdmin, net.Status.ID).Err; !openstack.IsNotFound(err) {
		t.Errorf("network left in OpenStack: %v", err)
	}
	deleteProject(t, ns)
}
