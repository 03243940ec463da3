package helm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/registry"
)

// Source is where charts come from: exactly one of the three is set (admission enforces it).
type Source struct {
	// LocalPath is a directory holding either one chart directory per chart name (a checkout of
	// openstack-helm works as is: file:// dependencies such as helm-toolkit are resolved), or
	// packaged charts as a chart repository keeps them (<chart>-<version>.tgz, with or without
	// index.yaml), such as a copy of the official repository.
	LocalPath string
	// Repository is a classic Helm chart repository URL.
	Repository string
	// OCI is an oci:// reference under which <chart>:<version> is found.
	OCI string
}

func (s Source) String() string {
	switch {
	case s.LocalPath != "":
		return s.LocalPath
	case s.Repository != "":
		return s.Repository
	default:
		return s.OCI
	}
}

// ChartLoader loads charts, downloading each version from a repository or registry once (a
// published chart version never changes); local charts are read again each time, so that an
// edited chart directory is noticed. Every Load returns a chart of its own, read from the
// downloaded archive: Helm changes the chart it installs (it coalesces the values into the
// chart's), so a chart handed out twice would not be the published one the second time.
type ChartLoader struct {
	// CacheDir receives downloaded chart archives and repository indexes.
	CacheDir string
	// LocalPaths, when set, limits the directories local charts are read from (the chart
	// directory and its file:// dependencies); nil reads any directory.
	LocalPaths *LocalPathPolicy

	mu     sync.Mutex
	remote map[string]string // source|name|version -> downloaded archive
}

// Load returns chart name at version. For a local directory of chart directories the version
// is not enforced (the chart's Chart.yaml says what it is: callers compare it); a local
// directory of packaged charts must hold that version, or, with no version asked, exactly one.
func (l *ChartLoader) Load(src Source, name, version string) (*chart.Chart, error) {
	if src.LocalPath != "" {
		if l.LocalPaths != nil {
			if err := l.LocalPaths.Check(src.LocalPath); err != nil {
				return nil, err
			}
		}
		dir := filepath.Join(src.LocalPath, name)
		if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err == nil {
			return loadLocal(dir, 0, l.LocalPaths)
		}
		return loadPackaged(src.LocalPath, name, version)
	}
	key := src.String() + "|" + name + "|" + version
	l.mu.Lock()
	defer l.mu.Unlock()
	if path, ok := l.remote[key]; ok {
		if c, err := loader.Load(path); err == nil {
			return c, nil
		} // the archive went away: download it again
	}
	path, err := l.download(src, name, version)
	if err != nil {
		return nil, err
	}
	c, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("chart %s %s from %s: %w", name, version, src, err)
	}
	if l.remote == nil {
		l.remote = map[string]string{}
	}
	l.remote[key] = path
	return c, nil
}

// download fetches the chart's archive into the cache directory and returns its path.
func (l *ChartLoader) download(src Source, name, version string) (string, error) {
	helmHomes(l.CacheDir)
	settings := cli.New()
	settings.RepositoryCache = filepath.Join(l.CacheDir, "repository")
	settings.RepositoryConfig = filepath.Join(l.CacheDir, "repositories.yaml")
	settings.RegistryConfig = filepath.Join(l.CacheDir, "registry.json")
	if err := os.MkdirAll(settings.RepositoryCache, 0o750); err != nil {
		return "", err
	}
	opts := action.ChartPathOptions{Version: version}
	ref := name
	if src.OCI != "" {
		rc, err := registry.NewClient(registry.ClientOptCredentialsFile(settings.RegistryConfig))
		if err != nil {
			return "", fmt.Errorf("registry client: %w", err)
		}
		// LocateChart takes the registry client only through an action.
		pull := action.NewPullWithOpts(action.WithConfig(&action.Configuration{RegistryClient: rc}))
		pull.Version = version
		pull.Settings = settings
		opts = pull.ChartPathOptions
		ref = strings.TrimSuffix(src.OCI, "/") + "/" + name
	} else {
		opts.RepoURL = src.Repository
	}
	path, err := opts.LocateChart(ref, settings)
	if err != nil {
		return "", fmt.Errorf("chart %s %s from %s: %w", name, version, src, err)
	}
	return path, nil
}

// helmHomes points Helm's cache, configuration and data directories under cacheDir, unless the
// environment sets them. Helm reads a repository's index from its own cache directory
// (helmpath.CachePath: $HELM_CACHE_HOME, else $XDG_CACHE_HOME/helm or $HOME/.cache/helm) whatever
// settings.RepositoryCache says (repo.FindChartInAuthAndTLSAndPassRepoURL), and in the operator's
// pod $HOME is on a read-only root file system: every download from a repository failed there
// ("open /home/nonroot/.cache/helm/repository/...-index.yaml: no such file or directory").
// Called with l.mu held: downloads never race on the environment.
func helmHomes(cacheDir string) {
	for _, v := range []struct{ env, dir string }{
		{"HELM_CACHE_HOME", "cache"}, {"HELM_CONFIG_HOME", "config"}, {"HELM_DATA_HOME", "data"},
	} {
		if os.Getenv(v.env) == "" {
			os.Setenv(v.env, filepath.Join(cacheDir, "helm", v.dir))
		}
	}
}

// loadPackaged loads <dir>/<name>-<version>.tgz; with no version, the only packaged version of
// the chart in dir.
func loadPackaged(dir, name, version string) (*chart.Chart, error) {
	path := filepath.Join(dir, name+"-"+version+".tgz")
	if version == "" {
		matches, err := filepath.Glob(filepath.Join(dir, name+"-*.tgz"))
		if err != nil {
			return nil, err
		}
		// helm-toolkit-*.tgz must not pass for a chart named helm.
		var found []string
		for _, m := range matches {
			v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), name+"-"), ".tgz")
			if v != "" && v[0] >= '0' && v[0] <= '9' {
				found = append(found, m)
			}
		}
		if len(found) != 1 {
			return nil, fmt.Errorf("no chart %s in %s: want a directory %s or exactly one %s-<version>.tgz, found %d archives", name, dir, name, name, len(found))
		}
		path = found[0]
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no chart %s %s in %s: neither a directory %s nor %s", name, version, dir, name, filepath.Base(path))
	}
	c, err := loader.LoadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", path, err)
	}
	return c, nil
}

// maxDependencyDepth bounds file:// dependency chains (and so cycles).
const maxDependencyDepth = 8

// loadLocal loads a chart directory and the file:// dependencies it declares but does not carry
// in charts/ — what `helm dependency build` would copy there.
func loadLocal(dir string, depth int, policy *LocalPathPolicy) (*chart.Chart, error) {
	if depth > maxDependencyDepth {
		return nil, fmt.Errorf("chart %s: file:// dependencies nested deeper than %d", dir, maxDependencyDepth)
	}
	if policy != nil {
		// A file:// dependency (../helm-toolkit) must not lead out of the allowed directories.
		if err := policy.Check(dir); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
		return nil, fmt.Errorf("no chart at %s: %w", dir, err)
	}
	c, err := loader.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	have := map[string]bool{}
	for _, d := range c.Dependencies() {
		have[d.Name()] = true
	}
	for _, dep := range c.Metadata.Dependencies {
		if have[dep.Name] || !strings.HasPrefix(dep.Repository, "file://") {
			continue
		}
		sub, err := loadLocal(filepath.Join(dir, strings.TrimPrefix(dep.Repository, "file://")), depth+1, policy)
		if err != nil {
			return nil, fmt.Errorf("chart %s: dependency %s: %w", c.Name(), dep.Name, err)
		}
		c.AddDependency(sub)
		have[dep.Name] = true
	}
	return c, nil
}

// Digest identifies a chart's content (metadata, templates, values, files and dependencies), so
// that a changed chart directory leads to an upgrade even when its version stayed the same.
func Digest(c *chart.Chart) string {
	h := sha256.New()
	var walk func(c *chart.Chart)
	walk = func(c *chart.Chart) {
		fmt.Fprintf(h, "chart %s %s\n", c.Name(), c.Metadata.Version)
		files := append(append([]*chart.File{}, c.Templates...), c.Files...)
		sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
		for _, f := range files {
			fmt.Fprintf(h, "%s %d\n", f.Name, len(f.Data))
			h.Write(f.Data)
		}
		fmt.Fprintf(h, "values %v\n", c.Values)
		deps := c.Dependencies()
		sort.Slice(deps, func(i, j int) bool { return deps[i].Name() < deps[j].Name() })
		for _, d := range deps {
			walk(d)
		}
	}
	walk(c)
	return hex.EncodeToString(h.Sum(nil))[:16]
}
