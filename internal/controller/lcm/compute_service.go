package lcm

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
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

// enableCompute enables again the nova-compute service KupenStack disabled, once the node is a
// compute node again. It is asked only when there may be something to enable: the status says
// KupenStack disabled it, or the compute label was just put back (a node removed from the
// configuration and added again comes back with a fresh status). It returns a non-empty wait
// while Nova cannot be asked.
func (r *NodeReconciler) enableCompute(ctx context.Context, on *kupenstackv1.OpenstackNode, labelledBefore []string) (string, error) {
	justLabelled := !slices.Contains(labelledBefore, values.LabelComputeNode) && slices.Contains(on.Status.AppliedLabels, values.LabelComputeNode)
	if on.Status.ComputeService != kupenstackv1.ComputeServiceDisabled && !justLabelled {
		return "", nil
	}
	if serving, err := r.novaServing(ctx); err != nil || !serving {
		return "", err
	}
	svc, err := r.Compute.Find(ctx, on.Name)
	if err == nil && svc != nil && !svc.Enabled() && computeservice.DisabledByKupenStack(svc.DisabledReason) {
		if err = r.Compute.SetEnabled(ctx, svc.ID, true, ""); err == nil {
			r.Recorder.Eventf(on, nil, corev1.EventTypeNormal, "ComputeServiceEnabled", "EnableComputeService",
				"enabled nova-compute on %s again: the node is a compute node again", on.Name)
		}
	}
	if err != nil {
		// Kept, so that the next pass asks again.
		on.Status.ComputeService = kupenstackv1.ComputeServiceDisabled
		r.Recorder.Eventf(on, nil, corev1.EventTypeWarning, "ComputeServiceNotEnabled", "EnableComputeService",
			"nova-compute on %s stays disabled until Nova can be asked: %v", on.Name, err)
		return fmt.Sprintf("enabling nova-compute on %s again: %v", on.Name, err), nil
	}
	on.Status.ComputeService = ""
	return "", nil
}
