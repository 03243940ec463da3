package depcheck

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DaemonSet waits until the DaemonSet's pod on this pod's node is ready. As upstream, a
// DaemonSet with no pod on this node (it does not run here) does not hold anything up. Pods are
// those matching the DaemonSet's selector and controlled by it; "this node" is POD_NAME's
// spec.nodeName (upstream compares host IPs).
type DaemonSet struct{ Ref }

func (d DaemonSet) String() string { return "DaemonSet " + d.Ref.String() }

func (d DaemonSet) Check(ctx context.Context, e *Env) (string, error) {
	ds, err := e.Kube.AppsV1().DaemonSets(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "not found", nil
	}
	if err != nil {
		return "", err
	}
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return "", fmt.Errorf("selector of %s: %w", d, err)
	}
	node, err := e.ownNode(ctx)
	if err != nil {
		return "", err
	}
	pods, err := e.Kube.CoreV1().Pods(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return "", err
	}
	onNode := 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Spec.NodeName != node {
			continue
		}
		if owner := metav1.GetControllerOf(pod); owner == nil || owner.UID != ds.UID {
			continue
		}
		if podReady(pod) {
			return "", nil
		}
		onNode++
	}
	if onNode == 0 {
		return "", nil // nothing of it on this node
	}
	return fmt.Sprintf("its pod on node %s is not ready", node), nil
}
