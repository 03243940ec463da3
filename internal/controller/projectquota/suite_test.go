package projectquota

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// fakeService is one service's quotas in memory: what the API returns and accepts, used to make
// the cases a real cloud cannot be made to produce on demand (refusals, a missing service); the
// controller runs against the real cloud in test/e2e.
type fakeService struct {
	mu       sync.Mutex
	defaults Limits
	limits   map[string]Limits   // by project
	inUse    Usage               // every project's usage
	sets     map[string][]Limits // what each Set asked for, by project
	resets   []string            // projects reset
	getErr   error               // returned by Get while set
	setErr   error               // returned by Set while set
}

func newFake(defaults Limits) *fakeService {
	return &fakeService{defaults: defaults, limits: map[string]Limits{}, inUse: Usage{}, sets: map[string][]Limits{}}
}

func (f *fakeService) Get(_ context.Context, projectID string) (Usage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.getErr != nil {
		return nil, f.getErr
	}
	out := Usage{}
	for name, v := range f.defaults {
		if l, ok := f.limits[projectID][name]; ok {
			v = l
		}
		out[name] = Used{Limit: v, InUse: f.inUse[name].InUse}
	}
	return out, nil
}

func (f *fakeService) Set(_ context.Context, projectID string, l Limits) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.setErr != nil {
		return f.setErr
	}
	f.sets[projectID] = append(f.sets[projectID], maps.Clone(l))
	if f.limits[projectID] == nil {
		f.limits[projectID] = Limits{}
	}
	maps.Copy(f.limits[projectID], l)
	return nil
}

func (f *fakeService) Reset(_ context.Context, projectID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resets = append(f.resets, projectID)
	delete(f.limits, projectID)
	return nil
}

// limit is projectID's limit called name, as the service has it now.
func (f *fakeService) limit(projectID, name string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l, ok := f.limits[projectID][name]; ok {
		return l
	}
	return f.defaults[name]
}

// change sets a limit behind the controller's back.
func (f *fakeService) change(projectID, name string, v int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.limits[projectID] == nil {
		f.limits[projectID] = Limits{}
	}
	f.limits[projectID][name] = v
}

func (f *fakeService) failGet(err error) { f.mu.Lock(); f.getErr = err; f.mu.Unlock() }
func (f *fakeService) failSet(err error) { f.mu.Lock(); f.setErr = err; f.mu.Unlock() }

// calls are the Sets made for projectID, and whether it was reset.
func (f *fakeService) calls(projectID string) ([]Limits, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Limits(nil), f.sets[projectID]...), slices.Contains(f.resets, projectID)
}

// use sets how much of a limit every project uses.
func (f *fakeService) use(name string, n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inUse[name] = Used{InUse: n}
}

// The cloud's defaults, as the all-in-one has them.
var (
	compute = newFake(Limits{"instances": 100, "cores": 400, "ram": 819200, "server_groups": 10, "server_group_members": 10,
		"key_pairs": 1000, "metadata_items": 128})
	network = newFake(Limits{"network": 100, "subnet": 100, "port": 500, "router": 10, "floatingip": 50,
		"security_group": 10, "security_group_rule": 100, "rbac_policy": 10})
	volume = newFake(Limits{"volumes": 10, "gigabytes": 1000, "snapshots": 10, "backups": 10})

	env = testenv.New(func(mgr ctrl.Manager) error {
		return (&Reconciler{
			Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(ControllerName),
			Services:     Services{Compute: compute, Network: network, Volume: volume},
			ResyncPeriod: time.Hour,
		}).SetupWithManager(mgr)
	})
)

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

var nsCount int

// namespace creates a namespace (no project controller runs here: see readyProject).
func namespace(t *testing.T) string {
	t.Helper()
	env.Require(t)
	nsCount++
	ns := fmt.Sprintf("quota-%d", nsCount)
	if err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// readyProject waits for the namespace's Project (the quota controller makes it) and gives it
// the status the project controller would, returning its OpenStack ID.
func readyProject(t *testing.T, ns string) string {
	t.Helper()
	var p kupenstackv1.Project
	eventually(t, "the namespace's Project", func() error {
		return env.Client.Get(env.Ctx, client.ObjectKey{Name: ns}, &p)
	})
	return env.MarkProjectReady(t, &p)
}

func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, what, cond)
}

// waitQuota waits until the ProjectQuota called name passes check and returns it.
func waitQuota(t *testing.T, name, what string, check func(*kupenstackv1.ProjectQuota) error) *kupenstackv1.ProjectQuota {
	t.Helper()
	var q kupenstackv1.ProjectQuota
	eventually(t, what, func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: name}, &q); err != nil {
			return err
		}
		return check(&q)
	})
	return &q
}

func ready(q *kupenstackv1.ProjectQuota) error {
	if !conditions.IsReady(q.Status.Conditions, q.Generation) {
		return fmt.Errorf("not ready: %+v", q.Status.Conditions)
	}
	return nil
}

// eventsOf counts the Events of each reason recorded for obj, and returns their messages.
func eventsOf(t *testing.T, obj client.Object) (map[string]int, []string) {
	t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(env.Ctx, &list); err != nil {
		t.Fatal(err)
	}
	count, notes := map[string]int{}, []string(nil)
	for _, e := range list.Items {
		if e.Regarding.UID == obj.GetUID() {
			count[e.Reason]++
			notes = append(notes, e.Reason+": "+e.Note)
		}
	}
	return count, notes
}

// eventNoted waits until an event of obj reads "<reason>: <note>" containing want, and returns
// the count of obj's events by reason then: the recorder writes events in the background, so a
// pass's events can reach the API server after its status does.
func eventNoted(t *testing.T, obj client.Object, want string) map[string]int {
	t.Helper()
	var count map[string]int
	eventually(t, "an event saying "+want, func() error {
		var notes []string
		count, notes = eventsOf(t, obj)
		if !strings.Contains(strings.Join(notes, "\n"), want) {
			return fmt.Errorf("events %q", notes)
		}
		return nil
	})
	return count
}

func ptr(v int64) *int64 { return &v }

// badRequest is how gophercloud reports a 400.
func badRequest(msg string) error {
	return gophercloud.ErrUnexpectedResponseCode{Actual: 400, Body: []byte(msg)}
}
