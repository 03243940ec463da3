package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1 "k8s.io/api/core/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// TestDayOne applies the cloud admin's day one (config/samples/day-one: the external network,
// flavors, a public image, a tenant namespace with its quota, RoleBinding and application
// credential) to the real cloud; every KupenStack object gets Ready and the tenant's clouds.yaml
// Secret is written. Then the tenant uses them by name: a router on the external network, a
// floating IP from it, a VM of a day-one flavor booting from the public image.
//
// The all-in-one is shared with the other tests, so the samples are adapted, and only in what
// depends on the cloud: cluster-scoped names get a suffix (references follow), the tenant is the
// test's own namespace, the external network is a VLAN of the cloud's physical network
// vlanPhysnet (its one flat network is taken) on a range of its own, and the image data comes from
// a server of the test.
func TestDayOne(t *testing.T) {
	parallel(t)
	requireCloud(t)
	ns := newNamespace(t)
	suffix := strings.TrimPrefix(ns, "e2e-testdayone") // unique: the namespace's name has the time
	payload := randomPayload(t, 32<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(payload) }))
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(payload)
	subnet := fmt.Sprintf("100.71.%d.", cidrCounter.Add(1)%250)

	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "day-one", "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("day-one samples: %v %v", files, err)
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(t.TempDir(), filepath.Base(f))
		if err := os.WriteFile(tmp, []byte(strings.ReplaceAll(string(data), "198.51.100.", subnet)), 0o600); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, readObjects(t, tmp)...)
	}
	renamed := map[string]string{}
	for _, o := range objs {
		if o.GetNamespace() == "" && o.GroupVersionKind().Group == kupenstackv1.GroupVersion.Group && o.GetKind() != "ProjectQuota" {
			renamed[o.GetName()] = o.GetName() + suffix
			o.SetName(o.GetName() + suffix)
		}
	}
	// The admin's objects go even when the test fails half-way: the cloud is shared.
	t.Cleanup(func() {
		for _, o := range objs {
			if o.GetNamespace() == "" && o.GetKind() != "Namespace" {
				_ = env.Client.Delete(env.Ctx, o)
			}
		}
	})
	var tenant []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace":
			continue // the test's own, made already
		case "ProjectQuota":
			o.SetName(ns)
			must(t, unstructured.SetNestedField(o.Object, ns, "spec", "namespace"))
		case "ProviderNetwork":
			must(t, unstructured.SetNestedField(o.Object, "vlan", "spec", "networkType"))
			must(t, unstructured.SetNestedField(o.Object, vlanPhysnet(), "spec", "physicalNetwork"))
		case "ProviderSubnet":
			ref, _, _ := unstructured.NestedString(o.Object, "spec", "providerNetworkRef")
			must(t, unstructured.SetNestedField(o.Object, renamed[ref], "spec", "providerNetworkRef"))
		case "PublicImage":
			must(t, unstructured.SetNestedField(o.Object, srv.URL+"/image.raw", "spec", "source", "url"))
			must(t, unstructured.SetNestedField(o.Object, hex.EncodeToString(sum[:]), "spec", "source", "sha256"))
			// Random bytes are a raw disk (one that boots nothing) but no qcow2: a real cloud's
			// Glance inspects the data against the format, and its hypervisor opens it.
			must(t, unstructured.SetNestedField(o.Object, "raw", "spec", "diskFormat"))
		}
		if o.GetNamespace() != "" {
			o.SetNamespace(ns)
			tenant = append(tenant, o)
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
	var secret corev1.Secret
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Namespace: ns, Name: "team-a-cloud"}, &secret); err != nil || len(secret.Data["clouds.yaml"]) == 0 {
		t.Errorf("the tenant's clouds.yaml Secret: %v (keys %d)", err, len(secret.Data))
	}

	// The tenant on day one, with the admin's objects referred to by name.
	network, image, flavor := renamed["public"], renamed["debian-12"], renamed["small"]
	router := &kupenstackv1.Router{ObjectMeta: objMeta(ns, "edge"), Spec: kupenstackv1.RouterSpec{
		ExternalGateway: &kupenstackv1.RouterGateway{ProviderNetworkRef: network}}}
	fip := &kupenstackv1.FloatingIP{ObjectMeta: objMeta(ns, "ip"), Spec: kupenstackv1.FloatingIPSpec{ProviderNetworkRef: network}}
	vm := &kupenstackv1.VirtualMachine{ObjectMeta: objMeta(ns, "vm"), Spec: kupenstackv1.VirtualMachineSpec{
		FlavorRef: flavor, PublicImageRef: image}}
	create(t, router, fip, vm)
	for _, o := range []generic.Object{router, fip, vm} {
		waitReady(t, o)
	}
	if !strings.HasPrefix(fip.Status.Resource.FloatingIPAddress, subnet) {
		t.Errorf("floating IP %q, want one of %s0/24", fip.Status.Resource.FloatingIPAddress, subnet)
	}

	// The namespace's objects and its quota (which would make the project again), then the
	// project, then the admin's objects.
	var admin []client.Object
	for _, o := range objs {
		switch {
		case o.GetKind() == "ProjectQuota":
			tenant = append(tenant, o)
		case o.GetNamespace() == "" && o.GetKind() != "Namespace":
			admin = append(admin, o)
		}
	}
	deleteAll(t, ns, false, append([]client.Object{vm, fip, router}, unstructuredObjects(tenant)...)...)
	deleteAll(t, "", true, admin...)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func unstructuredObjects(in []*unstructured.Unstructured) []client.Object {
	out := make([]client.Object, len(in))
	for i, o := range in {
		out[i] = o
	}
	return out
}
