package gate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestJob(t *testing.T) {
	chart := map[string]any{
		"images": map[string]any{"tags": map[string]any{"dep_check": "chart/entrypoint:1"}, "pull_policy": "IfNotPresent"},
		"labels": map[string]any{"job": map[string]any{"node_selector_key": "openstack-control-plane", "node_selector_value": "enabled"}},
	}
	vals := map[string]any{"images": map[string]any{"tags": map[string]any{"dep_check": "local/entrypoint:2"}, "pull_policy": "Always"}}
	j, err := Job("openstack", "nova", "nova-kupenstack-2026-1", chart, vals)
	if err != nil {
		t.Fatal(err)
	}
	pod := j.Spec.Template.Spec
	c := pod.Containers[0]
	if c.Image != "local/entrypoint:2" || c.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("image %s pulled %s: the values' come first", c.Image, c.ImagePullPolicy)
	}
	if pod.NodeSelector["openstack-control-plane"] != "enabled" {
		t.Errorf("node selector %v: the chart's Jobs' nodes", pod.NodeSelector)
	}
	if j.Name != "nova-kupenstack-2026-1" || j.Labels[InstanceLabel] != "nova" || j.Labels[Label] != "true" {
		t.Errorf("job %s labels %v", j.Name, j.Labels)
	}
	if len(c.Env) != 0 {
		t.Errorf("env %v: the gate waits for nothing", c.Env)
	}
	if _, err := Job("openstack", "nova", "g", map[string]any{}, map[string]any{}); err == nil {
		t.Error("no dep_check image: want an error")
	}
}
