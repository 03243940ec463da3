package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/testutil/metricstest"
)

// fieldDrift is one mutable field of one kind, changed in OpenStack behind the operator's back.
// Each kind's file adds its fields to the table with addFieldDrifts.
type fieldDrift struct {
	kind string
	// field is the spec path the kind's Diff names (and the DriftRepaired Event and the
	// kupenstack_drift_repairs_total{field} label carry).
	field string
	// objects makes the object under test, last, after whatever it needs, in namespace ns (for a
	// cluster-scoped kind, name it after ns). The table gives the object spec.resyncPeriod 2s.
	objects func(ns string) []client.Object
	// change makes the out-of-band change to the object's resource (obj is Ready, its status
	// read back), with the admin's clients.
	change func(ctx context.Context, c driftClients, obj generic.Object) error
	// repaired says why OpenStack does not have the spec's value again yet (nil once it has).
	repaired func(ctx context.Context, c driftClients, obj generic.Object) error
	// degradedReason, when set, says that OpenStack cannot change the field back without
	// re-creating the resource: the object must go Degraded with this reason instead.
	degradedReason string
}

// driftClients are the admin's clients for out-of-band changes.
type driftClients struct {
	osClients      // neutron, nova
	glance, cinder *gophercloud.ServiceClient
}

func newDriftClients(t *testing.T) driftClients {
	t.Helper()
	provider, cloud := connect(t)
	glance, err := gcopenstack.NewImageV2(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	cinder, err := gcopenstack.NewBlockStorageV3(provider, cloud.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return driftClients{osClients: adminClients(t), glance: glance, cinder: cinder}
}

var (
	fieldDriftsMu sync.Mutex
	fieldDrifts   []fieldDrift
)

// addFieldDrifts adds a kind's cases to the table (from its file's init).
func addFieldDrifts(cases ...fieldDrift) {
	fieldDriftsMu.Lock()
	defer fieldDriftsMu.Unlock()
	fieldDrifts = append(fieldDrifts, cases...)
}

// TestOutOfBandChangeRepaired, for every mutable field of every kind: a change made in OpenStack
// behind the operator's back is set back within the object's resync period, with a
// DriftRepaired Event naming the field and a count in kupenstack_drift_repairs_total{kind,field}.
func TestOutOfBandChangeRepaired(t *testing.T) {
	c := newDriftClients(t)
	cases := slices.Clone(fieldDrifts)
	slices.SortFunc(cases, func(a, b fieldDrift) int { return strings.Compare(a.kind+"/"+a.field, b.kind+"/"+b.field) })
	parallel(t)
	// The cases wait on OpenStack, not on this machine: outOfBandConcurrency run at a time,
	// whatever -parallel (the machine's cores) says for the rest of the suite.
	sem := make(chan struct{}, outOfBandConcurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, d := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(d.kind+"/"+d.field, func(t *testing.T) { runFieldDrift(t, c, d) })
		}()
	}
}

// outOfBandConcurrency is how many out-of-band cases run at once.
const outOfBandConcurrency = 6

// runFieldDrift is one case of TestOutOfBandChangeRepaired.
func runFieldDrift(t *testing.T, c driftClients, d fieldDrift) {
	ctx := env.Ctx
	ns := newNamespace(t)
	objs := d.objects(ns)
	obj := objs[len(objs)-1].(generic.Object)
	obj.GetManagedSpec().ResyncPeriod = &kupenstackv1.Duration{Duration: 2 * time.Second}
	create(t, objs...)
	for _, o := range objs {
		waitReady(t, o.(generic.Object))
	}
	before := metricstest.Sum(t, "kupenstack_drift_repairs_total", map[string]string{"kind": d.kind, "field": d.field})
	start := time.Now()
	if err := d.change(ctx, c, obj); err != nil {
		t.Fatalf("changing %s out of band: %v", d.field, err)
	}
	if d.degradedReason != "" {
		eventually(t, d.kind+" Degraded "+d.degradedReason, func() error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			for _, cond := range obj.GetManagedStatus().Conditions {
				if cond.Type == kupenstackv1.ConditionDegraded && cond.Status == "True" && cond.Reason == d.degradedReason {
					return nil
				}
			}
			return fmt.Errorf("conditions %+v", obj.GetManagedStatus().Conditions)
		})
	} else {
		eventually(t, d.field+" set back", func() error {
			if err := d.repaired(ctx, c, obj); err != nil {
				return err
			}
			if !driftRepairedEvent(t, obj, d.field, start) {
				return fmt.Errorf("no DriftRepaired Event naming %s yet", d.field)
			}
			return nil
		})
		if after := metricstest.Sum(t, "kupenstack_drift_repairs_total", map[string]string{"kind": d.kind, "field": d.field}); after <= before {
			t.Errorf("kupenstack_drift_repairs_total{kind=%q,field=%q} stayed at %v", d.kind, d.field, after)
		}
	}
	slices.Reverse(objs)
	deleteAll(t, ns, kindCaseClusterScoped(obj), objs...)
}

// kindCaseClusterScoped says whether obj's kind is cluster-scoped (it has no namespace).
func kindCaseClusterScoped(obj client.Object) bool { return obj.GetNamespace() == "" }

// driftRepairedEvent says whether obj has a DriftRepaired Event since start naming field.
func driftRepairedEvent(t *testing.T, obj client.Object, field string, start time.Time) bool {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(env.Ctx, &list); err != nil {
		t.Fatal(err)
	}
	for _, e := range list.Items {
		last := e.EventTime.Time
		if e.Series != nil {
			last = e.Series.LastObservedTime.Time
		}
		if e.Regarding.UID == obj.GetUID() && e.Reason == "DriftRepaired" && last.After(start) &&
			slices.Contains(strings.Split(e.Note[strings.LastIndex(e.Note, ": ")+2:], ", "), field) {
			return true
		}
	}
	return false
}
