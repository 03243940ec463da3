package values

import (
	"slices"
	"strings"
)

// A release upgrade's new pods must not start before the new release's migrations. OpenStack-Helm
// runs db-sync, the Keystone users and the like as post-install/post-upgrade hooks, which Helm
// starts only after it has applied the new Deployments and DaemonSets: the new pods' dep-check
// finds the previous release's run of those Jobs Complete and starts the new code on the old
// schema. So every pod that waits for the chart's db-sync also waits for a gate: a Job named after
// the OpenStack release, which the component loop creates once the release's hook Jobs are done
// (before a first install, at once: the hook Jobs do not exist yet, so the pods wait for them
// anyway). See docs/lcm.md, "Release upgrades".

// gateInfix separates the chart from the release in a gate's name.
const gateInfix = "-kupenstack-"

// GateName is the gate Job of a chart's pods for an OpenStack release: <chart>-kupenstack-2026-1.
func GateName(chart, release string) string {
	return chart + gateInfix + strings.ReplaceAll(release, ".", "-")
}

// withGate appends the release's gate to the Jobs the component's gated dependencies.static keys
// wait for (the values' own list, else the chart's). A key whose list is empty waits for no Job
// (and its Role may not read Jobs), so it is left alone, as is a list naming the gate already.
func withGate(c Component, release string, chartValues, vals map[string]any) {
	gate := GateName(c.Chart, release)
	for _, key := range c.GateKeys {
		list, given := jobsOf(vals, key)
		if !given {
			list, _ = jobsOf(chartValues, key)
		}
		if len(list) == 0 || slices.ContainsFunc(list, func(j any) bool { return jobName(j) == gate }) {
			continue
		}
		// helm-toolkit renders a list whose first entry is a string as names, anything else as
		// JSON objects ({name: ...} or {labels: ...}).
		var entry any = gate
		if _, named := list[0].(string); !named {
			entry = map[string]any{"name": gate}
		}
		set(vals, append(slices.Clone(list), entry), "dependencies", "static", key, "jobs")
	}
}

func jobsOf(vals map[string]any, key string) ([]any, bool) {
	v, ok := get(vals, "dependencies", "static", key, "jobs")
	list, _ := v.([]any)
	return list, ok
}

func jobName(j any) string {
	switch j := j.(type) {
	case string:
		return j
	case map[string]any:
		s, _ := j["name"].(string)
		return s
	}
	return ""
}

// Gates are the gate Jobs a chart's rendered values make its pods wait for, sorted.
func Gates(chart string, vals map[string]any) []string {
	var out []string
	eachJob(vals, func(name string, _ []any) {
		if isGate(chart, name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	})
	slices.Sort(out)
	return out
}

// GateAwaits are the other Jobs the gated pods wait for (db-sync, the Keystone users...): the
// gate of an upgrade to a new release is created once the new runs of these are Complete.
func GateAwaits(chart string, vals map[string]any) []string {
	var out []string
	eachJob(vals, func(_ string, list []any) {
		if !slices.ContainsFunc(list, func(j any) bool { return isGate(chart, jobName(j)) }) {
			return
		}
		for _, j := range list {
			if n := jobName(j); n != "" && !isGate(chart, n) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	})
	slices.Sort(out)
	return out
}

func isGate(chart, name string) bool {
	rest, ok := strings.CutPrefix(name, chart+gateInfix)
	return ok && rest != ""
}

// eachJob calls f with every Job name of every dependencies.static list, and the list.
func eachJob(vals map[string]any, f func(name string, list []any)) {
	static, _ := get(vals, "dependencies", "static")
	deps, _ := static.(map[string]any)
	for _, key := range sortedKeys(deps) {
		list, _ := jobsOf(vals, key)
		for _, j := range list {
			if n := jobName(j); n != "" {
				f(n, list)
			}
		}
	}
}
