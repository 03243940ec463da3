package generic

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// withRelaxedResyncPeriod runs write with the Network CRD as it was before spec.resyncPeriod was
// checked at admission (any string stored), then puts the real CRD back and waits until the API
// server refuses a bad value again.
func withRelaxedResyncPeriod(t *testing.T, write func() error) {
	t.Helper()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	key := client.ObjectKey{Name: "networks.kupenstack.io"}
	if err := env.Client.Get(env.Ctx, key, crd); err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	path := []string{"schema", "openAPIV3Schema", "properties", "spec", "properties", "resyncPeriod"}
	v0 := versions[0].(map[string]any)
	strict, _, _ := unstructured.NestedMap(v0, path...)
	setSchema := func(s map[string]any) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := env.Client.Get(env.Ctx, key, crd)
			if err == nil {
				vs, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
				_ = unstructured.SetNestedMap(vs[0].(map[string]any), s, path...)
				_ = unstructured.SetNestedSlice(crd.Object, vs, "spec", "versions")
				if err = env.Client.Update(env.Ctx, crd); err == nil {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("updating the Network CRD: %v", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	setSchema(map[string]any{"type": "string"})
	defer func() {
		setSchema(strict)
		probe := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "default"}}
		probe.Spec.ResyncPeriod = &kupenstackv1.Duration{Duration: time.Millisecond} // below the bound
		waitUntil(t, "the strict CRD back in force", func() error {
			if err := env.Client.Create(env.Ctx, probe.DeepCopy(), client.DryRunAll); err == nil {
				return errString("a bad resyncPeriod is still accepted")
			}
			return nil
		})
	}()
	waitUntil(t, "a bad value stored", write)
}

type errString string

func (e errString) Error() string { return string(e) }

// TestBadStoredValueDegradesOnlyItsObject: a Network whose spec.resyncPeriod is not a duration,
// stored before admission checked it, once made the kind's informer fail to decode its list, so
// that no Network in any namespace was reconciled any more. Now that object alone is Degraded
// with a reason naming the field, and a Network in another namespace is created as usual.
func TestBadStoredValueDegradesOnlyItsObject(t *testing.T) {
	nsBad, nsGood := readyNamespace(t), readyNamespace(t)
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kupenstack.io/v1alpha1", "kind": "Network",
		"metadata": map[string]any{"name": "bad-period", "namespace": nsBad},
		"spec":     map[string]any{"resyncPeriod": "every hour"},
	}}
	withRelaxedResyncPeriod(t, func() error { return env.Client.Create(env.Ctx, bad.DeepCopy()) })

	good := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "neighbour", Namespace: nsGood}}
	if err := env.Client.Create(env.Ctx, good); err != nil {
		t.Fatal(err)
	}
	waitFor(t, client.ObjectKeyFromObject(good), "the other namespace's Network ready", func(n *kupenstackv1.Network) bool {
		return n.Status.ID != "" && condition(n, kupenstackv1.ConditionReady).Status == metav1.ConditionTrue
	})
	got := waitFor(t, client.ObjectKey{Namespace: nsBad, Name: "bad-period"}, "the bad Network degraded", func(n *kupenstackv1.Network) bool {
		return condition(n, kupenstackv1.ConditionDegraded).Status == metav1.ConditionTrue
	})
	d := condition(got, kupenstackv1.ConditionDegraded)
	if d.Reason != kupenstackv1.ReasonInvalidConfiguration || !strings.Contains(d.Message, `spec.resyncPeriod: "every hour" is not a duration`) {
		t.Fatalf("Degraded = %+v, want InvalidConfiguration naming spec.resyncPeriod", d)
	}
	if got.Status.ID != "" {
		t.Fatalf("created %s for an object with an invalid spec", got.Status.ID)
	}
	// The stored value round-trips: the operator's writes (its finalizer) did not change it.
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(bad.GroupVersionKind())
	if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(bad), u); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(u.Object, "spec", "resyncPeriod"); v != "every hour" || len(u.GetFinalizers()) == 0 {
		t.Fatalf("stored resyncPeriod %q, finalizers %v", v, u.GetFinalizers())
	}
	// A fix (here: removing the field) lets it converge; its deletion works either way.
	got.Spec.ResyncPeriod = nil
	if err := env.Client.Update(env.Ctx, got); err != nil {
		t.Fatal(err)
	}
	waitFor(t, client.ObjectKeyFromObject(got), "the fixed Network ready", func(n *kupenstackv1.Network) bool {
		return n.Status.ID != "" && condition(n, kupenstackv1.ConditionReady).Status == metav1.ConditionTrue
	})
}
