//go:build bench

package bench

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// benchHeal forces the servers of `heals` different VMs (a VM's second failure in a row would
// wait for the restart backoff) to ERROR, one after the other, and times each from the reset to
// the object showing its replacement ACTIVE; detection is the moment the object's restart count
// went up.
func benchHeal(t *testing.T, cl *cloud, ns string, rep *report) {
	n := min(heals, numVMs)
	res := &healResult{period: vmHealthPeriod}
	rep.heal = res
	for i := range n {
		vm := &kupenstackv1.VirtualMachine{}
		key := client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("vm-%03d", i)}
		if err := env.Client.Get(env.Ctx, key, vm); err != nil {
			t.Fatal(err)
		}
		old, restarts := vm.Status.ID, vm.Status.RestartCount
		start := time.Now()
		if err := servers.ResetState(env.Ctx, cl.nova, old, servers.StateError).ExtractErr(); err != nil {
			t.Fatal(err)
		}
		var detected time.Duration
		waitFor(t, key.Name+" replaced", 100*time.Millisecond, 20*time.Minute, func() error {
			if err := env.Client.Get(env.Ctx, key, vm); err != nil {
				return err
			}
			if detected == 0 && vm.Status.RestartCount > restarts {
				detected = time.Since(start)
			}
			if vm.Status.ID == old || vm.Status.Resource == nil || vm.Status.Resource.Status != "ACTIVE" {
				return fmt.Errorf("id %s, resource %+v", vm.Status.ID, vm.Status.Resource)
			}
			return nil
		})
		total := time.Since(start)
		if detected == 0 {
			detected = total
		}
		res.total = append(res.total, total)
		res.detect = append(res.detect, detected)
		t.Logf("heal %d: detected after %s, replacement ACTIVE after %s", i+1, detected, total)
		rep.save(t)
	}
}

type healResult struct {
	period        time.Duration
	total, detect []time.Duration
}

// medianMax of ds (not empty).
func medianMax(ds []time.Duration) (time.Duration, time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return med, s[len(s)-1]
}
