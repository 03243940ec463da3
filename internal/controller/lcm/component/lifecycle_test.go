package component_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sync/atomic"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/lcm/component"
	"github.com/kupenstack/kupenstack/internal/lcm/credentials"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
	"github.com/kupenstack/kupenstack/internal/openstack"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

var core = []string{"mariadb", "rabbitmq", "memcached", "openvswitch", "libvirt", "keystone", "glance", "placement", "nova", "neutron"}

// componentEvents returns, per component, the time of the first Event with reason, and all
// Events' notes (to scan them for secrets).
func componentEvents(t *testing.T, reason string) (map[string]time.Time, []string) {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(env.Ctx, &list); err != nil {
		t.Fatal(err)
	}
	first := map[string]time.Time{}
	var notes []string
	for _, e := range list.Items {
		if e.Regarding.Kind != "OpenstackComponent" {
			continue
		}
		notes = append(notes, e.Note)
		if e.Reason != reason {
			continue
		}
		at := e.EventTime.Time
		if f, ok := first[e.Regarding.Name]; !ok || at.Before(f) {
			first[e.Regarding.Name] = at
		}
	}
	return first, notes
}

// TestCloudLifecycle deploys the whole cloud from the real OpenStack-Helm charts (2025.1.0,
// served over HTTP on 127.0.0.1 as one chart repository holding every tag) on simulated nodes,
// then changes it: a no-op, a profile change touching one component, objects changed by hand,
// an upgrade that never becomes ready, and the skip-level release upgrade 2025.1 → 2026.1 in
// phases, in which one component fails.
func TestCloudLifecycle(t *testing.T) {
	env.Require(t)
	ensureNamespace(t, profilesNS)
	applyProfile(t, "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{})
	applyProfile(t, "big-compute", kupenstackv1.OpenstackCloudConfigurationProfileSpec{Components: map[string]kupenstackv1.ComponentProfile{
		"nova":    {Conf: raw(t, map[string]any{"nova": map[string]any{"DEFAULT": map[string]any{"cpu_allocation_ratio": 16}}})},
		"libvirt": {Conf: raw(t, map[string]any{"libvirt": map[string]any{"log_level": "1"}})},
		"neutron": {Conf: raw(t, map[string]any{"plugins": map[string]any{"openvswitch_agent": map[string]any{"ovs": map[string]any{"bridge_mappings": "physnet2:br-ex2"}}}})},
	}})
	var chartRequests atomic.Int64
	repository := realcharts.ServeAll(t, &chartRequests)
	cfg := &kupenstackv1.KupenstackConfiguration{ObjectMeta: metav1.ObjectMeta{Name: kupenstackv1.KupenstackConfigurationName},
		Spec: kupenstackv1.KupenstackConfigurationSpec{
			Release: "2025.1", Namespace: cloudNS,
			Charts:         kupenstackv1.ChartSource{Repository: repository},
			DefaultProfile: kupenstackv1.ProfileReference{Name: "default", Namespace: profilesNS},
			Nodes: []kupenstackv1.ConfiguredNode{
				{Name: "node-a", Type: "control"},
				{Name: "node-b", Type: "compute", Profile: &kupenstackv1.ProfileReference{Name: "big-compute"}},
			},
		}}
	if err := env.Client.Create(env.Ctx, cfg); err != nil {
		t.Fatal(err)
	}

	comps := waitAllReady(t, core...)
	t.Run("installed in dependency order", func(t *testing.T) {
		installed, _ := componentEvents(t, "Installed")
		readyAt, _ := componentEvents(t, "Ready")
		for _, c := range values.Components {
			if c.Optional {
				continue
			}
			if installed[c.Name].IsZero() {
				t.Errorf("%s: no Installed event", c.Name)
			}
			for _, d := range c.DependsOn {
				if !installed[c.Name].After(readyAt[d]) {
					t.Errorf("%s installed at %s, before its dependency %s was ready (%s)", c.Name, installed[c.Name], d, readyAt[d])
				}
			}
		}
		for _, n := range core {
			if comps[n].Status.Revision != 1 || comps[n].Status.Release != "2025.1" {
				t.Errorf("%s: revision %d release %q, want 1 and 2025.1 (one install, no repair)", n, comps[n].Status.Revision, comps[n].Status.Release)
			}
			if c := conditionOf(comps[n], kupenstackv1.ConditionChartVersionMatches); c.Status != metav1.ConditionTrue {
				t.Errorf("%s: ChartVersionMatches = %+v, want True (chart 2025.1.0 for release 2025.1)", n, c)
			}
		}
		if chartRequests.Load() == 0 {
			t.Error("no request reached the chart repository")
		}
	})

	t.Run("per-node overrides render DaemonSets pinned to the node", func(t *testing.T) {
		var all appsv1.DaemonSetList
		if err := env.Client.List(env.Ctx, &all, client.InNamespace(cloudNS)); err != nil {
			t.Fatal(err)
		}
		// The real charts name a node's DaemonSet <chart>-<daemonset>-<node>-<hash> (libvirt's root
		// form: <chart>-<daemonset>-<hash>) and the others' <...>-default[-<hash>].
		for _, prefix := range []string{"nova-compute-", "libvirt-libvirt-", "neutron-ovs-agent-"} {
			var pinned, defaults []string
			for _, d := range all.Items {
				if !strings.HasPrefix(d.Name, prefix) {
					continue
				}
				if strings.HasPrefix(d.Name, prefix+"default") {
					defaults = append(defaults, d.Name)
					if prefix != "neutron-ovs-agent-" && d.Status.DesiredNumberScheduled != 0 {
						t.Errorf("%s runs on %d nodes, want 0 (node-b, the only compute node, has its own)", d.Name, d.Status.DesiredNumberScheduled)
					}
					continue
				}
				pinned = append(pinned, d.Name)
				if d.Status.NumberReady != 1 {
					t.Errorf("%s: %d pods ready, want 1 (on node-b)", d.Name, d.Status.NumberReady)
				}
			}
			if len(pinned) != 1 || len(defaults) != 1 {
				t.Errorf("%s*: pinned %v and default %v, want one each", prefix, pinned, defaults)
			}
		}
		// node-a (control) runs the default OVS agent; node-b its own.
		for _, d := range all.Items {
			if strings.HasPrefix(d.Name, "neutron-ovs-agent-default") && d.Status.NumberReady != 1 {
				t.Errorf("%s: %d pods ready, want 1 (on node-a)", d.Name, d.Status.NumberReady)
			}
		}
	})

	t.Run("credentials generated once, fed to every chart, published, never shown", func(t *testing.T) {
		var s corev1.Secret
		if err := env.Client.Get(env.Ctx, types.NamespacedName{Namespace: cloudNS, Name: credentials.SecretName}, &s); err != nil {
			t.Fatal(err)
		}
		root := string(s.Data[credentials.DatabaseRoot])
		admin := string(s.Data[credentials.IdentityAdmin])
		if len(root) < 24 || len(admin) < 24 {
			t.Fatalf("passwords too short: %d, %d", len(root), len(admin))
		}
		// Where each chart writes the root password, and nova's three databases share nova's.
		for name, key := range map[string]string{"mariadb-secrets": "admin_user.cnf", "keystone-db-admin": "DB_CONNECTION",
			"nova-db-cell0-admin": "DB_CONNECTION", "nova-db-api-admin": "DB_CONNECTION"} {
			var sec corev1.Secret
			if err := env.Client.Get(env.Ctx, types.NamespacedName{Namespace: cloudNS, Name: name}, &sec); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(sec.Data[key]), root) {
				t.Errorf("Secret %s key %s does not hold the database root password", name, key)
			}
		}
		nova := string(s.Data["database-nova"])
		for _, name := range []string{"nova-db-user", "nova-db-api-user", "nova-db-cell0-user"} {
			var sec corev1.Secret
			if err := env.Client.Get(env.Ctx, types.NamespacedName{Namespace: cloudNS, Name: name}, &sec); err != nil {
				t.Fatal(err)
			}
			if len(nova) < 24 || !strings.Contains(string(sec.Data["DB_CONNECTION"]), ":"+nova+"@") {
				t.Errorf("Secret %s does not connect with nova's generated password", name)
			}
		}
		var published corev1.Secret
		if err := env.Client.Get(env.Ctx, cloudSecret, &published); err != nil {
			t.Fatal(err)
		}
		doc := string(published.Data[openstack.CloudsYAMLKey])
		if !strings.Contains(doc, "keystone-api."+cloudNS+".svc") || !strings.Contains(doc, admin) {
			t.Errorf("published clouds.yaml does not point at the deployed keystone with its admin password:\n%s", strings.ReplaceAll(doc, admin, "***"))
		}
		// Nova's notification bus, as nova's own chart connects to it: its user, password and vhost.
		var bus corev1.Secret
		if err := env.Client.Get(env.Ctx, types.NamespacedName{Namespace: cloudSecret.Namespace, Name: component.NotificationsSecretName}, &bus); err != nil {
			t.Fatal(err)
		}
		novaBus := string(s.Data["messaging-nova"])
		if want := (&url.URL{Scheme: "amqp", User: url.UserPassword("nova", novaBus), Host: "rabbitmq." + cloudNS + ".svc.cluster.local:5672", Path: "/nova"}).String(); len(novaBus) < 24 || string(bus.Data[component.NotificationsURLKey]) != want {
			t.Errorf("the published notification bus's URL is not nova's broker with nova's generated password (%d characters)", len(bus.Data[component.NotificationsURLKey]))
		}
		var novaRabbit corev1.Secret
		if err := env.Client.Get(env.Ctx, types.NamespacedName{Namespace: cloudNS, Name: "nova-rabbitmq-user"}, &novaRabbit); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(novaRabbit.Data["RABBITMQ_CONNECTION"]), ":"+novaBus+"@") {
			t.Error("nova's chart connects to RabbitMQ with another password than the published URL's")
		}
		_, notes := componentEvents(t, "")
		for _, c := range components(t) {
			text := fmt.Sprintf("%+v", c.Status)
			for _, n := range notes {
				text += n
			}
			for k, v := range s.Data {
				if strings.Contains(text, string(v)) {
					t.Errorf("password %s appears in a status or an Event", k)
				}
			}
		}
	})

	t.Run("a profile change upgrades exactly the component it touches", func(t *testing.T) {
		before := revisions(components(t))
		applyProfile(t, "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{Components: map[string]kupenstackv1.ComponentProfile{
			"glance": {Conf: raw(t, map[string]any{"glance": map[string]any{"DEFAULT": map[string]any{"workers": 4}}})},
		}})
		var after map[string]kupenstackv1.OpenstackComponent
		eventually(t, 2*time.Minute, func() error {
			after = components(t)
			if g := after["glance"]; g.Status.Revision != before["glance"]+1 || !ready(g) {
				return fmt.Errorf("glance revision %d phase %s, want %d and Ready", g.Status.Revision, g.Status.Phase, before["glance"]+1)
			}
			return nil
		})
		// Every loop saw the profile change (they all watch profiles); give them a moment to act
		// wrongly before checking that none did.
		time.Sleep(3 * time.Second)
		after = components(t)
		for n, rev := range before {
			if n != "glance" && after[n].Status.Revision != rev {
				t.Errorf("%s: revision %d → %d, want unchanged", n, rev, after[n].Status.Revision)
			}
		}
	})

	t.Run("a deleted Deployment is restored", func(t *testing.T) {
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: cloudNS, Name: "keystone-api"}}
		if err := env.Client.Delete(env.Ctx, dep, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, func() error {
			repaired, _ := componentEvents(t, "DriftRepaired")
			if repaired["keystone"].IsZero() {
				return fmt.Errorf("no DriftRepaired event for keystone")
			}
			var d appsv1.Deployment
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(dep), &d); err != nil {
				return err
			}
			if k := components(t)["keystone"]; !ready(k) {
				return fmt.Errorf("keystone not ready again: %s", k.Status.Phase)
			}
			return nil
		})
	})

	t.Run("a Deployment scaled by hand is set back", func(t *testing.T) {
		key := types.NamespacedName{Namespace: cloudNS, Name: "placement-api"}
		var d appsv1.Deployment
		if err := env.Client.Get(env.Ctx, key, &d); err != nil {
			t.Fatal(err)
		}
		want := *d.Spec.Replicas
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Replicas = ptr.To(want + 2)
		if err := env.Client.Patch(env.Ctx, &d, patch); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, func() error {
			repaired, _ := componentEvents(t, "DriftRepaired")
			if repaired["placement"].IsZero() {
				return fmt.Errorf("no DriftRepaired event for placement")
			}
			if err := env.Client.Get(env.Ctx, key, &d); err != nil {
				return err
			}
			if *d.Spec.Replicas != want {
				return fmt.Errorf("placement-api replicas %d, want %d", *d.Spec.Replicas, want)
			}
			if p := components(t)["placement"]; !ready(p) {
				return fmt.Errorf("placement not ready again: %s", p.Status.Phase)
			}
			return nil
		})
	})

	t.Run("a configuration Secret edited by hand is restored", func(t *testing.T) {
		key := types.NamespacedName{Namespace: cloudNS, Name: "glance-etc"}
		want := editSecret(t, key, "glance-api.conf", "[DEFAULT]\ndebug = true\n")
		eventually(t, 2*time.Minute, func() error {
			if !hasEvent(t, "glance", "DriftRepaired", "Secret glance-etc: data.glance-api.conf changed") {
				return fmt.Errorf("no DriftRepaired event naming the Secret's changed key")
			}
			var s corev1.Secret
			if err := env.Client.Get(env.Ctx, key, &s); err != nil {
				return err
			}
			if string(s.Data["glance-api.conf"]) != want {
				return fmt.Errorf("glance-etc glance-api.conf not restored")
			}
			if g := components(t)["glance"]; !ready(g) {
				return fmt.Errorf("glance not ready again: %s", g.Status.Phase)
			}
			return nil
		})
	})

	t.Run("a repair that does not hold is not repeated every pass", func(t *testing.T) {
		// Something else keeps rewriting the ConfigMap: KupenStack restores it a few times, then
		// says so instead of adding a revision per pass.
		key := types.NamespacedName{Namespace: cloudNS, Name: "memcached-memcached-bin"}
		before := components(t)["memcached"].Status.Revision
		const fought = "#!/bin/sh\n# changed by another tool\n"
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				case <-time.After(300 * time.Millisecond):
				}
				var cm corev1.ConfigMap
				if env.Client.Get(env.Ctx, key, &cm) != nil || cm.Data["memcached.sh"] == fought {
					continue
				}
				patch := client.MergeFrom(cm.DeepCopy())
				cm.Data["memcached.sh"] = fought
				_ = env.Client.Patch(env.Ctx, &cm, patch)
			}
		}()
		eventually(t, 2*time.Minute, func() error {
			c := components(t)["memcached"]
			if d := conditionOf(c, kupenstackv1.ConditionDegraded); d.Reason != kupenstackv1.ReasonDriftNotRepaired {
				return fmt.Errorf("memcached Degraded = %+v, want reason %s", d, kupenstackv1.ReasonDriftNotRepaired)
			}
			return nil
		})
		// Well within the hold-off (10 ready periods of 2 s): no further repair.
		time.Sleep(5 * time.Second)
		if rev := components(t)["memcached"].Status.Revision; rev != before+3 {
			t.Errorf("memcached revision %d → %d, want 3 repairs and no more", before, rev)
		}
		close(stop)
		<-done
		// Once the hold-off has passed, it is restored for good.
		eventually(t, 2*time.Minute, func() error {
			if c := components(t)["memcached"]; !ready(c) {
				return fmt.Errorf("memcached not ready again: %s %s", c.Status.Phase, c.Status.LastError)
			}
			return nil
		})
	})

	t.Run("an upgrade that never becomes ready is rolled back at the progress deadline", func(t *testing.T) {
		before := components(t)["placement"]
		updateConfig(t, func(s *kupenstackv1.KupenstackConfigurationSpec) {
			s.ProgressDeadline = &kupenstackv1.Duration{Duration: 15 * time.Second}
		})
		// Helm accepts the upgrade, but its new pods can run on no node: they stay Pending.
		changed := time.Now()
		applyProfile(t, "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{Components: map[string]kupenstackv1.ComponentProfile{
			"placement": {Values: raw(t, map[string]any{"labels": map[string]any{"api": map[string]any{"node_selector_value": "nowhere"}}})},
		}})
		var placement kupenstackv1.OpenstackComponent
		eventually(t, 2*time.Minute, func() error {
			placement = components(t)["placement"]
			if placement.Status.Phase != kupenstackv1.ComponentPhaseRolledBack {
				return fmt.Errorf("placement phase %s (%s), want RolledBack", placement.Status.Phase, placement.Status.LastError)
			}
			return nil
		})
		// Not before the deadline: a pass that timed the new revision from the previous action
		// rolled it back at once.
		if waited := time.Since(changed); waited < 15*time.Second {
			t.Errorf("rolled back %s after the change, before the progress deadline of 15s", waited.Round(time.Millisecond))
		}
		if placement.Status.Revision != before.Status.Revision+2 { // the upgrade, then the rollback
			t.Errorf("placement revision %d, want %d", placement.Status.Revision, before.Status.Revision+2)
		}
		// And it stays there: the values that failed are not tried again (a pass that missed
		// the failed hash upgraded to them once more).
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
			if p := components(t)["placement"]; p.Status.Revision != placement.Status.Revision || p.Status.Phase != kupenstackv1.ComponentPhaseRolledBack {
				t.Fatalf("after the rollback: placement revision %d phase %s, want %d %s", p.Status.Revision, p.Status.Phase,
					placement.Status.Revision, kupenstackv1.ComponentPhaseRolledBack)
			}
		}
		degraded := conditionOf(placement, kupenstackv1.ConditionDegraded)
		if degraded.Reason != kupenstackv1.ReasonUpgradeFailed || !strings.Contains(degraded.Message, "not ready within the progress deadline") ||
			!strings.Contains(degraded.Message, fmt.Sprintf("rolled back to revision %d", before.Status.Revision)) {
			t.Errorf("placement Degraded = %+v", degraded)
		}
		eventually(t, time.Minute, func() error {
			var d appsv1.Deployment
			if err := env.Client.Get(env.Ctx, types.NamespacedName{Namespace: cloudNS, Name: "placement-api"}, &d); err != nil {
				return err
			}
			if sel := d.Spec.Template.Spec.NodeSelector["openstack-control-plane"]; sel != "enabled" {
				return fmt.Errorf("placement-api node selector %q, want the rolled-back enabled", sel)
			}
			return nil
		})

		// Undone: the same values as the last good revision are no upgrade, and the component
		// is ready again.
		applyProfile(t, "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{})
		updateConfig(t, func(s *kupenstackv1.KupenstackConfigurationSpec) { s.ProgressDeadline = nil })
		eventually(t, 2*time.Minute, func() error {
			if p := components(t)["placement"]; !ready(p) {
				return fmt.Errorf("placement phase %s (%s), want Ready", p.Status.Phase, p.Status.LastError)
			}
			return nil
		})
	})

	t.Run("release upgrade in phases; a failing component is rolled back and stops it", func(t *testing.T) {
		before := revisions(components(t))
		// glance (phase image/placement) gets a replica count the API server rejects.
		applyProfile(t, "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{Components: map[string]kupenstackv1.ComponentProfile{
			"glance": {Values: raw(t, map[string]any{"pod": map[string]any{"replicas": map[string]any{"api": -1}}})},
		}})
		var glance kupenstackv1.OpenstackComponent
		eventually(t, 2*time.Minute, func() error {
			glance = components(t)["glance"]
			if glance.Status.Phase != kupenstackv1.ComponentPhaseRolledBack {
				return fmt.Errorf("glance phase %s, want RolledBack", glance.Status.Phase)
			}
			return nil
		})
		if glance.Status.Revision != before["glance"]+2 { // the failed upgrade, then the rollback
			t.Errorf("glance revision %d, want %d", glance.Status.Revision, before["glance"]+2)
		}
		degraded := conditionOf(glance, kupenstackv1.ConditionDegraded)
		if degraded.Status != metav1.ConditionTrue || degraded.Reason != kupenstackv1.ReasonUpgradeFailed || !strings.Contains(degraded.Message, "rolled back to revision") {
			t.Errorf("glance Degraded = %+v", degraded)
		}

		// Now the release upgrade: phases 1-2 go through, glance stays rolled back, so the
		// compute/network phase must not start.
		updateConfig(t, func(s *kupenstackv1.KupenstackConfigurationSpec) { s.Release = "2026.1" })
		eventually(t, 3*time.Minute, func() error {
			cs := components(t)
			for _, n := range []string{"mariadb", "rabbitmq", "memcached", "openvswitch", "keystone", "placement"} {
				if cs[n].Status.Release != "2026.1" || !ready(cs[n]) || cs[n].Status.ChartVersion != "2026.1.0" {
					return fmt.Errorf("%s: release %q phase %s, want 2026.1 and Ready", n, cs[n].Status.Release, cs[n].Status.Phase)
				}
			}
			if w := conditionOf(cs["nova"], kupenstackv1.ConditionProgressing); !strings.Contains(w.Message, "glance") {
				return fmt.Errorf("nova Progressing = %q, want it to wait for glance", w.Message)
			}
			return nil
		})
		cs := components(t)
		for _, n := range []string{"nova", "neutron", "libvirt"} {
			if cs[n].Status.Release != "2025.1" || cs[n].Status.Revision != before[n] {
				t.Errorf("%s went ahead of a failed phase: release %q revision %d", n, cs[n].Status.Release, cs[n].Status.Revision)
			}
		}
		if cs["glance"].Status.Release != "2025.1" {
			t.Errorf("glance release %q, want the rolled-back 2025.1", cs["glance"].Status.Release)
		}

		// Fixing the profile lets the upgrade finish.
		applyProfile(t, "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{})
		eventually(t, 3*time.Minute, func() error {
			for n, c := range components(t) {
				if c.Status.Release != "2026.1" || !ready(c) || c.Status.ChartVersion != "2026.1.0" {
					return fmt.Errorf("%s: release %q chart %s phase %s", n, c.Status.Release, c.Status.ChartVersion, c.Status.Phase)
				}
			}
			return nil
		})
		upgraded, _ := componentEvents(t, "Upgraded")
		readyAt := map[string]time.Time{}
		for n, c := range components(t) {
			readyAt[n] = conditionOf(c, kupenstackv1.ConditionReady).LastTransitionTime.Time
		}
		for _, n := range []string{"nova", "neutron"} {
			if upgraded[n].IsZero() {
				t.Errorf("%s: no Upgraded event", n)
			}
		}
		_ = readyAt
	})

	t.Run("releases left pending by a crash are recovered without duplicates", func(t *testing.T) {
		store := helmStorage(t)
		// keystone: a crash during an upgrade leaves a pending-upgrade revision on top.
		last, err := store.Last("keystone")
		if err != nil {
			t.Fatal(err)
		}
		pending := *last
		pending.Info = &release.Info{Status: release.StatusPendingUpgrade, Description: "Upgrade in progress"}
		pending.Version = last.Version + 1
		if err := store.Create(&pending); err != nil {
			t.Fatal(err)
		}
		// horizon: a crash right after Helm recorded the first install. Its pre-delete hook cannot
		// run, as keystone's credential cleanup cannot before its db-sync: the unfinished release
		// is cleared without its hooks (with them, a real cluster stayed stuck for ever).
		ch, err := (&helm.ChartLoader{CacheDir: t.TempDir()}).Load(helm.Source{Repository: repository}, "horizon", "2026.1.0")
		if err != nil {
			t.Fatal(err)
		}
		cleanup := &release.Hook{Name: "horizon-cleanup", Kind: "Cleanup", Path: "horizon/templates/cleanup.yaml",
			Manifest: "apiVersion: cleanup.example.invalid/v1\nkind: Cleanup\nmetadata:\n  name: horizon-cleanup\n",
			Events:   []release.HookEvent{release.HookPreDelete}}
		if err := store.Create(&release.Release{Name: "horizon", Namespace: cloudNS, Version: 1, Chart: ch,
			Hooks: []*release.Hook{cleanup},
			Info:  &release.Info{Status: release.StatusPendingInstall, Description: "Install in progress"}}); err != nil {
			t.Fatal(err)
		}
		updateConfig(t, func(s *kupenstackv1.KupenstackConfigurationSpec) { s.OptionalComponents = []string{"horizon"} })

		waitAllReady(t, append(slices.Clone(core), "horizon")...)
		eventually(t, time.Minute, func() error {
			for name, want := range map[string]int{"keystone": pending.Version + 1, "horizon": 1} {
				h, err := store.History(name)
				if err != nil {
					return err
				}
				deployed := 0
				for _, r := range h {
					if r.Info.Status == release.StatusDeployed {
						deployed++
					}
					if r.Info.Status.IsPending() {
						return fmt.Errorf("%s revision %d still %s", name, r.Version, r.Info.Status)
					}
				}
				if newest := h[len(h)-1]; deployed != 1 || newest.Version != want || newest.Info.Status != release.StatusDeployed {
					return fmt.Errorf("%s: %d deployed revisions, newest %d %s; want exactly one, revision %d", name, deployed, newest.Version, newest.Info.Status, want)
				}
			}
			return nil
		})
		unlocked, _ := componentEvents(t, "ReleaseUnlocked")
		for _, n := range []string{"keystone", "horizon"} {
			if unlocked[n].IsZero() {
				t.Errorf("%s: no ReleaseUnlocked event", n)
			}
		}
	})

	t.Run("the validation agent's verdict shows on each component", func(t *testing.T) {
		// What the agent writes (its own test runs it against the real cloud).
		var got kupenstackv1.KupenstackConfiguration
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(cfg), &got); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(got.DeepCopy())
		got.Status.Services = []kupenstackv1.ServiceHealth{
			{Name: "keystone", Healthy: true, Reason: "Healthy"},
			{Name: "glance", Healthy: false, Reason: "Unavailable", Message: "glance (image) at glance-api:9292: HTTP 503"},
		}
		if err := env.Client.Status().Patch(env.Ctx, &got, patch); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, func() error {
			cs := components(t)
			for name, want := range map[string]metav1.ConditionStatus{"keystone": metav1.ConditionTrue, "glance": metav1.ConditionFalse, "nova": ""} {
				c := conditionOf(cs[name], kupenstackv1.ConditionServiceHealthy)
				if c.Status != want {
					return fmt.Errorf("%s ServiceHealthy = %q (%s), want %q", name, c.Status, c.Message, want)
				}
			}
			if c := conditionOf(cs["glance"], kupenstackv1.ConditionServiceHealthy); c.Reason != "Unavailable" || !strings.Contains(c.Message, "HTTP 503") {
				return fmt.Errorf("glance ServiceHealthy = %+v", c)
			}
			return nil
		})
	})

	t.Run("the configuration summarises the components", func(t *testing.T) {
		eventually(t, time.Minute, func() error {
			var got kupenstackv1.KupenstackConfiguration
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(cfg), &got); err != nil {
				return err
			}
			if want := fmt.Sprintf("%d/%d", len(core)+1, len(core)+1); got.Status.ReadyComponents != want {
				return fmt.Errorf("readyComponents %q, want %q", got.Status.ReadyComponents, want)
			}
			return nil
		})
	})

	// The Ceph client configuration is the admin's: until both objects exist, cinder's install
	// and libvirt's upgrade wait and say for what (their pods would hang mounting them).
	t.Run("cinder on Ceph waits for the Ceph client configuration", func(t *testing.T) {
		var p kupenstackv1.OpenstackCloudConfigurationProfile
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Namespace: profilesNS, Name: "default"}, &p); err != nil {
			t.Fatal(err)
		}
		p.Spec.Ceph = &kupenstackv1.CephClient{PoolReplicas: 1}
		if err := env.Client.Update(env.Ctx, &p); err != nil {
			t.Fatal(err)
		}
		updateConfig(t, func(s *kupenstackv1.KupenstackConfigurationSpec) {
			s.OptionalComponents = []string{"horizon", "cinder"}
		})
		says := func(name, want string) {
			t.Helper()
			eventually(t, time.Minute, func() error {
				c := components(t)[name]
				for _, cond := range c.Status.Conditions {
					if strings.Contains(cond.Message, want) {
						return nil
					}
				}
				return fmt.Errorf("%s: conditions %+v, want one saying %q", name, c.Status.Conditions, want)
			})
		}
		says("cinder", "waiting for the ConfigMap "+cloudNS+"/ceph-etc (the profile's spec.ceph.configMap)")
		says("libvirt", "waiting for the ConfigMap "+cloudNS+"/ceph-etc")
		if err := env.Client.Create(env.Ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cloudNS, Name: "ceph-etc"},
			Data: map[string]string{"ceph.conf": "[global]\nmon_host = [v2:192.0.2.10:3300]\n"}}); err != nil {
			t.Fatal(err)
		}
		says("cinder", "waiting for the Secret "+cloudNS+"/pvc-ceph-client-key (the profile's spec.ceph.secret)")
		if h, _ := helmStorage(t).History("cinder"); len(h) > 0 {
			t.Error("cinder has a Helm release although its Ceph client configuration is missing")
		}
		if err := env.Client.Create(env.Ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cloudNS, Name: "pvc-ceph-client-key"},
			Data: map[string][]byte{"key": []byte("not-a-real-key")}}); err != nil {
			t.Fatal(err)
		}
		waitAllReady(t, append(slices.Clone(core), "horizon", "cinder")...)
		var job batchv1.Job
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Namespace: cloudNS, Name: "cinder-storage-init"}, &job); err != nil {
			t.Errorf("cinder's storage-init Job (creates the pool and the cinder user): %v", err)
		}
	})
}

// editSecret changes one key of a Secret as a user would and returns its previous value.
func editSecret(t *testing.T, key types.NamespacedName, field, value string) string {
	t.Helper()
	var s corev1.Secret
	if err := env.Client.Get(env.Ctx, key, &s); err != nil {
		t.Fatal(err)
	}
	was := string(s.Data[field])
	patch := client.MergeFrom(s.DeepCopy())
	s.Data[field] = []byte(value)
	if err := env.Client.Patch(env.Ctx, &s, patch); err != nil {
		t.Fatal(err)
	}
	return was
}

// hasEvent says whether the component has an Event with reason whose note contains text.
func hasEvent(t *testing.T, component, reason, text string) bool {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(env.Ctx, &list); err != nil {
		t.Fatal(err)
	}
	for _, e := range list.Items {
		if e.Regarding.Kind == "OpenstackComponent" && e.Regarding.Name == component && e.Reason == reason && strings.Contains(e.Note, text) {
			return true
		}
	}
	return false
}

func conditionOf(c kupenstackv1.OpenstackComponent, typ string) metav1.Condition {
	for _, cond := range c.Status.Conditions {
		if cond.Type == typ {
			return cond
		}
	}
	return metav1.Condition{}
}

// helmStorage reads and writes the Helm release records of the cloud's namespace, as the helm
// CLI would.
func helmStorage(t *testing.T) *storage.Storage {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(cloudNS)))
}
