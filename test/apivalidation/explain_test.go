package apivalidation

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// TestExplainDocumentsEveryField: `kubectl explain` shows each property's description, so every
// property of every CRD (spec and status, nested ones and list items' too; not the object's
// metadata, apiVersion and kind, which Kubernetes documents) has one; where the schema lists
// allowed values (enum) the description names each of them, and where it defaults a scalar it
// says the default. Runs on the generated CRDs, so a new field without a doc comment in
// api/v1alpha1 fails here.
func TestExplainDocumentsEveryField(t *testing.T) {
	for _, crd := range generatedCRDs(t) {
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				t.Errorf("%s %s: no schema", crd.Spec.Names.Kind, v.Name)
				continue
			}
			root := v.Schema.OpenAPIV3Schema
			if root.Description == "" {
				t.Errorf("%s: the kind has no description", crd.Spec.Names.Kind)
			}
			var problems []string
			for name, p := range root.Properties {
				if name == "metadata" || name == "apiVersion" || name == "kind" {
					continue
				}
				problems = append(problems, undocumented(name, p)...)
			}
			sort.Strings(problems)
			for _, p := range problems {
				t.Errorf("%s %s: %s", crd.Spec.Names.Kind, v.Name, p)
			}
		}
	}
}

// undocumented lists what kubectl explain would not tell about the property at path and below.
func undocumented(path string, p apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	if strings.TrimSpace(p.Description) == "" {
		out = append(out, path+": no description")
	}
	enums := p.Enum
	if p.Items != nil && p.Items.Schema != nil {
		enums = append(enums, p.Items.Schema.Enum...)
	}
	for _, e := range enums {
		var v any
		_ = json.Unmarshal(e.Raw, &v)
		if s := fmt.Sprint(v); !strings.Contains(p.Description, s) {
			out = append(out, fmt.Sprintf("%s: the description does not name the allowed value %s", path, s))
		}
	}
	if p.Default != nil {
		var v any
		_ = json.Unmarshal(p.Default.Raw, &v)
		switch v.(type) {
		case map[string]any, []any: // an object defaulted to make its fields' defaults apply
		default:
			if s := fmt.Sprint(v); !strings.Contains(strings.ToLower(p.Description), "default") || !strings.Contains(p.Description, s) {
				out = append(out, fmt.Sprintf("%s: the description does not say the default %s", path, s))
			}
		}
	}
	for name, c := range p.Properties {
		out = append(out, undocumented(path+"."+name, c)...)
	}
	if p.Items != nil && p.Items.Schema != nil {
		for name, c := range p.Items.Schema.Properties {
			out = append(out, undocumented(path+"[]."+name, c)...)
		}
	}
	if p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil {
		for name, c := range p.AdditionalProperties.Schema.Properties {
			out = append(out, undocumented(path+"{}."+name, c)...)
		}
	}
	return out
}

// generatedCRDs are the CRDs controller-gen wrote into config/crd/bases.
func generatedCRDs(t *testing.T) []apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs: %v", err)
	}
	var crds []apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(b, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		crds = append(crds, crd)
	}
	return crds
}
