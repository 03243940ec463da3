package depcheck

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Pod waits until at least one pod with the labels is ready, on this pod's node when
// RequireSameNode is set (compared by spec.nodeName; upstream compares host IPs).
type Pod struct{ PodSelector }

func (p Pod) String() string {
	s := fmt.Sprintf("Pod in %s with labels %s", p.Namespace, labels.Set(p.Labels))
	if p.RequireSameNode {
		s += " on this node"
	}
	return s
}

func (p Pod) Check(ctx context.Context, e *Env) (string, error) {
	node := ""
	if p.RequireSameNode {
		var err error
		if node, err = e.ownNode(ctx); err != nil {
			return "", err
		}
	}
	pods, err := e.Kube.CoreV1().Pods(p.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.Set(p.Labels).String()})
	if err != nil {
		return "", err
	}
	matching := 0
	for i := range pods.Items {
		if node != "" && pods.Items[i].Spec.NodeName != node {
			continue
		}
		if podReady(&pods.Items[i]) {
			return "", nil
		}
		matching++
	}
	where := ""
	if node != "" {
		where = " on node " + node
	}
	if matching == 0 {
		return "no such pod" + where, nil
	}
	return fmt.Sprintf("%d such pods%s, none ready", matching, where), nil
}
