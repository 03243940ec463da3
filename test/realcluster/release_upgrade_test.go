package realcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/imagebuild"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

// upgradeRelease is the release TestReleaseUpgrade goes to: the newest one Debian testing's
// packages carry (images/release-2026.1.yaml), through the 2026.1.0 charts.
const upgradeRelease = "2026.1"

// TestReleaseUpgrade: the one-node cloud of TestWholeCloud (without cinder), deployed by the
// operator on 2025.1 (charts 2025.1.0, Debian trixie's packages), is upgraded to 2026.1 (charts
// 2026.1.0, Debian testing's packages) the way an admin does it: a profile with the new release's
// images, then one change of the configuration naming the new release and that profile. The
// operator upgrades component after component in the release's phases while a probe calls the
// cloud's APIs every half second (token, server, network and image lists, a VM create/delete
// loop) and a tenant's server is watched. Every component ends Ready on 2026.1 after exactly one
// upgrade; the failed calls and longest outage per API are reported (the goal is none); the
// tenant's server is ACTIVE whenever Nova answers, and its QEMU process is reported kept or not.
//
// About 26 minutes with the images cached (Debian testing's take about 15 more to build):
// not part of make test (make test-release-upgrade).
func TestReleaseUpgrade(t *testing.T) {
	if os.Getenv("KUPENSTACK_RELEASE_UPGRADE") != "1" {
		t.Skip("about 26 minutes, not part of make test: make test-release-upgrade")
	}
	var chartsDir string
	if os.Getenv("KUPENSTACK_REAL_CLUSTER") == "1" {
		// One repository of both tags, as OpenStack-Helm's own holds every version: the
		// configuration's release alone picks the chart version.
		chartsDir = realcharts.MergedDir(t, "2025.1.0", "2026.1.0")
	}
	c := startCluster(t)
	holdOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 85*time.Minute)
	defer cancel()
	cl, hc, profile, cfg := prepareWholeCloud(ctx, t, c, chartsDir, lcmOn)
	from := releaseImages(t, c.root)
	to := releaseImagesOf(t, c.root, upgradeRelease)
	next := upgradeProfile(t, profile, from, to)
	c.importReleaseImages(t, upgradeRelease, recipesNamed(next, to)...)
	if err := cl.Create(ctx, next); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if err := cl.Create(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	want := componentsListed(ctx, t, cl, cfg)
	waitReady(ctx, t, c, cl, want)
	t.Logf("cloud on %s: %d components ready in %s", cfg.Spec.Release, want, time.Since(start).Round(time.Second))

	releaseUpgradeProbed(ctx, t, c, cl, cfg, next.Name, want)
	t.Logf("memory: %s", clusterMemory(t, c.env))
	t.Logf("pods' memory (cgroup rss) on %s:\n%s", upgradeRelease, podMemory(ctx, t, c))

	deleteCloud(ctx, t, c, cl, cfg)
	if err := hc.Uninstall("kupenstack"); err != nil {
		t.Fatal(err)
	}
}

// releaseUpgradeProbed changes the configuration to release with profile and waits until every
// one of want components runs it, with the probe calling the cloud's APIs, its VM loop running
// and a tenant's server watched all along; it reports what the probe saw, and what became of the
// server and its QEMU process. What it made in the cloud is gone when it returns.
func releaseUpgradeProbed(ctx context.Context, t *testing.T, c *cluster, cl client.Client, cfg *kupenstackv1.KupenstackConfiguration,
	profile string, want int) {
	t.Helper()
	release, from := upgradeRelease, cfg.Spec.Release
	calls := probeCalls(ctx, t, c)
	loop, cleanup := newVMLoop(ctx, t, c)
	defer cleanup()
	calls["vm create/delete"] = loop.cycle
	tenant := loop.keep(ctx, t, "tenant-vm")
	defer func() {
		if err := loop.deleteAndWait(tenant); err != nil {
			t.Error(err)
		}
	}()
	qemuBefore := qemuPID(t, tenant)
	if qemuBefore == 0 {
		t.Fatalf("the tenant's server %s has no QEMU process on the node", tenant)
	}
	var notActive atomic.Value // the last status other than ACTIVE the tenant's server was seen in
	calls["tenant server"] = func(ctx context.Context) error {
		s, err := servers.Get(ctx, loop.nova, tenant).Extract()
		if err != nil {
			return err
		}
		if s.Status != "ACTIVE" {
			notActive.Store(fmt.Sprintf("%s at %s", s.Status, time.Now().Format(time.TimeOnly)))
			return fmt.Errorf("server %s is %s", s.ID, s.Status)
		}
		return nil
	}

	before := componentRevisions(ctx, t, cl)
	var took time.Duration
	report, failed := probed(ctx, t, c, calls, func() {
		began := time.Now()
		changeRelease(ctx, t, cl, cfg, release, profile)
		waitRelease(ctx, t, c, cl, release, want, began)
		took = time.Since(began)
	})
	t.Logf("release upgrade %s → %s, every component Ready on it in %s, %d failed calls:\n%s",
		from, release, took.Round(time.Second), failed, report)
	after := componentRevisions(ctx, t, cl)
	if len(after) != len(before) {
		t.Errorf("%d components after the upgrade, %d before", len(after), len(before))
	}
	for name, rev := range after {
		if rev != before[name]+1 {
			t.Errorf("%s: revision %d → %d, want one upgrade", name, before[name], rev)
		}
	}
	if v := notActive.Load(); v != nil {
		t.Errorf("the tenant's server was not ACTIVE during the upgrade: last seen %s", v)
	}
	switch qemuAfter := qemuPID(t, tenant); {
	case qemuAfter == 0:
		t.Errorf("the tenant's server has no QEMU process after the upgrade")
	case qemuAfter == qemuBefore:
		t.Logf("the tenant's server kept its QEMU process (PID %d) through the upgrade", qemuAfter)
	default:
		t.Logf("the tenant's server's QEMU process was replaced during the upgrade (PID %d → %d)", qemuBefore, qemuAfter)
	}
}

// releaseImagesOf reads images/release-<release>.yaml.
func releaseImagesOf(t *testing.T, root, release string) *imagebuild.Release {
	t.Helper()
	_, rel := releaseRecipes(t, root, release)
	return rel
}

// releaseRecipes reads the image recipes and images/release-<release>.yaml, checked against them.
func releaseRecipes(t *testing.T, root, release string) (map[string]*imagebuild.Recipe, *imagebuild.Release) {
	t.Helper()
	imagesDir := filepath.Join(root, "images")
	recipes, err := imagebuild.LoadRecipes(imagesDir)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := imagebuild.LoadRelease(imagebuild.ReleaseFile(imagesDir, release), recipes)
	if err != nil {
		t.Fatal(err)
	}
	return recipes, rel
}

// keptThroughUpgrade are the images a release upgrade leaves as they are, and why. RabbitMQ
// upgrades in place only from 4.2 to 4.3 (4.3 dropped the Mnesia metadata store 4.0 writes, and
// its data is kept on the node), and Debian has no 4.1 or 4.2 to step through; 4.3 also refuses
// the transient non-exclusive queues oslo.messaging declares by default. The 2026.1.0 charts
// themselves default to RabbitMQ 3.13, so trixie's 4.0 serves both releases.
var keptThroughUpgrade = map[string]string{
	"rabbitmq": "no in-place upgrade from 4.0 to 4.3",
}

// upgradeProfile is profile for release to: a copy named after it whose components take to's
// images, but for keptThroughUpgrade's and those to has none of (glance: Debian testing has no
// glance package), which stay as they are; the charts' helpers (dep_check, the Jobs' client)
// move to to's. The 2026.1.0 glance chart names a uwsgi module that glance 2025.1 does not have,
// so its API runs the WSGI script as under the 2025.1.0 chart.
func upgradeProfile(t *testing.T, profile *kupenstackv1.OpenstackCloudConfigurationProfile, from, to *imagebuild.Release) *kupenstackv1.OpenstackCloudConfigurationProfile {
	t.Helper()
	next := profile.DeepCopy()
	next.ObjectMeta = metav1.ObjectMeta{Name: profile.Name + "-" + strings.ReplaceAll(to.Release, ".", "-"), Namespace: profile.Namespace}
	recipeOf := recipesByRef(from, to)
	upgraded := func(ref string) string {
		recipe := recipeOf[ref]
		if _, kept := keptThroughUpgrade[recipe]; kept {
			return from.Images[recipe]
		}
		if newer, ok := to.Images[recipe]; ok {
			return newer
		}
		return ref
	}
	for chart, cp := range next.Spec.Components {
		images := map[string]string{}
		for key, ref := range cp.Images {
			images[key] = upgraded(ref)
		}
		// Keys the new charts add.
		for key, ref := range to.Charts[chart] {
			if _, ok := images[key]; !ok {
				images[key] = upgraded(ref)
			}
		}
		cp.Images = images
		next.Spec.Components[chart] = cp
	}
	if _, ok := to.Charts["glance"]; !ok {
		cp := next.Spec.Components["glance"]
		cp.Values = withRawValues(t, cp.Values, map[string]any{"conf": map[string]any{"glance_api_uwsgi": map[string]any{
			"uwsgi": map[string]any{"module": nil, "wsgi-file": "/var/lib/openstack/bin/glance-wsgi-api"}}}})
		next.Spec.Components["glance"] = cp
	}
	return next
}

// recipesNamed are the image recipes of rel that profile's components use, sorted.
func recipesNamed(profile *kupenstackv1.OpenstackCloudConfigurationProfile, rel *imagebuild.Release) []string {
	recipeOf := recipesByRef(rel)
	used := map[string]bool{}
	for _, cp := range profile.Spec.Components {
		for _, ref := range cp.Images {
			if name, ok := recipeOf[ref]; ok {
				used[name] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(used))
}

// recipesByRef maps each image reference of rels to its recipe's name.
func recipesByRef(rels ...*imagebuild.Release) map[string]string {
	out := map[string]string{}
	for _, rel := range rels {
		for name, ref := range rel.Images {
			out[ref] = name
		}
	}
	return out
}

// withRawValues is raw's values with more merged on top as a profile's are (a null kept: Helm
// removes the chart's default there).
func withRawValues(t *testing.T, raw *runtime.RawExtension, more map[string]any) *runtime.RawExtension {
	t.Helper()
	base := map[string]any{}
	if raw != nil {
		if err := json.Unmarshal(raw.Raw, &base); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := values.MergeKeepNull(base, more)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: data}
}

// changeRelease asks for release with profile in one update of the configuration, as an admin's
// kubectl apply does: the components' new values name both at once.
func changeRelease(ctx context.Context, t *testing.T, cl client.Client, cfg *kupenstackv1.KupenstackConfiguration, release, profile string) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(cfg), cfg); err != nil {
			return err
		}
		cfg.Spec.Release = release
		cfg.Spec.DefaultProfile.Name = profile
		return cl.Update(ctx, cfg)
	}); err != nil {
		t.Fatal(err)
	}
}

// waitRelease waits until want components run release and are Ready, logging when each got
// there (since began: the phases' timeline); at most 45 minutes.
func waitRelease(ctx context.Context, t *testing.T, c *cluster, cl client.Client, release string, want int, began time.Time) {
	t.Helper()
	arrived := map[string]bool{}
	last := ""
	err := wait.PollUntilContextTimeout(ctx, 3*time.Second, 45*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list kupenstackv1.OpenstackComponentList
		if err := cl.List(ctx, &list); err != nil {
			return false, nil
		}
		var waiting []string
		for i := range list.Items {
			oc := &list.Items[i]
			on := oc.Status.Release == release && oc.Status.ObservedGeneration == oc.Generation &&
				meta.IsStatusConditionTrue(oc.Status.Conditions, kupenstackv1.ConditionReady)
			switch {
			case on && !arrived[oc.Name]:
				arrived[oc.Name] = true
				t.Logf("[%s] %s Ready on %s (revision %d)", time.Since(began).Round(time.Second), oc.Name, release, oc.Status.Revision)
			case !on:
				waiting = append(waiting, fmt.Sprintf("%s=%s", oc.Name, oc.Status.Phase))
			}
		}
		slices.Sort(waiting)
		if line := strings.Join(waiting, " "); line != last {
			t.Logf("[%s] not yet on %s: %s", time.Since(began).Round(time.Second), release, line)
			last = line
		}
		return len(list.Items) == want && len(waiting) == 0, nil
	})
	if err != nil {
		t.Fatalf("not every component Ready on %s: %v\n%s", release, err, cloudReport(ctx, c))
	}
}

// TestUpgradeProfile: the 2026.1 profile of the whole cloud's sample, without a cluster.
func TestUpgradeProfile(t *testing.T) {
	root := filepath.Join("..", "..")
	from, to := releaseImages(t, root), releaseImagesOf(t, root, upgradeRelease)
	profile, _ := wholeCloudSample(t, root, "node")
	next := upgradeProfile(t, profile, from, to)
	if next.Name == profile.Name || next.Namespace != profile.Namespace {
		t.Errorf("profile %s/%s from %s/%s: want a new name in the same namespace", next.Namespace, next.Name, profile.Namespace, profile.Name)
	}
	for _, tt := range []struct{ chart, key, want string }{
		{"nova", "nova_api", to.Images["nova"]},
		{"nova", "dep_check", to.Images["kubernetes-entrypoint"]},
		{"rabbitmq", "rabbitmq", from.Images["rabbitmq"]},
		{"rabbitmq", "dep_check", to.Images["kubernetes-entrypoint"]},
		{"glance", "glance_api", from.Images["glance"]},
		{"glance", "glance_db_sync", from.Images["glance"]},
		{"glance", "ks_user", to.Images["openstack-client"]},
	} {
		if got := next.Spec.Components[tt.chart].Images[tt.key]; got != tt.want || got == "" {
			t.Errorf("%s %s: %q, want %q", tt.chart, tt.key, got, tt.want)
		}
	}
	if before := profile.Spec.Components["nova"].Images["nova_api"]; before != from.Images["nova"] {
		t.Errorf("the 2025.1 profile changed: nova_api %q", before)
	}
	// Imported for the upgrade: what the profile names of the new release, no more.
	recipes := recipesNamed(next, to)
	if !slices.Contains(recipes, "nova") || !slices.Contains(recipes, "kubernetes-entrypoint") || slices.Contains(recipes, "rabbitmq") {
		t.Errorf("recipes to import: %v, want nova and kubernetes-entrypoint, not rabbitmq (kept)", recipes)
	}
	var values map[string]any
	if err := json.Unmarshal(next.Spec.Components["glance"].Values.Raw, &values); err != nil {
		t.Fatal(err)
	}
	uwsgi := values["conf"].(map[string]any)["glance_api_uwsgi"].(map[string]any)["uwsgi"].(map[string]any)
	if module, ok := uwsgi["module"]; !ok || module != nil || uwsgi["wsgi-file"] == nil || uwsgi["processes"] == nil {
		t.Errorf("glance's uwsgi values: %v, want module null, the WSGI script and the sample's processes", uwsgi)
	}
}
