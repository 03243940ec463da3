package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// readObjects decodes the objects of a sample file.
func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

// waitReadyUnstructured waits until the KupenStack object o is Ready for its current generation.
func waitReadyUnstructured(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	eventually(t, o.GetKind()+"/"+o.GetName()+" ready", func() error {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(o), got); err != nil {
			return err
		}
		var st struct {
			Conditions []metav1.Condition `json:"conditions"`
		}
		raw, _, _ := unstructured.NestedFieldNoCopy(got.Object, "status")
		if err := runtimeConvert(raw, &st); err != nil {
			return err
		}
		if !conditions.IsReady(st.Conditions, got.GetGeneration()) {
			return fmt.Errorf("not ready: %+v", st.Conditions)
		}
		return nil
	})
}

// TestSamples applies every object of config/samples (the namespaced ones, and the quota of
// their namespace, into a fresh namespace) and waits until each KupenStack object is Ready
// against the real cloud, then deletes them all at once.
func TestSamples(t *testing.T) {
	parallel(t)
	requireCloud(t)
	ns := newNamespace(t)
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples (%v)", err)
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		objs = append(objs, readObjects(t, f)...)
	}
	for _, o := range objs {
		if o.GetNamespace() != "" {
			o.SetNamespace(ns)
		}
		if o.GetKind() == "ProjectQuota" { // named after its namespace: the test's
			o.SetName(ns)
			if err := unstructured.SetNestedField(o.Object, ns, "spec", "namespace"); err != nil {
				t.Fatal(err)
			}
		}
		if err := env.Client.Create(env.Ctx, o); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	for _, o := range objs {
		if o.GroupVersionKind().Group == kupenstackv1.GroupVersion.Group {
			waitReadyUnstructured(t, o)
		}
	}
	// The router is really wired: gateway on the external network, one interface on the subnet.
	router := &unstructured.Unstructured{}
	router.SetGroupVersionKind(kupenstackv1.GroupVersion.WithKind("Router"))
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, router); err != nil {
		t.Fatal(err)
	}
	gw, _, _ := unstructured.NestedString(router.Object, "status", "resource", "externalGatewayNetworkID")
	ifaces, _, _ := unstructured.NestedSlice(router.Object, "status", "resource", "interfaces")
	ips, _, _ := unstructured.NestedStringSlice(router.Object, "status", "resource", "externalIPs")
	if gw == "" || len(ifaces) != 1 || len(ips) == 0 {
		t.Errorf("router gateway %q, external IPs %v, interfaces %v", gw, ips, ifaces)
	}

	// The floating IP is associated with the port's address.
	fip := &unstructured.Unstructured{}
	fip.SetGroupVersionKind(kupenstackv1.GroupVersion.WithKind("FloatingIP"))
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Namespace: ns, Name: "web-0"}, fip); err != nil {
		t.Fatal(err)
	}
	fixed, _, _ := unstructured.NestedString(fip.Object, "status", "resource", "fixedIPAddress")
	addr, _, _ := unstructured.NestedString(fip.Object, "status", "resource", "floatingIPAddress")
	if fixed != "10.10.0.20" || addr == "" {
		t.Errorf("floating IP %q associated with %q, want 10.10.0.20", addr, fixed)
	}

	// Delete everything at once: the deletion guards order the OpenStack deletions.
	for _, o := range objs {
		if err := env.Client.Delete(env.Ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range objs {
		eventually(t, o.GetKind()+"/"+o.GetName()+" deleted", func() error {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(o.GroupVersionKind())
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(o), got); err == nil {
				return errors.New("still there")
			} else if client.IgnoreNotFound(err) != nil {
				return err
			}
			return nil
		})
	}
	deleteProject(t, ns)
}
