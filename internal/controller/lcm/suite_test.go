package lcm

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/testutil/lcmtest"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

var env = testenv.New(func(mgr ctrl.Manager) error { return Setup(mgr, Options{Compute: nova}) })

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// eventually polls cond until it returns nil; the deadline only bounds how long a broken
// controller makes the test hang.
func eventually(t *testing.T, cond func() error) {
	testenv.Eventually(t, time.Minute, 100*time.Millisecond, "", cond)
}

// newNode creates a Kubernetes Node (no kubelet: only its object) with labels.
func newNode(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := env.Client.Create(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, n) })
}

func ensureNamespace(t *testing.T, name string) {
	lcmtest.EnsureNamespace(t, env.Ctx, env.Client, name)
}

// applyProfile creates or replaces a profile's spec.
func applyProfile(t *testing.T, namespace, name string, spec kupenstackv1.OpenstackCloudConfigurationProfileSpec) {
	lcmtest.ApplyProfile(t, env.Ctx, env.Client, namespace, name, spec)
}

// applyConfig creates the configuration or replaces its spec (the tests share the singleton and
// run one after the other; a node list that would rename an entry in place is written in two
// steps).
func applyConfig(t *testing.T, spec kupenstackv1.KupenstackConfigurationSpec) {
	t.Helper()
	for range 10 {
		var cfg kupenstackv1.KupenstackConfiguration
		err := env.Client.Get(env.Ctx, configKey, &cfg)
		if apierrors.IsNotFound(err) {
			cfg = kupenstackv1.KupenstackConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configKey.Name}, Spec: spec}
			if err = env.Client.Create(env.Ctx, &cfg); err == nil {
				return
			}
		} else if err == nil {
			cfg.Spec = spec
			if err = env.Client.Update(env.Ctx, &cfg); err == nil {
				return
			}
			if apierrors.IsInvalid(err) && strings.Contains(err.Error(), "cannot be changed in place") {
				// One test's node replaced by another's at the same place: admission wants the
				// old entry removed first, as a user would.
				cfg.Spec.Nodes = nil
				if err = env.Client.Update(env.Ctx, &cfg); err == nil {
					continue
				}
			}
		}
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	t.Fatal("could not write the configuration")
}

func baseSpec(nodes ...kupenstackv1.ConfiguredNode) kupenstackv1.KupenstackConfigurationSpec {
	return kupenstackv1.KupenstackConfigurationSpec{
		Release: "2026.1", Namespace: "openstack",
		Charts:         kupenstackv1.ChartSource{LocalPath: "/charts"},
		DefaultProfile: kupenstackv1.ProfileReference{Name: "default", Namespace: "lcm-profiles"},
		Nodes:          nodes,
	}
}

// nodeLabels reads a Node's labels and managed-labels annotation.
func nodeLabels(t *testing.T, name string) (map[string]string, string) {
	t.Helper()
	var n corev1.Node
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: name}, &n); err != nil {
		t.Fatal(err)
	}
	return n.Labels, n.Annotations[kupenstackv1.AnnotationManagedLabels]
}

// wantLabels waits until the node has exactly these of the OpenStack-Helm labels (plus any
// other labels given in others) and the annotation lists owned.
func wantLabels(t *testing.T, name string, want map[string]string, owned string) {
	t.Helper()
	eventually(t, func() error {
		labels, ann := nodeLabels(t, name)
		for _, k := range []string{"openstack-control-plane", "openstack-compute-node", "openvswitch"} {
			if labels[k] != want[k] {
				return fmt.Errorf("node %s: label %s = %q, want %q (labels %v)", name, k, labels[k], want[k], labels)
			}
		}
		for k, v := range want {
			if labels[k] != v {
				return fmt.Errorf("node %s: label %s = %q, want %q", name, k, labels[k], v)
			}
		}
		if ann != owned {
			return fmt.Errorf("node %s: managed-labels annotation = %q, want %q", name, ann, owned)
		}
		return nil
	})
}

var nodeGVK = corev1.SchemeGroupVersion.WithKind("Node")

func nodeObj(t *testing.T, name string) *corev1.Node {
	t.Helper()
	var n corev1.Node
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: name}, &n); err != nil {
		t.Fatal(err)
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	return &n
}
