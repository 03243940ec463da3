package depcheck

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// CustomResourceDep waits until an object of any kind (found through discovery, so a CRD that
// is installed later is picked up) exists and all its fields and conditions match.
type CustomResourceDep struct{ CustomResource }

func (c CustomResourceDep) String() string {
	return fmt.Sprintf("%s %s/%s (%s)", c.Kind, c.Namespace, c.Name, c.APIVersion)
}

// DefaultConditionStatus is what a condition without status must report.
const DefaultConditionStatus = "True"

func (c CustomResourceDep) Check(ctx context.Context, e *Env) (string, error) {
	gv, err := schema.ParseGroupVersion(c.APIVersion)
	if err != nil {
		return "", err
	}
	resources, err := e.Kube.Discovery().ServerResourcesForGroupVersion(c.APIVersion)
	if apierrors.IsNotFound(err) {
		return "API " + c.APIVersion + " is not served", nil
	}
	if err != nil {
		return "", err
	}
	var client dynamic.ResourceInterface
	for _, r := range resources.APIResources {
		if r.Kind != c.Kind || strings.Contains(r.Name, "/") {
			continue // other kinds, subresources
		}
		ri := e.Dynamic.Resource(gv.WithResource(r.Name))
		if r.Namespaced {
			client = ri.Namespace(c.Namespace)
		} else {
			client = ri
		}
		break
	}
	if client == nil {
		return "kind " + c.Kind + " is not served by " + c.APIVersion, nil
	}
	obj, err := client.Get(ctx, c.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "not found", nil
	}
	if err != nil {
		return "", err
	}
	var pending []string
	for _, f := range c.Fields {
		if got, ok := fieldString(obj.Object, f.Key); !ok {
			pending = append(pending, fmt.Sprintf("%s is %s, want %q", f.Key, got, f.Value))
		} else if got != f.Value {
			pending = append(pending, fmt.Sprintf("%s is %q, want %q", f.Key, got, f.Value))
		}
	}
	for _, cond := range c.Conditions {
		want := cond.Status
		if want == "" {
			want = DefaultConditionStatus
		}
		if got := conditionStatus(obj.Object, cond.Type); got != want {
			pending = append(pending, fmt.Sprintf("condition %s is %s, want %s", cond.Type, got, want))
		}
	}
	return strings.Join(pending, "; "), nil
}

// fieldString reads a dotted path as a string; numbers and booleans are formatted (upstream
// compares strings only). When ok is false, s says why (missing, or not a scalar).
func fieldString(obj map[string]any, key string) (s string, ok bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj, strings.Split(key, ".")...)
	switch {
	case err != nil:
		return "not readable (" + err.Error() + ")", false
	case !found:
		return "missing", false
	}
	switch v := v.(type) {
	case string:
		return v, true
	case bool, int64, float64, int32, int:
		return fmt.Sprint(v), true
	case nil:
		return "null", false
	default:
		return fmt.Sprintf("a %T, not a scalar", v), false
	}
}

// conditionStatus is the status of status.conditions[type=t], or a description of its absence.
func conditionStatus(obj map[string]any, t string) string {
	list, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok || m["type"] != t {
			continue
		}
		if s, ok := m["status"].(string); ok {
			return s
		}
		return "without status"
	}
	return "missing"
}
