package depcheck

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// Dependency is one thing to wait for.
type Dependency interface {
	// String names the dependency in log lines ("Service openstack/keystone-api").
	String() string
	// Check returns "" when the dependency is satisfied, otherwise what it still waits for. An
	// error is a failed look (API error): it is logged and the check is retried.
	Check(ctx context.Context, e *Env) (waiting string, err error)
}

// Env is what checks need: the API clients and who this pod is.
type Env struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// Namespace and PodName are this pod's (NAMESPACE and POD_NAME).
	Namespace, PodName string
}

// needsPod reports whether d looks at this pod (its node or its containers).
func needsPod(d Dependency) bool {
	switch d := d.(type) {
	case DaemonSet, Container:
		return true
	case Pod:
		return d.RequireSameNode
	}
	return false
}

// ownPod reads this pod.
func (e *Env) ownPod(ctx context.Context) (*corev1.Pod, error) {
	pod, err := e.Kube.CoreV1().Pods(e.Namespace).Get(ctx, e.PodName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading this pod %s/%s: %w", e.Namespace, e.PodName, err)
	}
	return pod, nil
}

// ownNode is the node this pod runs on.
func (e *Env) ownNode(ctx context.Context) (string, error) {
	pod, err := e.ownPod(ctx)
	if err != nil {
		return "", err
	}
	if pod.Spec.NodeName == "" {
		return "", fmt.Errorf("this pod %s/%s is not scheduled to a node", e.Namespace, e.PodName)
	}
	return pod.Spec.NodeName, nil
}

// podReady reports the pod's Ready condition.
func podReady(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
