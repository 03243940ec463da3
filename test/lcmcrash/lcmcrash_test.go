// Package lcmcrash SIGKILLs the operator, run as a real process against a local cluster (real
// API server, controller-manager and scheduler, kwok nodes), while its life-cycle controllers
// install a cloud from the real OpenStack-Helm charts (2026.1.0, read as a local chart
// repository directory), and checks that it resumes: every component installed,
// no release duplicated or left pending, the generated credentials never regenerated.
package lcmcrash

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/go-logr/logr"
	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/lcm/credentials"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
	"github.com/kupenstack/kupenstack/internal/testutil/lcmtest"
	"github.com/kupenstack/kupenstack/internal/testutil/operator"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// No manager in the test process: the operator under test is the only controller.
var env = testenv.New(nil).WithCluster(testenv.Node{Name: "node-a"}, testenv.Node{Name: "node-b"})

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

const cloudNS = "openstack"

// unreachableCloud is the clouds.yaml the resources flow is given: a closed loopback port, so
// that those controllers fail fast without sending anything off the machine (this test is about
// the life-cycle flow only). The operator never overwrites a Secret it did not write.
const unreachableCloud = `clouds:
  openstack:
    auth: {auth_url: "http://127.0.0.1:9/v3", username: admin, password: unused, project_name: admin,
      user_domain_name: Default, project_domain_name: Default}
`

// helmReleases returns, per release name, the statuses of its revisions (Helm's Secret storage
// labels each record with name and status).
func helmReleases(t *testing.T) map[string][]string {
	t.Helper()
	var list corev1.SecretList
	if err := env.Client.List(env.Ctx, &list, client.InNamespace(cloudNS), client.MatchingLabels{"owner": "helm"}); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, s := range list.Items {
		out[s.Labels["name"]] = append(out[s.Labels["name"]], s.Labels["status"])
	}
	return out
}

// pending says whether a Helm action is in flight (a revision pending-install/-upgrade).
func pending(releases map[string][]string) string {
	for name, statuses := range releases {
		for _, s := range statuses {
			if strings.HasPrefix(s, "pending") {
				return name
			}
		}
	}
	return ""
}

func TestSIGKILLDuringInstall(t *testing.T) {
	env.Require(t)
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("KUPENSTACK_CRASH_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (replay: KUPENSTACK_CRASH_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	op := startOperator(t)
	createCloud(t)

	// The chaos: whenever a Helm action is in flight, SIGKILL the operator after a seeded random
	// moment (0–300 ms) and start it again at once, up to 5 times.
	var firstCreds map[string][]byte
	kills, killedDuring := 0, []string{}
	deadline := time.Now().Add(8 * time.Minute)
	for {
		if firstCreds == nil {
			var s corev1.Secret
			if env.Client.Get(env.Ctx, client.ObjectKey{Namespace: cloudNS, Name: credentials.SecretName}, &s) == nil {
				firstCreds = s.Data
			}
		}
		if kills < 5 {
			if name := pending(helmReleases(t)); name != "" {
				time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
				op.Kill()
				kills++
				killedDuring = append(killedDuring, name)
				if err := op.Start(); err != nil {
					t.Fatalf("restarting the operator: %v", err)
				}
			}
		}
		notReady := notReadyComponents(t)
		if len(notReady) == 0 && kills > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d kills (during %v), components not ready: %v", kills, killedDuring, notReady)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d kills, while installing %v; %d operator starts", kills, killedDuring, op.Starts())

	releases := helmReleases(t)
	if len(releases) != len(values.Enabled([]string{"horizon"})) {
		t.Errorf("%d Helm releases, want one per component: %v", len(releases), releases)
	}
	for name, statuses := range releases {
		deployed := 0
		for _, s := range statuses {
			switch {
			case s == "deployed":
				deployed++
			case strings.HasPrefix(s, "pending"):
				t.Errorf("release %s: a revision is still %s", name, s)
			}
		}
		if deployed != 1 {
			t.Errorf("release %s: %d deployed revisions, want exactly 1 (%v)", name, deployed, statuses)
		}
	}
	var creds corev1.Secret
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Namespace: cloudNS, Name: credentials.SecretName}, &creds); err != nil {
		t.Fatal(err)
	}
	for k, v := range firstCreds {
		if string(creds.Data[k]) != string(v) {
			t.Errorf("credential %s was regenerated across the crashes: the services would no longer share it", k)
		}
	}
	// At least one kill must have hit a Helm action (the seeded delay can let some finish first).
	var events eventsv1.EventList
	if err := env.Client.List(env.Ctx, &events); err != nil {
		t.Fatal(err)
	}
	unlocked := 0
	for _, e := range events.Items {
		if e.Reason == "ReleaseUnlocked" {
			unlocked++
		}
	}
	t.Logf("%d releases found pending after a kill and recovered", unlocked)
	if unlocked == 0 {
		t.Errorf("no kill interrupted a Helm action (no ReleaseUnlocked Event): the test did not test recovery")
	}
	if exits := op.Crashed(); len(exits) > 0 {
		t.Errorf("the operator exited by itself: %v", exits)
	}
}

// startOperator starts the operator binary with the life-cycle on, the real 2026.1.0 charts
// readable, and an unreachable cloud for the resources flow.
func startOperator(t *testing.T) *operator.Process {
	t.Helper()
	lcmtest.EnsureNamespace(t, env.Ctx, env.Client, "kupenstack-system")
	if err := env.Client.Create(env.Ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kupenstack-system", Name: "kupenstack-cloud"},
		Data: map[string][]byte{"clouds.yaml": []byte(unreachableCloud)}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	charts := realcharts.Dir(t, "2026.1.0")
	op := operator.New(t, env, "--lcm=on", "--cloud-secret=kupenstack-system/kupenstack-cloud", "--cloud=openstack",
		"--validation-period=0", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--chart-local-path-prefixes="+charts)
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	return op
}

// createCloud creates the cloud's configuration (with horizon) and its default profile, unless
// an earlier test already did.
func createCloud(t *testing.T) {
	t.Helper()
	err := env.Client.Get(env.Ctx, client.ObjectKey{Name: kupenstackv1.KupenstackConfigurationName}, &kupenstackv1.KupenstackConfiguration{})
	if err == nil {
		return
	}
	if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	lcmtest.ApplyProfile(t, env.Ctx, env.Client, "lcm-profiles", "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{})
	cfg := &kupenstackv1.KupenstackConfiguration{ObjectMeta: metav1.ObjectMeta{Name: kupenstackv1.KupenstackConfigurationName},
		Spec: kupenstackv1.KupenstackConfigurationSpec{
			Release: "2026.1", Namespace: cloudNS, OptionalComponents: []string{"horizon"},
			Charts:         kupenstackv1.ChartSource{LocalPath: realcharts.Dir(t, "2026.1.0")},
			DefaultProfile: kupenstackv1.ProfileReference{Name: "default", Namespace: "lcm-profiles"},
			Nodes:          []kupenstackv1.ConfiguredNode{{Name: "node-a", Type: "control"}, {Name: "node-b", Type: "compute"}},
		}}
	if err := env.Client.Create(env.Ctx, cfg); err != nil {
		t.Fatal(err)
	}
}

// TestSIGTERMDuringUpgrade: the operator stopped the way Kubernetes stops its pod (SIGTERM, then
// its graceful shutdown) while it upgrades keystone. The shutdown cancels the upgrade inside
// Helm; that is no failed upgrade: nothing is rolled back and nothing marked failed, and the
// restarted operator finishes the upgrade. (It used to roll keystone back to its previous
// revision on the way out, then upgrade it again after the restart: three revisions and the old
// pods deployed once more for one change, as the real cloud's glance showed.)
func TestSIGTERMDuringUpgrade(t *testing.T) {
	env.Require(t)
	op := startOperator(t)
	createCloud(t)
	waitReady(t, 8*time.Minute)
	before := helmReleases(t)["keystone"]

	lcmtest.ApplyProfile(t, env.Ctx, env.Client, "lcm-profiles", "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{
		Components: map[string]kupenstackv1.ComponentProfile{
			"keystone": {Conf: lcmtest.Raw(t, map[string]any{"keystone": map[string]any{"DEFAULT": map[string]any{"max_param_size": 80}}})},
		}})
	stopped := false
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if statuses := helmReleases(t)["keystone"]; len(statuses) > len(before) && slices.Contains(statuses, "pending-upgrade") {
			op.Stop(t)
			stopped = true
			break
		}
	}
	if !stopped {
		t.Fatal("keystone's upgrade never seen pending: the test did not stop the operator during it")
	}
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, 5*time.Minute)

	hc, err := helm.NewClient(env.Config, cloudNS, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	history, err := hc.History("keystone")
	if err != nil {
		t.Fatal(err)
	}
	deployed := 0
	var revisions []string
	for _, rel := range history {
		revisions = append(revisions, fmt.Sprintf("%d %s %q", rel.Version, rel.Info.Status, rel.Info.Description))
		if strings.HasPrefix(rel.Info.Description, "Rollback") {
			t.Errorf("keystone was rolled back on the operator's shutdown: revision %d %q", rel.Version, rel.Info.Description)
		}
		if rel.Info.Status == release.StatusDeployed {
			deployed++
		}
		if rel.Info.Status.IsPending() {
			t.Errorf("keystone's revision %d is still %s", rel.Version, rel.Info.Status)
		}
	}
	if deployed != 1 {
		t.Errorf("keystone: %d deployed revisions, want 1", deployed)
	}
	t.Logf("keystone's revisions: %s", strings.Join(revisions, "; "))
	var comp kupenstackv1.OpenstackComponent
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: "keystone"}, &comp); err != nil {
		t.Fatal(err)
	}
	if comp.Status.FailedHash != "" {
		t.Errorf("keystone's status records a failed upgrade: %q (%s)", comp.Status.FailedHash, comp.Status.LastError)
	}
	if exits := op.Crashed(); len(exits) > 0 {
		t.Errorf("the operator exited by itself: %v", exits)
	}
}

// waitReady waits until every component is Ready.
func waitReady(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		notReady := notReadyComponents(t)
		if len(notReady) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("components not ready after %s: %v", within, notReady)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// notReadyComponents lists the components that are not Ready yet (all of them before the
// configuration controller has made them).
func notReadyComponents(t *testing.T) []string {
	t.Helper()
	var list kupenstackv1.OpenstackComponentList
	if err := env.Client.List(env.Ctx, &list); err != nil {
		t.Fatal(err)
	}
	want := values.Enabled([]string{"horizon"})
	if len(list.Items) < len(want) {
		return []string{fmt.Sprintf("%d of %d components exist", len(list.Items), len(want))}
	}
	var out []string
	for _, c := range list.Items {
		ready := false
		for _, cond := range c.Status.Conditions {
			if cond.Type == kupenstackv1.ConditionReady && cond.Status == metav1.ConditionTrue && cond.ObservedGeneration == c.Generation {
				ready = c.Status.Phase == kupenstackv1.ComponentPhaseReady
			}
		}
		if !ready {
			out = append(out, c.Name+"/"+c.Status.Phase)
		}
	}
	return out
}
