package helm

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// A ConfigMap whose last value is a block scalar, as the OpenStack-Helm charts write their
// scripts and configuration files: the value ends with a newline, and so must the value read
// from the object's document (the drift check applies that document and compares it with the
// object Helm created).
func TestObjectsKeepBlockScalarNewlines(t *testing.T) {
	ch := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "scripts", Version: "0.1.0"},
		Templates: []*chart.File{
			{Name: "templates/bin.yaml", Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: scripts-bin
data:
  first.sh: |
    #!/bin/sh
    echo first
  last.sh: |
    #!/bin/sh
    if true; then
      echo last
    fi
`)},
			{Name: "templates/etc.yaml", Data: []byte(`---
apiVersion: v1
kind: ConfigMap
metadata:
  name: scripts-etc
data:
  kept.conf: |+
    [DEFAULT]
    debug = true

---
apiVersion: v1
kind: Secret
metadata:
  name: scripts-keys
stringData:
  key: |-
    no newline
`)},
		},
	}
	manifest, err := Render(ch, "scripts", "ns", nil)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Objects(manifest, "ns")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]any{}
	for _, o := range objs {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(o.Doc), &obj); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
		got[o.Name] = obj
	}

	// What Helm's kube client creates: the whole manifest read by the decoder it uses
	// (cli-runtime's StreamVisitor → apimachinery's YAMLOrJSONDecoder).
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	var created []string
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if obj == nil {
			continue
		}
		name := obj["metadata"].(map[string]any)["name"].(string)
		if !reflect.DeepEqual(got[name], obj) {
			t.Errorf("%s: the document of Objects reads\n%v\nHelm creates\n%v", name, got[name], obj)
		}
		created = append(created, name)
	}
	var listed []string
	for _, o := range objs {
		listed = append(listed, o.Name)
	}
	if !reflect.DeepEqual(listed, created) || len(listed) != 3 {
		t.Fatalf("Objects lists %v, Helm creates %v (want 3, in that order)", listed, created)
	}
	for name, want := range map[string]map[string]string{
		"scripts-bin":  {"last.sh": "#!/bin/sh\nif true; then\n  echo last\nfi\n", "first.sh": "#!/bin/sh\necho first\n"},
		"scripts-etc":  {"kept.conf": "[DEFAULT]\ndebug = true\n"},
		"scripts-keys": {"key": "no newline"},
	} {
		field := "data"
		if name == "scripts-keys" {
			field = "stringData"
		}
		for k, v := range want {
			if g := got[name][field].(map[string]any)[k]; g != v {
				t.Errorf("%s %s.%s = %q, want %q", name, field, k, g, v)
			}
		}
	}
}

func TestSplitManifest(t *testing.T) {
	docs, err := SplitManifest("---\n# Source: a\na: |\n  x\n---\n# Source: b\nb: 1\n")
	if err != nil {
		t.Fatal(err)
	}
	// As Helm's reader, the separator opening the manifest stays in the first document.
	if want := []string{"---\n# Source: a\na: |\n  x\n", "# Source: b\nb: 1\n"}; !reflect.DeepEqual(docs, want) {
		t.Errorf("SplitManifest = %q, want %q", docs, want)
	}
	if _, err := SplitManifest("a: 1\n--- nonsense\nb: 2\n"); err == nil {
		t.Error("SplitManifest accepted a separator followed by text")
	}
}
