// Package drift finds the objects of a Helm release that were changed by hand: for each object of
// the release's manifest it asks the API server what applying the manifest document would make of
// the live object (server-side apply, dry run) and compares that with the live object. The API
// server does the defaulting and normalising on both sides, so only real differences show, for
// any kind the release carries.
package drift

import (
	"context"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kupenstack/kupenstack/internal/lcm/helm"
)

// FieldManager is the manager name of the dry-run applies. A dry run records nothing, so it never
// owns a field of a live object.
const FieldManager = "kupenstack-drift-check"

// maxPaths bounds how many differing fields are named per object.
const maxPaths = 3

// Checker compares a release's objects with their manifest. It remembers, per revision, the
// resourceVersion at which each object last matched, so that an unchanged object costs nothing
// but the read the caller already made.
type Checker struct {
	// Client sends the dry-run applies; Reader reads the live objects (not a cache: the kinds
	// are arbitrary).
	Client client.Client
	Reader client.Reader

	revision int
	clean    map[string]string
}

// Check returns "<kind> <name>: <fields>" for every object of revision that differs from its
// manifest document. versions holds the objects' current resourceVersions by ObjectRef.String()
// (objects missing from it are read); an object whose version has not moved since it last
// matched is not looked at again. Objects the API server cannot dry-run (an immutable field the
// manifest would change, a kind without a schema) are skipped: a repair could not fix them.
func (c *Checker) Check(ctx context.Context, revision int, objects []helm.ObjectRef, versions map[string]string) ([]string, error) {
	if c.revision != revision || c.clean == nil {
		c.revision, c.clean = revision, map[string]string{}
	}
	var drifted []string
	for _, ref := range objects {
		key := ref.String()
		if v, ok := versions[key]; ok && v != "" && c.clean[key] == v {
			continue
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(ref.GVK)
		if err := c.Reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, live); err != nil {
			if apierrors.IsNotFound(err) {
				continue // missing objects are the caller's (workloads.Check) to report
			}
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		want := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(ref.Doc), &want.Object); err != nil {
			return nil, fmt.Errorf("%s: manifest: %w", ref, err)
		}
		want.SetNamespace(ref.Namespace)
		err := c.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(want),
			client.DryRunAll, client.ForceOwnership, client.FieldOwner(FieldManager))
		if err != nil {
			if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsUnsupportedMediaType(err) {
				continue
			}
			return nil, fmt.Errorf("%s: dry-run apply: %w", ref, err)
		}
		for _, f := range RuntimeFields {
			if f.Matches(ref) {
				unstructured.RemoveNestedField(want.Object, f.Path...)
				unstructured.RemoveNestedField(live.Object, f.Path...)
			}
		}
		if paths := Diff(want.Object, live.Object); len(paths) > 0 {
			drifted = append(drifted, fmt.Sprintf("%s %s: %s changed", ref.GVK.Kind, ref.Name, strings.Join(paths, ", ")))
			delete(c.clean, key)
			continue
		}
		c.clean[key] = live.GetResourceVersion()
	}
	return drifted, nil
}

// RuntimeField is a field of a release's object that the chart's own software changes while the
// cloud runs, on purpose: the drift check ignores it in the objects it names and nowhere else.
// Repairing it would fight the chart (and could not hold: Helm's three-way merge leaves alone
// what its manifests never set). docs/lcm.md lists the table with its reasons.
type RuntimeField struct {
	// Kind is the object's kind (in Group: "" for the core API).
	Group, Kind string
	// Name matches the object's name (a path.Match pattern).
	Name string
	// Path is the field, one element per key.
	Path []string
	// Reason says which software changes the field, and why.
	Reason string
}

// Matches tells whether the field applies to an object.
func (f RuntimeField) Matches(ref helm.ObjectRef) bool {
	if ref.GVK.GroupKind() != (schema.GroupKind{Group: f.Group, Kind: f.Kind}) {
		return false
	}
	ok, err := path.Match(f.Name, ref.Name)
	return ok && err == nil
}

// RuntimeFields are the fields the real OpenStack-Helm charts change at run time in objects of
// their manifests (checked on every chart of the tags the project supports; objects a chart
// changes that are hooks or never in the manifest are not drift-checked at all, see docs/lcm.md).
var RuntimeFields = []RuntimeField{{
	Kind: "Service", Name: "mariadb",
	Path: []string{"spec", "selector", "statefulset.kubernetes.io/pod-name"},
	Reason: "the mariadb chart's mariadb-controller (Deployment mariadb-controller, " +
		"templates/bin/_mariadb_controller.py.tpl, link_master_service) adds this key to the " +
		"selector of the primary Service every 10 s, pointing it at the first ready server pod, " +
		"so that writes go to one Galera node; the Service is named by " +
		"endpoints.oslo_db.hosts.default, mariadb unless changed",
}}

// ignored are the fields that differ between a dry-run answer and the live object without
// anybody having changed anything: bookkeeping, and status (the manifest has none).
var ignored = map[string]bool{
	"metadata.managedFields":   true,
	"metadata.resourceVersion": true,
	"metadata.generation":      true,
	"status":                   true,
}

// Diff lists the paths (dotted, sorted, at most a few) where applied and live differ.
func Diff(applied, live map[string]any) []string {
	var paths []string
	diff("", applied, live, &paths)
	sort.Strings(paths)
	if len(paths) > maxPaths {
		paths = append(paths[:maxPaths], fmt.Sprintf("%d more", len(paths)-maxPaths))
	}
	return paths
}

func diff(prefix string, a, b map[string]any, out *[]string) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for k := range keys {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if ignored[path] {
			continue
		}
		av, bv := a[k], b[k]
		am, aIsMap := av.(map[string]any)
		bm, bIsMap := bv.(map[string]any)
		switch {
		case aIsMap && bIsMap:
			diff(path, am, bm, out)
		case !reflect.DeepEqual(av, bv):
			*out = append(*out, path)
		}
	}
}
