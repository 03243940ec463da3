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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
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
	// Skipped are the documents of other kinds (a Namespace beside the configuration), one note
	// each: they are not rendered.
	Skipped []string
}

// maxDocument bounds one YAML document, as the API server bounds a request.
const maxDocument = 3 << 20

// Parse reads YAML documents (--- separated). Fields the API does not have are errors, as with
// kubectl's strict field validation; documents of other kinds are skipped and listed in Skipped.
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
		var name struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		_ = yaml.Unmarshal(raw, &name)
		skip := fmt.Sprintf("document %d (%s %s %q): not a KupenstackConfiguration or OpenstackCloudConfigurationProfile, not rendered",
			i, head.APIVersion, head.Kind, name.Metadata.Name)
		if head.APIVersion != kupenstackv1.GroupVersion.String() {
			docs.Skipped = append(docs.Skipped, skip)
			continue
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
			docs.Skipped = append(docs.Skipped, skip)
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
	// Warnings about the rendering (a chart version other than the release's).
	Warnings []string
	// Err is why the component failed to render (the others are still rendered).
	Err error
}

// Options of a rendering.
type Options struct {
	// Charts, when set, is a directory with one chart per component: the charts are rendered
	// with the values and the manifests validated.
	Charts string
	// Only renders this component (empty: all).
	Only string
	// Secret stands for the generated secret of a key (default: Placeholder for every key).
	Secret func(key string) string
}

// Run renders the components: every one, even after a failure. It returns them all, a failed
// one with its Err set, and an error joining every failure.
func Run(d *Documents, o Options) ([]Component, error) {
	out, err := d.Values()
	if err != nil {
		return nil, err
	}
	loader := &helm.ChartLoader{}
	var result []Component
	var errs []error
	for i := range out.Components {
		cv := &out.Components[i]
		if o.Only != "" && cv.Component.Name != o.Only {
			continue
		}
		c := renderComponent(loader, d, o, cv)
		if c.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.Name, c.Err))
		}
		result = append(result, c)
	}
	if o.Only != "" && len(result) == 0 {
		return nil, fmt.Errorf("component %q is not enabled by the configuration", o.Only)
	}
	return result, errors.Join(errs...)
}

func renderComponent(loader *helm.ChartLoader, d *Documents, o Options, cv *values.ComponentValues) Component {
	c := Component{Name: cv.Component.Name, Chart: cv.Component.Chart, ChartVersion: cv.ChartVersion, Hash: cv.Hash, Values: cv.Values}
	if o.Charts == "" {
		return c
	}
	ch, err := loader.Load(helm.Source{LocalPath: o.Charts}, cv.Component.Chart, cv.ChartVersion)
	if err != nil {
		c.Err = err
		return c
	}
	c.ChartVersion = ch.Metadata.Version
	if c.ChartVersion != cv.ChartVersion {
		c.Warnings = append(c.Warnings, fmt.Sprintf("chart %s is version %s; release %s is made of version %s",
			cv.Component.Chart, c.ChartVersion, d.Config.Spec.Release, cv.ChartVersion))
	}
	if err := cv.Component.CheckNodeDaemonSets(helm.NodeDaemonSets(ch)); err != nil {
		c.Err = err
		return c
	}
	// The secrets the chart declares, each a placeholder: the real ones exist only in the cluster.
	pw := map[string]string{}
	for _, k := range desired.SecretKeys(cv, ch.Values) {
		pw[k] = Placeholder
		if o.Secret != nil {
			pw[k] = o.Secret(k)
		}
	}
	if c.Values, err = desired.ChartValues(cv, ch.Values, pw); err != nil {
		c.Err = err
		return c
	}
	if c.Manifest, err = helm.Render(ch, cv.Component.Name, d.Config.Spec.Namespace, c.Values); err != nil {
		c.Err = fmt.Errorf("rendering chart %s: %w", cv.Component.Chart, err)
		return c
	}
	if c.Kinds, err = Validate(c.Manifest); err != nil {
		c.Err = err
	}
	return c
}

// strictDecoder knows the built-in Kubernetes types and rejects unknown or duplicate fields.
var strictDecoder = serializer.NewCodecFactory(clientscheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// Validate checks every object of a manifest: built-in kinds must decode strictly into their API
// type; any object needs apiVersion, kind and a name. It returns the count per kind.
func Validate(manifest string) (map[string]int, error) {
	kinds := map[string]int{}
	docs, err := helm.SplitManifest(manifest)
	if err != nil {
		return nil, err
	}
	for _, doc := range docs {
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
		if c.Values == nil {
			continue // failed before its values were complete
		}
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

// Summary is one line per component, and a line per warning or failure.
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
		for _, warn := range c.Warnings {
			line += "\n  warning: " + warn
		}
		if c.Err != nil {
			line += "\n  FAILED: " + strings.Join(strings.Fields(c.Err.Error()), " ")
		}
		fmt.Fprintln(w, line)
	}
}
