package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kupenstack/kupenstack/internal/lcm/render"
	"github.com/kupenstack/kupenstack/internal/testutil/chart"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// TestRealChartsInstallAsOperator: everything the real charts of every release render (hooks
// included, as Helm creates them; not Helm's test Pods, which only `helm test` creates) is
// created, for real and in Helm's install order, by the operator's ServiceAccount bound to
// nothing but the generated ClusterRole (config/rbac/role.yaml): zero Forbidden (finding 3:
// nova's ClusterRoles and ClusterRoleBindings were forbidden).
func TestRealChartsInstallAsOperator(t *testing.T) {
	env.Require(t)
	const saNS, saName = "kupenstack-rbac-test", "operator"
	roleName := "kupenstack-rbac-test-" + strings.ToLower(t.Name())
	role := generatedClusterRole(t)
	role.ObjectMeta = metav1.ObjectMeta{Name: roleName}
	mustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: saNS}})
	mustCreate(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: saNS, Name: saName}})
	mustCreate(t, role)
	mustCreate(t, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: roleName},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: saNS, Name: saName}}})
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + saNS + ":" + saName,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + saNS, "system:authenticated"}}
	asOperator, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	for _, tag := range realcharts.Tags {
		t.Run(tag, func(t *testing.T) {
			ns := "rbac-" + strings.ReplaceAll(tag, ".", "-")
			f, err := os.Open(filepath.Join(testenv.RepoRoot(), "config", "samples", "lcm", "cloud.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			docs, err := render.Parse(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			docs.Config.Spec.Release = realcharts.Release(tag)
			docs.Config.Spec.Namespace = ns
			docs.Config.Spec.OptionalComponents = []string{"cinder", "horizon"}
			comps, err := render.Run(docs, render.Options{Charts: realcharts.Dir(t, tag)})
			if err != nil {
				t.Fatal(err)
			}
			mustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
			kinds := map[string]int{}
			for _, c := range comps {
				for _, o := range installOrder(t, c.Manifest) {
					if o.GetKind() == "Pod" && o.GetAnnotations()["helm.sh/hook"] != "" {
						continue // helm test Pods
					}
					if o.GetNamespace() == "" && o.GetKind() != "ClusterRole" && o.GetKind() != "ClusterRoleBinding" {
						o.SetNamespace(ns)
					}
					kinds[o.GetKind()]++
					err := asOperator.Create(env.Ctx, o)
					if apierrors.IsAlreadyExists(err) {
						err = nil // authorised: a cluster-scoped object of an earlier tag
					}
					if err != nil {
						t.Errorf("%s: %s %s: %v", c.Name, o.GetKind(), o.GetName(), err)
					}
				}
			}
			for _, k := range []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Job", "StatefulSet", "DaemonSet"} {
				if kinds[k] == 0 {
					t.Errorf("no %s among the created objects %v: the test lost its subject", k, kinds)
				}
			}
		})
	}
}

// installOrder is a manifest's objects in the order Helm creates them (by kind).
func installOrder(t *testing.T, manifest string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, doc := range releaseutil.SplitManifests(manifest) {
		decoded, err := chart.Decode([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, decoded...)
	}
	rank := func(kind string) int {
		if i := slices.Index(releaseutil.InstallOrder, kind); i >= 0 {
			return i
		}
		return len(releaseutil.InstallOrder)
	}
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int { return rank(a.GetKind()) - rank(b.GetKind()) })
	return objs
}

func generatedClusterRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatal(err)
	}
	return &role
}

func mustCreate(t *testing.T, o client.Object) {
	t.Helper()
	if err := env.Client.Create(env.Ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
