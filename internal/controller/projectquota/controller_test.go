package projectquota

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/testutil/metricstest"
)

func create(t *testing.T, q *kupenstackv1.ProjectQuota) {
	t.Helper()
	if err := env.Client.Create(env.Ctx, q); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, q) })
}

func quotaFor(ns string, spec kupenstackv1.ProjectQuotaSpec) *kupenstackv1.ProjectQuota {
	spec.Namespace = ns
	return &kupenstackv1.ProjectQuota{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: spec}
}

func progressing(contains string) func(*kupenstackv1.ProjectQuota) error {
	return func(q *kupenstackv1.ProjectQuota) error {
		c := meta.FindStatusCondition(q.Status.Conditions, kupenstackv1.ConditionProgressing)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, contains) {
			return fmt.Errorf("want Progressing %q, conditions %+v", contains, q.Status.Conditions)
		}
		return nil
	}
}

func degraded(reason, contains string) func(*kupenstackv1.ProjectQuota) error {
	return func(q *kupenstackv1.ProjectQuota) error {
		c := meta.FindStatusCondition(q.Status.Conditions, kupenstackv1.ConditionDegraded)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason || !strings.Contains(c.Message, contains) ||
			c.ObservedGeneration != q.Generation {
			return fmt.Errorf("want Degraded %s %q, conditions %+v", reason, contains, q.Status.Conditions)
		}
		return nil
	}
}

// TestQuotaSetAndShown: the limits the spec sets, and only those, are set in the project; the
// status shows every limit of every service with its usage, and an Event says what changed.
// A spec change is applied the same way.
func TestQuotaSetAndShown(t *testing.T) {
	ns := namespace(t)
	compute.use("instances", 2)
	network.use("port", 7)
	q := quotaFor(ns, kupenstackv1.ProjectQuotaSpec{
		Compute: &kupenstackv1.ComputeQuota{Instances: ptr(5), RAMMiB: ptr(2048)},
		Network: &kupenstackv1.NetworkQuota{FloatingIPs: ptr(0), Ports: ptr(-1)},
	})
	create(t, q)
	// The namespace had no Project: the quota made it, and waits for it.
	waitQuota(t, ns, "waiting for the project", progressing("waiting for the OpenStack project of namespace "+ns))
	project := readyProject(t, ns)
	var p kupenstackv1.Project
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: ns}, &p); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(&p); ref == nil || ref.Kind != "Namespace" || ref.Name != ns {
		t.Errorf("the Project the quota made is not owned by its namespace: %+v", p.OwnerReferences)
	}
	got := waitQuota(t, ns, "ready", ready)

	if sets, _ := compute.calls(project); !reflect.DeepEqual(sets, []Limits{{"instances": 5, "ram": 2048}}) {
		t.Errorf("compute sets %v, want only the declared limits", sets)
	}
	if sets, _ := network.calls(project); !reflect.DeepEqual(sets, []Limits{{"floatingip": 0, "port": -1}}) {
		t.Errorf("network sets %v, want only the declared limits", sets)
	}
	if sets, _ := volume.calls(project); len(sets) != 0 {
		t.Errorf("volume sets %v without a volume section", sets)
	}
	st := got.Status
	if st.ProjectID != project || st.LastSyncTime == nil || st.Compute == nil || st.Network == nil || st.Volume == nil {
		t.Fatalf("status %+v", st)
	}
	for what, pair := range map[string][2]kupenstackv1.QuotaUsage{
		"compute.instances":  {st.Compute.Instances, {Limit: 5, InUse: 2}},
		"compute.ramMiB":     {st.Compute.RAMMiB, {Limit: 2048}},
		"compute.cores":      {st.Compute.Cores, {Limit: 400}}, // not declared: OpenStack's own
		"network.ports":      {st.Network.Ports, {Limit: -1, InUse: 7}},
		"network.floatingIP": {st.Network.FloatingIPs, {Limit: 0}},
		"volume.gigabytes":   {st.Volume.Gigabytes, {Limit: 1000}},
	} {
		if pair[0] != pair[1] {
			t.Errorf("status %s = %+v, want %+v", what, pair[0], pair[1])
		}
	}
	eventNoted(t, got, "Updated: set the quota of project "+project+": compute.instances 100 → 5, compute.ramMiB 819200 → 2048, network.")

	// Raised by the admin.
	got.Spec.Compute.Instances = ptr(8)
	if err := env.Client.Update(env.Ctx, got); err != nil {
		t.Fatal(err)
	}
	waitQuota(t, ns, "raised", func(q *kupenstackv1.ProjectQuota) error {
		if err := ready(q); err != nil {
			return err
		}
		if l := q.Status.Compute.Instances.Limit; l != 8 || compute.limit(project, "instances") != 8 {
			return fmt.Errorf("instances %d in the status, %d in OpenStack", l, compute.limit(project, "instances"))
		}
		return nil
	})
}

// TestDriftRepaired: a limit changed in OpenStack behind the operator's back is set back at the
// next resync, with an Event that says so, and counted as a drift repair.
func TestDriftRepaired(t *testing.T) {
	ns := namespace(t)
	q := quotaFor(ns, kupenstackv1.ProjectQuotaSpec{
		Network:      &kupenstackv1.NetworkQuota{Networks: ptr(3)},
		ResyncPeriod: &kupenstackv1.Duration{Duration: time.Second},
	})
	create(t, q)
	project := readyProject(t, ns)
	waitQuota(t, ns, "ready", ready)
	repairs := metricstest.Sum(t, "kupenstack_drift_repairs_total", map[string]string{"kind": kind})
	network.change(project, "network", 100)
	eventually(t, "drift repaired", func() error {
		if l := network.limit(project, "network"); l != 3 {
			return fmt.Errorf("network limit %d", l)
		}
		if _, notes := eventsOf(t, q); !strings.Contains(strings.Join(notes, "\n"),
			"Updated: the quota of project "+project+" was changed outside KupenStack; set it back: network.networks 100 → 3") {
			return fmt.Errorf("events %q", notes)
		}
		return nil
	})
	if d := metricstest.Sum(t, "kupenstack_drift_repairs_total", map[string]string{"kind": kind}) - repairs; d < 1 {
		t.Errorf("drift repairs counted %v", d)
	}
}

// TestWaitsForTheNamespace: a quota declared before its namespace waits for it, then applies.
func TestWaitsForTheNamespace(t *testing.T) {
	env.Require(t)
	nsCount++
	ns := fmt.Sprintf("quota-later-%d", nsCount)
	q := quotaFor(ns, kupenstackv1.ProjectQuotaSpec{Compute: &kupenstackv1.ComputeQuota{Cores: ptr(16)}})
	create(t, q)
	waitQuota(t, ns, "waiting for the namespace", progressing("waiting for namespace "+ns+" to be created"))
	if got := namespaceNamed(t, ns); got != ns {
		t.Fatal(got)
	}
	project := readyProject(t, ns)
	waitQuota(t, ns, "ready", ready)
	if l := compute.limit(project, "cores"); l != 16 {
		t.Errorf("cores %d", l)
	}
}

func namespaceNamed(t *testing.T, name string) string {
	t.Helper()
	if err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestRefusedThenFixed: a limit OpenStack refuses leaves the quota Degraded with OpenStack's
// message (InvalidConfiguration, a Warning Event) until the spec changes; what was set before
// the refusal has its Event all the same.
func TestRefusedThenFixed(t *testing.T) {
	ns := namespace(t)
	network.failSet(badRequest("Invalid input for operation: 'router' quota over the cloud's maximum"))
	defer network.failSet(nil)
	q := quotaFor(ns, kupenstackv1.ProjectQuotaSpec{
		Compute: &kupenstackv1.ComputeQuota{Instances: ptr(7)},
		Network: &kupenstackv1.NetworkQuota{Routers: ptr(1000000)},
	})
	create(t, q)
	project := readyProject(t, ns)
	got := waitQuota(t, ns, "degraded", degraded(kupenstackv1.ReasonInvalidConfiguration, "'router' quota over the cloud's maximum"))
	if c := meta.FindStatusCondition(got.Status.Conditions, kupenstackv1.ConditionReady); c.Status != metav1.ConditionFalse {
		t.Errorf("Ready %+v", c)
	}
	// The Warning, and the Event of the compute limit set before the refusal (a CI run read the
	// events once, before the recorder had written that one).
	eventNoted(t, got, kupenstackv1.ReasonInvalidConfiguration+": ")
	eventNoted(t, got, "Updated: set the quota of project "+project+": compute.instances 100 → 7")
	network.failSet(nil)
	got.Spec.Network.Routers = ptr(20)
	if err := env.Client.Update(env.Ctx, got); err != nil {
		t.Fatal(err)
	}
	waitQuota(t, ns, "ready after the fix", ready)
}

// TestTransientErrorRetried: OpenStack not answering is a TransientError, retried with backoff
// until it answers.
func TestTransientErrorRetried(t *testing.T) {
	ns := namespace(t)
	compute.failGet(gophercloud.ErrUnexpectedResponseCode{Actual: 503})
	defer compute.failGet(nil)
	create(t, quotaFor(ns, kupenstackv1.ProjectQuotaSpec{Compute: &kupenstackv1.ComputeQuota{Instances: ptr(3)}}))
	readyProject(t, ns)
	waitQuota(t, ns, "transient error", degraded(kupenstackv1.ReasonTransientError, "503"))
	compute.failGet(nil)
	waitQuota(t, ns, "ready once OpenStack answers", ready)
}

// TestCloudWithoutBlockStorage: a cloud without Cinder has no volume quota to show; declaring
// one is an error the quota reports.
func TestCloudWithoutBlockStorage(t *testing.T) {
	ns := namespace(t)
	volume.failGet(fmt.Errorf("finding the block-storage endpoint: %w", &gophercloud.ErrEndpointNotFound{}))
	defer volume.failGet(nil)
	q := quotaFor(ns, kupenstackv1.ProjectQuotaSpec{Compute: &kupenstackv1.ComputeQuota{Instances: ptr(3)}})
	create(t, q)
	readyProject(t, ns)
	got := waitQuota(t, ns, "ready without block storage", ready)
	if got.Status.Volume != nil || got.Status.Compute == nil {
		t.Errorf("status %+v", got.Status)
	}
	got.Spec.Volume = &kupenstackv1.VolumeQuota{Volumes: ptr(4)}
	if err := env.Client.Update(env.Ctx, got); err != nil {
		t.Fatal(err)
	}
	waitQuota(t, ns, "volume quota without block storage", degraded(kupenstackv1.ReasonTransientError, "block-storage endpoint"))
}

// TestDeleteResetsDeclaredSections: deleting the ProjectQuota resets the services whose section
// it declares to the cloud's defaults, and leaves the others alone.
func TestDeleteResetsDeclaredSections(t *testing.T) {
	ns := namespace(t)
	q := quotaFor(ns, kupenstackv1.ProjectQuotaSpec{
		Compute: &kupenstackv1.ComputeQuota{Instances: ptr(3)},
		Volume:  &kupenstackv1.VolumeQuota{},
	})
	create(t, q)
	project := readyProject(t, ns)
	waitQuota(t, ns, "ready", ready)
	network.change(project, "router", 4) // set by someone else: not the quota's to reset
	if err := env.Client.Delete(env.Ctx, q); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deleted", func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(q), &kupenstackv1.ProjectQuota{}); client.IgnoreNotFound(err) != nil || err == nil {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	for name, f := range map[string]*fakeService{"compute": compute, "volume": volume} {
		if _, reset := f.calls(project); !reset {
			t.Errorf("%s not reset", name)
		}
	}
	if _, reset := network.calls(project); reset || network.limit(project, "router") != 4 {
		t.Errorf("network reset without a network section")
	}
	if l := compute.limit(project, "instances"); l != 100 {
		t.Errorf("instances %d after the reset, want the default", l)
	}
	if count := eventNoted(t, q, "reset the compute, volume quota of project "+project+" to the cloud's defaults"); count["Reset"] != 1 {
		t.Errorf("%d Reset events, want 1", count["Reset"])
	}
}
