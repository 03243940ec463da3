package virtualmachine

import (
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

func TestDecideResize(t *testing.T) {
	srv := func(status, task, flavor string) *servers.Server {
		return &servers.Server{ID: "s", Status: status, TaskState: task, Flavor: map[string]any{"original_name": flavor}}
	}
	resize := func(ref, name string, phase kupenstackv1.ResizePhase, gen int64) *kupenstackv1.VirtualMachineResize {
		return &kupenstackv1.VirtualMachineResize{FlavorRef: ref, FlavorName: name, FromFlavorName: "m1.small", Phase: phase, Generation: gen}
	}
	const gen = 3
	for _, tt := range []struct {
		name   string
		srv    *servers.Server
		resize *kupenstackv1.VirtualMachineResize
		want   resizeAction
	}{
		{"same flavor", srv("ACTIVE", "", "m1.medium"), nil, resizeNothing},
		{"new flavor", srv("ACTIVE", "", "m1.small"), nil, resizeStart},
		{"new flavor, stopped", srv("SHUTOFF", "", "m1.small"), nil, resizeStart},
		{"new flavor, paused", srv("PAUSED", "", "m1.small"), nil, resizeNotNow},
		{"new flavor, building", srv("BUILD", "spawning", "m1.small"), nil, resizeNothing},
		{"new flavor, stopping", srv("ACTIVE", "powering-off", "m1.small"), nil, resizeNothing},
		{"resize_prep", srv("RESIZE", "resize_prep", "m1.small"), resize("medium", "m1.medium", kupenstackv1.ResizePhaseResizing, gen), resizeWait},
		{"resize_finish", srv("RESIZE", "resize_finish", "m1.medium"), resize("medium", "m1.medium", kupenstackv1.ResizePhaseResizing, gen), resizeWait},
		{"reverting", srv("REVERT_RESIZE", "resize_reverting", "m1.medium"), resize("medium", "m1.medium", kupenstackv1.ResizePhaseFailed, gen), resizeWait},
		{"verify", srv("VERIFY_RESIZE", "", "m1.medium"), resize("medium", "m1.medium", kupenstackv1.ResizePhaseResizing, gen), resizeConfirm},
		{"verify, confirmed already", srv("VERIFY_RESIZE", "", "m1.medium"), resize("medium", "m1.medium", kupenstackv1.ResizePhaseConfirming, gen), resizeWait},
		{"verify, not recorded", srv("VERIFY_RESIZE", "", "m1.medium"), nil, resizeConfirm},
		{"verify, spec changed meanwhile", srv("VERIFY_RESIZE", "", "m1.large"), resize("large", "m1.large", kupenstackv1.ResizePhaseResizing, gen-1), resizeRevert},
		{"verify, out of band", srv("VERIFY_RESIZE", "", "m1.large"), nil, resizeRevert},
		{"done", srv("ACTIVE", "", "m1.medium"), resize("medium", "m1.medium", kupenstackv1.ResizePhaseConfirming, gen), resizeDone},
		{"done, stopped", srv("SHUTOFF", "", "m1.medium"), resize("medium", "m1.medium", kupenstackv1.ResizePhaseResizing, gen), resizeDone},
		{"failed, same generation", srv("ACTIVE", "", "m1.small"), resize("medium", "m1.medium", kupenstackv1.ResizePhaseFailed, gen), resizeFailed},
		{"failed, spec changed since", srv("ACTIVE", "", "m1.small"), resize("medium", "m1.medium", kupenstackv1.ResizePhaseFailed, gen-1), resizeStart},
		{"failed other flavor, new flavor", srv("ACTIVE", "", "m1.small"), resize("tiny", "m1.tiny", kupenstackv1.ResizePhaseFailed, gen-1), resizeStart},
		{"failed other flavor, spec back", srv("ACTIVE", "", "m1.medium"), resize("tiny", "m1.tiny", kupenstackv1.ResizePhaseFailed, gen-1), resizeNothing},
		{"failed, spec back to current", srv("ACTIVE", "", "m1.medium"), resize("medium", "m1.medium", kupenstackv1.ResizePhaseFailed, gen), resizeNothing},
		{"Nova gave up", srv("ACTIVE", "", "m1.small"), resize("medium", "m1.medium", kupenstackv1.ResizePhaseResizing, gen), resizeGaveUp},
		{"flavor object renamed in Nova", srv("ACTIVE", "", "m1.small"), resize("medium", "m1.other", kupenstackv1.ResizePhaseResizing, gen), resizeStart},
		{"out of band resize back", srv("ACTIVE", "", "m1.large"), nil, resizeStart},
		{"error", srv("ERROR", "", "m1.small"), resize("medium", "m1.medium", kupenstackv1.ResizePhaseResizing, gen), resizeGaveUp},
		{"no flavor shown", srv("ACTIVE", "", ""), nil, resizeNothing},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vm := &kupenstackv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Generation: gen},
				Spec: kupenstackv1.VirtualMachineSpec{FlavorRef: "medium"}, Status: kupenstackv1.VirtualMachineStatus{Resize: tt.resize}}
			if got := decideResize(vm, tt.srv, "m1.medium"); got != tt.want {
				t.Errorf("decideResize = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestResizeStatesAreNoFailure: the heal logic never replaces a server because it is resizing.
func TestResizeStatesAreNoFailure(t *testing.T) {
	vm := &kupenstackv1.VirtualMachine{Status: kupenstackv1.VirtualMachineStatus{
		Resize: &kupenstackv1.VirtualMachineResize{FlavorRef: "medium", FlavorName: "m1.medium", FromFlavorName: "m1.small", Phase: kupenstackv1.ResizePhaseResizing}}}
	for _, status := range []string{"RESIZE", "VERIFY_RESIZE", "REVERT_RESIZE"} {
		if f := (actuator{}).Failure(vm, &servers.Server{ID: "s", Status: status, TaskState: "resize_migrating"}); f != "" {
			t.Errorf("%s is a failure: %s", status, f)
		}
	}
	f := (actuator{}).Failure(vm, &servers.Server{ID: "s", Status: "ERROR"})
	if want := "server s went to ERROR while being resized from flavor m1.small to m1.medium"; f != want {
		t.Errorf("Failure = %q, want %q", f, want)
	}
}
