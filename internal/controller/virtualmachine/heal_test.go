package virtualmachine

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: 10 * time.Second, Max: time.Minute, HealthyAfter: 10 * time.Minute}
	for consecutive, want := range map[int32]time.Duration{
		-1: 0, 0: 0, 1: 10 * time.Second, 2: 20 * time.Second, 3: 40 * time.Second, 4: time.Minute, 50: time.Minute,
	} {
		if got := b.delay(consecutive); got != want {
			t.Errorf("delay(%d) = %s, want %s", consecutive, got, want)
		}
	}
}

// TestHealDecisions is the heal state machine: restart policy × restart history.
func TestHealDecisions(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-d)} }
	cases := []struct {
		name        string
		policy      kupenstackv1.RestartPolicy
		status      kupenstackv1.VirtualMachineStatus
		replace     bool
		after       time.Duration
		restarts    int32 // RestartCount afterwards
		consecutive int32 // ConsecutiveFailures afterwards
	}{
		{name: "first failure: at once", policy: kupenstackv1.RestartPolicyOnFailure,
			replace: true, restarts: 1, consecutive: 1},
		{name: "Always behaves as OnFailure for failures", policy: kupenstackv1.RestartPolicyAlways,
			replace: true, restarts: 1, consecutive: 1},
		{name: "default policy (empty) replaces", policy: "",
			replace: true, restarts: 1, consecutive: 1},
		{name: "Never: left as it is", policy: kupenstackv1.RestartPolicyNever,
			status: kupenstackv1.VirtualMachineStatus{RestartCount: 3}, restarts: 3},
		{name: "second failure within the backoff: waits the rest of it", policy: kupenstackv1.RestartPolicyOnFailure,
			status:   kupenstackv1.VirtualMachineStatus{RestartCount: 1, ConsecutiveFailures: 1, LastRestartTime: ago(4 * time.Second)},
			after:    6 * time.Second,
			restarts: 1, consecutive: 1},
		{name: "second failure after the backoff: replaced", policy: kupenstackv1.RestartPolicyOnFailure,
			status:  kupenstackv1.VirtualMachineStatus{RestartCount: 1, ConsecutiveFailures: 1, LastRestartTime: ago(11 * time.Second)},
			replace: true, restarts: 2, consecutive: 2},
		{name: "backoff doubles", policy: kupenstackv1.RestartPolicyOnFailure,
			status:   kupenstackv1.VirtualMachineStatus{RestartCount: 5, ConsecutiveFailures: 3, LastRestartTime: ago(30 * time.Second)},
			after:    10 * time.Second,
			restarts: 5, consecutive: 3},
		{name: "backoff is capped", policy: kupenstackv1.RestartPolicyOnFailure,
			status:   kupenstackv1.VirtualMachineStatus{RestartCount: 40, ConsecutiveFailures: 40, LastRestartTime: ago(4 * time.Minute)},
			after:    time.Minute,
			restarts: 40, consecutive: 40},
		{name: "healthy long enough: the backoff starts over", policy: kupenstackv1.RestartPolicyOnFailure,
			status:  kupenstackv1.VirtualMachineStatus{RestartCount: 40, ConsecutiveFailures: 40, LastRestartTime: ago(11 * time.Minute)},
			replace: true, restarts: 41, consecutive: 1},
	}
	b := DefaultBackoff
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vm := &kupenstackv1.VirtualMachine{Spec: kupenstackv1.VirtualMachineSpec{RestartPolicy: tc.policy}, Status: tc.status}
			d := b.decide(vm, "server x went to ERROR", now)
			if d.Replace != tc.replace || d.After != tc.after {
				t.Fatalf("decision %+v, want replace=%v after=%s", d, tc.replace, tc.after)
			}
			if !strings.Contains(d.Message, "server x went to ERROR") {
				t.Errorf("message %q does not say what failed", d.Message)
			}
			if tc.replace {
				// Nothing is recorded until the engine has deleted the failed server.
				if vm.Status.RestartCount != tc.status.RestartCount || d.Record == nil {
					t.Fatalf("restart recorded before the failed server was deleted: %+v (Record set: %v)", vm.Status, d.Record != nil)
				}
				d.Record()
			}
			if vm.Status.RestartCount != tc.restarts || vm.Status.ConsecutiveFailures != tc.consecutive {
				t.Errorf("restarts %d consecutive %d, want %d %d", vm.Status.RestartCount, vm.Status.ConsecutiveFailures, tc.restarts, tc.consecutive)
			}
			if tc.replace {
				if !vm.Status.LastRestartTime.Time.Equal(now) || vm.Status.LastFailureReason != "server x went to ERROR" ||
					vm.Status.AppliedPowerState != kupenstackv1.PowerStateRunning {
					t.Errorf("restart not recorded: %+v", vm.Status)
				}
			}
		})
	}
}
