package controller

import (
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/scheme"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

var env = testenv.New(nil)

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// TestLCMEnabled: the life-cycle controllers run when asked to, or (auto) only when a
// KupenstackConfiguration exists.
func TestLCMEnabled(t *testing.T) {
	env.Require(t)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme.New(),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	check := func(mode string, want bool) {
		t.Helper()
		got, err := lcmEnabled(env.Ctx, mgr, mode)
		if err != nil || got != want {
			t.Errorf("lcmEnabled(%q) = %v, %v; want %v", mode, got, err, want)
		}
	}
	check(LCMOn, true)
	check(LCMOff, false)
	check(LCMAuto, false)
	check("", false)
	if _, err := lcmEnabled(env.Ctx, mgr, "sometimes"); err == nil || !strings.Contains(err.Error(), "unknown life-cycle mode") {
		t.Errorf("bad mode: %v", err)
	}
	cfg := &kupenstackv1.KupenstackConfiguration{ObjectMeta: metav1.ObjectMeta{Name: kupenstackv1.KupenstackConfigurationName},
		Spec: kupenstackv1.KupenstackConfigurationSpec{Release: "2026.1", Charts: kupenstackv1.ChartSource{LocalPath: "/c"},
			DefaultProfile: kupenstackv1.ProfileReference{Name: "d", Namespace: "n"}}}
	if err := env.Client.Create(env.Ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, cfg) })
	check(LCMAuto, true)
	check("", true)
	check(LCMOff, false)
}
