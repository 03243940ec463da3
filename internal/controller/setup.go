// Package controller wires every KupenStack controller into a manager; the operator binary and
// the tests that need the whole operator both go through SetupAll.
package controller

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kupenstack/kupenstack/internal/controller/project"
)

// SetupAll registers all controllers with mgr.
func SetupAll(mgr ctrl.Manager) error {
	if err := (&project.NamespaceReconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder(project.NamespaceControllerName),
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the %s controller: %w", project.NamespaceControllerName, err)
	}
	return nil
}
