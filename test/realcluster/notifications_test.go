package realcluster

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kupenstack/kupenstack/internal/controller/lcm/component"
)

// operatorHearsTheCloud: once Nova is up, the life-cycle has published the URL of Nova's
// notification bus beside the clouds.yaml, and the operator's pod, given no URL of its own,
// listens there (its kupenstack_notifications_connected metric is 1). The URL is returned for the
// resource suite's listener.
func operatorHearsTheCloud(ctx context.Context, t *testing.T, c *cluster) string {
	t.Helper()
	var secret *corev1.Secret
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		s, err := c.cs.CoreV1().Secrets(operatorNamespace).Get(ctx, component.NotificationsSecretName, metav1.GetOptions{})
		secret = s
		return err == nil, nil
	}); err != nil {
		t.Fatalf("no Secret %s/%s: the life-cycle did not publish the notification bus", operatorNamespace, component.NotificationsSecretName)
	}
	busURL := string(secret.Data[component.NotificationsURLKey])
	// The URL holds a password: only its shape is logged.
	if !strings.HasPrefix(busURL, "amqp://nova:") || !strings.HasSuffix(busURL, ".svc.cluster.local:5672/nova") {
		t.Fatalf("the published notification bus's URL is not Nova's broker in the cluster (%d characters)", len(busURL))
	}
	pod, err := c.cs.CoreV1().Pods(operatorNamespace).Get(ctx, operatorPod(ctx, t, c), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	metrics := "http://" + pod.Status.PodIP + ":8080/metrics"
	start := time.Now()
	var last string
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		body, _ := httpGet(ctx, metrics)
		for line := range strings.SplitSeq(body, "\n") {
			if strings.HasPrefix(line, "kupenstack_notifications_connected ") {
				last = line
			}
		}
		return last == "kupenstack_notifications_connected 1", nil
	}); err != nil {
		t.Fatalf("the operator's pod does not listen on the published bus: %q", last)
	}
	t.Logf("the operator listens on Nova's notification bus (%s after the check began)", time.Since(start).Round(time.Second))
	return busURL
}
