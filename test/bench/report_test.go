//go:build bench

package bench

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// counts are counter values by label set.
type counts map[string]float64

func (c counts) minus(before counts) counts {
	out := counts{}
	for k, v := range c {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func (c counts) total() float64 {
	var s float64
	for _, v := range c {
		s += v
	}
	return s
}

func (c counts) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, fmt.Sprintf("%s: %g", k, c[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// counter reads a counter family of the operator's registry, keyed by the given labels' values.
func counter(name string, labels ...string) counts {
	out := counts{}
	families, err := metrics.Registry.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			var key []string
			for _, l := range labels {
				key = append(key, have[l])
			}
			out[strings.Join(key, " ")] += m.GetCounter().GetValue()
		}
	}
	return out
}

// requestCounts: the operator's OpenStack requests by service, method and status code.
func requestCounts() counts {
	return counter("kupenstack_openstack_requests_total", "service", "method", "code")
}

// resyncListCounts: the drift check's list calls by kind.
func resyncListCounts() counts { return counter("kupenstack_resync_list_calls_total", "kind") }

func lenList(l client.ObjectList) int { return meta.LenList(l) }

type convergenceResult struct {
	baseCreate, baseDelete, opCreate, opDelete time.Duration
	opCreateCalls, opDeleteCalls               counts
}

type report struct {
	mu          sync.Mutex
	started     time.Time
	convergence *convergenceResult
	heal        *healResult
	idle        []idleRow
	scale       *scaleResult
}

func newReport() *report { return &report{started: time.Now()} }

const (
	beginMarker = "<!-- bench:begin -->"
	endMarker   = "<!-- bench:end -->"
)

// finish prints the report and saves it.
func (r *report) finish(t *testing.T) {
	fmt.Println(r.save(t))
}

// save puts the report so far, with BENCH_OUT set, between the markers of that file (after each
// part, so that a run cut short still leaves what it measured).
func (r *report) save(t *testing.T) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b bytes.Buffer
	r.write(&b, t.Failed())
	out := os.Getenv("BENCH_OUT")
	if out == "" {
		return b.String()
	}
	doc, err := os.ReadFile(out)
	if err != nil {
		t.Errorf("reading %s: %v", out, err)
		return b.String()
	}
	before, rest, ok1 := strings.Cut(string(doc), beginMarker)
	_, after, ok2 := strings.Cut(rest, endMarker)
	if !ok1 || !ok2 {
		t.Errorf("%s has no %s ... %s section", out, beginMarker, endMarker)
		return b.String()
	}
	if err := os.WriteFile(out, []byte(before+beginMarker+"\n"+b.String()+endMarker+after), 0o644); err != nil {
		t.Error(err)
	}
	return b.String()
}

func (r *report) write(b *bytes.Buffer, failed bool) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	cmd := os.Getenv("BENCH_CMD")
	if cmd == "" {
		cmd = "go test -tags bench ./test/bench"
	}
	p("Run of %s UTC, %s; command: `%s`.", r.started.UTC().Format("2006-01-02 15:04"), fmtDur(time.Since(r.started)), cmd)
	if failed {
		p("\n**The run failed part-way; only the parts below were measured.**")
	}
	p("\nMachine: %s; %s. Go %s. Load average at the end: %s.", cpuFacts(), memFacts(), runtime.Version(), loadAvg())
	p("\nOperator settings: `--workers %d`, `--openstack-qps %d --openstack-burst %d` (defaults), `--vm-health-period %s`, `--resync-period %s` (default 10m; short so that several periods fit in the run).",
		workers, defaultQPS, defaultBurst, vmHealthPeriod, resyncPeriod)

	if c := r.convergence; c != nil {
		p("\n### 1. Convergence: N=%d VMs, each with a port (shared network, subnet, security group, key pair)\n", numVMs)
		p("The direct program and the operator run at the same time, each in its own project, so that both see the same load.\n")
		p("| direction | direct gophercloud (%d at a time) | operator (`--workers %d`) | ratio operator/direct | target | met |", workers, workers)
		p("| --- | ---: | ---: | ---: | ---: | --- |")
		for _, row := range []struct {
			name     string
			base, op time.Duration
			calls    counts
		}{{"create → all ACTIVE", c.baseCreate, c.opCreate, c.opCreateCalls}, {"delete → all gone", c.baseDelete, c.opDelete, c.opDeleteCalls}} {
			if row.base == 0 || row.op == 0 {
				p("| %s | %s | %s | not measured | ≤ 1.15× | |", row.name, fmtDur(row.base), fmtDur(row.op))
				continue
			}
			ratio := row.op.Seconds() / row.base.Seconds()
			p("| %s | %s | %s (%g OpenStack requests) | %.2f× | ≤ 1.15× | %s |", row.name, fmtDur(row.base), fmtDur(row.op), row.calls.total(), ratio, yesNo(ratio <= 1.15))
		}
		p("\nThe operator's OpenStack requests (service method code: count):\n")
		p("- create: %s", c.opCreateCalls)
		p("- delete: %s", c.opDeleteCalls)
	}
	if h := r.heal; h != nil && len(h.total) > 0 {
		p("\n### 3. Self-heal: server reset to ERROR → replacement ACTIVE in the object's status (%d VMs, one at a time)\n", len(h.total))
		dm, dx := medianMax(h.detect)
		tm, tx := medianMax(h.total)
		listener := "off"
		if notificationsURL != "" {
			listener = "on"
		}
		p("| `--vm-health-period` | notification listener | detected (restart counted): median / max | replacement ACTIVE: median / max | target | met |")
		p("| --- | --- | ---: | ---: | ---: | --- |")
		p("| %s | %s | %s / %s | %s / %s | ≤ 10 s | %s |", h.period, listener, fmtDur(dm), fmtDur(dx), fmtDur(tm), fmtDur(tx), yesNo(tx <= 10*time.Second))
		var all []string
		for _, d := range h.total {
			all = append(all, fmt.Sprintf("%.1f", d.Seconds()))
		}
		p("\nEach sample (s): %s.", strings.Join(all, ", "))
	}
	if len(r.idle) > 0 {
		p("\n### 2. Steady state: idle Networks and KeyPairs (half each) in %d namespaces (= projects)\n", idleNamespaces)
		p("Measured over %d resync periods (%s) after all objects were Ready and one more period had passed.\n", measuredPeriods, measuredPeriods*resyncPeriod)
		p("| objects | create → all Ready | drift-check list calls per period (by kind) | per kind per project per period | all OpenStack requests per period | target ≤ 1 per kind per project | process RSS / Go heap |")
		p("| ---: | ---: | --- | ---: | ---: | --- | ---: |")
		for _, row := range r.idle {
			per := func(v float64) float64 { return v / measuredPeriods }
			var byKind []string
			worst := 0.0
			for _, k := range slices.Sorted(maps.Keys(row.lists)) {
				byKind = append(byKind, fmt.Sprintf("%s %.1f", k, per(row.lists[k])))
				worst = max(worst, per(row.lists[k])/idleNamespaces)
			}
			p("| %d | %s | %s | %.2f | %.1f | %s | %.0f MiB / %.0f MiB |", row.objects, fmtDur(row.toReady), strings.Join(byKind, ", "), worst,
				per(row.requests.total()), yesNo(worst <= 1 && per(row.requests.total()) <= float64(2*idleNamespaces)), row.rssMiB, row.heapMiB)
		}
		p("\nOpenStack requests in each window (service method code: count):\n")
		for _, row := range r.idle {
			p("- %d objects: %s", row.objects, row.requests)
		}
	}
	r.writeScale(p)
}

func (r *report) writeScale(p func(string, ...any)) {
	s := r.scale
	if s == nil || s.ready == 0 {
		return
	}
	p("\n### 4. Scale: %d objects (%d Networks, %d KeyPairs) in %d namespaces (= projects), created at once\n", s.objects, s.networks, s.objects-s.networks, scaleNamespaces)
	if s.limitHit {
		p("**Cut by BENCH_SCALE_LIMIT (%s): %d of %d objects were Ready.**\n", scaleLimit, s.ready, s.objects)
	}
	p("| objects Ready | created in the API server | create → all Ready | create → Ready per object: median / p99 / max | peak process RSS | Go heap at the end | target RSS ≤ 200 MiB | met |")
	p("| ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
	p("| %d of %d | %s | %s | %s / %s / %s | %.0f MiB | %.0f MiB | ≤ 200 MiB | %s |", s.ready, s.objects, fmtDur(s.createDuration), fmtDur(s.toReady),
		fmtDur(s.readyMedian), fmtDur(s.readyP99), fmtDur(s.readyMax), s.peakRSSMiB, s.heapMiB, yesNo(s.peakRSSMiB <= 200))
	p("\nReconcile passes while converging (controller-runtime's `controller_runtime_reconcile_time_seconds`; quantiles are bucket upper bounds):\n")
	p("| controller | passes | mean | p50 ≤ | p99 ≤ |")
	p("| --- | ---: | ---: | ---: | ---: |")
	for _, name := range slices.Sorted(maps.Keys(s.reconcile)) {
		h := s.reconcile[name]
		p("| %s | %d | %.3f s | %g s | %g s |", name, h.count, h.sum/float64(h.count), h.quantile(0.5), h.quantile(0.99))
	}
	p("\nThe operator's OpenStack requests while converging: %s", s.requestsDuringConverge)
	if row := s.idle; row != nil {
		per := func(v float64) float64 { return v / measuredPeriods }
		var byKind []string
		for _, k := range slices.Sorted(maps.Keys(row.lists)) {
			byKind = append(byKind, fmt.Sprintf("%s %.1f", k, per(row.lists[k])))
		}
		p("\nSteady state afterwards, over %d resync periods (%s): drift-check lists per period %s (%d projects); all OpenStack requests per period %.1f; RSS %.0f MiB, Go heap %.0f MiB.",
			measuredPeriods, row.window, strings.Join(byKind, ", "), scaleNamespaces, per(row.requests.total()), row.rssMiB, row.heapMiB)
		p("\n- requests in the window: %s", row.requests)
	}
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func cpuFacts() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	model, n := "?", 0
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			model, n = strings.TrimSpace(v), n+1
		}
	}
	return fmt.Sprintf("%d × %s (/proc/cpuinfo)", n, model)
}

func memFacts() string {
	data, _ := os.ReadFile("/proc/meminfo")
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb float64
			_, _ = fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
			return fmt.Sprintf("%.1f GiB RAM", kb/(1<<20))
		}
	}
	return "? RAM"
}

func loadAvg() string {
	data, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
