package component

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/lcm/workloads"
)

// TestDecide walks every branch of the state machine's decisions. Each case starts from a
// component with one deployed, ready revision (hash "h1", release 2025.2, revision 1) and a
// configuration that wants the same; it changes what it is about.
func TestDecide(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(-d)); return &t }
	rev := func(v int, status release.Status, hash, rel string) *release.Release {
		return &release.Release{Version: v, Info: &release.Info{Status: status}, Labels: map[string]string{labelHash: hash, labelRelease: rel}}
	}
	readyComp := func(name string, phase int32, rel string) kupenstackv1.OpenstackComponent {
		c := kupenstackv1.OpenstackComponent{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1}}
		c.Spec.UpgradePhase, c.Status.Release, c.Status.Phase = phase, rel, kupenstackv1.ComponentPhaseReady
		c.Status.Conditions = []metav1.Condition{{Type: kupenstackv1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: 1}}
		return c
	}
	const retryMsg = " (set the " + kupenstackv1.AnnotationRetry + " annotation to retry)"
	const upgradeRetryMsg = " (change the configuration or set the " + kupenstackv1.AnnotationRetry + " annotation to retry)"
	missing := helm.ObjectRef{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespace: "openstack", Name: "api"}

	for _, tt := range []struct {
		name string
		obs  func(*observation)
		comp func(*kupenstackv1.OpenstackComponent)
		want action
	}{
		// Gates.
		{name: "suspended keeps Ready", obs: func(o *observation) { *o = observation{suspended: true} },
			want: wait{message: "suspended: no Helm action until spec.suspend is false", ready: true}},
		{name: "suspended, not ready", obs: func(o *observation) { *o = observation{suspended: true} },
			comp: func(c *kupenstackv1.OpenstackComponent) { c.Generation = 2 },
			want: wait{message: "suspended: no Helm action until spec.suspend is false"}},
		{name: "no configuration", obs: func(o *observation) { *o = observation{noConfig: true} },
			want: wait{message: "no KupenstackConfiguration"}},
		{name: "not enabled", obs: func(o *observation) { *o = observation{notEnabled: true} },
			want: wait{message: "the configuration does not enable this component"}},
		{name: "spec behind the configuration", obs: func(o *observation) { *o = observation{stale: true} },
			want: wait{message: "waiting for the configuration controller to update this component", requeue: time.Second}},

		// No revision ever deployed.
		{name: "install", obs: func(o *observation) { o.history, o.last, o.deployed = nil, nil, nil },
			want: install{}},
		{name: "install waits for dependencies", obs: func(o *observation) { o.history, o.last, o.deployed = nil, nil, nil },
			comp: func(c *kupenstackv1.OpenstackComponent) { c.Spec.DependsOn = []string{"mariadb", "memcached"} },
			want: wait{message: "waiting for dependencies: memcached", requeue: waitingPeriod, phase: kupenstackv1.ComponentPhaseWaiting}},
		{name: "install waits for a prerequisite object", obs: func(o *observation) {
			o.history, o.last, o.deployed, o.missing = nil, nil, nil, "waiting for the ConfigMap openstack/ceph-etc (the profile's spec.ceph.configMap)"
		}, want: wait{message: "waiting for the ConfigMap openstack/ceph-etc (the profile's spec.ceph.configMap)", requeue: waitingPeriod, phase: kupenstackv1.ComponentPhaseWaiting}},
		{name: "components cannot be listed", obs: func(o *observation) {
			o.history, o.last, o.deployed, o.componentsErr = nil, nil, nil, errors.New("cache not synced")
		}, want: wait{message: "listing components: cache not synced", requeue: waitingPeriod, phase: kupenstackv1.ComponentPhaseWaiting}},
		{name: "failed install is reinstalled", obs: func(o *observation) {
			o.last = rev(1, release.StatusFailed, "h1", "2025.2")
			o.history, o.deployed = []*release.Release{o.last}, nil
		}, want: reinstall{install{}}},
		{name: "failed install blocked until the retry annotation", obs: func(o *observation) {
			o.last = rev(1, release.StatusFailed, "h1", "2025.2")
			o.history, o.deployed = []*release.Release{o.last}, nil
		}, comp: func(c *kupenstackv1.OpenstackComponent) { c.Status.FailedHash, c.Status.LastError = "h1", "boom" },
			want: blocked{reason: kupenstackv1.ReasonInstallFailed, message: "boom" + retryMsg}},
		{name: "failed install blocked: retry annotation already used", obs: func(o *observation) {
			o.last = rev(1, release.StatusFailed, "h1", "2025.2")
			o.history, o.deployed = []*release.Release{o.last}, nil
		}, comp: func(c *kupenstackv1.OpenstackComponent) {
			c.Status.FailedHash, c.Status.LastError, c.Status.RetriedWith = "h1", "boom", "1"
			c.Annotations = map[string]string{kupenstackv1.AnnotationRetry: "1"}
		}, want: blocked{reason: kupenstackv1.ReasonInstallFailed, message: "boom" + retryMsg}},
		{name: "failed install retried with a new annotation", obs: func(o *observation) {
			o.last = rev(1, release.StatusFailed, "h1", "2025.2")
			o.history, o.deployed = []*release.Release{o.last}, nil
		}, comp: func(c *kupenstackv1.OpenstackComponent) {
			c.Status.FailedHash, c.Status.RetriedWith = "h1", "1"
			c.Annotations = map[string]string{kupenstackv1.AnnotationRetry: "2"}
		}, want: reinstall{install{retry: true}}},
		{name: "failed install with new values", obs: func(o *observation) {
			o.last = rev(1, release.StatusFailed, "h0", "2025.2")
			o.history, o.deployed = []*release.Release{o.last}, nil
		}, comp: func(c *kupenstackv1.OpenstackComponent) { c.Status.FailedHash = "h0" },
			want: reinstall{install{}}},

		// A deployed revision.
		{name: "in sync: judge", want: judge{}},
		{name: "new hash: upgrade, rolling back to the last good revision", obs: func(o *observation) { o.hash = "h2" },
			want: upgrade{rollbackTo: 1}},
		{name: "no last good revision yet: roll back to the deployed one", obs: func(o *observation) { o.hash = "h2" },
			comp: func(c *kupenstackv1.OpenstackComponent) { c.Status.LastGoodRevision = 0 },
			want: upgrade{rollbackTo: 1}},
		{name: "newest revision failed (unlocked): upgrade", obs: func(o *observation) {
			o.last = rev(2, release.StatusFailed, "h1", "2025.2")
			o.history = append(o.history, o.last)
		}, want: upgrade{rollbackTo: 1}},
		{name: "upgrade waits for dependencies", obs: func(o *observation) { o.hash = "h2" },
			comp: func(c *kupenstackv1.OpenstackComponent) { c.Spec.DependsOn = []string{"memcached"} },
			want: wait{message: "waiting for dependencies: memcached", requeue: waitingPeriod, phase: kupenstackv1.ComponentPhaseWaiting}},
		{name: "upgrade waits for a prerequisite object", obs: func(o *observation) { o.hash, o.missing = "h2", "waiting for the Secret openstack/x (why)" },
			want: wait{message: "waiting for the Secret openstack/x (why)", requeue: waitingPeriod, phase: kupenstackv1.ComponentPhaseWaiting}},
		{name: "in sync: judged even with a prerequisite gone", obs: func(o *observation) { o.missing = "waiting for the Secret openstack/x (why)" },
			want: judge{}},
		{name: "upgrade blocked", obs: func(o *observation) { o.hash = "h2" },
			comp: func(c *kupenstackv1.OpenstackComponent) { c.Status.FailedHash, c.Status.LastError = "h2", "boom" },
			want: blocked{reason: kupenstackv1.ReasonUpgradeFailed, message: "boom" + upgradeRetryMsg}},
		{name: "upgrade blocked is retried with the annotation", obs: func(o *observation) { o.hash = "h2" },
			comp: func(c *kupenstackv1.OpenstackComponent) {
				c.Status.FailedHash = "h2"
				c.Annotations = map[string]string{kupenstackv1.AnnotationRetry: "x"}
			}, want: upgrade{retry: true, rollbackTo: 1}},
		{name: "release upgrade waits for the earlier phases", obs: func(o *observation) {
			o.hash = "h3"
			o.components[0].Status.Release = "2026.1" // mariadb, phase 0
			o.components = append(o.components, readyComp("keystone", 1, "2025.2"), readyComp("glance", 1, "2026.1"))
			o.components[len(o.components)-1].Status.Phase = kupenstackv1.ComponentPhaseDeploying
		}, comp: func(c *kupenstackv1.OpenstackComponent) { c.Spec.Release = "2026.1" },
			want: wait{message: "release upgrade to 2026.1: waiting for the earlier phases: glance, keystone", requeue: waitingPeriod, phase: kupenstackv1.ComponentPhaseWaiting}},
		{name: "release upgrade once the earlier phases run it", obs: func(o *observation) {
			o.hash = "h3"
			o.components[0].Status.Release = "2026.1" // mariadb, phase 0
			o.components = append(o.components, readyComp("keystone", 1, "2026.1"), readyComp("nova", 3, "2025.2"))
		}, comp: func(c *kupenstackv1.OpenstackComponent) { c.Spec.Release = "2026.1" },
			want: upgrade{rollbackTo: 1}},
		{name: "an upgrade within the release ignores the phases", obs: func(o *observation) {
			o.hash = "h2"
			o.components = append(o.components, readyComp("keystone", 1, "2024.2"))
		}, want: upgrade{rollbackTo: 1}},

		// Judging a revision.
		{name: "all ready", obs: func(o *observation) { o.judged, o.workloads = o.last, &workloads.Summary{Ready: 2, Total: 2} },
			want: ready{}},
		{name: "object deleted: repair", obs: func(o *observation) {
			o.judged, o.workloads = o.last, &workloads.Summary{Missing: []helm.ObjectRef{missing}}
		}, want: repair{objects: []string{missing.String()}, restart: true}},
		{name: "object deleted while a prerequisite is missing: wait, no repair", obs: func(o *observation) {
			o.judged, o.workloads = o.last, &workloads.Summary{Missing: []helm.ObjectRef{missing}}
			o.missing = "waiting for the Secret openstack/x (why)"
		}, want: wait{message: "waiting for the Secret openstack/x (why) before restoring " + missing.String(), requeue: waitingPeriod}},
		{name: "changed again within the hold-off: repair again", obs: func(o *observation) {
			o.judged, o.workloads = o.last, &workloads.Summary{Modified: []string{"Service api: port"}}
			o.repair = repairMemory{what: "Service api: port", count: 2, since: now.Add(-time.Minute)}
		}, want: repair{objects: []string{"Service api: port"}}},
		{name: "a repair that does not hold is held off", obs: func(o *observation) {
			o.judged, o.workloads = o.last, &workloads.Summary{Modified: []string{"Service api: port"}}
			o.repair = repairMemory{what: "Service api: port", count: maxRepairs, since: now.Add(-time.Minute)}
		}, want: blocked{reason: kupenstackv1.ReasonDriftNotRepaired, message: "changed again right after being restored: Service api: port",
			phase: kupenstackv1.ComponentPhaseFailed, lastError: true, requeue: 10 * time.Second}},
		{name: "after the hold-off it is repaired again", obs: func(o *observation) {
			o.judged, o.workloads = o.last, &workloads.Summary{Modified: []string{"Service api: port"}}
			o.repair = repairMemory{what: "Service api: port", count: maxRepairs, since: now.Add(-repairHoldoff*10*time.Second - time.Second)}
		}, want: repair{objects: []string{"Service api: port"}, restart: true}},
		{name: "other objects changed: repaired at once", obs: func(o *observation) {
			o.judged, o.workloads = o.last, &workloads.Summary{Missing: []helm.ObjectRef{missing}, Modified: []string{"Service api: port"}}
			o.repair = repairMemory{what: "Service api: port", count: maxRepairs, since: now.Add(-time.Minute)}
		}, want: repair{objects: []string{missing.String(), "Service api: port"}, restart: true}},
		{name: "workload failed", obs: func(o *observation) {
			o.judged, o.workloads = o.last, &workloads.Summary{Failed: []string{"Job db-sync: BackoffLimitExceeded", "Job x: y"}}
		}, want: blocked{reason: kupenstackv1.ReasonWorkloadFailed, message: "Job db-sync: BackoffLimitExceeded; Job x: y",
			phase: kupenstackv1.ComponentPhaseFailed, lastError: true, requeue: waitingPeriod}},
		{name: "deploying", obs: func(o *observation) {
			o.judged, o.workloads = o.hist(2, "h2"), &workloads.Summary{NotReady: []string{"a", "b", "c", "d", "e"}}
		}, comp: func(c *kupenstackv1.OpenstackComponent) { c.Status.LastActionTime = ago(time.Minute) },
			want: wait{message: "waiting for a; b; c; 2 more", requeue: deployingPeriod, phase: kupenstackv1.ComponentPhaseDeploying}},
		{name: "deploying without a prerequisite names it", obs: func(o *observation) {
			o.judged, o.workloads = o.hist(2, "h2"), &workloads.Summary{NotReady: []string{"a"}}
			o.missing = "waiting for the ConfigMap openstack/ceph-etc (why)"
		}, comp: func(c *kupenstackv1.OpenstackComponent) { c.Status.LastActionTime = ago(time.Minute) },
			want: wait{message: "waiting for the ConfigMap openstack/ceph-etc (why); waiting for a", requeue: deployingPeriod, phase: kupenstackv1.ComponentPhaseDeploying}},
		{name: "no deadline", obs: func(o *observation) {
			o.judged, o.workloads, o.deadline = o.hist(2, "h2"), &workloads.Summary{NotReady: []string{"a"}}, 0
		}, comp: func(c *kupenstackv1.OpenstackComponent) { c.Status.LastActionTime = ago(time.Hour) },
			want: wait{message: "waiting for a", requeue: deployingPeriod, phase: kupenstackv1.ComponentPhaseDeploying}},
		{name: "an upgrade past the deadline is rolled back", obs: func(o *observation) {
			o.judged, o.workloads = o.hist(2, "h2"), &workloads.Summary{NotReady: []string{"a"}}
		}, comp: func(c *kupenstackv1.OpenstackComponent) { c.Status.LastActionTime = ago(16 * time.Minute) },
			want: rollBack{target: 1, hash: "h2", cause: "revision 2 not ready within the progress deadline of 15m0s: waiting for a"}},
		{name: "an install past the deadline is reported and waited for", obs: func(o *observation) {
			o.judged, o.workloads = o.last, &workloads.Summary{NotReady: []string{"a"}}
		}, comp: func(c *kupenstackv1.OpenstackComponent) {
			c.Status.LastGoodRevision, c.Status.LastActionTime = 0, ago(16*time.Minute)
		}, want: blocked{reason: kupenstackv1.ReasonProgressDeadlineExceeded, message: "revision 1 not ready within the progress deadline of 15m0s: waiting for a",
			phase: kupenstackv1.ComponentPhaseDeploying, requeue: deployingPeriod}},
		{name: "a repair made of the same hash past the deadline is not rolled back", obs: func(o *observation) {
			o.judged, o.workloads = o.hist(2, "h1"), &workloads.Summary{NotReady: []string{"a"}}
		}, comp: func(c *kupenstackv1.OpenstackComponent) { c.Status.LastActionTime = ago(16 * time.Minute) },
			want: blocked{reason: kupenstackv1.ReasonProgressDeadlineExceeded, message: "revision 2 not ready within the progress deadline of 15m0s: waiting for a",
				phase: kupenstackv1.ComponentPhaseDeploying, requeue: deployingPeriod}},
		{name: "a revision once ready that lost a pod is just waited for", obs: func(o *observation) {
			o.judged, o.workloads = o.last, &workloads.Summary{NotReady: []string{"a"}}
		}, comp: func(c *kupenstackv1.OpenstackComponent) { c.Status.LastActionTime = ago(time.Hour) },
			want: wait{message: "waiting for a", requeue: deployingPeriod, phase: kupenstackv1.ComponentPhaseDeploying}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			deployed := rev(1, release.StatusDeployed, "h1", "2025.2")
			o := &observation{hash: "h1", history: []*release.Release{deployed}, last: deployed, deployed: deployed,
				deadline: 15 * time.Minute, readyPeriod: 10 * time.Second,
				components: []kupenstackv1.OpenstackComponent{readyComp("mariadb", 0, "2025.2"), readyComp("placement", 2, "2025.2")}}
			comp := readyComp("placement", 2, "2025.2")
			comp.Spec.Release = "2025.2"
			comp.Status.LastGoodRevision = 1
			if tt.obs != nil {
				tt.obs(o)
			}
			if tt.comp != nil {
				tt.comp(&comp)
			}
			if got := decide(o, &comp, now); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decide = %#v\nwant     %#v", got, tt.want)
			}
		})
	}
}

// hist adds a revision made of hash to the history as the newest and returns it.
func (o *observation) hist(v int, hash string) *release.Release {
	r := &release.Release{Version: v, Info: &release.Info{Status: release.StatusDeployed}, Labels: map[string]string{labelHash: hash, labelRelease: "2025.2"}}
	o.history = append(o.history, r)
	o.last = r
	return r
}
