package component_test

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
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

	order := watchUpgradeOrder(t)
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
	order.check(t)
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

// upgradeOrder records, per release (OpenStack-Helm's release_group label), when the old run of
// its upgrade hook Jobs was deleted and when its Deployments' specs first changed, as
// resourceVersions: one etcd's grow across kinds (the API calls them opaque, which a test of this
// cluster may ignore), so they order the two without clocks.
type upgradeOrder struct {
	mu            sync.Mutex
	hookDeleted   map[string]uint64
	deployChanged map[string]uint64
	changed       map[string]string // release -> the Deployment changed first
}

// watchUpgradeOrder starts watching the cloud's Jobs and Deployments; the watches end with the test.
func watchUpgradeOrder(t *testing.T) *upgradeOrder {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	o := &upgradeOrder{hookDeleted: map[string]uint64{}, deployChanged: map[string]uint64{}, changed: map[string]string{}}
	jobs, err := cs.BatchV1().Jobs(cloudNS).Watch(env.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var deployList *appsv1.DeploymentList
	if deployList, err = cs.AppsV1().Deployments(cloudNS).List(env.Ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	generation := map[string]int64{}
	for _, d := range deployList.Items {
		generation[d.Name] = d.Generation
	}
	deploys, err := cs.AppsV1().Deployments(cloudNS).Watch(env.Ctx, metav1.ListOptions{ResourceVersion: deployList.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(jobs.Stop)
	t.Cleanup(deploys.Stop)
	earliest := func(m map[string]uint64, release, rv string) bool {
		v, err := strconv.ParseUint(rv, 10, 64)
		if err != nil || release == "" {
			return false
		}
		if cur, ok := m[release]; !ok || v < cur {
			m[release] = v
			return true
		}
		return false
	}
	go func() {
		for ev := range jobs.ResultChan() {
			j, ok := ev.Object.(*batchv1.Job)
			if !ok || ev.Type != watch.Deleted || !strings.Contains(j.Annotations["helm.sh/hook"], "upgrade") {
				continue
			}
			o.mu.Lock()
			earliest(o.hookDeleted, j.Labels["release_group"], j.ResourceVersion)
			o.mu.Unlock()
		}
	}()
	go func() {
		for ev := range deploys.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok || ev.Type != watch.Modified || d.Generation <= generation[d.Name] {
				continue
			}
			o.mu.Lock()
			if release := d.Labels["release_group"]; earliest(o.deployChanged, release, d.ResourceVersion) {
				o.changed[release] = d.Name
			}
			o.mu.Unlock()
		}
	}()
	return o
}

// check: every release whose Deployments the upgrade changed and which has upgrade hook Jobs had
// the old run of those deleted first, so that the new pods' dependency checks waited for this
// upgrade's run (the database migrated, the new chart's Keystone users made) instead of finding
// the old one Complete. Helm deletes the old run itself only when it runs the hooks again, after
// it applied the new workloads. Releases without such hooks (memcached) are not checked.
func (o *upgradeOrder) check(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	var checked []string
	for release, changed := range o.deployChanged {
		deleted, ok := o.hookDeleted[release]
		if !ok {
			continue
		}
		checked = append(checked, release)
		if deleted > changed {
			t.Errorf("%s: Deployment %s changed (resourceVersion %d) before the old hook Jobs went (%d): its new pods found them Complete", release, o.changed[release], changed, deleted)
		}
	}
	if !slices.Contains(checked, "nova") || !slices.Contains(checked, "keystone") {
		t.Errorf("releases with changed Deployments and deleted hook Jobs: %v, want nova and keystone among them (changed: %v, deleted: %v)",
			checked, o.deployChanged, o.hookDeleted)
	}
}
