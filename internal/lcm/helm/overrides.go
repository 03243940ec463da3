package helm

import (
	"regexp"

	"helm.sh/helm/v3/pkg/chart"
)

// helm-toolkit's per-node override utilities, and the variable OpenStack-Helm's DaemonSet
// templates pass the DaemonSet's name in.
var (
	overridesCall     = regexp.MustCompile(`include\s+"helm-toolkit\.utils\.daemonset_overrides(_root)?"`)
	daemonSetNameDecl = regexp.MustCompile(`\{\{-?\s*\$daemonset\s*:=\s*"([^"]+)"`)
)

// NodeDaemonSets reads a chart's templates for the DaemonSets that take per-node overrides
// through helm-toolkit (helm-toolkit.utils.daemonset_overrides, or its root form
// daemonset_overrides_root) and returns their keys as helm-toolkit builds them,
// <chart>_<daemonset name> (e.g. neutron_ovs-agent), each with whether it takes the root form.
// It returns nil for a chart that does not use helm-toolkit's utilities.
func NodeDaemonSets(ch *chart.Chart) map[string]bool {
	var out map[string]bool
	for _, t := range ch.Templates {
		text := string(t.Data)
		call := overridesCall.FindStringSubmatch(text)
		if call == nil {
			continue
		}
		for _, m := range daemonSetNameDecl.FindAllStringSubmatch(text, -1) {
			if out == nil {
				out = map[string]bool{}
			}
			out[ch.Name()+"_"+m[1]] = call[1] != ""
		}
	}
	return out
}
