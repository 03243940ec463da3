//go:build bench

package bench

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

const idleNamespaces = 5

// measuredPeriods is how many resync periods one measurement window spans.
const measuredPeriods = 3

// benchIdle: Networks and KeyPairs (half each) spread over 5 namespaces; once all are Ready and
// a period has passed, the operator's OpenStack requests over three resync periods, for each
// object count (ascending: objects are added to reach the next count).
func benchIdle(t *testing.T, cl *cloud, rep *report) {
	counts := slices.Clone(idleCounts)
	slices.Sort(counts)
	var nss []string
	for k := range idleNamespaces {
		ns := newNamespace(t, fmt.Sprintf("bench-idle-%s-%d", runID, k))
		nss = append(nss, ns)
		create(t, &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "net-0000"}})
	}
	for _, ns := range nss {
		cl.unlimit(t, projectID(t, ns))
	}
	have := 1 // objects per namespace so far
	for _, count := range counts {
		per := count / idleNamespaces
		start := time.Now()
		for _, ns := range nss {
			for i := have; i < per; i++ {
				om := metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("net-%04d", i/2)}
				if i%2 == 0 {
					create(t, &kupenstackv1.Network{ObjectMeta: om})
				} else {
					om.Name = fmt.Sprintf("key-%04d", i/2)
					create(t, &kupenstackv1.KeyPair{ObjectMeta: om, Spec: kupenstackv1.KeyPairSpec{PublicKey: publicKey}})
				}
			}
		}
		have = max(have, per)
		waitFor(t, fmt.Sprintf("%d objects Ready", count), 2*time.Second, 30*time.Minute, func() error {
			n := 0
			for _, ns := range nss {
				var nets kupenstackv1.NetworkList
				var keys kupenstackv1.KeyPairList
				if err := env.Client.List(env.Ctx, &nets, client.InNamespace(ns)); err != nil {
					return err
				}
				if err := env.Client.List(env.Ctx, &keys, client.InNamespace(ns)); err != nil {
					return err
				}
				for i := range nets.Items {
					n += boolInt(ready(&nets.Items[i]))
				}
				for i := range keys.Items {
					n += boolInt(ready(&keys.Items[i]))
				}
			}
			if n < have*idleNamespaces {
				return fmt.Errorf("%d of %d Ready", n, have*idleNamespaces)
			}
			return nil
		})
		toReady := time.Since(start)
		t.Logf("%d objects Ready after %s; settling for one period", have*idleNamespaces, toReady)
		time.Sleep(resyncPeriod)
		reqBefore, listBefore := requestCounts(), resyncListCounts()
		window := measuredPeriods * resyncPeriod
		time.Sleep(window)
		row := idleRow{objects: have * idleNamespaces, toReady: toReady, window: window,
			requests: requestCounts().minus(reqBefore), lists: resyncListCounts().minus(listBefore), rssMiB: rssMiB()}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		row.heapMiB = float64(ms.HeapInuse) / (1 << 20)
		t.Logf("idle %d objects: requests over %s: %v; resync lists: %v; RSS %.0f MiB", row.objects, window, row.requests, row.lists, row.rssMiB)
		rep.idle = append(rep.idle, row)
		rep.save(t)
	}
}

type idleRow struct {
	objects         int
	toReady, window time.Duration
	requests, lists counts
	rssMiB, heapMiB float64
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rssMiB is this process's resident set: the operator plus the benchmark driving it (the API
// server and etcd are other processes).
func rssMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb float64
			_, _ = fmt.Sscanf(strings.TrimSpace(rest), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

var _ generic.Object = &kupenstackv1.Network{}
