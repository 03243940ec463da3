package project

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

var nsCounter atomic.Int32

func newNamespace(t *testing.T, labels map[string]string) *corev1.Namespace {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   fmt.Sprintf("%s-%d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), nsCounter.Add(1)),
		Labels: labels,
	}}
	if len(ns.Name) > 63 {
		ns.Name = ns.Name[len(ns.Name)-63:]
	}
	if err := env.Client.Create(env.Ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return ns
}

// eventually polls cond until it returns nil or the deadline passes. Waiting is not a timing
// assertion: the deadline only bounds how long a broken controller makes the test hang.
func eventually(t *testing.T, cond func() error) {
	testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, "", cond)
}

func TestLabelledNamespaceGetsProject(t *testing.T) {
	env.Require(t)
	ns := newNamespace(t, map[string]string{kupenstackv1.LabelProject: kupenstackv1.ProjectEnabled})

	var p kupenstackv1.Project
	eventually(t, func() error { return env.Client.Get(env.Ctx, client.ObjectKey{Name: ns.Name}, &p) })
	if p.Spec.Namespace != ns.Name {
		t.Errorf("spec.namespace = %q, want %q", p.Spec.Namespace, ns.Name)
	}
	if ref := metav1.GetControllerOf(&p); ref == nil || ref.UID != ns.UID || ref.Kind != "Namespace" {
		t.Errorf("Project is not owned by its namespace: %+v", p.OwnerReferences)
	}

	// A Project deleted by hand comes back while the namespace still asks for it.
	if err := env.Client.Delete(env.Ctx, &p); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		var again kupenstackv1.Project
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: ns.Name}, &again); err != nil {
			return err
		}
		if again.UID == p.UID {
			return fmt.Errorf("still the old Project")
		}
		return nil
	})
}

func TestUnlabelledNamespaceGetsNoProject(t *testing.T) {
	env.Require(t)
	plain := newNamespace(t, nil)
	// A labelled namespace created afterwards is the sign the controller has run past the plain one.
	marker := newNamespace(t, map[string]string{kupenstackv1.LabelProject: kupenstackv1.ProjectEnabled})
	eventually(t, func() error {
		return env.Client.Get(env.Ctx, client.ObjectKey{Name: marker.Name}, &kupenstackv1.Project{})
	})
	err := env.Client.Get(env.Ctx, client.ObjectKey{Name: plain.Name}, &kupenstackv1.Project{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("namespace without the label got a Project (err=%v)", err)
	}
}

func TestProjectValidation(t *testing.T) {
	env.Require(t)
	bad := &kupenstackv1.Project{
		ObjectMeta: metav1.ObjectMeta{Name: "validation-a"},
		Spec:       kupenstackv1.ProjectSpec{Namespace: "validation-b"},
	}
	err := env.Client.Create(env.Ctx, bad)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "a Project is named after its namespace") {
		t.Fatalf("want the name/namespace rule to reject it, got %v", err)
	}

	good := &kupenstackv1.Project{
		ObjectMeta: metav1.ObjectMeta{Name: "validation-c"},
		Spec:       kupenstackv1.ProjectSpec{Namespace: "validation-c"},
	}
	if err := env.Client.Create(env.Ctx, good); err != nil {
		t.Fatal(err)
	}
	good.Spec.Namespace = "validation-d"
	err = env.Client.Update(env.Ctx, good)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "namespace is immutable") {
		t.Fatalf("want spec.namespace to be immutable, got %v", err)
	}
}
