package component_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

// TestReleaseUpgrade2025_2To2026_1: a cloud installed from the real 2025.2.0 charts upgrades to
// 2026.1 in phases: every component once, and no component of a phase before every component of
// the earlier phases is Ready on the new release. (TestCloudLifecycle runs the skip-level
// 2025.1 → 2026.1.) Runs after it, on a cluster of its own configuration.
func TestReleaseUpgrade2025_2To2026_1(t *testing.T) {
	env.Require(t)
	// One configuration per cluster: whatever an earlier test left goes first, with its releases.
	var old kupenstackv1.KupenstackConfiguration
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: kupenstackv1.KupenstackConfigurationName}, &old); err == nil {
		if err := env.Client.Delete(env.Ctx, &old); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 5*time.Minute, func() error {
		if n := len(components(t)); n != 0 {
			return fmt.Errorf("%d components of the previous configuration left", n)
		}
		return nil
	})

	ensureNamespace(t, profilesNS)
	applyProfile(t, "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{})
	cfg := &kupenstackv1.KupenstackConfiguration{ObjectMeta: metav1.ObjectMeta{Name: kupenstackv1.KupenstackConfigurationName},
		Spec: kupenstackv1.KupenstackConfigurationSpec{
			Release: "2025.2", Namespace: cloudNS,
			Charts:         kupenstackv1.ChartSource{Repository: realcharts.ServeAll(t, nil)},
			DefaultProfile: kupenstackv1.ProfileReference{Name: "default", Namespace: profilesNS},
			Nodes:          []kupenstackv1.ConfiguredNode{{Name: "node-a", Type: "control"}, {Name: "node-b", Type: "compute"}},
		}}
	if err := env.Client.Create(env.Ctx, cfg); err != nil {
		t.Fatal(err)
	}
	installed := waitAllReady(t, core...)
	for n, c := range installed {
		if c.Status.Revision != 1 || c.Status.ChartVersion != "2025.2.0" {
			t.Errorf("%s: revision %d chart %s, want 1 and 2025.2.0", n, c.Status.Revision, c.Status.ChartVersion)
		}
	}

	start := time.Now()
	updateConfig(t, func(s *kupenstackv1.KupenstackConfigurationSpec) { s.Release = "2026.1" })
	var upgraded map[string]kupenstackv1.OpenstackComponent
	eventually(t, 5*time.Minute, func() error {
		upgraded = components(t)
		for n, c := range upgraded {
			if c.Status.Release != "2026.1" || c.Status.ChartVersion != "2026.1.0" || !ready(c) {
				return fmt.Errorf("%s: release %q chart %s phase %s", n, c.Status.Release, c.Status.ChartVersion, c.Status.Phase)
			}
		}
		return nil
	})
	for n, c := range upgraded {
		if c.Status.Revision != 2 {
			t.Errorf("%s: revision %d, want 2 (one upgrade)", n, c.Status.Revision)
		}
	}
	// Phases: every upgrade of a phase starts after the last component of the earlier phases
	// was Ready on 2026.1.
	// The earliest Upgraded Event of each component since the change (an earlier test's Events
	// are about components of the same names).
	var events eventsv1.EventList
	if err := env.Client.List(env.Ctx, &events); err != nil {
		t.Fatal(err)
	}
	upgradedAt := map[string]time.Time{}
	for _, e := range events.Items {
		at := e.EventTime.Time
		if e.Regarding.Kind != "OpenstackComponent" || e.Reason != "Upgraded" || at.Before(start) {
			continue
		}
		if f, ok := upgradedAt[e.Regarding.Name]; !ok || at.Before(f) {
			upgradedAt[e.Regarding.Name] = at
		}
	}
	for _, n := range core {
		if upgradedAt[n].IsZero() {
			t.Errorf("%s: no Upgraded Event since the release changed", n)
		}
	}
	readyAt := map[string]time.Time{}
	for n, c := range upgraded {
		readyAt[n] = conditionOf(c, kupenstackv1.ConditionReady).LastTransitionTime.Time
	}
	byPhase := map[int][]string{}
	for _, c := range values.Components {
		if !c.Optional {
			byPhase[c.Phase] = append(byPhase[c.Phase], c.Name)
		}
	}
	phases := make([]int, 0, len(byPhase))
	for p := range byPhase {
		phases = append(phases, p)
	}
	sort.Ints(phases)
	for i, p := range phases {
		for _, n := range byPhase[p] {
			for _, earlier := range phases[:i] {
				for _, e := range byPhase[earlier] {
					// Event times have microseconds, conditions seconds: compare at seconds.
					if upgradedAt[n].Truncate(time.Second).Before(readyAt[e].Truncate(time.Second)) {
						t.Errorf("%s (phase %d) upgraded at %s, before %s (phase %d) was ready at %s", n, p,
							upgradedAt[n].Format(time.RFC3339Nano), e, earlier, readyAt[e].Format(time.RFC3339))
					}
				}
			}
		}
	}
	teardownInOrder(t, upgraded)
}

// teardownInOrder deletes the configuration and checks how the cloud went: each component's
// release uninstalled only after every component depending on it (a dependent's pre-delete hook
// waits for its dependencies' Services: keystone's credential-cleanup held the uninstall when
// MariaDB went at the same time), and no hook Job left behind (Helm keeps them after an
// uninstall, with their pods).
func teardownInOrder(t *testing.T, comps map[string]kupenstackv1.OpenstackComponent) {
	t.Helper()
	start := time.Now()
	var cfg kupenstackv1.KupenstackConfiguration
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: kupenstackv1.KupenstackConfigurationName}, &cfg); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(env.Ctx, &cfg); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Minute, func() error {
		if n := len(components(t)); n != 0 {
			return fmt.Errorf("%d components left", n)
		}
		return nil
	})
	var events eventsv1.EventList
	if err := env.Client.List(env.Ctx, &events); err != nil {
		t.Fatal(err)
	}
	uninstalledAt := map[string]time.Time{}
	for _, e := range events.Items {
		if e.Regarding.Kind == "OpenstackComponent" && e.Reason == "Uninstalled" && !e.EventTime.Time.Before(start) {
			uninstalledAt[e.Regarding.Name] = e.EventTime.Time
		}
	}
	for n, c := range comps {
		if uninstalledAt[n].IsZero() {
			t.Errorf("%s: no Uninstalled Event", n)
			continue
		}
		for _, dep := range c.Spec.DependsOn {
			if uninstalledAt[dep].Before(uninstalledAt[n]) {
				t.Errorf("%s uninstalled at %s, before %s, which depends on it, at %s", dep,
					uninstalledAt[dep].Format(time.RFC3339Nano), n, uninstalledAt[n].Format(time.RFC3339Nano))
			}
		}
	}
	eventually(t, time.Minute, func() error {
		var jobs batchv1.JobList
		if err := env.Client.List(env.Ctx, &jobs, client.InNamespace(cloudNS)); err != nil {
			return err
		}
		var left []string
		for _, j := range jobs.Items {
			if _, hook := j.Annotations["helm.sh/hook"]; hook && j.DeletionTimestamp.IsZero() {
				left = append(left, j.Name)
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("hook Jobs left after the uninstall: %v", left)
		}
		return nil
	})
}
