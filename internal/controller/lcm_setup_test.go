package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/openstack"
	"github.com/kupenstack/kupenstack/internal/scheme"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

var env = testenv.New(nil)

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// createConfiguration creates the cluster's KupenstackConfiguration, deleted after the test.
func createConfiguration(t *testing.T) *kupenstackv1.KupenstackConfiguration {
	t.Helper()
	cfg := &kupenstackv1.KupenstackConfiguration{ObjectMeta: metav1.ObjectMeta{Name: kupenstackv1.KupenstackConfigurationName},
		Spec: kupenstackv1.KupenstackConfigurationSpec{Release: "2026.1", Charts: kupenstackv1.ChartSource{LocalPath: "/c"},
			DefaultProfile: kupenstackv1.ProfileReference{Name: "d", Namespace: "n"}}}
	if err := env.Client.Create(env.Ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, cfg) })
	return cfg
}

// newManager is a manager on the test's API server, its metrics and probes off.
func newManager(t *testing.T) ctrl.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme.New(),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// TestWhenLCM: the life-cycle controllers run when asked to, or (auto) once a
// KupenstackConfiguration exists.
func TestWhenLCM(t *testing.T) {
	env.Require(t)
	mgr := newManager(t)
	check := func(mode string, want lcmStart) {
		t.Helper()
		got, err := whenLCM(env.Ctx, mgr, mode)
		if err != nil || got != want {
			t.Errorf("whenLCM(%q) = %v, %v; want %v", mode, got, err, want)
		}
	}
	check(LCMOn, lcmNow)
	check(LCMOff, lcmNever)
	check(LCMAuto, lcmOnFirstConfiguration)
	check("", lcmOnFirstConfiguration)
	if _, err := whenLCM(env.Ctx, mgr, "sometimes"); err == nil || !strings.Contains(err.Error(), "unknown life-cycle mode") {
		t.Errorf("bad mode: %v", err)
	}
	createConfiguration(t)
	check(LCMAuto, lcmNow)
	check("", lcmNow)
	check(LCMOff, lcmNever)
}

// TestLCMStartsWithTheFirstConfiguration: with --lcm=auto and no KupenstackConfiguration at
// start-up, creating the first one is enough: the running operator starts the life-cycle
// controllers, which reconcile it (they used to start only at the next operator start).
func TestLCMStartsWithTheFirstConfiguration(t *testing.T) {
	env.Require(t)
	var existing kupenstackv1.KupenstackConfigurationList
	if err := env.Client.List(env.Ctx, &existing); err != nil || len(existing.Items) > 0 {
		t.Fatalf("want no KupenstackConfiguration before the operator starts: %v, %d", err, len(existing.Items))
	}
	mgr := newManager(t)
	noCloud := func(context.Context) ([]byte, error) { return nil, errors.New("no cloud in this test") }
	if err := SetupAll(env.Ctx, mgr, Options{LCM: LCMAuto, Clients: openstack.NewClients(noCloud, "none", 10, 10),
		ResyncPeriod: time.Minute, DomainID: "default", MemberRole: "member"}); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(env.Ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	cfg := createConfiguration(t)
	testenv.Eventually(t, time.Minute, 100*time.Millisecond, "the configuration reconciled by the life-cycle controllers", func() error {
		var got kupenstackv1.KupenstackConfiguration
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(cfg), &got); err != nil {
			return err
		}
		if got.Status.ObservedGeneration != got.Generation {
			return fmt.Errorf("status %+v", got.Status)
		}
		return nil
	})
}
