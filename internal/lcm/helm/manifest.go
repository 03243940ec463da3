package helm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// ObjectRef names one object of a release's manifest.
type ObjectRef struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	// Doc is the object's document in the manifest: what the release wants it to be.
	Doc string
}

func (o ObjectRef) String() string {
	if o.Namespace == "" {
		return fmt.Sprintf("%s %s", o.GVK.Kind, o.Name)
	}
	return fmt.Sprintf("%s %s/%s", o.GVK.Kind, o.Namespace, o.Name)
}

// clusterScoped are the kinds charts commonly carry that have no namespace; any other kind
// without one in the manifest lives in the release's namespace.
var clusterScoped = map[string]bool{
	"ClusterRole": true, "ClusterRoleBinding": true, "CustomResourceDefinition": true,
	"Namespace": true, "PersistentVolume": true, "StorageClass": true, "PriorityClass": true,
	"MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true,
}

// SplitManifest splits a manifest into its YAML documents, in order, the way Helm's kube client
// reads a manifest when it creates and updates the objects (k8s.io/apimachinery's YAMLReader: a
// document ends at a line starting with "---"), so each document keeps its exact text.
// releaseutil.SplitManifests is not that: it trims each document, and a block scalar (|) that
// ends a document loses its final newline, a value the live object has.
func SplitManifest(manifest string) ([]string, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	var docs []string
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("manifest: %w", err)
		}
		docs = append(docs, string(doc))
	}
}

// Objects lists the objects of a rendered manifest (hooks are not part of a release's manifest),
// in manifest order, each with its document as Helm applies it.
func Objects(manifest, namespace string) ([]ObjectRef, error) {
	docs, err := SplitManifest(manifest)
	if err != nil {
		return nil, err
	}
	var out []ObjectRef
	for _, doc := range docs {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var head struct {
			metav1.TypeMeta `json:",inline"`
			Metadata        metav1.ObjectMeta `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return nil, fmt.Errorf("manifest: %w", err)
		}
		if head.Kind == "" {
			continue // a document of comments only
		}
		gv, err := schema.ParseGroupVersion(head.APIVersion)
		if err != nil {
			return nil, fmt.Errorf("manifest: %s %s: %w", head.Kind, head.Metadata.Name, err)
		}
		ref := ObjectRef{GVK: gv.WithKind(head.Kind), Namespace: head.Metadata.Namespace, Name: head.Metadata.Name, Doc: doc}
		if ref.Namespace == "" && !clusterScoped[head.Kind] {
			ref.Namespace = namespace
		}
		out = append(out, ref)
	}
	return out, nil
}
