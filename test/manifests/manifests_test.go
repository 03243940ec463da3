// Package manifests checks that what users install is accepted by a real API server: the
// kustomize tree under config/ and every sample, applied with the whole operator running.
package manifests

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller"
	"github.com/kupenstack/kupenstack/internal/openstack"
	"github.com/kupenstack/kupenstack/internal/testutil/chart"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// No cloud here: the controllers run, and a Project simply reports that it cannot reach OpenStack.
var env = testenv.New(func(mgr ctrl.Manager) error {
	noCloud := func(context.Context) ([]byte, error) { return nil, errors.New("no cloud in the manifests test") }
	return controller.SetupAll(context.Background(), mgr, controller.Options{
		Clients: openstack.NewClients(noCloud, "none", 10, 10), ResyncPeriod: time.Minute, DomainID: "default", MemberRole: "member",
	})
})

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// apply server-side-applies every object of a multi-document YAML stream, for real.
func apply(t *testing.T, stream []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	var applied []*unstructured.Unstructured
	for {
		var obj unstructured.Unstructured
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return applied
		}
		if err != nil {
			t.Fatalf("decoding YAML: %v", err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		//nolint:staticcheck // client.Apply with an unstructured object is the plain SSA patch.
		if err := env.Client.Patch(env.Ctx, &obj, client.Apply, client.FieldOwner("manifests-test"), client.ForceOwnership); err != nil {
			t.Fatalf("applying %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		applied = append(applied, &obj)
	}
}

func TestDefaultKustomization(t *testing.T) {
	env.Require(t)
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	out, err := exec.Command(kubectl, "kustomize", filepath.Join(testenv.RepoRoot(), "config", "default")).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/default: %v", err)
	}
	kinds := map[string]int{}
	apply(t, out)
	objs, err := chart.Decode(out) // as built: apply fills in what the server returned
	if err != nil {
		t.Fatal(err)
	}
	var crds []*unstructured.Unstructured
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		}
		if o.GetNamespace() != "" && o.GetNamespace() != "kupenstack-system" {
			t.Errorf("%s %s goes to namespace %q", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	checkCRDs(t, "config/default", crds) // every generated CRD, unchanged
	checkRBAC(t, objs)
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
				t.Fatal(err)
			}
			checkWritableTmp(t, &d)
		}
	}
	for _, want := range []string{"CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "Role",
		"RoleBinding", "ServiceAccount", "Namespace", "Deployment", "Service"} {
		if kinds[want] == 0 {
			t.Errorf("config/default has no %s (has %v)", want, kinds)
		}
	}
}

func TestSamples(t *testing.T) {
	env.Require(t)
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples found (%v)", err)
	}
	// The quickstart's cloud life-cycle samples (hack/quickstart.sh applies them as they are,
	// but for charts.localPath).
	quickstart, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "quickstart", "*.yaml"))
	if err != nil || len(quickstart) == 0 {
		t.Fatalf("no quickstart samples found (%v)", err)
	}
	files = append(files, quickstart...)
	// The life-cycle's samples (cloud.yaml for render, one-node.yaml for TestWholeCloud).
	lcm, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "lcm", "*.yaml"))
	if err != nil || len(lcm) < 2 {
		t.Fatalf("no life-cycle samples found (%v)", err)
	}
	files = append(files, lcm...)
	// The cloud admin's day one (e2e TestDayOne applies them to the all-in-one).
	dayOne, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "day-one", "*.yaml"))
	if err != nil || len(dayOne) < 3 {
		t.Fatalf("no day-one samples found (%v)", err)
	}
	files = append(files, dayOne...)
	// Their profiles' namespace, which config/default creates.
	if err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kupenstack-system"}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data = realQuickstartTenant(t, data)
		for _, obj := range apply(t, data) {
			// There is one configuration per cluster: leave room for the docs' example.
			if obj.GetKind() == "KupenstackConfiguration" {
				t.Cleanup(func() {
					if err := env.Client.Delete(env.Ctx, obj); client.IgnoreNotFound(err) != nil {
						t.Errorf("deleting the sample KupenstackConfiguration: %v", err)
					}
				})
			}
		}
	}
	// The sample namespace opts in to a project; the operator must have created its Project.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := env.Client.Get(env.Ctx, client.ObjectKey{Name: "demo"}, &kupenstackv1.Project{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Errorf("sample namespace demo got no Project: %w", err))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDocsExamples: every YAML example in docs/ is accepted by the API server (a server-side
// apply dry run into an existing namespace team-a).
func TestDocsExamples(t *testing.T) {
	env.Require(t)
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs found (%v)", err)
	}
	// (TestSamples may have made it, and its quota: the day-one tenant is team-a too; hence
	// the forced dry-run apply below.)
	if err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	examples := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range yamlBlocks(string(data)) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(block), &obj.Object); err != nil {
				t.Fatalf("%s example %d is not YAML: %v", filepath.Base(f), i+1, err)
			}
			//nolint:staticcheck // client.Apply with an unstructured object is the plain SSA patch.
			if err := env.Client.Patch(env.Ctx, obj, client.Apply, client.FieldOwner("docs-test"), client.ForceOwnership, client.DryRunAll); err != nil {
				t.Errorf("%s example %d (%s %s) rejected: %v", filepath.Base(f), i+1, obj.GetKind(), obj.GetName(), err)
			}
			examples++
		}
	}
	if examples < 10 {
		t.Fatalf("only %d YAML examples found in docs/", examples)
	}
}

// yamlBlocks returns the contents of the ```yaml fences of a Markdown document.
func yamlBlocks(doc string) []string {
	var blocks []string
	for _, part := range strings.Split(doc, "```yaml\n")[1:] {
		if end := strings.Index(part, "```"); end >= 0 {
			blocks = append(blocks, part[:end])
		}
	}
	return blocks
}

// realQuickstartTenant fills in what hack/quickstart-real.sh fills in the real quickstart's
// tenant (config/samples/quickstart/real-tenant.yaml): the guest's URL and checksum and a public
// key, in a namespace of its own, beside config/samples' demo whose VM is also web-0. Other
// samples are returned as they are.
func realQuickstartTenant(t *testing.T, data []byte) []byte {
	t.Helper()
	if !bytes.Contains(data, []byte("@GUEST_URL@")) {
		return data
	}
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer("@GUEST_URL@", "http://files.kupenstack-files.svc.cluster.local/guest/guest.raw",
		"@GUEST_SHA256@", strings.Repeat("0", 64),
		"@PUBLIC_KEY@", strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))),
		"name: demo\n", "name: real-demo\n", "namespace: demo\n", "namespace: real-demo\n").Replace(string(data))
	if strings.Contains(s, "@GUEST_") || strings.Contains(s, "@PUBLIC_KEY@") {
		t.Fatalf("real-tenant.yaml: a placeholder left: %s", s)
	}
	return []byte(s)
}
