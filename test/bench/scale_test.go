//go:build bench

package bench

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

var (
	// scaleObjects is how many objects the scale benchmark creates (BENCH_SCALE, 10,000).
	scaleObjects = envInt("BENCH_SCALE", 10000)
	// scaleNamespaces spreads them over this many namespaces (= Keystone projects).
	scaleNamespaces = envInt("BENCH_SCALE_NAMESPACES", 20)
	// scaleNetworkEvery makes every k-th object a Network, the others KeyPairs: Neutron creates
	// a network in about a second on the all-in-one (one API worker), Nova a key pair in a tenth.
	scaleNetworkEvery = envInt("BENCH_SCALE_NETWORK_EVERY", 20)
	// scaleLimit bounds the wait for all objects Ready; a run cut by it reports how many were.
	scaleLimit = envDuration("BENCH_SCALE_LIMIT", 30*time.Minute)
)

type scaleResult struct {
	objects, networks, ready int
	toReady                  time.Duration
	// createToReady: each object's creation timestamp to its Ready condition (1 s resolution).
	readyMedian, readyP99, readyMax time.Duration
	// reconcile: controller-runtime's reconcile_time_seconds per controller, over the whole phase.
	reconcile              map[string]histogramSummary
	peakRSSMiB, heapMiB    float64
	idle                   *idleRow
	limitHit               bool
	createDuration         time.Duration
	requestsDuringConverge counts
}

// benchScale: scaleObjects KeyPairs and Networks over scaleNamespaces namespaces, created at once;
// time until all are Ready, each object's create → Ready latency, the reconcile latency per
// controller, peak RSS, then the steady state as in benchIdle.
func benchScale(t *testing.T, cl *cloud, rep *report) {
	per := (scaleObjects + scaleNamespaces - 1) / scaleNamespaces
	total := per * scaleNamespaces
	res := &scaleResult{objects: total}
	rep.scale = res
	var nss []string
	for k := range scaleNamespaces {
		ns := newNamespace(t, fmt.Sprintf("bench-scale-%s-%d", runID, k))
		nss = append(nss, ns)
		// The first object makes the project, whose quotas are then lifted (100 key pairs and
		// networks by default).
		create(t, &kupenstackv1.KeyPair{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "key-00000"},
			Spec: kupenstackv1.KeyPairSpec{PublicKey: publicKey}})
	}
	for _, ns := range nss {
		cl.unlimit(t, projectID(t, ns))
	}
	reconcileBefore := reconcileHistograms()
	reqBefore := requestCounts()
	peak := startPeakRSS()
	defer peak.stop()
	start := time.Now()
	objs := make([]client.Object, 0, total)
	for i := range total {
		ns := nss[i/per]
		if i%per == 0 {
			continue // key-00000 exists
		}
		om := metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("key-%05d", i%per)}
		if i%scaleNetworkEvery == 0 {
			om.Name = fmt.Sprintf("net-%05d", i%per)
			objs = append(objs, &kupenstackv1.Network{ObjectMeta: om})
			res.networks++
		} else {
			objs = append(objs, &kupenstackv1.KeyPair{ObjectMeta: om, Spec: kupenstackv1.KeyPairSpec{PublicKey: publicKey}})
		}
	}
	// As `kubectl apply` of one big file would: a few requests at a time.
	if err := parallel(len(objs), 8, func(i int) error { return env.Client.Create(env.Ctx, objs[i]) }); err != nil {
		t.Fatal(err)
	}
	res.createDuration = time.Since(start)
	t.Logf("%d objects (%d Networks) created in the API server in %s", total, res.networks, res.createDuration)

	var latencies []time.Duration
	deadline := start.Add(scaleLimit)
	for {
		latencies = latencies[:0]
		ready := 0
		for _, ns := range nss {
			var nets kupenstackv1.NetworkList
			var keys kupenstackv1.KeyPairList
			if err := env.Client.List(env.Ctx, &nets, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			if err := env.Client.List(env.Ctx, &keys, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			var items []generic.Object
			for i := range nets.Items {
				items = append(items, &nets.Items[i])
			}
			for i := range keys.Items {
				items = append(items, &keys.Items[i])
			}
			for _, o := range items {
				if at, ok := readySince(o); ok {
					ready++
					// Not the first object of each namespace, made before the clock started.
					if created := o.GetCreationTimestamp().Time; !created.Before(start.Truncate(time.Second)) {
						latencies = append(latencies, at.Sub(created))
					}
				}
			}
		}
		res.ready, res.toReady = ready, time.Since(start)
		if ready >= total {
			break
		}
		if time.Now().After(deadline) {
			res.limitHit = true
			t.Logf("BENCH_SCALE_LIMIT %s reached: %d of %d Ready", scaleLimit, ready, total)
			break
		}
		t.Logf("%s: %d of %d Ready, RSS %.0f MiB", time.Since(start).Round(time.Second), ready, total, rssMiB())
		time.Sleep(10 * time.Second)
	}
	slices.Sort(latencies)
	if n := len(latencies); n > 0 {
		res.readyMedian, res.readyP99, res.readyMax = latencies[n/2], latencies[min(n-1, n*99/100)], latencies[n-1]
	}
	res.reconcile = reconcileHistograms().minus(reconcileBefore)
	res.requestsDuringConverge = requestCounts().minus(reqBefore)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.heapMiB = float64(ms.HeapInuse) / (1 << 20)
	res.peakRSSMiB = peak.max()
	rep.save(t)
	if res.limitHit {
		return
	}

	t.Logf("all %d Ready after %s; settling for one period", total, res.toReady)
	time.Sleep(resyncPeriod)
	reqBefore, listBefore := requestCounts(), resyncListCounts()
	window := measuredPeriods * resyncPeriod
	time.Sleep(window)
	res.idle = &idleRow{objects: total, toReady: res.toReady, window: window,
		requests: requestCounts().minus(reqBefore), lists: resyncListCounts().minus(listBefore), rssMiB: rssMiB()}
	runtime.ReadMemStats(&ms)
	res.idle.heapMiB = float64(ms.HeapInuse) / (1 << 20)
	res.peakRSSMiB = peak.max()
	rep.save(t)
}

// readySince is when obj became Ready for its current generation.
func readySince(obj generic.Object) (time.Time, bool) {
	for _, c := range obj.GetManagedStatus().Conditions {
		if c.Type == "Ready" && c.Status == "True" && c.ObservedGeneration == obj.GetGeneration() {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// peakRSS samples this process's RSS every second (VmHWM would include the start-up, and the
// envtest set-up before the phase).
type peakRSS struct {
	done chan struct{}
	peak chan float64
}

func startPeakRSS() *peakRSS {
	p := &peakRSS{done: make(chan struct{}), peak: make(chan float64, 1)}
	p.peak <- rssMiB()
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-tick.C:
				v := rssMiB()
				if cur := <-p.peak; cur > v {
					v = cur
				}
				p.peak <- v
			}
		}
	}()
	return p
}

func (p *peakRSS) max() float64 {
	v := <-p.peak
	p.peak <- v
	return v
}

func (p *peakRSS) stop() {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
}

// histogramSummary: count, sum and cumulative bucket counts of one histogram.
type histogramSummary struct {
	count   uint64
	sum     float64
	buckets map[float64]uint64 // upper bound → cumulative count
}

type histograms map[string]histogramSummary

// reconcileHistograms reads controller-runtime's controller_runtime_reconcile_time_seconds by
// controller.
func reconcileHistograms() histograms {
	out := histograms{}
	families, err := metrics.Registry.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_time_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			var name string
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" {
					name = l.GetValue()
				}
			}
			h := m.GetHistogram()
			s := histogramSummary{count: h.GetSampleCount(), sum: h.GetSampleSum(), buckets: map[float64]uint64{}}
			for _, b := range h.GetBucket() {
				s.buckets[b.GetUpperBound()] = b.GetCumulativeCount()
			}
			out[name] = s
		}
	}
	return out
}

func (h histograms) minus(before histograms) histograms {
	out := histograms{}
	for name, s := range h {
		b := before[name]
		d := histogramSummary{count: s.count - b.count, sum: s.sum - b.sum, buckets: map[float64]uint64{}}
		for ub, c := range s.buckets {
			d.buckets[ub] = c - b.buckets[ub]
		}
		if d.count > 0 {
			out[name] = d
		}
	}
	return out
}

// quantile is the upper bound of the bucket holding quantile q (an upper estimate, as
// histogram_quantile without the interpolation).
func (s histogramSummary) quantile(q float64) float64 {
	bounds := slices.Sorted(func(yield func(float64) bool) {
		for ub := range s.buckets {
			if !yield(ub) {
				return
			}
		}
	})
	want := uint64(math.Ceil(q * float64(s.count)))
	for _, ub := range bounds {
		if s.buckets[ub] >= want {
			return ub
		}
	}
	return math.Inf(1)
}
