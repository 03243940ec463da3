package testenv

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

// NamespaceWithReadyProject creates namespace ns and its Project with the status the project
// controller would give it (Ready, ID "project-<ns>"): the envtests of the other controllers run
// no project controller and no Keystone. It returns the project's ID.
func (e *Env) NamespaceWithReadyProject(t *testing.T, ns string) string {
	t.Helper()
	return e.MarkProjectReady(t, e.NamespaceWithProject(t, ns))
}

// NamespaceWithProject creates namespace ns and its Project, not Ready yet (MarkProjectReady
// makes it so): the namespace's objects wait for it meanwhile.
func (e *Env) NamespaceWithProject(t *testing.T, ns string) *kupenstackv1.Project {
	t.Helper()
	e.Require(t)
	if err := e.Client.Create(e.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	p := &kupenstackv1.Project{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: kupenstackv1.ProjectSpec{Namespace: ns}}
	if err := e.Client.Create(e.Ctx, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// MarkProjectReady gives the existing Project p the status the project controller would
// (Ready for its generation, ID "project-<namespace>") and returns that ID.
func (e *Env) MarkProjectReady(t *testing.T, p *kupenstackv1.Project) string {
	t.Helper()
	p.Status.ID = "project-" + p.Spec.Namespace
	conditions.Set(&p.Status.Conditions, p.Generation, conditions.State{Ready: true})
	if err := e.Client.Status().Update(e.Ctx, p); err != nil {
		t.Fatal(err)
	}
	return p.Status.ID
}
