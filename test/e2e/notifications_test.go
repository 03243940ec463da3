package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// metricValue reads one series of a counter or gauge from the operator's registry (0 if absent).
func metricValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue series
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// TestNotificationsWakeTheVM: with the listener on, Nova's notification of a server going to
// ERROR reaches the operator, which wakes exactly that VM (and heals it).
func TestNotificationsWakeTheVM(t *testing.T) {
	requireCloud(t)
	if os.Getenv("KUPENSTACK_NOTIFICATIONS_URL") == "" {
		t.Skip("KUPENSTACK_NOTIFICATIONS_URL is not set (make test sets it)")
	}
	c := adminClients(t)
	ns := newNamespace(t)
	flavor := vmFlavor(t, ns+"-nano")
	img := publicImage(ns)
	vm := &kupenstackv1.VirtualMachine{ObjectMeta: objMeta(ns, "noted"), Spec: kupenstackv1.VirtualMachineSpec{FlavorRef: flavor.Name, ImageRef: "tiny"}}
	create(t, img, vm)
	waitReady(t, vm)
	eventually(t, "listener connected", func() error {
		if v := metricValue(t, "kupenstack_notifications_connected", nil); v != 1 {
			return fmt.Errorf("kupenstack_notifications_connected = %v", v)
		}
		return nil
	})
	vmKind := map[string]string{"kind": "VirtualMachine"}
	before := metricValue(t, "kupenstack_notifications_enqueued_total", vmKind)
	first := vm.Status.ID
	if err := servers.ResetState(env.Ctx, c.nova, first, servers.StateError).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "notification enqueued the VM", func() error {
		if v := metricValue(t, "kupenstack_notifications_enqueued_total", vmKind); v <= before {
			return fmt.Errorf("enqueued %v, was %v", v, before)
		}
		return nil
	})
	waitVM(t, vm, "healed", func(vm *kupenstackv1.VirtualMachine) error {
		if vm.Status.ID == first || vm.Status.RestartCount != 1 || vm.Status.Resource == nil || vm.Status.Resource.Status != "ACTIVE" {
			return fmt.Errorf("id %s, restarts %d", vm.Status.ID, vm.Status.RestartCount)
		}
		return nil
	})
	deleteAll(t, ns, false, vm, img)
}
