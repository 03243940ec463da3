package component

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestRanAgain(t *testing.T) {
	job := func(name, uid string, done bool) batchv1.Job {
		j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid)}}
		if done {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		}
		return j
	}
	old := map[types.UID]bool{"old-sync": true, "old-user": true}
	names := []string{"nova-db-sync", "nova-ks-user"}
	tests := []struct {
		name string
		jobs []batchv1.Job
		want bool
	}{
		{"the previous release's runs", []batchv1.Job{job("nova-db-sync", "old-sync", true), job("nova-ks-user", "old-user", true)}, false},
		{"one run again, the other old", []batchv1.Job{job("nova-db-sync", "new-sync", true), job("nova-ks-user", "old-user", true)}, false},
		{"one run again, the other not there yet", []batchv1.Job{job("nova-db-sync", "new-sync", true)}, false},
		{"run again, one still running", []batchv1.Job{job("nova-db-sync", "new-sync", true), job("nova-ks-user", "new-user", false)}, false},
		{"both run again and complete", []batchv1.Job{job("nova-db-sync", "new-sync", true), job("nova-ks-user", "new-user", true), job("other", "x", false)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ranAgain(tt.jobs, names, old); got != tt.want {
				t.Errorf("ranAgain = %v, want %v", got, tt.want)
			}
		})
	}
}
