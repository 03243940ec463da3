// Package workloads judges whether a Helm release's objects are there and its workloads ready,
// since KupenStack never asks Helm to wait (OpenStack-Helm's pods wait on each other through
// init containers, so a blocking wait can deadlock).
package workloads

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kupenstack/kupenstack/internal/lcm/helm"
)

// State of one workload.
type State struct {
	Ready bool
	// Failed: it will not become ready by itself (a Job that failed).
	Failed bool
	// Why it is not ready, for status messages.
	Why string
}

// DeploymentState: every replica updated and available, the controller caught up.
func DeploymentState(d *appsv1.Deployment) State {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	switch {
	case s.ObservedGeneration < d.Generation:
		return State{Why: "rollout not observed yet"}
	case s.UpdatedReplicas < want:
		return State{Why: fmt.Sprintf("%d of %d replicas updated", s.UpdatedReplicas, want)}
	case s.AvailableReplicas < want:
		return State{Why: fmt.Sprintf("%d of %d replicas available", s.AvailableReplicas, want)}
	case s.Replicas > s.UpdatedReplicas:
		return State{Why: fmt.Sprintf("%d old replicas still running", s.Replicas-s.UpdatedReplicas)}
	}
	return State{Ready: true}
}

// StatefulSetState: every replica ready and on the update revision.
func StatefulSetState(st *appsv1.StatefulSet) State {
	want := int32(1)
	if st.Spec.Replicas != nil {
		want = *st.Spec.Replicas
	}
	s := st.Status
	switch {
	case s.ObservedGeneration < st.Generation:
		return State{Why: "rollout not observed yet"}
	case s.ReadyReplicas < want:
		return State{Why: fmt.Sprintf("%d of %d replicas ready", s.ReadyReplicas, want)}
	case st.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType && s.UpdatedReplicas < want:
		return State{Why: fmt.Sprintf("%d of %d replicas updated", s.UpdatedReplicas, want)}
	}
	return State{Ready: true}
}

// DaemonSetState: a ready, updated pod on every node it should run on. A DaemonSet with no
// node to run on is ready (a compute-only chart before any compute node exists).
func DaemonSetState(ds *appsv1.DaemonSet) State {
	s := ds.Status
	switch {
	case s.ObservedGeneration < ds.Generation:
		return State{Why: "rollout not observed yet"}
	case s.UpdatedNumberScheduled < s.DesiredNumberScheduled:
		return State{Why: fmt.Sprintf("%d of %d pods updated", s.UpdatedNumberScheduled, s.DesiredNumberScheduled)}
	case s.NumberReady < s.DesiredNumberScheduled:
		return State{Why: fmt.Sprintf("%d of %d pods ready", s.NumberReady, s.DesiredNumberScheduled)}
	}
	return State{Ready: true}
}

// JobState: complete, or failed for good.
func JobState(j *batchv1.Job) State {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return State{Ready: true}
		case batchv1.JobFailed:
			return State{Failed: true, Why: fmt.Sprintf("failed: %s", c.Message)}
		}
	}
	return State{Why: "not complete"}
}

// Modified says how a live workload differs from its manifest document in what a hand change
// usually touches, its replica count and its containers' images; "" when it does not (or the
// document cannot tell).
func Modified(ref helm.ObjectRef, live client.Object) string {
	if ref.Doc == "" {
		return ""
	}
	var want, got *int32
	var wantPod, gotPod *corev1.PodTemplateSpec
	switch l := live.(type) {
	case *appsv1.Deployment:
		var d appsv1.Deployment
		if yaml.Unmarshal([]byte(ref.Doc), &d) != nil {
			return ""
		}
		want, got, wantPod, gotPod = d.Spec.Replicas, l.Spec.Replicas, &d.Spec.Template, &l.Spec.Template
	case *appsv1.StatefulSet:
		var st appsv1.StatefulSet
		if yaml.Unmarshal([]byte(ref.Doc), &st) != nil {
			return ""
		}
		want, got, wantPod, gotPod = st.Spec.Replicas, l.Spec.Replicas, &st.Spec.Template, &l.Spec.Template
	case *appsv1.DaemonSet:
		var ds appsv1.DaemonSet
		if yaml.Unmarshal([]byte(ref.Doc), &ds) != nil {
			return ""
		}
		wantPod, gotPod = &ds.Spec.Template, &l.Spec.Template
	default:
		return ""
	}
	var diffs []string
	// An unset count is 1 once the API server defaulted it.
	if w, g := ptr.Deref(want, 1), ptr.Deref(got, 1); w != g {
		diffs = append(diffs, fmt.Sprintf("replicas %d, want %d", g, w))
	}
	images := map[string]string{}
	for _, c := range gotPod.Spec.Containers {
		images[c.Name] = c.Image
	}
	for _, c := range wantPod.Spec.Containers {
		if img, ok := images[c.Name]; ok && img != c.Image {
			diffs = append(diffs, fmt.Sprintf("container %s image %s, want %s", c.Name, img, c.Image))
		}
	}
	return strings.Join(diffs, ", ")
}

// Summary of a release's objects.
type Summary struct {
	// Ready and Total count the workloads (Deployments, StatefulSets, DaemonSets, Jobs).
	Ready, Total int
	// Missing objects of the manifest (deleted by hand: drift).
	Missing []helm.ObjectRef
	// Modified workloads whose replicas or images differ from the manifest (changed by hand:
	// drift), "<kind> <name>: <what>".
	Modified []string
	// NotReady and Failed describe workloads, "<kind> <name>: <why>".
	NotReady, Failed []string
	// Versions are the resourceVersions of the objects found, by ObjectRef.String().
	Versions map[string]string
}

// AllReady says whether everything is there and ready.
func (s Summary) AllReady() bool {
	return len(s.Missing) == 0 && len(s.Modified) == 0 && len(s.Failed) == 0 && len(s.NotReady) == 0
}

// Check reads every object of a release from the API server (reader should not be a cache:
// the kinds are arbitrary) and judges the workloads.
func Check(ctx context.Context, reader client.Reader, objects []helm.ObjectRef) (Summary, error) {
	sum := Summary{Versions: map[string]string{}}
	for _, ref := range objects {
		key := types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
		var obj client.Object
		var judge func() State
		switch ref.GVK.GroupKind().String() {
		case "Deployment.apps":
			d := &appsv1.Deployment{}
			obj, judge = d, func() State { return DeploymentState(d) }
		case "StatefulSet.apps":
			st := &appsv1.StatefulSet{}
			obj, judge = st, func() State { return StatefulSetState(st) }
		case "DaemonSet.apps":
			ds := &appsv1.DaemonSet{}
			obj, judge = ds, func() State { return DaemonSetState(ds) }
		case "Job.batch":
			j := &batchv1.Job{}
			obj, judge = j, func() State { return JobState(j) }
		default:
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(ref.GVK)
			obj = m
		}
		if err := reader.Get(ctx, key, obj); err != nil {
			if apierrors.IsNotFound(err) {
				sum.Missing = append(sum.Missing, ref)
				if judge != nil {
					sum.Total++
				}
				continue
			}
			return sum, fmt.Errorf("%s: %w", ref, err)
		}
		sum.Versions[ref.String()] = obj.GetResourceVersion()
		if judge == nil {
			continue
		}
		sum.Total++
		if diff := Modified(ref, obj); diff != "" {
			sum.Modified = append(sum.Modified, fmt.Sprintf("%s %s: %s", ref.GVK.Kind, ref.Name, diff))
		}
		st := judge()
		switch {
		case st.Ready:
			sum.Ready++
		case st.Failed:
			sum.Failed = append(sum.Failed, fmt.Sprintf("%s %s: %s", ref.GVK.Kind, ref.Name, st.Why))
		default:
			sum.NotReady = append(sum.NotReady, fmt.Sprintf("%s %s: %s", ref.GVK.Kind, ref.Name, st.Why))
		}
	}
	return sum, nil
}
