package lcm

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/lcm/computeservice"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
)

// ComputeServices reads and switches the nova-compute service of a node (computeservice.Nova on
// a real cloud).
type ComputeServices interface {
	// Find returns host's nova-compute service, nil when it has none.
	Find(ctx context.Context, host string) (*computeservice.Service, error)
	// SetEnabled enables the service, or disables it with reason.
	SetEnabled(ctx context.Context, id string, enabled bool, reason string) error
}

// novaComponent is the component whose compute services a node's roles switch.
const novaComponent = "nova"

// novaServing says whether Nova has been deployed and ready at least once: before that no
// compute service can exist, and a node leaving a cloud still being installed must not wait for
// a Nova API that is not there yet.
func (r *NodeReconciler) novaServing(ctx context.Context) (bool, error) {
	if r.Compute == nil {
		return false, nil
	}
	var nova kupenstackv1.OpenstackComponent
	if err := r.Client.Get(ctx, types.NamespacedName{Name: novaComponent}, &nova); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return nova.DeletionTimestamp.IsZero() && nova.Status.LastGoodRevision > 0, nil
}

// labelledCompute says whether KupenStack's compute label is on the node now.
func (r *NodeReconciler) labelledCompute(ctx context.Context, name string) (bool, error) {
	var node corev1.Node
	if err := r.Client.Get(ctx, types.NamespacedName{Name: name}, &node); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return ownedLabels(&node)[values.LabelComputeNode] && node.Labels[values.LabelComputeNode] == values.LabelEnabled, nil
}

// disableCompute disables the node's nova-compute service before KupenStack takes its compute
// label off: with the label go the nova-compute and libvirt pods, and a service still enabled
// would keep drawing new servers to a host that cannot run them. It returns a non-empty wait
// when the label must stay for now (Nova could not be asked or refused), with the reason.
func (r *NodeReconciler) disableCompute(ctx context.Context, on *kupenstackv1.OpenstackNode) (string, error) {
	labelled, err := r.labelledCompute(ctx, on.Name)
	if err != nil || !labelled {
		return "", err
	}
	if serving, err := r.novaServing(ctx); err != nil || !serving {
		return "", err
	}
	svc, err := r.Compute.Find(ctx, on.Name)
	if err == nil && svc != nil && svc.Enabled() {
		if svc.UpButSilent(time.Now(), silentAfter, heartbeatWaitLimit) {
			// Its nova-compute is gone (the node failed, its pods were deleted) but Nova still
			// counts it up: disabling it now would make Nova's API call that nova-compute and hold
			// the request a minute, every other request of a one-worker API with it. Within
			// service_down_time Nova counts it down, and the disable calls nothing.
			return fmt.Sprintf("disabling nova-compute on %s once Nova counts its silent nova-compute down (last heard %s)",
				on.Name, svc.UpdatedAt.UTC().Format(time.RFC3339)), nil
		}
		err = r.Compute.SetEnabled(ctx, svc.ID, false, computeservice.Reason(on.Name))
		if err == nil {
			r.Recorder.Eventf(on, nil, corev1.EventTypeNormal, "ComputeServiceDisabled", "DisableComputeService",
				"disabled nova-compute on %s before taking the node's compute labels off", on.Name)
			svc.DisabledReason = computeservice.Reason(on.Name)
		}
	}
	if err != nil {
		r.Recorder.Eventf(on, nil, corev1.EventTypeWarning, "ComputeServiceNotDisabled", "DisableComputeService",
			"the node keeps its compute labels until Nova disables its nova-compute service: %v", err)
		return fmt.Sprintf("disabling nova-compute on %s before taking the node's compute labels off: %v", on.Name, err), nil
	}
	// Only a service KupenStack disabled is KupenStack's to enable again.
	if svc != nil && computeservice.DisabledByKupenStack(svc.DisabledReason) {
		on.Status.ComputeService = kupenstackv1.ComputeServiceDisabled
	}
	return "", nil
}

// silentAfter is how long without a heartbeat makes a nova-compute Nova still counts up silent:
// three of Nova's report intervals (10 s by default), so that a heartbeat late on a loaded node
// does not hold a disable.
const silentAfter = 30 * time.Second

// heartbeatWaitLimit bounds the wait for a heartbeat from the node's new nova-compute: Nova
// counts a silent service down after service_down_time (60 s by default), so a service still up
// later is heartbeating, and an older heartbeat time can only be a clock behind the operator's.
const heartbeatWaitLimit = 2 * time.Minute

// enableCompute enables again the nova-compute service KupenStack disabled, once the node is a
// compute node again. It is asked only when there may be something to enable: the status says
// KupenStack disabled it, or the compute label was just put back (a node removed from the
// configuration and added again comes back with a fresh status). It returns a non-empty wait
// while Nova cannot be asked, and while Nova still counts the service up from a heartbeat older
// than the label: that nova-compute left with the label, and Nova's API, enabling the service,
// would call it and hold the request a minute (with one API worker, every other request too;
// the liveness probe then restarts it). A service counted down is enabled at once: Nova calls
// no nova-compute then, and the new one reads the setting when it starts.
func (r *NodeReconciler) enableCompute(ctx context.Context, on *kupenstackv1.OpenstackNode, labelledBefore []string) (string, error) {
	justLabelled := !slices.Contains(labelledBefore, values.LabelComputeNode) && slices.Contains(on.Status.AppliedLabels, values.LabelComputeNode)
	heldDisabled := on.Status.ComputeService == kupenstackv1.ComputeServiceDisabled
	// Labelled while Nova was not serving or could not be asked: still to be asked.
	labelledUnasked := on.Status.ComputeLabelledAt != nil
	if !heldDisabled && !justLabelled && !labelledUnasked {
		return "", nil
	}
	labelledAt := on.Status.ComputeLabelledAt
	if justLabelled || labelledAt == nil {
		// The next whole second: the status keeps whole seconds, and a heartbeat in the same
		// second as the label can only be the old nova-compute's.
		labelledAt = &metav1.Time{Time: time.Now().Truncate(time.Second).Add(time.Second)}
	}
	if serving, err := r.novaServing(ctx); err != nil || !serving {
		if err == nil && r.Compute != nil {
			// Nova's component is not serving (never ready yet, or being replaced): a node added
			// again now may hold a service KupenStack disabled when it left. Remembered, and
			// asked when the component serves (the controller watches it), not forgotten with
			// this pass.
			on.Status.ComputeLabelledAt = labelledAt
		}
		return "", err
	}
	svc, err := r.Compute.Find(ctx, on.Name)
	switch {
	case err != nil || svc == nil:
	case !svc.Enabled() && computeservice.DisabledByKupenStack(svc.DisabledReason):
		if svc.UpOnlyFromBefore(labelledAt.Time) && time.Since(labelledAt.Time) < heartbeatWaitLimit {
			on.Status.ComputeService, on.Status.ComputeLabelledAt = kupenstackv1.ComputeServiceDisabled, labelledAt
			return fmt.Sprintf("enabling nova-compute on %s once the node's new nova-compute reports to Nova (Nova still counts the one that left up, last heard %s)",
				on.Name, svc.UpdatedAt.UTC().Format(time.RFC3339)), nil
		}
		if err = r.Compute.SetEnabled(ctx, svc.ID, true, ""); err == nil {
			r.Recorder.Eventf(on, nil, corev1.EventTypeNormal, "ComputeServiceEnabled", "EnableComputeService",
				"enabled nova-compute on %s again: the node is a compute node again", on.Name)
		}
	case svc.Enabled() && heldDisabled:
		// Enabled behind this pass: an administrator, or an earlier enable whose answer was lost
		// (Nova saves the change before it calls the nova-compute, and its API may be restarted
		// meanwhile).
		r.Recorder.Eventf(on, nil, corev1.EventTypeNormal, "ComputeServiceEnabled", "EnableComputeService",
			"nova-compute on %s is enabled again (found so): the node is a compute node again", on.Name)
	}
	if err != nil {
		// Kept, so that the next pass asks again. Disabled only when known to be: a node just
		// labelled for the first time may have an enabled service, or none yet.
		on.Status.ComputeLabelledAt = labelledAt
		note := "nova-compute on %s is looked at once Nova can be asked: %v"
		if heldDisabled || (svc != nil && !svc.Enabled() && computeservice.DisabledByKupenStack(svc.DisabledReason)) {
			on.Status.ComputeService = kupenstackv1.ComputeServiceDisabled
			note = "nova-compute on %s stays disabled until Nova can be asked: %v"
		}
		r.Recorder.Eventf(on, nil, corev1.EventTypeWarning, "ComputeServiceNotEnabled", "EnableComputeService", note, on.Name, err)
		return fmt.Sprintf("enabling nova-compute on %s again: %v", on.Name, err), nil
	}
	on.Status.ComputeService, on.Status.ComputeLabelledAt = "", nil
	return "", nil
}
