// Package lcmtest holds what the life-cycle controllers' test suites share: writing profiles and
// namespaces, and free-form values.
package lcmtest

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// EnsureNamespace creates a namespace unless it exists.
func EnsureNamespace(t *testing.T, ctx context.Context, c client.Client, name string) {
	t.Helper()
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// ApplyProfile creates a profile (and its namespace) or replaces its spec.
func ApplyProfile(t *testing.T, ctx context.Context, c client.Client, namespace, name string, spec kupenstackv1.OpenstackCloudConfigurationProfileSpec) {
	t.Helper()
	EnsureNamespace(t, ctx, c, namespace)
	var p kupenstackv1.OpenstackCloudConfigurationProfile
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &p)
	if apierrors.IsNotFound(err) {
		p = kupenstackv1.OpenstackCloudConfigurationProfile{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: spec}
		if err := c.Create(ctx, &p); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	p.Spec = spec
	if err := c.Update(ctx, &p); err != nil {
		t.Fatal(err)
	}
}

// Raw is v as free-form values (a profile's values or conf).
func Raw(t *testing.T, v any) *runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: b}
}
