package realcluster

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kupenstack/kupenstack/test/e2e"
)

// e2eOnCloud runs the resource suite's tests for the deployed cloud (e2e.RealCloudRuns) against
// the cloud the operator deployed, through the clouds.yaml Secret the life-cycle published: the
// suite's controllers run in the test process (envtest), their OpenStack calls go to the cloud's
// endpoints in cluster.local, resolved by the cluster's DNS (KUPENSTACK_E2E_DNS). Two runs: the
// first without the notification listener, the second with it, at the URL of Nova's bus the
// life-cycle published (busURL). The suite's fixtures that the all-in-one's bootstrap creates (the
// public flavors m1.nano, m1.small and m1.medium, the public image aio-tiny, the external network
// "public") are created first, as an admin would. KUPENSTACK_E2E_ON_CLOUD_ALSO (test names, comma-separated) adds
// tests to the first run: a way to try a case of the suite on this cloud.
func e2eOnCloud(ctx context.Context, t *testing.T, c *cluster, busURL string) {
	t.Helper()
	if out, err := openstackShell(ctx, t, c, "e2e-fixtures", `
openstack flavor show m1.nano >/dev/null 2>&1 || openstack flavor create --public --ram 128 --vcpus 1 --disk 1 m1.nano
# The resize's larger flavors: their disks matter (qcow2, never filled), not their memory.
openstack flavor show m1.small >/dev/null 2>&1 || openstack flavor create --public --ram 192 --vcpus 1 --disk 20 m1.small
openstack flavor show m1.medium >/dev/null 2>&1 || openstack flavor create --public --ram 256 --vcpus 1 --disk 40 m1.medium
head -c 1048576 /dev/zero > /tmp/tiny.raw
openstack image show aio-tiny >/dev/null 2>&1 ||
  openstack image create --public --disk-format raw --container-format bare --file /tmp/tiny.raw aio-tiny
openstack network show `+externalNetwork+` >/dev/null 2>&1 || {
  openstack network create --external --provider-network-type flat --provider-physical-network external `+externalNetwork+`
  openstack subnet create --network `+externalNetwork+` --subnet-range `+externalCIDR+` --gateway `+externalGateway+` --no-dhcp `+externalNetwork+`-subnet
} >/dev/null
openstack image show aio-tiny -f value -c status`); err != nil || !strings.HasSuffix(out, "active") {
		t.Fatalf("the suite's fixtures: %q %v", out, err)
	}
	secret, err := c.cs.CoreV1().Secrets(operatorNamespace).Get(ctx, "kupenstack-cloud", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 1 {
		t.Fatalf("the cluster's one node: %v (%d nodes)", err, len(nodes.Items))
	}
	dir := t.TempDir()
	clouds := filepath.Join(dir, "clouds.yaml")
	if err := os.WriteFile(clouds, secret.Data["clouds.yaml"], 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "e2e.test")
	build := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, "./test/e2e/")
	build.Dir = c.root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the e2e suite: %v\n%s", err, out)
	}
	listenerOff, listenerOn := e2e.RealCloudRuns()
	if also := os.Getenv("KUPENSTACK_E2E_ON_CLOUD_ALSO"); also != "" {
		listenerOff = append(strings.Split(also, ","), listenerOff...)
	}
	for _, run := range []struct {
		name, busURL string
		tests        []string
	}{{"listener off", "", listenerOff}, {"listener on", busURL, listenerOn}} {
		e2eRun(ctx, t, c, bin, clouds, nodes.Items[0].Name, run.name, run.busURL, run.tests)
	}
}

// onCloudParallel is how many of the suite's parallel tests run at once on the deployed cloud:
// they wait on OpenStack far more than on this machine (one after the other they left half of
// its CPU idle), and the one compute host has room for their guests beside the tenant's.
// -test.parallel is one more: the credentials scan (TestNoCredentialsInStatusOrEvents) is a
// parallel test that holds its slot while it waits for all the others, and with -test.parallel
// 4 it held one for 653 of the suite's 803 s (CI of 7329b25): three tests at a time, not four.
const onCloudParallel = 4

// e2eRun is one run of the e2e suite's tests on the deployed cloud (its one compute host
// computeHost), the notification listener on at busURL unless it is empty.
func e2eRun(ctx context.Context, t *testing.T, c *cluster, bin, clouds, computeHost, name, busURL string, tests []string) {
	t.Helper()
	start := time.Now()
	run := exec.CommandContext(ctx, bin, "-test.v", "-test.count=1", "-test.timeout=30m",
		"-test.parallel", strconv.Itoa(onCloudParallel+1), "-test.run", e2e.ExactPattern(tests))
	run.Dir = filepath.Join(c.root, "test", "e2e")
	run.Env = append(os.Environ(), "OS_CLIENT_CONFIG_FILE="+clouds, "OS_CLOUD=openstack", "KUPENSTACK_E2E=required",
		"KUPENSTACK_E2E_DNS="+dnsIP+":53", "KUPENSTACK_E2E_VLAN_PHYSNET="+vlanPhysnet,
		"KUPENSTACK_E2E_COMPUTE_HOST="+computeHost, "KUPENSTACK_NOTIFICATIONS_URL="+busURL, e2e.LeaveToRealCloudEnv+"=")
	out, err := run.CombinedOutput()
	passed, failed := 0, 0
	var summary strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "--- PASS"):
			passed++
		case strings.HasPrefix(line, "--- FAIL"):
			failed++
		default:
			continue
		}
		summary.WriteString(line + "\n")
	}
	t.Logf("resource suite on the cloud the operator deployed (%s): %d passed, %d failed, %s\n%s",
		name, passed, failed, time.Since(start).Round(time.Second), summary.String())
	if err != nil || failed > 0 || passed < len(tests) {
		full := filepath.Join(os.TempDir(), "kupenstack-e2e-on-cloud-"+strings.ReplaceAll(name, " ", "-")+".log")
		_ = os.WriteFile(full, out, 0o644)
		lines := strings.Split(string(out), "\n")
		// A failed call to OpenStack in a test is as likely the cloud's as the operator's: the
		// pods' events say whether a service was restarted (a probe that timed out) meanwhile.
		t.Errorf("resource suite on the cloud (%s): %v (%d/%d passed); whole output in %s, its end:\n%s\nthe cloud's pods meanwhile:\n%s",
			name, err, passed, len(tests), full, strings.Join(lines[max(0, len(lines)-200):], "\n"),
			strings.Join(podEvents(ctx, t, c, start), "\n"))
	}
}
