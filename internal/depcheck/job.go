package depcheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Job waits until a Job (or every Job with the labels, at least one) has succeeded: as upstream,
// at least one succeeded pod, or the Complete condition.
type Job struct{ JobSelector }

func (j Job) String() string {
	if j.Name != "" {
		return "Job " + j.Namespace + "/" + j.Name
	}
	return fmt.Sprintf("Jobs in %s with labels %s", j.Namespace, labels.Set(j.Labels))
}

func (j Job) Check(ctx context.Context, e *Env) (string, error) {
	jobs := e.Kube.BatchV1().Jobs(j.Namespace)
	var list []batchv1.Job
	if j.Name != "" {
		job, err := jobs.Get(ctx, j.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return "not found", nil
		}
		if err != nil {
			return "", err
		}
		list = []batchv1.Job{*job}
	} else {
		l, err := jobs.List(ctx, metav1.ListOptions{LabelSelector: labels.Set(j.Labels).String()})
		if err != nil {
			return "", err
		}
		if len(l.Items) == 0 {
			return "no Job with these labels", nil
		}
		list = l.Items
	}
	var pending []string
	for i := range list {
		if !jobSucceeded(&list[i]) {
			state := "not completed"
			if jobFailed(&list[i]) {
				state = "failed"
			}
			pending = append(pending, list[i].Name+" "+state)
		}
	}
	if len(pending) > 0 {
		slices.Sort(pending)
		return strings.Join(pending, ", "), nil
	}
	return "", nil
}

func jobSucceeded(job *batchv1.Job) bool {
	return job.Status.Succeeded > 0 || jobCondition(job, batchv1.JobComplete)
}

func jobFailed(job *batchv1.Job) bool { return jobCondition(job, batchv1.JobFailed) }

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
