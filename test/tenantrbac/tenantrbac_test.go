// Package tenantrbac checks what a tenant can do with the shipped roles, on a real API server
// with Kubernetes' own view, edit and admin roles and their aggregation: a user bound to edit in
// one namespace works with the OpenStack kinds there, and nowhere else.
package tenantrbac

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

var env = testenv.New(nil).WithRoleAggregation()

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

const tenant = "alice"

// setup installs the shipped tenant roles, makes namespaces mine and theirs and binds the tenant to
// Kubernetes' edit role in mine, then waits for the aggregation to give edit the OpenStack kinds.
func setup(t *testing.T) {
	t.Helper()
	env.Require(t)
	for _, f := range []string{"tenant_view_role.yaml", "tenant_edit_role.yaml"} {
		b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", f))
		if err != nil {
			t.Fatal(err)
		}
		role := &rbacv1.ClusterRole{}
		if err := yaml.UnmarshalStrict(b, role); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := env.Client.Create(env.Ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for _, ns := range []string{"mine", "theirs"} {
		if err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-edit", Namespace: "mine"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: tenant}}}
	if err := env.Client.Create(env.Ctx, rb); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, 100*time.Millisecond, "edit aggregating the tenant roles", func() error {
		var edit rbacv1.ClusterRole
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: "edit"}, &edit); err != nil {
			return err
		}
		var create, list bool
		for _, r := range edit.Rules {
			if len(r.APIGroups) == 1 && r.APIGroups[0] == "kupenstack.io" {
				create = create || strings.Contains(strings.Join(r.Verbs, ","), "create")
				list = list || strings.Contains(strings.Join(r.Verbs, ","), "list")
			}
		}
		if !create || !list {
			return fmt.Errorf("edit has no kupenstack.io create and list yet")
		}
		return nil
	})
}

func asTenant(t *testing.T) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: tenant}
	c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTenantWorksInItsNamespaceOnly: with edit in its namespace, a tenant lists, creates, scales
// and deletes the OpenStack kinds there; it is refused in another namespace, on the cluster-scoped
// kinds, on the configuration profiles and on status.
func TestTenantWorksInItsNamespaceOnly(t *testing.T) {
	setup(t)
	c := asTenant(t)
	net := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "mine"}}
	if err := c.Create(env.Ctx, net); err != nil {
		t.Fatalf("creating a Network in its namespace: %v", err)
	}
	var nets kupenstackv1.NetworkList
	if err := c.List(env.Ctx, &nets, client.InNamespace("mine")); err != nil || len(nets.Items) != 1 {
		t.Fatalf("listing its Networks: %v (%d)", err, len(nets.Items))
	}
	net.Status.ID = "forged"
	if err := c.Status().Update(env.Ctx, net); !apierrors.IsForbidden(err) {
		t.Errorf("writing status: %v, want Forbidden", err)
	}
	if err := c.Delete(env.Ctx, net); err != nil {
		t.Fatalf("deleting its Network: %v", err)
	}
	// Naming a public image (and a flavor) needs no right on the cluster-scoped kinds: the
	// operator resolves the reference.
	vm := &kupenstackv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "mine"},
		Spec: kupenstackv1.VirtualMachineSpec{FlavorRef: "small", PublicImageRef: "cirros"}}
	if err := c.Create(env.Ctx, vm); err != nil {
		t.Fatalf("creating a VirtualMachine from a public image: %v", err)
	}
	// Nor does naming the admin's external network, for a router's gateway and a floating IP.
	router := &kupenstackv1.Router{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "mine"},
		Spec: kupenstackv1.RouterSpec{ExternalGateway: &kupenstackv1.RouterGateway{ProviderNetworkRef: "public"}}}
	fip := &kupenstackv1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "ip", Namespace: "mine"},
		Spec: kupenstackv1.FloatingIPSpec{ProviderNetworkRef: "public"}}
	for _, o := range []client.Object{router, fip} {
		if err := c.Create(env.Ctx, o); err != nil {
			t.Fatalf("creating a %T on the provider network: %v", o, err)
		}
		if err := c.Delete(env.Ctx, o); err != nil {
			t.Fatalf("deleting its %T: %v", o, err)
		}
	}
	if err := c.Delete(env.Ctx, vm); err != nil {
		t.Fatalf("deleting its VirtualMachine: %v", err)
	}
	for _, tt := range []struct {
		what string
		do   func() error
	}{
		{"a Network in another namespace", func() error {
			return c.Create(env.Ctx, &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "theirs"}})
		}},
		{"listing another namespace", func() error {
			return c.List(env.Ctx, &kupenstackv1.NetworkList{}, client.InNamespace("theirs"))
		}},
		{"a Flavor", func() error {
			return c.Create(env.Ctx, &kupenstackv1.Flavor{ObjectMeta: metav1.ObjectMeta{Name: "big"},
				Spec: kupenstackv1.FlavorSpec{VCPUs: 1, RAMMiB: 512}})
		}},
		{"listing Flavors", func() error { return c.List(env.Ctx, &kupenstackv1.FlavorList{}) }},
		// Public images are the cloud admin's, like flavors: tenants name them, they do not list them.
		{"a PublicImage", func() error {
			return c.Create(env.Ctx, &kupenstackv1.PublicImage{ObjectMeta: metav1.ObjectMeta{Name: "cirros"},
				Spec: kupenstackv1.PublicImageSpec{ImageContent: kupenstackv1.ImageContent{Source: &kupenstackv1.ImageSource{URL: "https://images.example/c.img"}}}})
		}},
		{"listing PublicImages", func() error { return c.List(env.Ctx, &kupenstackv1.PublicImageList{}) }},
		{"a ProviderNetwork", func() error {
			return c.Create(env.Ctx, &kupenstackv1.ProviderNetwork{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
				Spec: kupenstackv1.ProviderNetworkSpec{NetworkType: "vxlan", Shared: true}})
		}},
		{"listing ProviderNetworks", func() error { return c.List(env.Ctx, &kupenstackv1.ProviderNetworkList{}) }},
		{"a Project", func() error {
			return c.Create(env.Ctx, &kupenstackv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "mine2"},
				Spec: kupenstackv1.ProjectSpec{Namespace: "mine"}})
		}},
		{"listing OpenstackNodes", func() error { return c.List(env.Ctx, &kupenstackv1.OpenstackNodeList{}) }},
		{"a configuration profile in its namespace", func() error {
			return c.Create(env.Ctx, &kupenstackv1.OpenstackCloudConfigurationProfile{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "mine"}})
		}},
	} {
		if err := tt.do(); !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", tt.what, err)
		}
	}
}

// TestTenantApplicationCredential: a tenant asks for its namespace's application credential and
// reads it, but cannot write its status (which names the credentials the operator revokes).
func TestTenantApplicationCredential(t *testing.T) {
	setup(t)
	c := asTenant(t)
	a := &kupenstackv1.ApplicationCredential{ObjectMeta: metav1.ObjectMeta{Name: "tools", Namespace: "mine"},
		Spec: kupenstackv1.ApplicationCredentialSpec{Roles: []kupenstackv1.ApplicationCredentialRole{"reader"}}}
	if err := c.Create(env.Ctx, a); err != nil {
		t.Fatalf("creating an ApplicationCredential in its namespace: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, a) })
	if err := c.Get(env.Ctx, client.ObjectKeyFromObject(a), &kupenstackv1.ApplicationCredential{}); err != nil {
		t.Errorf("reading it: %v", err)
	}
	a.Status.Current = &kupenstackv1.ApplicationCredentialRef{ID: "forged", Name: "forged", CreatedAt: metav1.Now()}
	if err := c.Status().Update(env.Ctx, a); !apierrors.IsForbidden(err) {
		t.Errorf("writing its status: %v, want Forbidden", err)
	}
	other := &kupenstackv1.ApplicationCredential{ObjectMeta: metav1.ObjectMeta{Name: "tools", Namespace: "theirs"}}
	if err := c.Create(env.Ctx, other); !apierrors.IsForbidden(err) {
		t.Errorf("creating one in another namespace: %v, want Forbidden", err)
	}
	if err := c.Delete(env.Ctx, a); err != nil {
		t.Errorf("deleting it: %v", err)
	}
}

// TestKubectlGetOpenstackAsTenant: the guide's `kubectl get openstack -n NS` lists every namespaced
// kind and exits 0 for a user bound to edit in NS alone. It used to fail with Forbidden errors
// and exit 1: the category held cluster-scoped kinds, which -n cannot narrow.
func TestKubectlGetOpenstackAsTenant(t *testing.T) {
	setup(t)
	kubeconfig, err := env.KubeConfig(tenant)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	vm := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "listed", Namespace: "mine"}}
	if err := env.Client.Create(env.Ctx, vm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, vm) })
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(env.Ctx, filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"),
		"--kubeconfig", path, "get", "openstack", "-n", "mine")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl get openstack -n mine: %v\nstdout: %s\nstderr: %s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "network.kupenstack.io/listed") || errOut.Len() > 0 {
		t.Fatalf("stdout: %s\nstderr: %s", out.String(), errOut.String())
	}
}

// TestTenantCannotWriteOperatorKinds: the kinds the operator writes (OpenstackComponent,
// OpenstackNode, Project), the namespaces' quotas and the cloud's configuration are the admin's
// and the operator's: a tenant bound to edit or admin in its namespace can neither create, update,
// patch nor delete them, even when named after its own namespace.
func TestTenantCannotWriteOperatorKinds(t *testing.T) {
	setup(t)
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-admin", Namespace: "mine"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: tenant}}}
	if err := env.Client.Create(env.Ctx, rb); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, rb) })
	instances := int64(1000)
	objects := []client.Object{
		&kupenstackv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Spec: kupenstackv1.ProjectSpec{Namespace: "mine"}},
		// Its own namespace's quota: a tenant cannot raise it, nor read it.
		&kupenstackv1.ProjectQuota{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Spec: kupenstackv1.ProjectQuotaSpec{Namespace: "mine",
			Compute: &kupenstackv1.ComputeQuota{Instances: &instances}}},
		// A public image: every project's VMs boot from it, so only the cloud admin declares one.
		&kupenstackv1.PublicImage{ObjectMeta: metav1.ObjectMeta{Name: "cirros"}, Spec: kupenstackv1.PublicImageSpec{
			ImageContent: kupenstackv1.ImageContent{Source: &kupenstackv1.ImageSource{URL: "https://images.example/cirros.img"}}}},
		// The external network and its subnet: every project's routers use them.
		&kupenstackv1.ProviderNetwork{ObjectMeta: metav1.ObjectMeta{Name: "public"}, Spec: kupenstackv1.ProviderNetworkSpec{
			NetworkType: "flat", PhysicalNetwork: "external", External: true}},
		&kupenstackv1.ProviderSubnet{ObjectMeta: metav1.ObjectMeta{Name: "public"}, Spec: kupenstackv1.ProviderSubnetSpec{
			ProviderNetworkRef: "public", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "198.51.100.0/24"}}},
		&kupenstackv1.OpenstackNode{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Spec: kupenstackv1.OpenstackNodeSpec{Roles: []string{"compute"}}},
		&kupenstackv1.OpenstackComponent{ObjectMeta: metav1.ObjectMeta{Name: "nova"}, Spec: kupenstackv1.OpenstackComponentSpec{
			Chart: "nova", ChartVersion: "2026.1.0", Release: "2026.1", Namespace: "openstack", UpgradePhase: 4, ValuesHash: "0123456789abcdef"}},
		&kupenstackv1.KupenstackConfiguration{ObjectMeta: metav1.ObjectMeta{Name: kupenstackv1.KupenstackConfigurationName}, Spec: kupenstackv1.KupenstackConfigurationSpec{
			Release: "2026.1", Charts: kupenstackv1.ChartSource{LocalPath: "/charts"},
			DefaultProfile: kupenstackv1.ProfileReference{Name: "default", Namespace: "mine"}}},
	}
	c := asTenant(t)
	for _, obj := range objects {
		kind := fmt.Sprintf("%T", obj)[len("*v1alpha1."):]
		fresh := obj.DeepCopyObject().(client.Object)
		if err := c.Create(env.Ctx, fresh); !apierrors.IsForbidden(err) {
			t.Errorf("tenant creating a %s: %v, want Forbidden", kind, err)
			_ = env.Client.Delete(env.Ctx, fresh)
		}
		if err := env.Client.Create(env.Ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("admin creating a %s: %v", kind, err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, obj) })
		if err := c.Get(env.Ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object)); !apierrors.IsForbidden(err) {
			t.Errorf("tenant reading a %s: %v, want Forbidden (the admin category is not the tenant's)", kind, err)
		}
		if err := c.Update(env.Ctx, obj.DeepCopyObject().(client.Object)); !apierrors.IsForbidden(err) {
			t.Errorf("tenant updating a %s: %v, want Forbidden", kind, err)
		}
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"owned-by":"alice"}}}`))
		if err := c.Patch(env.Ctx, obj.DeepCopyObject().(client.Object), patch); !apierrors.IsForbidden(err) {
			t.Errorf("tenant patching a %s: %v, want Forbidden", kind, err)
		}
		if err := c.Status().Patch(env.Ctx, obj.DeepCopyObject().(client.Object), patch); !apierrors.IsForbidden(err) {
			t.Errorf("tenant patching a %s's status: %v, want Forbidden", kind, err)
		}
		if err := c.Delete(env.Ctx, obj.DeepCopyObject().(client.Object)); !apierrors.IsForbidden(err) {
			t.Errorf("tenant deleting a %s: %v, want Forbidden", kind, err)
		}
		if err := c.DeleteAllOf(env.Ctx, obj.DeepCopyObject().(client.Object)); !apierrors.IsForbidden(err) {
			t.Errorf("tenant deleting every %s: %v, want Forbidden", kind, err)
		}
	}
}

// TestTenantRolesNameOnlyTenantKinds: the shipped tenant roles (config/rbac and the chart's
// copies) grant nothing on the cluster-scoped kinds, the operator-written kinds or the
// configuration profiles, whatever the verbs; a new kind added to a role by mistake fails here
// before it reaches a cluster.
func TestTenantRolesNameOnlyTenantKinds(t *testing.T) {
	adminKinds := []string{"projects", "projectquotas", "openstacknodes", "openstackcomponents", "kupenstackconfigurations",
		"openstackcloudconfigurationprofiles", "flavors", "hostaggregates", "publicimages", "providernetworks", "providersubnets"}
	for _, dir := range []string{filepath.Join("config", "rbac"), filepath.Join("charts", "kupenstack", "files")} {
		for _, f := range []string{"tenant_view_role.yaml", "tenant_edit_role.yaml"} {
			b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), dir, f))
			if err != nil {
				t.Fatal(err)
			}
			role := &rbacv1.ClusterRole{}
			if err := yaml.UnmarshalStrict(b, role); err != nil {
				t.Fatalf("%s/%s: %v", dir, f, err)
			}
			for _, r := range role.Rules {
				for _, res := range r.Resources {
					base, _, _ := strings.Cut(res, "/")
					if res == "*" || slices.Contains(adminKinds, base) {
						t.Errorf("%s/%s grants %v on %s: not a tenant's kind", dir, f, r.Verbs, res)
					}
				}
				if slices.Contains(r.APIGroups, "*") {
					t.Errorf("%s/%s grants on every API group", dir, f)
				}
			}
		}
	}
}
