package virtualmachine

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// Backoff is how long a VM waits between replacements of a server that keeps failing: the first
// replacement is immediate, the next after Initial, then twice as long each time up to Max. The
// count starts again once the VM went HealthyAfter without a failure.
type Backoff struct {
	Initial, Max, HealthyAfter time.Duration
}

// DefaultBackoff: 10 s, 20 s, 40 s ... 5 min; reset after 10 min without a failure.
var DefaultBackoff = Backoff{Initial: 10 * time.Second, Max: 5 * time.Minute, HealthyAfter: 10 * time.Minute}

// delay is the wait before the next replacement after consecutive earlier ones.
func (b Backoff) delay(consecutive int32) time.Duration {
	if consecutive <= 0 {
		return 0
	}
	d := b.Initial
	for i := int32(1); i < consecutive && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// decide is the heal state machine: given the VM's restart policy and restart history, replace
// the failed server now (its Record writes the restart into the status once the server is
// deleted), later, or never.
func (b Backoff) decide(vm *kupenstackv1.VirtualMachine, failure string, now time.Time) generic.HealDecision {
	st := &vm.Status
	if vm.Spec.RestartPolicy == kupenstackv1.RestartPolicyNever {
		return generic.HealDecision{Message: failure + "; restartPolicy Never leaves it as it is"}
	}
	if st.LastRestartTime != nil && now.Sub(st.LastRestartTime.Time) >= b.HealthyAfter {
		st.ConsecutiveFailures = 0 // it was healthy long enough: start the backoff over
	}
	if st.LastRestartTime != nil {
		if wait := st.LastRestartTime.Add(b.delay(st.ConsecutiveFailures)).Sub(now); wait > 0 {
			return generic.HealDecision{After: wait, Message: fmt.Sprintf("%s; replacing it in %s (backoff after %d replacements in a row)",
				failure, wait.Round(time.Second), st.ConsecutiveFailures)}
		}
	}
	return generic.HealDecision{Replace: true, Message: fmt.Sprintf("%s; replacing it (restart %d)", failure, st.RestartCount+1),
		Record: func() {
			st.RestartCount++
			st.ConsecutiveFailures++
			st.LastRestartTime = &metav1.Time{Time: now}
			st.LastFailureReason = failure
			st.AppliedPowerState = kupenstackv1.PowerStateRunning // a new server starts running
		}}
}

// portReleaseTimeout bounds how long after a replacement decision a busy port is taken to be
// still held by the failed server being deleted.
const portReleaseTimeout = 2 * time.Minute

// replacingPortBusy turns Nova's 409 "Port ... is still in use", answered to the create of a
// replacement shortly after the failed server was deleted (the port is free only once Nova has
// torn that server down), into a short wait; otherwise, e.g. a port another server really uses,
// the error stays what it is.
func replacingPortBusy(vm *kupenstackv1.VirtualMachine, err error, now time.Time) error {
	if err == nil || !openstack.IsConflict(err) || !strings.Contains(err.Error(), "still in use") {
		return err
	}
	if last := vm.Status.LastRestartTime; last == nil || now.Sub(last.Time) > portReleaseTimeout {
		return err
	}
	return generic.WaitFor("waiting for the replaced server to release its port", 2*time.Second)
}

// networkWithoutSubnet turns Nova's 400 "Network <id> requires a subnet in order to boot
// instances on" into a short wait: a VM applied together with its Network and Subnet (kubectl
// apply -f of a directory) can be created before the subnet, which then comes within seconds;
// as an error it would wait for the error backoff instead.
func networkWithoutSubnet(err error) error {
	if err == nil || !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "requires a subnet") {
		return err
	}
	return generic.WaitFor("waiting for a subnet on the VM's network: Nova boots servers only on networks with one", 3*time.Second)
}

// Failure: a server in ERROR has failed (a deleted one is reported gone by Get). The states of a
// resize (RESIZE, VERIFY_RESIZE, REVERT_RESIZE) are no failure: Update waits them out, confirms
// or reverts.
//
// A server that went to ERROR during a resize is a failure like any other, for its restartPolicy
// to handle: Nova can revert only a resize in VERIFY_RESIZE, and a server in ERROR can neither be
// reverted nor resized again (only an admin's reset-state, which cannot tell where the resize
// stopped, gets it out). Always and OnFailure replace it, on the spec's (new) flavor, the
// Port, Volume and floating IP objects moving to the replacement as on any other; Never leaves it
// as it is, Degraded. The message says the resize is the cause.
func (actuator) Failure(vm *kupenstackv1.VirtualMachine, srv *servers.Server) string {
	if srv.Status != "ERROR" {
		return ""
	}
	msg := fmt.Sprintf("server %s went to ERROR", srv.ID)
	if r := vm.Status.Resize; r != nil && r.Phase != kupenstackv1.ResizePhaseFailed {
		msg += fmt.Sprintf(" while being resized from flavor %s to %s", r.FromFlavorName, r.FlavorName)
	}
	if srv.Fault.Message != "" {
		msg += ": " + srv.Fault.Message
	}
	return msg
}

func (a actuator) Heal(vm *kupenstackv1.VirtualMachine, failure string, now time.Time) generic.HealDecision {
	return a.backoff.decide(vm, failure, now)
}
