package virtualmachine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// resizePoll is how soon a server Nova is resizing is looked at again: a resize takes seconds
// to minutes, and a notification (when configured) wakes the VM earlier.
const resizePoll = 3 * time.Second

// resizeAction is what one pass does about the server's flavor.
type resizeAction int

const (
	resizeNothing resizeAction = iota // the flavor is the wanted one, or Nova is busy otherwise
	resizeWait                        // Nova is resizing or reverting the server
	resizeStart                       // ask Nova to resize to the wanted flavor
	resizeConfirm                     // the wanted resize waits for confirmation
	resizeRevert                      // a resize to a flavor the spec does not want waits for confirmation
	resizeFailed                      // this generation's resize failed: report it, do not try again
	resizeGaveUp                      // Nova ended the resize with the server on another flavor
	resizeDone                        // the resize finished on the wanted flavor
	resizeNotNow                      // the server's state does not allow a resize (PAUSED, ...)
)

// flavorName is the name of the server's flavor (microversion 2.47 and later embed the flavor;
// Nova flavor names are unique).
func flavorName(srv *servers.Server) string {
	n, _ := srv.Flavor["original_name"].(string)
	return n
}

// resizing says whether Nova is in the middle of a resize or its revert.
func resizing(srv *servers.Server) bool {
	return srv.Status == "RESIZE" || srv.Status == "REVERT_RESIZE" || strings.HasPrefix(srv.TaskState, "resize")
}

// decideResize is the resize state machine: from the server as Nova shows it, the flavor the spec
// wants (wantName, its Nova name) and the resize recorded in the status, what to do now.
func decideResize(vm *kupenstackv1.VirtualMachine, srv *servers.Server, wantName string) resizeAction {
	r := vm.Status.Resize
	ours := r != nil && r.FlavorRef == vm.Spec.FlavorRef && r.FlavorName == wantName
	cur := flavorName(srv)
	switch {
	case srv.Status == "VERIFY_RESIZE" && srv.TaskState == "":
		switch {
		case cur != wantName:
			// Resized to a flavor the spec no longer wants (changed meanwhile, or out of band):
			// back to the old one, from which the next pass resizes again if needed.
			return resizeRevert
		case ours && r.Phase == kupenstackv1.ResizePhaseConfirming:
			return resizeWait // confirmed; Nova finishes asynchronously
		}
		return resizeConfirm
	case resizing(srv):
		return resizeWait
	case !settled(srv) || cur == "" || wantName == "":
		return resizeNothing
	case cur == wantName:
		if ours && r.Phase != kupenstackv1.ResizePhaseFailed {
			return resizeDone
		}
		return resizeNothing
	case ours && r.Phase == kupenstackv1.ResizePhaseFailed && r.Generation == vm.Generation:
		return resizeFailed
	case ours && r.Phase != kupenstackv1.ResizePhaseFailed:
		// Nova accepted the resize (the server left its settled state at once, with task
		// resize_prep) and ended it on another flavor: it gave up (no valid host, ...).
		return resizeGaveUp
	case srv.Status != "ACTIVE" && srv.Status != "SHUTOFF":
		return resizeNotNow
	}
	return resizeStart
}

// wantFlavorName is the Nova name of the Flavor object spec.flavorRef names.
func (a actuator) wantFlavorName(ctx context.Context, vm *kupenstackv1.VirtualMachine) (string, error) {
	var f kupenstackv1.Flavor
	if err := a.kube.Get(ctx, client.ObjectKey{Name: vm.Spec.FlavorRef}, &f); err != nil {
		return "", err
	}
	if f.Status.Resource != nil && f.Status.Resource.Name != "" {
		return f.Status.Resource.Name, nil
	}
	return generic.Name(&f, f.Spec.Name), nil
}

// syncFlavor resizes the server to spec.flavorRef: resize, wait for VERIFY_RESIZE, confirm. It
// returns a wait error while Nova works (the worker is not blocked), a ResizeFailed error when
// Nova refused or failed the resize, and nil once the flavor is right.
func (a actuator) syncFlavor(ctx context.Context, s generic.Scope, sc *gophercloud.ServiceClient, vm *kupenstackv1.VirtualMachine, cur *servers.Server) error {
	if vm.Spec.FlavorRef == "" {
		return nil // an imported server whose flavor is not managed
	}
	wantName, err := a.wantFlavorName(ctx, vm)
	if err != nil {
		return err
	}
	from, r := flavorName(cur), vm.Status.Resize
	switch decideResize(vm, cur, wantName) {
	case resizeNothing:
		if settled(cur) && from == wantName {
			vm.Status.Resize = nil // done, or a failed resize the spec went back from
		}
		return nil
	case resizeWait:
		return generic.WaitForReason(kupenstackv1.ReasonResizing,
			fmt.Sprintf("resizing the server to flavor %s: server is %s (%s)", wantName, cur.Status, orNone(cur.TaskState)), resizePoll)
	case resizeDone:
		s.Event(corev1.EventTypeNormal, "Resized", "Resize",
			fmt.Sprintf("resized server %s from flavor %s to %s", cur.ID, r.FromFlavorName, wantName))
		vm.Status.Resize = nil
		return nil
	case resizeFailed:
		return resizeFailedError(r)
	case resizeNotNow:
		return generic.WaitForReason(kupenstackv1.ReasonResizing,
			fmt.Sprintf("the server is %s; it is resized to flavor %s once it is ACTIVE or SHUTOFF", cur.Status, wantName), 30*time.Second)
	case resizeGaveUp:
		return failResize(vm, fmt.Sprintf("Nova ended the resize with the server on flavor %s (see `openstack server event list %s`)", from, cur.ID))
	case resizeRevert:
		if err := servers.RevertResize(ctx, sc, cur.ID).ExtractErr(); err != nil {
			return fmt.Errorf("reverting the resize of the server to flavor %s, which the spec no longer asks for: %w", from, err)
		}
		return generic.WaitForReason(kupenstackv1.ReasonResizing,
			fmt.Sprintf("reverting the resize to flavor %s, which the spec no longer asks for", from), resizePoll)
	case resizeConfirm:
		if r == nil || r.FlavorRef != vm.Spec.FlavorRef {
			// A resize to the wanted flavor that this operator did not record (its status patch
			// was lost, or someone resized out of band): it is the wanted one, so confirm it.
			r = &kupenstackv1.VirtualMachineResize{FlavorRef: vm.Spec.FlavorRef, FlavorName: wantName, Generation: vm.Generation}
			vm.Status.Resize = r
		}
		if err := servers.ConfirmResize(ctx, sc, cur.ID).ExtractErr(); err != nil {
			if notResized(err) {
				// A confirm already sent: Nova has no resize left to confirm and finishes it.
				r.Phase = kupenstackv1.ResizePhaseConfirming
				return generic.WaitForReason(kupenstackv1.ReasonResizing, "confirming the resize to flavor "+wantName, resizePoll)
			}
			if class, _ := openstack.Classify(err); class != openstack.Rejected {
				return fmt.Errorf("confirming the resize: %w", err)
			}
			// A resize that cannot be confirmed goes back to the old flavor.
			msg := fmt.Sprintf("Nova refused to confirm the resize to flavor %s: %v", wantName, err)
			if rerr := servers.RevertResize(ctx, sc, cur.ID).ExtractErr(); rerr != nil {
				msg += fmt.Sprintf("; reverting it failed too: %v", rerr)
			}
			return failResize(vm, msg)
		}
		r.Phase = kupenstackv1.ResizePhaseConfirming
		return generic.WaitForReason(kupenstackv1.ReasonResizing, "confirming the resize to flavor "+wantName, resizePoll)
	}
	// resizeStart
	vm.Status.Resize = &kupenstackv1.VirtualMachineResize{FlavorRef: vm.Spec.FlavorRef, FlavorName: wantName,
		FromFlavorName: from, Phase: kupenstackv1.ResizePhaseResizing, Generation: vm.Generation, StartTime: &metav1.Time{Time: time.Now()}}
	if err := servers.Resize(ctx, sc, cur.ID, servers.ResizeOpts{FlavorRef: s.DependencyID("Flavor", vm.Spec.FlavorRef)}).ExtractErr(); err != nil {
		if class, _ := openstack.Classify(err); class != openstack.Rejected {
			vm.Status.Resize = r // not started: the next pass tries again (with backoff)
			return fmt.Errorf("resizing the server to flavor %s: %w", wantName, err)
		}
		return failResize(vm, fmt.Sprintf("Nova refused to resize the server from flavor %s to %s: %s", from, wantName, novaMessage(err)))
	}
	s.Event(corev1.EventTypeNormal, "Resizing", "Resize", fmt.Sprintf("resizing server %s from flavor %s to %s", cur.ID, from, wantName))
	return generic.WaitForReason(kupenstackv1.ReasonResizing, fmt.Sprintf("resizing the server from flavor %s to %s", from, wantName), resizePoll)
}

// failResize records the failed resize (not tried again for this generation) and reports it.
// The engine records the warning Event of the ResizeFailed condition.
func failResize(vm *kupenstackv1.VirtualMachine, msg string) error {
	r := vm.Status.Resize
	r.Phase, r.Message, r.Generation = kupenstackv1.ResizePhaseFailed, msg, vm.Generation
	return resizeFailedError(r)
}

func resizeFailedError(r *kupenstackv1.VirtualMachineResize) error {
	// No requeue: the failure stays until the spec changes, which wakes the VM.
	return generic.Degraded(kupenstackv1.ReasonResizeFailed,
		r.Message+"; the server stays on flavor "+r.FromFlavorName+" until spec.flavorRef (or the spec) changes", 0)
}

// notResized says whether Nova answered a confirm with "Instance has not been resized": the
// resize was confirmed already.
func notResized(err error) bool {
	return gophercloud.ResponseCodeIs(err, http.StatusBadRequest) && strings.Contains(err.Error(), "has not been resized")
}

// novaMessage is the message of Nova's error answer, without the request URL.
func novaMessage(err error) string {
	var e gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &e) || len(e.Body) == 0 {
		return err.Error()
	}
	var body map[string]struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(e.Body, &body) == nil {
		for _, v := range body {
			if v.Message != "" {
				return fmt.Sprintf("%s (HTTP %d)", v.Message, e.Actual)
			}
		}
	}
	return err.Error()
}

func orNone(s string) string {
	if s == "" {
		return "no task"
	}
	return s
}
