package project

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

func TestWantsProject(t *testing.T) {
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"no labels", nil, false},
		{"enabled", map[string]string{kupenstackv1.LabelProject: "enabled"}, true},
		{"other value", map[string]string{kupenstackv1.LabelProject: "disabled"}, false},
		{"other label", map[string]string{"app": "enabled"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: tt.labels}}
			if got := WantsProject(ns); got != tt.want {
				t.Fatalf("WantsProject = %v, want %v", got, tt.want)
			}
		})
	}
}
