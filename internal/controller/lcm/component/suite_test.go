package component_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/lcm"
	"github.com/kupenstack/kupenstack/internal/testutil/lcmtest"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// The cloud's namespace, where the operator publishes the admin clouds.yaml, and the profiles'.
const (
	cloudNS    = "openstack"
	profilesNS = "lcm-profiles"
)

var cloudSecret = types.NamespacedName{Namespace: "kupenstack-system", Name: "kupenstack-cloud"}

// Two simulated nodes: the operator labels them from the configuration (control / compute).
var env = testenv.New(func(mgr ctrl.Manager) error {
	return lcm.Setup(mgr, lcm.Options{CloudSecret: cloudSecret, CloudName: "openstack", ReadyPeriod: 2 * time.Second})
}).WithCluster(testenv.Node{Name: "node-a"}, testenv.Node{Name: "node-b"})

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// eventually polls cond until it returns nil; the deadline only bounds how long a broken
// controller makes the test hang.
func eventually(t *testing.T, timeout time.Duration, cond func() error) {
	testenv.Eventually(t, timeout, 200*time.Millisecond, "", cond)
}

func fixtureCharts(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../../../../test/fixtures/charts")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func raw(t *testing.T, v any) *runtime.RawExtension { return lcmtest.Raw(t, v) }

func ensureNamespace(t *testing.T, name string) {
	lcmtest.EnsureNamespace(t, env.Ctx, env.Client, name)
}

func applyProfile(t *testing.T, name string, spec kupenstackv1.OpenstackCloudConfigurationProfileSpec) {
	lcmtest.ApplyProfile(t, env.Ctx, env.Client, profilesNS, name, spec)
}

// updateConfig changes the configuration's spec, retrying on conflicts.
func updateConfig(t *testing.T, change func(*kupenstackv1.KupenstackConfigurationSpec)) {
	t.Helper()
	for range 10 {
		var cfg kupenstackv1.KupenstackConfiguration
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: kupenstackv1.KupenstackConfigurationName}, &cfg); err != nil {
			t.Fatal(err)
		}
		change(&cfg.Spec)
		err := env.Client.Update(env.Ctx, &cfg)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatal("could not update the configuration")
}

func components(t *testing.T) map[string]kupenstackv1.OpenstackComponent {
	t.Helper()
	var list kupenstackv1.OpenstackComponentList
	if err := env.Client.List(env.Ctx, &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]kupenstackv1.OpenstackComponent{}
	for _, c := range list.Items {
		out[c.Name] = c
	}
	return out
}

func ready(c kupenstackv1.OpenstackComponent) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == kupenstackv1.ConditionReady {
			return cond.Status == metav1.ConditionTrue && cond.ObservedGeneration == c.Generation && c.Status.Phase == kupenstackv1.ComponentPhaseReady
		}
	}
	return false
}

// waitAllReady waits until exactly the named components exist and all are ready.
func waitAllReady(t *testing.T, names ...string) map[string]kupenstackv1.OpenstackComponent {
	t.Helper()
	var out map[string]kupenstackv1.OpenstackComponent
	eventually(t, 5*time.Minute, func() error {
		out = components(t)
		if len(out) != len(names) {
			return fmt.Errorf("%d components, want %d", len(out), len(names))
		}
		for _, n := range names {
			c, ok := out[n]
			if !ok {
				return fmt.Errorf("no component %s", n)
			}
			if !ready(c) {
				return fmt.Errorf("component %s not ready: phase %s, conditions %+v", n, c.Status.Phase, c.Status.Conditions)
			}
		}
		return nil
	})
	return out
}

func revisions(comps map[string]kupenstackv1.OpenstackComponent) map[string]int32 {
	out := map[string]int32{}
	for n, c := range comps {
		out[n] = c.Status.Revision
	}
	return out
}
