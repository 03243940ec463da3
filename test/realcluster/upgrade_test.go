package realcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/config"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// probePeriod is how often the upgrade probe calls each API.
const probePeriod = 500 * time.Millisecond

// probeCallTimeout bounds one probe call: a call that takes longer counts as failed.
const probeCallTimeout = 5 * time.Second

// answerAgainWithin is how long an API failing at the probe's end has to answer again before
// the test fails: one slow answer at the end (a server list past its 5 s on the busy 2 cores)
// is a failed call, counted, not an API that stopped serving.
const answerAgainWithin = time.Minute

// apiProbe calls the cloud's APIs every probePeriod, as a user would through the published
// clouds.yaml, and counts what failed.
type apiProbe struct {
	mu     sync.Mutex
	calls  map[string]int
	failed map[string]int
	// down is when each API's current run of failures began; longest its longest run so far.
	down    map[string]time.Time
	longest map[string]time.Duration
	errs    map[string]string // the last error of each API
}

// publishedCloud is the cloud as a user outside it reaches it: the credentials and endpoint
// options of the clouds.yaml the operator publishes (Secret kupenstack-cloud), and a dialer that
// resolves the endpoints, the cloud's Services in cluster.local, with the cluster's DNS.
type publishedCloud struct {
	auth     gophercloud.AuthOptions
	endpoint gophercloud.EndpointOpts
	dialer   *net.Dialer
}

// readPublishedCloud reads the published clouds.yaml (the cloud named "openstack").
func readPublishedCloud(ctx context.Context, t *testing.T, c *cluster) publishedCloud {
	t.Helper()
	secret, err := c.cs.CoreV1().Secrets(operatorNamespace).Get(ctx, "kupenstack-cloud", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	auth, endpoint, _, err := clouds.Parse(clouds.WithCloudsYAML(bytes.NewReader(secret.Data["clouds.yaml"])), clouds.WithCloudName("openstack"))
	if err != nil {
		t.Fatal(err)
	}
	auth.AllowReauth = true
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(dnsIP, "53"))
	}}
	return publishedCloud{auth: auth, endpoint: endpoint, dialer: &net.Dialer{Timeout: 3 * time.Second, Resolver: resolver}}
}

// connect authenticates through httpClient: with the credentials' own scope for projectID "",
// else as the operator works in a namespace (internal/openstack's authFor), the same admin user
// with a token scoped to that project.
func (p publishedCloud) connect(ctx context.Context, httpClient http.Client, projectID string) (*gophercloud.ProviderClient, error) {
	auth := p.auth
	if projectID != "" {
		auth.TenantID, auth.TenantName = "", ""
		auth.Scope = &gophercloud.AuthScope{ProjectID: projectID}
	}
	return config.NewProviderClient(ctx, auth, config.WithHTTPClient(httpClient))
}

// probeCalls are the probe's calls, by API: a token (a new authentication each time), and a
// list each of servers, networks and images with the admin's token.
func probeCalls(ctx context.Context, t *testing.T, c *cluster) map[string]func(context.Context) error {
	t.Helper()
	cloud := readPublishedCloud(ctx, t, c)
	httpClient := http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: cloud.dialer.DialContext, DisableKeepAlives: true}}
	provider, err := cloud.connect(ctx, httpClient, "")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := cloud.endpoint
	nova, err := openstack.NewComputeV2(provider, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	neutron, err := openstack.NewNetworkV2(provider, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	glance, err := openstack.NewImageV2(provider, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]func(context.Context) error{
		"token": func(ctx context.Context) error {
			_, err := cloud.connect(ctx, httpClient, "")
			return err
		},
		"servers": func(ctx context.Context) error {
			_, err := servers.List(nova, servers.ListOpts{AllTenants: true}).AllPages(ctx)
			return err
		},
		"networks": func(ctx context.Context) error {
			_, err := networks.List(neutron, networks.ListOpts{}).AllPages(ctx)
			return err
		},
		"images": func(ctx context.Context) error {
			_, err := images.List(glance, images.ListOpts{}).AllPages(ctx)
			return err
		},
	}
}

// start calls every API every probePeriod until ctx ends; each API's calls run one at a time,
// the APIs side by side. The returned func waits for the last calls.
func (p *apiProbe) start(ctx context.Context, calls map[string]func(context.Context) error) func() {
	p.calls, p.failed, p.down = map[string]int{}, map[string]int{}, map[string]time.Time{}
	p.longest, p.errs = map[string]time.Duration{}, map[string]string{}
	var wg sync.WaitGroup
	for name, call := range calls {
		wg.Go(func() {
			tick := time.NewTicker(probePeriod)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				err := callOnce(ctx, call)
				if ctx.Err() != nil {
					// The probe's end: a call it cut short says nothing about the API; one
					// that answered all the same (a VM cycle runs on past the end) does, and
					// closes an outage that began before it.
					if err == nil {
						p.record(name, nil, time.Now())
					}
					return
				}
				p.record(name, err, time.Now())
			}
		})
	}
	return wg.Wait
}

func (p *apiProbe) record(name string, err error, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[name]++
	if err != nil {
		p.failed[name]++
		p.errs[name] = err.Error()
		if p.down[name].IsZero() {
			p.down[name] = at
		}
		return
	}
	if began := p.down[name]; !began.IsZero() {
		p.longest[name] = max(p.longest[name], at.Sub(began))
		p.down[name] = time.Time{}
	}
}

// report is one line per API: calls, failed calls and the longest outage.
func (p *apiProbe) report() (string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	failed := 0
	for _, name := range slices.Sorted(maps.Keys(p.calls)) {
		fmt.Fprintf(&b, "%s: %d calls, %d failed, longest outage %s", name, p.calls[name], p.failed[name],
			p.longest[name].Round(100*time.Millisecond))
		if !p.down[name].IsZero() {
			fmt.Fprintf(&b, " (still failing)")
		}
		if e := p.errs[name]; e != "" {
			fmt.Fprintf(&b, "; last error: %.200s", e)
		}
		b.WriteString("\n")
		failed += p.failed[name]
	}
	return b.String(), failed
}

// componentRevisions are the deployed Helm revision of every OpenstackComponent.
func componentRevisions(ctx context.Context, t *testing.T, cl client.Client) map[string]int32 {
	t.Helper()
	var list kupenstackv1.OpenstackComponentList
	if err := cl.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]int32{}
	for _, oc := range list.Items {
		out[oc.Name] = oc.Status.Revision
	}
	return out
}

// oneSettingUpgrade: one setting of glance changed in the profile (its API's image member
// quota), twice: first with the charts' own rolling update (maxUnavailable 1, set back by the
// profile's values), then with KupenStack's (maxUnavailable 0: docs/lcm.md, "API pods replaced
// without downtime"). Each time the operator upgrades glance's release and no other (every other
// component keeps its revision), and a probe calls the cloud's APIs every half second from before
// the change until glance is Ready again; the failed calls and longest outage per API are
// reported, the two side by side (the goal is none), and every API answers at the end.
// The charts' rolling update is a comparison for docs/benchmarks.md, not a test of KupenStack:
// only with KUPENSTACK_UPGRADE_COMPARE=1 (make bench-cloud), which keeps make test's time.
func oneSettingUpgrade(ctx context.Context, t *testing.T, c *cluster, cl client.Client, profile *kupenstackv1.OpenstackCloudConfigurationProfile) {
	t.Helper()
	calls, cleanup := upgradeProbeCalls(ctx, t, c)
	defer cleanup()
	if os.Getenv("KUPENSTACK_UPGRADE_COMPARE") == "1" {
		charts := glanceUpgrade(ctx, t, c, cl, profile, calls, 200, map[string]any{"lifecycle": map[string]any{
			"upgrades": map[string]any{"deployments": map[string]any{"rolling_update": map[string]any{"max_unavailable": 1}}}}})
		t.Logf("upgrade, one glance setting changed, with the charts' maxUnavailable 1:\n%s", charts)
	}
	ours := glanceUpgrade(ctx, t, c, cl, profile, calls, 300, nil)
	t.Logf("upgrade, one glance setting changed, with KupenStack's maxUnavailable 0:\n%s", ours)
}

// glanceUpgrade sets glance's image member quota to quota and its values' pod section to pod (nil:
// none), waits for the one upgrade of glance it makes, and returns the probe's report of it.
func glanceUpgrade(ctx context.Context, t *testing.T, c *cluster, cl client.Client, profile *kupenstackv1.OpenstackCloudConfigurationProfile,
	calls map[string]func(context.Context) error, quota int, pod map[string]any) string {
	t.Helper()
	before := componentRevisions(ctx, t, cl)
	var took time.Duration
	report, failed := probed(ctx, t, c, calls, func() {
		start := time.Now()
		setGlanceQuota(ctx, t, cl, profile, quota, pod)
		waitGlanceUpgraded(ctx, t, cl, before["glance"])
		took = time.Since(start)
	})
	revisionsChanged(t, before, componentRevisions(ctx, t, cl), "glance", 1)
	return fmt.Sprintf("glance upgraded and Ready %s after the change; %d failed calls\n%s", took.Round(time.Second), failed, report)
}

// setGlanceQuota sets glance's image member quota to quota and its values' pod section to pod
// (nil: none).
func setGlanceQuota(ctx context.Context, t *testing.T, cl client.Client, profile *kupenstackv1.OpenstackCloudConfigurationProfile, quota int, pod map[string]any) {
	t.Helper()
	changeGlance(ctx, t, cl, profile, func(_ *kupenstackv1.ComponentProfile, values map[string]any) {
		conf, _ := values["conf"].(map[string]any)
		if conf == nil {
			conf = map[string]any{}
		}
		conf["glance"] = map[string]any{"DEFAULT": map[string]any{"image_member_quota": quota}}
		values["conf"] = conf
		if pod == nil {
			delete(values, "pod")
		} else {
			values["pod"] = pod
		}
	})
}

// waitGlanceUpgraded waits until glance runs a revision newer than before, Ready for its
// current generation.
func waitGlanceUpgraded(ctx context.Context, t *testing.T, cl client.Client, before int32) {
	t.Helper()
	var glance kupenstackv1.OpenstackComponent
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKey{Name: "glance"}, &glance); err != nil {
			return false, nil
		}
		return glance.Status.Revision > before && glance.Status.ObservedGeneration == glance.Generation &&
			meta.IsStatusConditionTrue(glance.Status.Conditions, kupenstackv1.ConditionReady), nil
	}); err != nil {
		t.Fatalf("glance not upgraded and Ready after its setting changed: revision %d (was %d), %+v",
			glance.Status.Revision, before, glance.Status.Conditions)
	}
}

// probed runs step with the probe calling the cloud's APIs from 5 s before it to 5 s after, fails
// the test if an API failing at the end does not answer again within answerAgainWithin, and
// returns the probe's report and its count of failed calls.
func probed(ctx context.Context, t *testing.T, c *cluster, calls map[string]func(context.Context) error, step func()) (string, int) {
	t.Helper()
	began := time.Now()
	probeCtx, stopProbe := context.WithCancel(ctx)
	probe := &apiProbe{}
	wait4 := probe.start(probeCtx, calls)
	defer func() { stopProbe(); wait4() }()
	time.Sleep(5 * time.Second) // the cloud answering before the step
	step()
	time.Sleep(5 * time.Second) // and after it
	stopProbe()
	wait4()
	ended := time.Now()
	for name, down := range probe.down {
		if down.IsZero() {
			continue
		}
		since := ended.Sub(down).Round(time.Second)
		if err := answersAgain(ctx, calls[name]); err != nil {
			t.Errorf("%s: failing since %s before the probe's end and for %s after it: %v", name, since, answerAgainWithin, err)
		} else {
			t.Logf("%s: failing at the probe's end (since %s before it); answered again %s after it",
				name, since, time.Since(ended).Round(time.Second))
		}
	}
	report, failed := probe.report()
	if failed > 0 {
		// What the pods went through meanwhile: the first place to look for the cause.
		report += "the cloud's pods meanwhile:\n" + strings.Join(podEvents(ctx, t, c, began), "\n") + "\n"
	}
	return report, failed
}

// callOnce makes one probe call, bounded by probeCallTimeout.
func callOnce(ctx context.Context, call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, probeCallTimeout)
	defer cancel()
	return call(ctx)
}

// answersAgain calls call every probePeriod until it answers within probeCallTimeout, for
// answerAgainWithin at most; the last error if it never does.
func answersAgain(ctx context.Context, call func(context.Context) error) error {
	var last error
	for deadline := time.Now().Add(answerAgainWithin); time.Now().Before(deadline); time.Sleep(probePeriod) {
		if last = callOnce(ctx, call); last == nil {
			return nil
		}
	}
	return last
}

// podEvents are the Events of the cloud's pods since since, oldest first, the routine ones
// (scheduled, image present, container created) left out.
func podEvents(ctx context.Context, t *testing.T, c *cluster, since time.Time) []string {
	t.Helper()
	list, err := c.cs.EventsV1().Events(cloudNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{"listing events: " + err.Error()}
	}
	slices.SortFunc(list.Items, func(a, b eventsv1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind != "Pod" || eventTime(e).Before(since) || slices.Contains([]string{"Scheduled", "Pulled", "Created"}, e.Reason) {
			continue
		}
		out = append(out, fmt.Sprintf("  %+.0fs %s %s: %.160s", eventTime(e).Sub(since).Seconds(), e.Regarding.Name, e.Reason, e.Note))
	}
	return out
}

// eventTime is when an Event (of either API) was last seen.
func eventTime(e eventsv1.Event) time.Time {
	switch {
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.DeprecatedLastTimestamp.IsZero():
		return e.DeprecatedLastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// revisionsChanged checks that only component's revision moved, by exactly want.
func revisionsChanged(t *testing.T, before, after map[string]int32, component string, want int32) {
	t.Helper()
	for name, rev := range after {
		switch {
		case name == component && rev != before[name]+want:
			t.Errorf("%s: revision %d → %d, want %d more", name, before[name], rev, want)
		case name != component && rev != before[name]:
			t.Errorf("%s: revision %d → %d, but only %s was changed", name, before[name], rev, component)
		}
	}
}

// changeGlance applies change to glance's part of the profile (its values decoded) and updates
// the profile, retrying on conflicts.
func changeGlance(ctx context.Context, t *testing.T, cl client.Client, profile *kupenstackv1.OpenstackCloudConfigurationProfile,
	change func(cp *kupenstackv1.ComponentProfile, values map[string]any)) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(profile), profile); err != nil {
			return err
		}
		cp := profile.Spec.Components["glance"]
		values := map[string]any{}
		if cp.Values != nil {
			if err := json.Unmarshal(cp.Values.Raw, &values); err != nil {
				return err
			}
		}
		change(&cp, values)
		raw, err := json.Marshal(values)
		if err != nil {
			return err
		}
		cp.Values = &runtime.RawExtension{Raw: raw}
		profile.Spec.Components["glance"] = cp
		return cl.Update(ctx, profile)
	}); err != nil {
		t.Fatal(err)
	}
}
