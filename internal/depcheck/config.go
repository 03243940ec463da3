package depcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The environment variables the charts' init containers set (helm-toolkit's
// kubernetes_entrypoint_init_container snippet) plus the two file-based kinds upstream also reads.
const (
	EnvService        = "DEPENDENCY_SERVICE"
	EnvJobs           = "DEPENDENCY_JOBS"
	EnvJobsJSON       = "DEPENDENCY_JOBS_JSON"
	EnvDaemonSet      = "DEPENDENCY_DAEMONSET"
	EnvContainer      = "DEPENDENCY_CONTAINER"
	EnvPodJSON        = "DEPENDENCY_POD_JSON"
	EnvCustomResource = "DEPENDENCY_CUSTOM_RESOURCE"
	EnvSocket         = "DEPENDENCY_SOCKET"
	EnvConfig         = "DEPENDENCY_CONFIG"

	EnvNamespace     = "NAMESPACE"
	EnvPodName       = "POD_NAME"
	EnvInterfaceName = "INTERFACE_NAME"
	EnvCommand       = "COMMAND"
)

// Ref names a namespaced object.
type Ref struct {
	Namespace, Name string
}

func (r Ref) String() string { return r.Namespace + "/" + r.Name }

// PodSelector is one entry of DEPENDENCY_POD_JSON: at least one pod with all these labels must
// be ready, on this pod's node when RequireSameNode is set.
type PodSelector struct {
	Labels          map[string]string `json:"labels"`
	Namespace       string            `json:"namespace"`
	RequireSameNode bool              `json:"requireSameNode"`
}

// JobSelector is one entry of DEPENDENCY_JOBS_JSON: a Job by name, or every Job with all these
// labels (at least one must exist).
type JobSelector struct {
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels"`
	Namespace string            `json:"namespace"`
}

// CustomResource is one entry of DEPENDENCY_CUSTOM_RESOURCE: the object must exist and every
// field and condition must match.
type CustomResource struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Namespace  string      `json:"namespace"`
	Name       string      `json:"name"`
	Fields     []Field     `json:"fields"`
	Conditions []Condition `json:"conditions"`
}

// Field is a dotted path into the object (e.g. status.phase) and the value it must have.
type Field struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Condition is an entry of status.conditions by type and the status it must report ("True" when
// empty), as kubectl wait --for=condition=<type> does.
type Condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

// Config is everything the environment asks for.
type Config struct {
	Namespace     string
	PodName       string
	InterfaceName string
	// Command is run (exec) once every dependency is resolved; empty means exit 0.
	Command []string
	Deps    []Dependency
}

// DefaultNamespace is used when NAMESPACE is unset or empty, as upstream does.
const DefaultNamespace = "default"

// FromEnv reads the configuration through getenv (os.Getenv in the program). A malformed value is
// an error, never a silently dropped dependency; warn receives what is ignored on purpose.
func FromEnv(getenv func(string) string, warn func(format string, args ...any)) (*Config, error) {
	c := &Config{
		Namespace:     strings.TrimSpace(getenv(EnvNamespace)),
		PodName:       strings.TrimSpace(getenv(EnvPodName)),
		InterfaceName: strings.TrimSpace(getenv(EnvInterfaceName)),
		Command:       strings.Fields(getenv(EnvCommand)),
	}
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	var errs []error
	fail := func(env string, err error) { errs = append(errs, fmt.Errorf("%s: %w", env, err)) }

	services, err := ParseList(getenv(EnvService), c.Namespace)
	if err != nil {
		fail(EnvService, err)
	}
	for _, r := range services {
		c.Deps = append(c.Deps, Service{Ref: r})
	}

	jobs, err := ParseJobs(getenv(EnvJobs), getenv(EnvJobsJSON), c.Namespace, warn)
	if err != nil {
		fail(EnvJobs, err)
	}
	for _, j := range jobs {
		c.Deps = append(c.Deps, Job{JobSelector: j})
	}

	daemonSets, err := ParseList(getenv(EnvDaemonSet), c.Namespace)
	if err != nil {
		fail(EnvDaemonSet, err)
	}
	for _, r := range daemonSets {
		c.Deps = append(c.Deps, DaemonSet{Ref: r})
	}

	containers, err := ParseList(getenv(EnvContainer), c.Namespace)
	if err != nil {
		fail(EnvContainer, err)
	}
	for _, r := range containers {
		if r.Namespace != c.Namespace {
			warn("%s: %q: a container is always in this pod; namespace %q ignored", EnvContainer, r.Namespace+":"+r.Name, r.Namespace)
		}
		c.Deps = append(c.Deps, Container{Name: r.Name})
	}

	pods, err := ParsePodJSON(getenv(EnvPodJSON), c.Namespace)
	if err != nil {
		fail(EnvPodJSON, err)
	}
	for _, p := range pods {
		c.Deps = append(c.Deps, Pod{PodSelector: p})
	}

	crs, err := ParseCustomResources(getenv(EnvCustomResource), c.Namespace)
	if err != nil {
		fail(EnvCustomResource, err)
	}
	for _, cr := range crs {
		c.Deps = append(c.Deps, CustomResourceDep{CustomResource: cr})
	}

	for _, p := range splitItems(getenv(EnvSocket)) {
		c.Deps = append(c.Deps, Socket{Path: p})
	}
	for _, p := range splitItems(getenv(EnvConfig)) {
		c.Deps = append(c.Deps, ConfigFile{Path: p, InterfaceName: c.InterfaceName})
	}

	// The kinds that look at this pod need its name: fail now rather than wait forever.
	if c.PodName == "" {
		for _, d := range c.Deps {
			if needsPod(d) {
				errs = append(errs, fmt.Errorf("%s is not set, but %s needs this pod's node or containers", EnvPodName, d))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// splitItems splits a comma-separated list, trimming spaces and dropping empty items (helm
// templates leave trailing commas and empty values).
func splitItems(value string) []string {
	var items []string
	for item := range strings.SplitSeq(value, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// ParseList parses "name,namespace:name,...": a name without namespace is in defaultNamespace.
func ParseList(value, defaultNamespace string) ([]Ref, error) {
	var refs []Ref
	var errs []error
	for _, item := range splitItems(value) {
		ns, name, found := strings.Cut(item, ":")
		if !found {
			ns, name = defaultNamespace, item
		}
		ns, name = strings.TrimSpace(ns), strings.TrimSpace(name)
		switch {
		case strings.Contains(name, ":"):
			errs = append(errs, fmt.Errorf("%q: want name or namespace:name", item))
		case ns == "" || name == "":
			errs = append(errs, fmt.Errorf("%q: empty namespace or name", item))
		case len(validation.IsDNS1123Subdomain(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0:
			errs = append(errs, fmt.Errorf("%q: not a Kubernetes object name", item))
		default:
			refs = append(refs, Ref{Namespace: ns, Name: name})
		}
	}
	return refs, errors.Join(errs...)
}

// decodeJSONList decodes a JSON list; blank and "null" mean none.
func decodeJSONList[T any](value string) ([]T, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	var list []T
	if err := json.Unmarshal([]byte(value), &list); err != nil {
		return nil, fmt.Errorf("not a JSON list of the expected objects: %w", err)
	}
	return list, nil
}

// ParsePodJSON parses DEPENDENCY_POD_JSON.
func ParsePodJSON(value, defaultNamespace string) ([]PodSelector, error) {
	list, err := decodeJSONList[PodSelector](value)
	if err != nil {
		return nil, err
	}
	var errs []error
	for i := range list {
		if list[i].Namespace == "" {
			list[i].Namespace = defaultNamespace
		}
		if len(list[i].Labels) == 0 {
			errs = append(errs, fmt.Errorf("entry %d: no labels (it would match every pod)", i))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return list, nil
}

// ParseJobs parses DEPENDENCY_JOBS_JSON, or DEPENDENCY_JOBS (names) when the JSON one is empty.
func ParseJobs(plain, jsonValue, defaultNamespace string, warn func(string, ...any)) ([]JobSelector, error) {
	if strings.TrimSpace(jsonValue) == "" {
		refs, err := ParseList(plain, defaultNamespace)
		if err != nil {
			return nil, err
		}
		var jobs []JobSelector
		for _, r := range refs {
			jobs = append(jobs, JobSelector{Name: r.Name, Namespace: r.Namespace})
		}
		return jobs, nil
	}
	if strings.TrimSpace(plain) != "" && warn != nil {
		warn("%s is ignored because %s is set", EnvJobs, EnvJobsJSON)
	}
	list, err := decodeJSONList[JobSelector](jsonValue)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvJobsJSON, err)
	}
	var errs []error
	for i := range list {
		if list[i].Namespace == "" {
			list[i].Namespace = defaultNamespace
		}
		if (list[i].Name == "") == (len(list[i].Labels) == 0) {
			errs = append(errs, fmt.Errorf("%s entry %d: want exactly one of name and labels", EnvJobsJSON, i))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return list, nil
}

// ParseCustomResources parses DEPENDENCY_CUSTOM_RESOURCE. The namespace defaults to
// defaultNamespace; it is ignored for cluster-scoped kinds.
func ParseCustomResources(value, defaultNamespace string) ([]CustomResource, error) {
	list, err := decodeJSONList[CustomResource](value)
	if err != nil {
		return nil, err
	}
	var errs []error
	for i := range list {
		cr := &list[i]
		if cr.Namespace == "" {
			cr.Namespace = defaultNamespace
		}
		if cr.APIVersion == "" || cr.Kind == "" || cr.Name == "" {
			errs = append(errs, fmt.Errorf("entry %d: apiVersion, kind and name are required", i))
		}
		for _, f := range cr.Fields {
			if f.Key == "" || strings.HasPrefix(f.Key, ".") || strings.HasSuffix(f.Key, ".") || strings.Contains(f.Key, "..") {
				errs = append(errs, fmt.Errorf("entry %d: field key %q is not a dotted path", i, f.Key))
			}
		}
		for _, c := range cr.Conditions {
			if c.Type == "" {
				errs = append(errs, fmt.Errorf("entry %d: a condition without type", i))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return list, nil
}
