package workloads

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kupenstack/kupenstack/internal/lcm/helm"
)

func TestDeploymentState(t *testing.T) {
	dep := func(gen, observed int64, want, replicas, updated, available int32) *appsv1.Deployment {
		d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To(want)}}
		d.Generation = gen
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: replicas, UpdatedReplicas: updated, AvailableReplicas: available}
		return d
	}
	for _, tc := range []struct {
		name  string
		d     *appsv1.Deployment
		ready bool
	}{
		{"ready", dep(2, 2, 3, 3, 3, 3), true},
		{"scaled to zero", dep(1, 1, 0, 0, 0, 0), true},
		{"new generation not observed", dep(3, 2, 3, 3, 3, 3), false},
		{"rolling: old pods remain", dep(2, 2, 3, 4, 3, 3), false},
		{"not all available", dep(2, 2, 3, 3, 3, 2), false},
		{"not all updated", dep(2, 2, 3, 3, 2, 3), false},
	} {
		if got := DeploymentState(tc.d); got.Ready != tc.ready || (!got.Ready && got.Why == "") {
			t.Errorf("%s: %+v, want ready=%v with a reason when not", tc.name, got, tc.ready)
		}
	}
}

func TestStatefulSetState(t *testing.T) {
	sts := func(want, ready, updated int32, strategy appsv1.StatefulSetUpdateStrategyType) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(want), UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: strategy}},
			Status: appsv1.StatefulSetStatus{ReadyReplicas: ready, UpdatedReplicas: updated}}
	}
	for _, tc := range []struct {
		name  string
		s     *appsv1.StatefulSet
		ready bool
	}{
		{"ready", sts(1, 1, 1, appsv1.RollingUpdateStatefulSetStrategyType), true},
		{"not ready", sts(3, 2, 3, appsv1.RollingUpdateStatefulSetStrategyType), false},
		{"not updated", sts(3, 3, 1, appsv1.RollingUpdateStatefulSetStrategyType), false},
		{"OnDelete waits for nobody to update", sts(3, 3, 1, appsv1.OnDeleteStatefulSetStrategyType), true},
	} {
		if got := StatefulSetState(tc.s); got.Ready != tc.ready {
			t.Errorf("%s: %+v, want ready=%v", tc.name, got, tc.ready)
		}
	}
}

func TestDaemonSetState(t *testing.T) {
	ds := func(desired, updated, ready int32) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: desired, UpdatedNumberScheduled: updated, NumberReady: ready}}
	}
	for _, tc := range []struct {
		name  string
		d     *appsv1.DaemonSet
		ready bool
	}{
		{"ready", ds(2, 2, 2), true},
		{"no node to run on", ds(0, 0, 0), true},
		{"pod not ready", ds(2, 2, 1), false},
		{"pod not updated", ds(2, 1, 2), false},
	} {
		if got := DaemonSetState(tc.d); got.Ready != tc.ready {
			t.Errorf("%s: %+v, want ready=%v", tc.name, got, tc.ready)
		}
	}
}

func TestJobState(t *testing.T) {
	job := func(cond batchv1.JobConditionType, status corev1.ConditionStatus) *batchv1.Job {
		j := &batchv1.Job{}
		if cond != "" {
			j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: status, Message: "BackoffLimitExceeded"}}
		}
		return j
	}
	if s := JobState(job(batchv1.JobComplete, corev1.ConditionTrue)); !s.Ready {
		t.Errorf("complete job: %+v", s)
	}
	if s := JobState(job(batchv1.JobFailed, corev1.ConditionTrue)); s.Ready || !s.Failed {
		t.Errorf("failed job: %+v", s)
	}
	if s := JobState(job(batchv1.JobFailed, corev1.ConditionFalse)); s.Ready || s.Failed {
		t.Errorf("job with a false Failed condition: %+v", s)
	}
	if s := JobState(job("", "")); s.Ready || s.Failed {
		t.Errorf("running job: %+v", s)
	}
}

func TestModified(t *testing.T) {
	const doc = `apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - {name: api, image: registry/api:1}
`
	ref := helm.ObjectRef{Doc: doc}
	live := func(replicas int32, image string) *appsv1.Deployment {
		d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas)}}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "api", Image: image}, {Name: "sidecar", Image: "added/by:hand"}}
		return d
	}
	for _, tc := range []struct {
		name string
		live *appsv1.Deployment
		want string
	}{
		{"as in the manifest", live(2, "registry/api:1"), ""},
		{"scaled by hand", live(5, "registry/api:1"), "replicas 5, want 2"},
		{"image changed by hand", live(2, "registry/api:hotfix"), "container api image registry/api:hotfix, want registry/api:1"},
	} {
		if got := Modified(ref, tc.live); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// No replicas in the manifest: the API server's default of 1 is not a change.
	noReplicas := helm.ObjectRef{Doc: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec: {}\n"}
	if got := Modified(noReplicas, &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1))}}); got != "" {
		t.Errorf("defaulted replicas reported as drift: %q", got)
	}
	if got := Modified(helm.ObjectRef{}, live(9, "x")); got != "" {
		t.Errorf("without a document: %q", got)
	}
}
