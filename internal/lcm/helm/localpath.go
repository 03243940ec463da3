package helm

import (
	"fmt"
	"path/filepath"
	"strings"
)

// DefaultLocalPathPrefixes are the directories charts.localPath may name when the admin says
// nothing else (--chart-local-path-prefixes): where the samples and the docs mount
// OpenStack-Helm charts into the operator's pod.
var DefaultLocalPathPrefixes = []string{"/charts", "/opt/openstack-helm"}

// LocalPathPolicy limits the directories local charts are read from: a KupenstackConfiguration's
// charts.localPath (and every file:// dependency of a chart found there) must lie under one of
// Prefixes, both as written and with symbolic links resolved. Without it anyone who may write
// the configuration could make the operator read and render any directory of its pod (its
// service account token, the cloud's credentials). "/" allows every directory; no prefix allows
// none.
type LocalPathPolicy struct {
	Prefixes []string
}

// ParseLocalPathPrefixes reads the comma-separated absolute directories of the operator's flag.
func ParseLocalPathPrefixes(s string) ([]string, error) {
	out := []string{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !filepath.IsAbs(f) {
			return nil, fmt.Errorf("%q is not an absolute directory", f)
		}
		out = append(out, filepath.Clean(f))
	}
	return out, nil
}

// LocalPathError is a local chart directory the policy refuses; its message names the rule.
type LocalPathError struct {
	Path     string
	Prefixes []string
}

func (e *LocalPathError) Error() string {
	allowed := "none"
	if len(e.Prefixes) > 0 {
		allowed = strings.Join(e.Prefixes, ", ")
	}
	return fmt.Sprintf("local charts may only be read from the directories the admin allows (%s): %s is not under one of them "+
		"(the operator's --chart-local-path-prefixes, or KUPENSTACK_CHART_LOCAL_PATH_PREFIXES, allows more)", allowed, e.Path)
}

// Check returns a *LocalPathError when dir may not be read.
func (p LocalPathPolicy) Check(dir string) error {
	clean := filepath.Clean(dir)
	paths := []string{clean}
	if resolved, err := filepath.EvalSymlinks(clean); err == nil && resolved != clean {
		paths = append(paths, resolved)
	}
	for _, path := range paths {
		if !p.allows(path) {
			return &LocalPathError{Path: dir, Prefixes: p.Prefixes}
		}
	}
	return nil
}

func (p LocalPathPolicy) allows(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	for _, prefix := range p.Prefixes {
		prefixes := []string{filepath.Clean(prefix)}
		if resolved, err := filepath.EvalSymlinks(prefixes[0]); err == nil {
			prefixes = append(prefixes, resolved)
		}
		for _, pre := range prefixes {
			if pre == "/" || path == pre || strings.HasPrefix(path, pre+string(filepath.Separator)) {
				return true
			}
		}
	}
	return false
}
