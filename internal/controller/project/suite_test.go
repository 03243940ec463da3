package project

import (
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

var env = testenv.New(func(mgr ctrl.Manager) error {
	return (&NamespaceReconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder(NamespaceControllerName),
	}).SetupWithManager(mgr)
})

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }
