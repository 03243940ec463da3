// Package render is `kupenstack render`: what the life-cycle controllers would deploy for a
// configuration and its profiles, computed offline — every component's Helm values and, given
// the charts, their manifests, checked against the Kubernetes API types.
package render

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/releaseutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/lcm/credentials"
	"github.com/kupenstack/kupenstack/internal/lcm/desired"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
)

// Placeholder stands for every generated password: the real ones exist only in the cluster.
const Placeholder = "generated-by-kupenstack"

// Documents are the KupenstackConfiguration and profiles read from the user's files.
type Documents struct {
	Config   *kupenstackv1.KupenstackConfiguration
	Profiles map[types.NamespacedName]*kupenstackv1.OpenstackCloudConfigurationProfileSpec
}

// maxDocument bounds one YAML document, as the API server bounds a request.
const maxDocument = 3 << 20

// Parse reads YAML documents (--- separated). Fields the API does not have are errors, as with
// kubectl's strict field validation; other kinds are errors too, since they would be ignored.
func Parse(r io.Reader) (*Documents, error) {
	docs := &Documents{Profiles: map[types.NamespacedName]*kupenstackv1.OpenstackCloudConfigurationProfileSpec{}}
	reader := utilyaml.NewYAMLReader(bufio.NewReaderSize(r, 64<<10))
	for i := 1; ; i++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(raw) > maxDocument {
			return nil, fmt.Errorf("document %d: larger than %d bytes", i, maxDocument)
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var head struct {
			Kind       string `json:"kind"`
			APIVersion string `json:"apiVersion"`
		}
		if err := yaml.Unmarshal(raw, &head); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if head.Kind == "" && head.APIVersion == "" {
			continue // comments only
		}
		if head.APIVersion != kupenstackv1.GroupVersion.String() {
			return nil, fmt.Errorf("document %d: apiVersion %q, want %s", i, head.APIVersion, kupenstackv1.GroupVersion)
		}
		switch head.Kind {
		case "KupenstackConfiguration":
			var cfg kupenstackv1.KupenstackConfiguration
			if err := yaml.UnmarshalStrict(raw, &cfg); err != nil {
				return nil, fmt.Errorf("document %d (KupenstackConfiguration): %w", i, err)
			}
			if docs.Config != nil {
				return nil, fmt.Errorf("document %d: a second KupenstackConfiguration (there is one per cloud)", i)
			}
			if cfg.Spec.Namespace == "" {
				cfg.Spec.Namespace = "openstack" // the API server's default
			}
			docs.Config = &cfg
		case "OpenstackCloudConfigurationProfile":
			var p kupenstackv1.OpenstackCloudConfigurationProfile
			if err := yaml.UnmarshalStrict(raw, &p); err != nil {
				return nil, fmt.Errorf("document %d (OpenstackCloudConfigurationProfile): %w", i, err)
			}
			docs.Profiles[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = &p.Spec
		default:
			return nil, fmt.Errorf("document %d: kind %q: only KupenstackConfiguration and OpenstackCloudConfigurationProfile are rendered", i, head.Kind)
		}
	}
	if docs.Config == nil {
		return nil, errors.New("no KupenstackConfiguration in the input")
	}
	return docs, nil
}

// Values renders every component's values and every node's entries.
func (d *Documents) Values() (*values.Output, error) {
	in, err := desired.Input(d.Config, func(key types.NamespacedName) (*kupenstackv1.OpenstackCloudConfigurationProfileSpec, error) {
		if p, ok := d.Profiles[key]; ok {
			return p, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: kupenstackv1.GroupVersion.Group, Resource: "openstackcloudconfigurationprofiles"}, key.String())
	})
	if err != nil {
		return nil, err
	}
	return values.Render(*in)
}

// Component is the rendering of one component.
type Component struct {
	Name, Chart, ChartVersion, Hash string
	// Values as given to Helm, with placeholder passwords.
	Values map[string]any
	// Manifest, when charts were given: every object, hooks included.
	Manifest string
	// Kinds counts the manifest's objects per kind.
	Kinds map[string]int
}

// Options of a rendering.
type Options struct {
	// Charts, when set, is a directory with one chart per component: the charts are rendered
	// with the values and the manifests validated.
	Charts string
	// Only renders this component (empty: all).
	Only string

	// adjust, when set, edits the values given to a chart (tests).
	adjust func(ch *chart.Chart, vals map[string]any)
}

// Run renders the components.
func Run(d *Documents, o Options) ([]Component, error) {
	out, err := d.Values()
	if err != nil {
		return nil, err
	}
	pw := map[string]string{}
	for _, k := range credentials.AllKeys() {
		pw[k] = Placeholder
	}
	loader := &helm.ChartLoader{}
	var result []Component
	for _, cv := range out.Components {
		if o.Only != "" && cv.Component.Name != o.Only {
			continue
		}
		vals, err := credentials.WithValues(cv.Component.Chart, pw, cv.Values)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cv.Component.Name, err)
		}
		c := Component{Name: cv.Component.Name, Chart: cv.Component.Chart, ChartVersion: cv.ChartVersion, Hash: cv.Hash, Values: vals}
		if o.Charts != "" {
			ch, err := loader.Load(helm.Source{LocalPath: o.Charts}, cv.Component.Chart, cv.ChartVersion)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", cv.Component.Name, err)
			}
			c.ChartVersion = ch.Metadata.Version
			if err := cv.Component.CheckNodeDaemonSets(helm.NodeDaemonSets(ch)); err != nil {
				return nil, fmt.Errorf("%s: %w", cv.Component.Name, err)
			}
			if o.adjust != nil {
				o.adjust(ch, vals)
			}
			if c.Manifest, err = helm.Render(ch, cv.Component.Name, d.Config.Spec.Namespace, vals); err != nil {
				return nil, fmt.Errorf("%s: rendering chart %s: %w", cv.Component.Name, cv.Component.Chart, err)
			}
			if c.Kinds, err = Validate(c.Manifest); err != nil {
				return nil, fmt.Errorf("%s: %w", cv.Component.Name, err)
			}
		}
		result = append(result, c)
	}
	if o.Only != "" && len(result) == 0 {
		return nil, fmt.Errorf("component %q is not enabled by the configuration", o.Only)
	}
	return result, nil
}

// strictDecoder knows the built-in Kubernetes types and rejects unknown or duplicate fields.
var strictDecoder = serializer.NewCodecFactory(clientscheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// Validate checks every object of a manifest: built-in kinds must decode strictly into their API
// type; any object needs apiVersion, kind and a name. It returns the count per kind.
func Validate(manifest string) (map[string]int, error) {
	kinds := map[string]int{}
	docs := releaseutil.SplitManifests(manifest)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		doc := docs[k]
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return nil, fmt.Errorf("manifest: %w", err)
		}
		if head.Kind == "" && head.APIVersion == "" {
			continue
		}
		if head.Kind == "" || head.APIVersion == "" || head.Metadata.Name == "" {
			return nil, fmt.Errorf("manifest: an object lacks apiVersion, kind or metadata.name:\n%s", firstLines(doc, 5))
		}
		gvk := schema.FromAPIVersionAndKind(head.APIVersion, head.Kind)
		if clientscheme.Scheme.Recognizes(gvk) {
			if _, _, err := strictDecoder.Decode([]byte(doc), nil, nil); err != nil {
				return nil, fmt.Errorf("manifest: %s %s: %w", head.Kind, head.Metadata.Name, err)
			}
		}
		kinds[head.Kind]++
	}
	return kinds, nil
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// Write writes each component's values (and manifest) as <dir>/<component>.values.yaml (and
// <component>.manifest.yaml).
func Write(dir string, comps []Component) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	for _, c := range comps {
		b, err := yaml.Marshal(c.Values)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name+".values.yaml"), b, 0o640); err != nil {
			return err
		}
		if c.Manifest != "" {
			if err := os.WriteFile(filepath.Join(dir, c.Name+".manifest.yaml"), []byte(c.Manifest), 0o640); err != nil {
				return err
			}
		}
	}
	return nil
}

// Summary is one line per component.
func Summary(w io.Writer, comps []Component) {
	for _, c := range comps {
		line := fmt.Sprintf("%-12s chart %s %s, values %s", c.Name, c.Chart, c.ChartVersion, c.Hash)
		if c.Kinds != nil {
			kinds := make([]string, 0, len(c.Kinds))
			total := 0
			for k, n := range c.Kinds {
				kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
				total += n
			}
			sort.Strings(kinds)
			line += fmt.Sprintf(": %d objects (%s)", total, strings.Join(kinds, ", "))
		}
		fmt.Fprintln(w, line)
	}
}
