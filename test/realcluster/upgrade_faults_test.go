package realcluster

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/go-logr/logr"
	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/lcm/credentials"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
)

// absentImage is an image no node has: with the cloud's pull policy Never its container cannot
// start (ErrImageNeverPull), and nothing is fetched from anywhere.
const absentImage = "127.0.0.1:1/kupenstack/absent:never"

// rollbackDeadline is the progress deadline of the rollback case: short, so that the case is.
const rollbackDeadline = 90 * time.Second

// upgradeFaults are the upgrades that go wrong, on the cloud's real pods, each under the API
// probe: a new glance-api image that cannot start is rolled back at the progress deadline while
// the old pod keeps serving; the operator's pod is killed at a seeded moment of an upgrade and
// the new one finishes it, leaving one deployed Helm revision per release and the generated
// credentials as they were.
func upgradeFaults(ctx context.Context, t *testing.T, c *cluster, cl client.Client, cfg *kupenstackv1.KupenstackConfiguration,
	profile *kupenstackv1.OpenstackCloudConfigurationProfile) {
	t.Helper()
	calls, cleanup := upgradeProbeCalls(ctx, t, c)
	defer cleanup()
	t.Logf("upgrade, a glance-api image that cannot start:\n%s", badImageRolledBack(ctx, t, c, cl, cfg, profile, calls))
	t.Logf("upgrade, the operator's pod killed during it:\n%s", operatorKilledDuringUpgrade(ctx, t, c, cl, profile, calls))
}

// badImageRolledBack sets a progress deadline of rollbackDeadline and gives glance-api an image
// that cannot start: the operator upgrades glance, waits for the deadline, and rolls back to the
// last good revision, said in glance's Degraded condition and an Event. With the API pods
// replaced only once their successors are ready (maxUnavailable 0), the old pod serves all
// along. Set back, the image is no upgrade (the last good revision's values): glance is Ready.
func badImageRolledBack(ctx context.Context, t *testing.T, c *cluster, cl client.Client, cfg *kupenstackv1.KupenstackConfiguration,
	profile *kupenstackv1.OpenstackCloudConfigurationProfile, calls map[string]func(context.Context) error) string {
	t.Helper()
	before := componentRevisions(ctx, t, cl)
	previous := setProgressDeadline(ctx, t, cl, cfg, &kupenstackv1.Duration{Duration: rollbackDeadline})
	var good string
	var took time.Duration
	changed := time.Now().Truncate(time.Second)
	var glance kupenstackv1.OpenstackComponent
	report, failed := probed(ctx, t, c, calls, func() {
		start := time.Now()
		changeGlance(ctx, t, cl, profile, func(cp *kupenstackv1.ComponentProfile, _ map[string]any) {
			good = cp.Images["glance_api"]
			cp.Images = withImage(cp.Images, "glance_api", absentImage)
		})
		if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, rollbackDeadline+5*time.Minute, true, func(ctx context.Context) (bool, error) {
			if err := cl.Get(ctx, client.ObjectKey{Name: "glance"}, &glance); err != nil {
				return false, nil
			}
			return glance.Status.Phase == kupenstackv1.ComponentPhaseRolledBack, nil
		}); err != nil {
			t.Fatalf("glance not rolled back: phase %s, revision %d (was %d), %s", glance.Status.Phase, glance.Status.Revision,
				before["glance"], glance.Status.LastError)
		}
		took = time.Since(start)
		glanceAPIServing(ctx, t, c, good)
	})
	if took < rollbackDeadline {
		t.Errorf("glance rolled back %s after the change, before the progress deadline of %s", took.Round(time.Second), rollbackDeadline)
	}
	revisionsChanged(t, before, componentRevisions(ctx, t, cl), "glance", 2) // the upgrade, then the rollback
	degraded := meta.FindStatusCondition(glance.Status.Conditions, kupenstackv1.ConditionDegraded)
	if degraded == nil || degraded.Reason != kupenstackv1.ReasonUpgradeFailed || !strings.Contains(degraded.Message, "progress deadline") ||
		!strings.Contains(degraded.Message, fmt.Sprintf("rolled back to revision %d", before["glance"])) {
		t.Errorf("glance Degraded = %+v, want %s naming the deadline and revision %d", degraded, kupenstackv1.ReasonUpgradeFailed, before["glance"])
	}
	events := glanceEvents(ctx, t, c, changed)
	t.Logf("glance's events since the change: %q", events)
	if !slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, kupenstackv1.ReasonUpgradeFailed+" ") }) {
		t.Errorf("no %s event for glance", kupenstackv1.ReasonUpgradeFailed)
	}

	// Undone: the last good revision's values again, so no Helm action, and Ready.
	changeGlance(ctx, t, cl, profile, func(cp *kupenstackv1.ComponentProfile, _ map[string]any) {
		cp.Images = withImage(cp.Images, "glance_api", good)
	})
	setProgressDeadline(ctx, t, cl, cfg, previous)
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKey{Name: "glance"}, &glance); err != nil {
			return false, nil
		}
		return glance.Status.Phase == kupenstackv1.ComponentPhaseReady && glance.Status.ObservedGeneration == glance.Generation, nil
	}); err != nil {
		t.Fatalf("glance not Ready with its image set back: phase %s, %s", glance.Status.Phase, glance.Status.LastError)
	}
	revisionsChanged(t, before, componentRevisions(ctx, t, cl), "glance", 2)
	return fmt.Sprintf("rolled back %s after the change (deadline %s); %d failed calls\n%s", took.Round(time.Second), rollbackDeadline, failed, report)
}

// withImage is m (a new map when nil) with key set to value.
func withImage(m map[string]string, key, value string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[key] = value
	return m
}

// setProgressDeadline sets the configuration's progress deadline and returns the one it had.
func setProgressDeadline(ctx context.Context, t *testing.T, cl client.Client, cfg *kupenstackv1.KupenstackConfiguration, d *kupenstackv1.Duration) *kupenstackv1.Duration {
	t.Helper()
	var previous *kupenstackv1.Duration
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(cfg), cfg); err != nil {
			return err
		}
		previous = cfg.Spec.ProgressDeadline
		cfg.Spec.ProgressDeadline = d
		return cl.Update(ctx, cfg)
	}); err != nil {
		t.Fatal(err)
	}
	return previous
}

// glanceAPIServing checks that glance-api's Deployment runs image again, with a ready pod.
func glanceAPIServing(ctx context.Context, t *testing.T, c *cluster, image string) {
	t.Helper()
	var images []string
	var ready int32
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := c.cs.AppsV1().Deployments(cloudNamespace).Get(ctx, "glance-api", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		images = images[:0]
		for _, ct := range d.Spec.Template.Spec.Containers {
			images = append(images, ct.Image)
		}
		ready = d.Status.ReadyReplicas
		return slices.Contains(images, image) && !slices.Contains(images, absentImage) && ready > 0 &&
			d.Status.UpdatedReplicas == d.Status.Replicas, nil
	}); err != nil {
		t.Errorf("glance-api after the rollback: images %v, %d ready, want %s serving", images, ready, image)
	}
}

// glanceEvents are the events of glance's OpenstackComponent last seen at or after since, oldest
// first, as "<reason> (<seconds after since>s): <note>".
func glanceEvents(ctx context.Context, t *testing.T, c *cluster, since time.Time) []string {
	t.Helper()
	mine := eventsOf(ctx, t, c, "OpenstackComponent", "glance", since)
	out := make([]string, 0, len(mine))
	for _, e := range mine {
		out = append(out, fmt.Sprintf("%s (%.0fs): %s", e.Reason, e.EventTime.Sub(since).Seconds(), e.Note))
	}
	return out
}

// eventsOf are the events about the object of kind and name last seen at or after since, oldest
// first.
func eventsOf(ctx context.Context, t *testing.T, c *cluster, kind, name string, since time.Time) []eventsv1.Event {
	t.Helper()
	list, err := c.cs.EventsV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mine []eventsv1.Event
	for _, e := range list.Items {
		last := e.EventTime.Time
		if e.Series != nil {
			last = e.Series.LastObservedTime.Time
		}
		if e.Regarding.Kind == kind && e.Regarding.Name == name && !last.Before(since) {
			mine = append(mine, e)
		}
	}
	slices.SortFunc(mine, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	return mine
}

// operatorKilledDuringUpgrade changes a glance setting and kills the operator's pod (no grace
// period) a seeded moment later, while it renders or runs that upgrade. The new pod finishes
// it: glance Ready for the new generation, no other component upgraded, exactly one deployed
// Helm revision per release and none left pending, and the generated credentials unchanged.
func operatorKilledDuringUpgrade(ctx context.Context, t *testing.T, c *cluster, cl client.Client,
	profile *kupenstackv1.OpenstackCloudConfigurationProfile, calls map[string]func(context.Context) error) string {
	t.Helper()
	creds := credentialsData(ctx, t, c)
	before := componentRevisions(ctx, t, cl)
	seed := faultSeed(t)
	// Within the first 4 s: the operator renders and runs glance's upgrade in about that.
	delay := time.Duration(rand.New(rand.NewPCG(seed, 0)).Int64N(int64(4 * time.Second)))
	killed := operatorPod(ctx, t, c)
	var took time.Duration
	changed := time.Now().Truncate(time.Second)
	report, failed := probed(ctx, t, c, calls, func() {
		start := time.Now()
		setGlanceQuota(ctx, t, cl, profile, 400, nil)
		time.Sleep(delay)
		if err := c.cs.CoreV1().Pods(operatorNamespace).Delete(ctx, killed, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
		waitGlanceUpgraded(ctx, t, cl, before["glance"])
		took = time.Since(start)
	})
	if now := operatorPod(ctx, t, c); now == killed {
		t.Errorf("operator pod %s still there after it was deleted", killed)
	}
	after := componentRevisions(ctx, t, cl)
	for name, rev := range after {
		// Glance's upgrade may have been cut short inside Helm (left pending, then marked failed
		// and made again by the new pod): one more revision or a few, never none.
		if name == "glance" && rev <= before[name] || name != "glance" && rev != before[name] {
			t.Errorf("%s: revision %d → %d after glance's upgrade", name, before[name], rev)
		}
	}
	releasesDeployedOnce(ctx, t, c)
	// The stopping pod's cancelled upgrade is no failed upgrade: it must not roll glance back.
	hc, err := helm.NewClient(c.cfg, cloudNamespace, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	history, err := hc.History("glance")
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range history {
		if rel.Version > int(before["glance"]) && strings.HasPrefix(rel.Info.Description, "Rollback") {
			t.Errorf("glance rolled back when the operator was killed: revision %d %q", rel.Version, rel.Info.Description)
		}
	}
	// How the new pod got there (an interrupted Helm action shows as ReleaseUnlocked).
	t.Logf("glance's events since the change: %q", glanceEvents(ctx, t, c, changed))
	if now := credentialsData(ctx, t, c); !maps.EqualFunc(creds, now, bytes.Equal) {
		t.Errorf("the generated credentials changed when the operator was killed (%d keys before, %d after)", len(creds), len(now))
	}
	return fmt.Sprintf("killed %s after the change (seed %d); glance upgraded to revision %d (was %d) and Ready %s after the change; %d failed calls\n%s",
		delay.Round(time.Millisecond), seed, after["glance"], before["glance"], took.Round(time.Second), failed, report)
}

// faultSeed is KUPENSTACK_FAULT_SEED when set (to replay a run), else a new seed; logged.
func faultSeed(t *testing.T) uint64 {
	t.Helper()
	if s := os.Getenv("KUPENSTACK_FAULT_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KUPENSTACK_FAULT_SEED=%q: %v", s, err)
		}
		return seed
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("fault seed %d (KUPENSTACK_FAULT_SEED=%d replays it)", seed, seed)
	return seed
}

// operatorPod is the name of the operator's running pod, waiting (2 minutes at most) for one
// that is ready.
func operatorPod(ctx context.Context, t *testing.T, c *cluster) string {
	t.Helper()
	dep, err := c.cs.AppsV1().Deployments(operatorNamespace).Get(ctx, "kupenstack", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sel := metav1.FormatLabelSelector(dep.Spec.Selector)
	var name string
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.cs.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, nil
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && podReady(&p) {
				name = p.Name
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("no ready operator pod: %v", err)
	}
	return name
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// releasesDeployedOnce checks Helm's storage in the cloud's namespace: every release has exactly
// one revision deployed and none pending.
func releasesDeployedOnce(ctx context.Context, t *testing.T, c *cluster) {
	t.Helper()
	secrets, err := c.cs.CoreV1().Secrets(cloudNamespace).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil {
		t.Fatal(err)
	}
	deployed := map[string]int{}
	for _, s := range secrets.Items {
		name, status := s.Labels["name"], s.Labels["status"]
		if status == "deployed" {
			deployed[name]++
		}
		if strings.HasPrefix(status, "pending") {
			t.Errorf("release %s: revision %s left %s", name, s.Labels["version"], status)
		}
	}
	for name, n := range deployed {
		if n != 1 {
			t.Errorf("release %s: %d revisions deployed, want 1", name, n)
		}
	}
	if len(deployed) == 0 {
		t.Errorf("no deployed release in %s", cloudNamespace)
	}
}

// credentialsData is the Secret of the cloud's generated credentials.
func credentialsData(ctx context.Context, t *testing.T, c *cluster) map[string][]byte {
	t.Helper()
	s, err := c.cs.CoreV1().Secrets(cloudNamespace).Get(ctx, credentials.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Data
}

// operatorKilledDuringInstall kills the operator's pod (no grace period) at a seeded moment of the
// cloud's first install, while it installs the first components. The returned check, run once
// the cloud is Ready, asserts that the new pod finished the install with exactly one deployed
// Helm revision per release, none left pending, and the credentials generated before the kill
// kept as they were.
func operatorKilledDuringInstall(ctx context.Context, t *testing.T, c *cluster) (check func()) {
	t.Helper()
	seed := faultSeed(t)
	// From 20 s to 2 min 20 s: the infrastructure and keystone are being installed.
	delay := 20*time.Second + time.Duration(rand.New(rand.NewPCG(seed, 1)).Int64N(int64(2*time.Minute)))
	killed := operatorPod(ctx, t, c)
	var creds map[string][]byte
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		if s, err := c.cs.CoreV1().Secrets(cloudNamespace).Get(ctx, credentials.SecretName, metav1.GetOptions{}); err == nil {
			creds = s.Data
		}
		if err := c.cs.CoreV1().Pods(operatorNamespace).Delete(ctx, killed, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Errorf("killing the operator during the install: %v", err)
		}
	}()
	return func() {
		t.Helper()
		<-done
		t.Logf("operator pod %s killed %s into the install (seed %d), %d credentials generated by then", killed, delay.Round(time.Second), seed, len(creds))
		releasesDeployedOnce(ctx, t, c)
		now := credentialsData(ctx, t, c)
		for k, v := range creds {
			if !bytes.Equal(now[k], v) {
				t.Errorf("credential %s regenerated after the operator was killed", k)
			}
		}
	}
}
