package helm

import (
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/releaseutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// Objects lists the objects of a rendered manifest (hooks are not part of a release's manifest).
func Objects(manifest, namespace string) ([]ObjectRef, error) {
	var out []ObjectRef
	for _, doc := range releaseutil.SplitManifests(manifest) {
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
