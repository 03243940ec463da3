// Package gate makes the gate Jobs of a component's Helm release: Jobs that do nothing, named
// after an OpenStack release (values.GateName), which the release's long-running pods wait for
// beside its db-sync. Creating one is what lets the pods of a new OpenStack release start, once
// the release's own hook Jobs (migrations, Keystone users) have run; see values/gate.go for why.
package gate

import (
	"context"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Label marks a gate Job; helm-toolkit's instance label names its release.
const (
	Label         = "kupenstack.io/gate"
	InstanceLabel = "app.kubernetes.io/instance"
)

// Job is the gate named name of the Helm release instance. vals are the release's values over
// its chart's (chartValues): the gate runs the release's dep_check image (kubernetes-entrypoint,
// which with nothing to wait for and no command exits 0) on its Jobs' nodes.
func Job(namespace, instance, name string, chartValues, vals map[string]any) (*batchv1.Job, error) {
	image := lookup(chartValues, vals, "images", "tags", "dep_check")
	if image == "" {
		return nil, fmt.Errorf("gate %s: the values name no images.tags.dep_check to run", name)
	}
	pod := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyOnFailure,
		AutomountServiceAccountToken:  ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		// As helm-toolkit runs its dep-check init containers.
		SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](65534)},
		Containers: []corev1.Container{{
			Name:            "gate",
			Image:           image,
			Command:         []string{"kubernetes-entrypoint"},
			ImagePullPolicy: corev1.PullPolicy(lookup(chartValues, vals, "images", "pull_policy")),
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("8Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
			},
		}},
	}
	if key, value := lookup(chartValues, vals, "labels", "job", "node_selector_key"), lookup(chartValues, vals, "labels", "job", "node_selector_value"); key != "" {
		pod.NodeSelector = map[string]string{key: value}
	}
	labels := map[string]string{InstanceLabel: instance, Label: "true", "app.kubernetes.io/managed-by": "kupenstack"}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](6),
			Template:     corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
		},
	}, nil
}

// Sync makes the gates of the release instance exactly want (names): each missing one is created
// from the values, any other deleted. It says what it created and deleted.
func Sync(ctx context.Context, c client.Client, r client.Reader, namespace, instance string, want []string,
	chartValues, vals map[string]any) (created, deleted []string, err error) {
	have, err := List(ctx, r, namespace, instance)
	if err != nil {
		return nil, nil, err
	}
	for i := range have {
		j := &have[i]
		if slices.Contains(want, j.Name) {
			continue
		}
		if err := c.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return created, deleted, fmt.Errorf("deleting gate Job %s: %w", j.Name, err)
		}
		deleted = append(deleted, j.Name)
	}
	for _, name := range want {
		if slices.ContainsFunc(have, func(j batchv1.Job) bool { return j.Name == name }) {
			continue
		}
		job, err := Job(namespace, instance, name, chartValues, vals)
		if err != nil {
			return created, deleted, err
		}
		if err := c.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
			return created, deleted, fmt.Errorf("creating gate Job %s: %w", name, err)
		}
		created = append(created, name)
	}
	return created, deleted, nil
}

// List reads the gates of the release instance.
func List(ctx context.Context, r client.Reader, namespace, instance string) ([]batchv1.Job, error) {
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(namespace), client.MatchingLabels{InstanceLabel: instance, Label: "true"}); err != nil {
		return nil, fmt.Errorf("listing gate Jobs: %w", err)
	}
	return jobs.Items, nil
}

// lookup is the string at path in vals, else in chartValues.
func lookup(chartValues, vals map[string]any, path ...string) string {
	for _, m := range []map[string]any{vals, chartValues} {
		var cur any = m
		for _, p := range path {
			next, _ := cur.(map[string]any)
			cur = next[p]
		}
		if s, ok := cur.(string); ok && s != "" {
			return s
		}
	}
	return ""
}
