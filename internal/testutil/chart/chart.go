// Package chart renders and lints the operator's Helm chart (charts/kupenstack) with the Helm SDK,
// as `helm template --include-crds` and `helm lint --strict` would, for tests.
package chart

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// Dir is the chart's directory in the checkout.
func Dir() string { return filepath.Join(testenv.RepoRoot(), "charts", "kupenstack") }

// Rendered is one rendering of the chart.
type Rendered struct {
	// CRDs are the chart's crds/ directory, which Helm installs before anything else.
	CRDs []*unstructured.Unstructured
	// Objects are the rendered templates, in file order.
	Objects []*unstructured.Unstructured
}

// Find returns the rendered objects of a kind.
func (r Rendered) Find(kind string) []*unstructured.Unstructured {
	var found []*unstructured.Unstructured
	for _, o := range r.Objects {
		if o.GetKind() == kind {
			found = append(found, o)
		}
	}
	return found
}

// Render renders the chart for an install of release into namespace, with values over the
// chart's defaults.
func Render(release, namespace string, values map[string]any) (Rendered, error) {
	ch, err := loader.LoadDir(Dir())
	if err != nil {
		return Rendered{}, err
	}
	vals, err := chartutil.ToRenderValues(ch, values,
		chartutil.ReleaseOptions{Name: release, Namespace: namespace, Revision: 1, IsInstall: true},
		chartutil.DefaultCapabilities)
	if err != nil {
		return Rendered{}, err
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return Rendered{}, err
	}
	var r Rendered
	for _, crd := range ch.CRDObjects() {
		objs, err := Decode(crd.File.Data)
		if err != nil {
			return Rendered{}, fmt.Errorf("%s: %w", crd.Filename, err)
		}
		r.CRDs = append(r.CRDs, objs...)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if strings.HasSuffix(name, ".yaml") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		objs, err := Decode([]byte(files[name]))
		if err != nil {
			return Rendered{}, fmt.Errorf("%s: %w", name, err)
		}
		r.Objects = append(r.Objects, objs...)
	}
	return r, nil
}

// helpers is the chart's _helpers.tpl and metadata, loaded once for Include.
var helpers = sync.OnceValues(func() (*helmchart.Chart, error) {
	ch, err := loader.LoadDir(Dir())
	if err != nil {
		return nil, err
	}
	only := &helmchart.Chart{Metadata: ch.Metadata}
	for _, t := range ch.Templates {
		if t.Name == "templates/_helpers.tpl" {
			only.Templates = append(only.Templates, t)
		}
	}
	if len(only.Templates) == 0 {
		return nil, errors.New("the chart has no templates/_helpers.tpl")
	}
	return only, nil
})

// Include renders the chart's named template (a define of _helpers.tpl) with data as its
// argument, through Helm's engine (its functions, include and fail) without the rest of the
// chart: fast enough to try a helper on thousands of inputs.
func Include(name string, data any) (string, error) {
	base, err := helpers()
	if err != nil {
		return "", err
	}
	ch := *base
	ch.Templates = append(slices.Clone(base.Templates), &helmchart.File{
		Name: "templates/include.txt", Data: []byte(`{{ include "` + name + `" .Values.data }}`)})
	vals, err := chartutil.ToRenderValues(&ch, map[string]any{"data": data},
		chartutil.ReleaseOptions{Name: "include", Namespace: "default", Revision: 1, IsInstall: true},
		chartutil.DefaultCapabilities)
	if err != nil {
		return "", err
	}
	files, err := engine.Render(&ch, vals)
	if err != nil {
		return "", err
	}
	return files[ch.Name()+"/templates/include.txt"], nil
}

// Lint runs Helm's chart linter with values over the defaults and returns every message of
// warning severity or worse, as `helm lint --strict` fails on.
func Lint(namespace string, values map[string]any) []support.Message {
	var bad []support.Message
	for _, m := range lint.All(Dir(), values, namespace, false).Messages {
		if m.Severity >= support.WarningSev {
			bad = append(bad, m)
		}
	}
	return bad
}

// Decode splits a multi-document YAML stream into objects, skipping empty documents.
func Decode(stream []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}
