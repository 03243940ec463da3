package realcluster

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/cloudsample"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/scheme"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
	"github.com/kupenstack/kupenstack/test/e2e"
)

// wholeCloudImages are the images the whole 2025.1 cloud runs, cinder on the test's Ceph included.
var wholeCloudImages = []string{"kupenstack", "kubernetes-entrypoint", "openstack-client", "mariadb", "rabbitmq",
	"memcached", "keystone", "glance", "placement", "nova", "neutron", "openvswitch", "libvirt", "horizon",
	"cinder", "ceph"}

// TestWholeCloud: the operator, running as its chart's pod, deploys the whole cloud of
// config/samples/lcm/one-node.yaml (every required component and horizon, from the real
// 2025.1.0 charts, Open vSwitch on its userspace datapath, nova-compute on libvirt/QEMU) plus
// cinder on a one-node Ceph the test starts first, with the project's Debian-built images onto
// the real node. Every component becomes Ready, the
// validation agent reports every deployed service healthy, a pod gets a token with the published
// clouds.yaml; deleting the configuration removes everything, and `down` leaves the host as
// `up` found it.
func TestWholeCloud(t *testing.T) {
	var chartsDir string
	var before hostState
	var guest []byte
	// make test left the resource suite's cases for this cloud out of the all-in-one's run
	// (hack/budget.sh leave-to-cloud, which checked that they fit): they run here whatever the
	// budget says, or they would not run at all.
	suiteLeftHere := os.Getenv(e2e.LeaveToRealCloudEnv) == "1"
	if os.Getenv("KUPENSTACK_REAL_CLUSTER") == "1" {
		if suiteLeftHere {
			t.Logf("%s=1: the resource suite's cases for the deployed cloud were left to this test; it and they run whatever the time budget says", e2e.LeaveToRealCloudEnv)
		} else {
			skipUnlessWithinBudget(t, cloudInstallNeeds+cloudTeardownNeeds+
				time.Duration(imagesNotCached(t, newEnv(t).root, wholeCloudImages))*imageBuildNeeds)
		}
		chartsDir = realcharts.Dir(t, "2025.1.0")
		guest = guestImage(t)
		// The node's packages first (they stay installed, as in TestRealCluster): on a fresh
		// machine the snapshot would otherwise find no iptables-save to ask.
		newEnv(t).run(t, "deps")
		before = snapshotHost(t)
		// Registered before the cluster's own clean-up, so it runs after `down`.
		t.Cleanup(func() {
			if d := before.diff(snapshotHost(t)); d != "" {
				t.Errorf("the host after down differs from before up:\n%s", d)
			}
		})
	}
	c := startCluster(t)
	holdOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Minute)
	defer cancel()
	// The tenant's image comes from a pod: its Service address is a testing range, not public.
	// The operator runs before the configuration exists, with the chart's default --lcm=auto.
	cl, hc, profile, cfg := prepareWholeCloud(ctx, t, c, chartsDir,
		withValues(lcmAuto, map[string]any{"extraArgs": []any{"--image-source-allowed-cidrs=198.18.0.0/15"}}))
	// Volumes: cinder on a one-node Ceph the test brings, as an admin brings theirs.
	startCeph(ctx, t, c, releaseImages(t, c.root).Images["ceph"])
	// What the quickstart's `cloudsample -ceph-pool-replicas 1` does to the same sample.
	(&cloudsample.Sample{Profile: profile, Configuration: cfg}).UseCeph(1)
	if err := cl.Update(ctx, profile); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cl.Create(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	killedDuringInstall := operatorKilledDuringInstall(ctx, t, c)
	want := componentsListed(ctx, t, cl, cfg)
	waitReady(ctx, t, c, cl, want)
	t.Logf("whole cloud (configuration created to %d components ready, the operator killed once): %s", want, time.Since(start).Round(time.Second))
	killedDuringInstall()
	t.Logf("memory: %s", clusterMemory(t, c.env))
	t.Logf("pods' memory (cgroup rss):\n%s", podMemory(ctx, t, c))

	token := tokenFromPod(ctx, t, c)
	// Its length only: a token is a credential, even in a test's log.
	t.Logf("keystone token issued in the cluster (%d characters)", len(token))

	// Every service the cloud runs healthy in the validation agent's report.
	var services []kupenstackv1.ServiceHealth
	if err := wait.PollUntilContextTimeout(ctx, 5*time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		var got kupenstackv1.KupenstackConfiguration
		if err := cl.Get(ctx, client.ObjectKeyFromObject(cfg), &got); err != nil {
			return false, nil
		}
		services = got.Status.Services
		healthy := 0
		for _, s := range services {
			if s.Healthy {
				healthy++
			} else if s.Reason != "NotDeployed" {
				return false, nil
			}
		}
		return healthy > 0, nil
	}); err != nil {
		t.Errorf("services not all healthy: %+v", services)
	}
	var healthy []string
	for _, s := range services {
		t.Logf("service %s: healthy=%v %s %s (%d ms)", s.Name, s.Healthy, s.Reason, s.Message, s.LatencyMilliseconds)
		if s.Healthy {
			healthy = append(healthy, s.Name)
		}
	}
	for _, s := range []string{"keystone", "glance", "placement", "nova", "neutron", "cinder"} {
		if !slices.Contains(healthy, s) {
			t.Errorf("service %s not reported healthy", s)
		}
	}

	// One after the other: the one compute node's 8 vCPUs (2 cores, Nova's allocation ratio 4) do
	// not hold the tenant's six guests and the suite's servers at once (side by side, the suite's
	// servers found no valid host), and the tenant checks that no server is left after it.
	busURL := operatorHearsTheCloud(ctx, t, c)
	// Each step only if it ends, the cloud's teardown included, within make test's budget; before
	// the suite that must run (suiteLeftHere), that suite's time is kept too.
	var mustStillRun time.Duration
	if suiteLeftHere {
		mustStillRun = suiteOnCloudNeeds
	}
	step := func(name string, need time.Duration, run func()) {
		if withinBudget(t, name, need+mustStillRun+cloudTeardownNeeds) {
			run()
		}
	}
	step("the tenant's guests", tenantNeeds, func() { tenantOnCloud(ctx, t, c, cl, guest) })
	if suiteLeftHere {
		e2eOnCloud(ctx, t, c, busURL)
		mustStillRun = 0
	}
	if os.Getenv(tenantOnlyEnv) == "1" {
		t.Logf("%s=1: the resource suite, the upgrades and the compute node's round trip left out", tenantOnlyEnv)
	} else {
		if !suiteLeftHere {
			step("the resource suite on the deployed cloud", suiteOnCloudNeeds, func() { e2eOnCloud(ctx, t, c, busURL) })
		}
		step("the one-setting upgrade", oneSettingNeeds, func() { oneSettingUpgrade(ctx, t, c, cl, profile) })
		step("the upgrade faults", upgradeFaultsNeeds, func() { upgradeFaults(ctx, t, c, cl, cfg, profile) })
		step("the compute node out and back", computeNodeNeeds, func() { computeRoleDroppedAndBack(ctx, t, c, cl, cfg) })
	}

	deleteCloud(ctx, t, c, cl, cfg)
	if err := hc.Uninstall("kupenstack"); err != nil {
		t.Fatal(err)
	}
}

// tenantOnlyEnv, set to 1, ends TestWholeCloud after the tenant (its guests and the boot
// benchmark), then deletes the cloud: make bench-boot, the boot rows without the 20 minutes of
// the suite and the upgrades.
const tenantOnlyEnv = "KUPENSTACK_WHOLE_CLOUD_TENANT_ONLY"

// prepareWholeCloud readies the cluster for the whole cloud: the images imported, the charts
// served, the operator installed with operatorValues, and the sample's profile created. The
// configuration is returned, not created yet: creating it starts the deployment.
func prepareWholeCloud(ctx context.Context, t *testing.T, c *cluster, chartsDir string, operatorValues map[string]any) (
	client.Client, *helm.Client, *kupenstackv1.OpenstackCloudConfigurationProfile, *kupenstackv1.KupenstackConfiguration) {
	t.Helper()
	for _, name := range wholeCloudImages {
		start := time.Now()
		c.importImages(t, name)
		t.Logf("image %s: build or cache + import %s", name, time.Since(start).Round(100*time.Millisecond))
	}
	c.importAgent(t)
	ctrllog.SetLogger(logr.Discard())
	cl, err := client.New(c.cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	serveCharts(ctx, t, c, chartsDir)
	hc := installOperator(ctx, t, c, operatorValues)
	nodes, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 1 {
		t.Fatalf("nodes: %v (%d)", err, len(nodes.Items))
	}
	profile, cfg := wholeCloudSample(t, c.root, nodes.Items[0].Name)
	if err := cl.Create(ctx, profile); err != nil {
		t.Fatal(err)
	}
	return cl, hc, profile, cfg
}

// componentsListed is how many components the configuration declares: its status lists them all
// from its first pass. (Counting the OpenstackComponent objects instead raced with their
// creation: a list taken while the operator was still creating them, after a conflict on the
// configuration, saw part of them, and the wait for exactly that many Ready never ended.)
func componentsListed(ctx context.Context, t *testing.T, cl client.Client, cfg *kupenstackv1.KupenstackConfiguration) int {
	t.Helper()
	var want int
	if err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		var got kupenstackv1.KupenstackConfiguration
		if err := cl.Get(ctx, client.ObjectKeyFromObject(cfg), &got); err != nil {
			return false, nil
		}
		want = len(got.Status.Components)
		return want > 0, nil
	}); err != nil {
		t.Fatal("the configuration lists no component:", err)
	}
	return want
}

// wholeCloudSample reads config/samples/lcm/one-node.yaml and readies it for this cluster's node
// with the images of its release (imported beforehand) and the charts of the charts pod.
func wholeCloudSample(t *testing.T, root, node string) (*kupenstackv1.OpenstackCloudConfigurationProfile, *kupenstackv1.KupenstackConfiguration) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "config", "samples", "lcm", "one-node.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sample, err := cloudsample.Parse(data)
	if err != nil {
		t.Fatalf("one-node.yaml: %v", err)
	}
	rel := releaseImages(t, root)
	charts := kupenstackv1.ChartSource{Repository: "http://charts." + chartsNamespace + ".svc.cluster.local/"}
	if err := sample.UseImages(rel, operatorNamespace, node, charts); err != nil {
		t.Fatalf("one-node.yaml: %v", err)
	}
	return sample.Profile, sample.Configuration
}

// withValues: a copy of base with more values.
func withValues(base, more map[string]any) map[string]any {
	out := maps.Clone(base)
	maps.Copy(out, more)
	return out
}

// holdOnFailure keeps a failed test's cluster up for a look (KUBECONFIG=<state>/kubeconfig)
// while the file KUPENSTACK_HOLD_ON_FAILURE names exists, at most an hour. A debugging aid: unset,
// it does nothing.
func holdOnFailure(t *testing.T, c *cluster) {
	hold := os.Getenv("KUPENSTACK_HOLD_ON_FAILURE")
	if hold == "" {
		return
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		if err := os.WriteFile(hold, nil, 0o644); err != nil {
			t.Logf("hold: %v", err)
			return
		}
		t.Logf("failed: the cluster stays up (state %s) until %s is removed", c.env.state, hold)
		for deadline := time.Now().Add(time.Hour); time.Now().Before(deadline); time.Sleep(5 * time.Second) {
			if _, err := os.Stat(hold); err != nil {
				return
			}
		}
	})
}
