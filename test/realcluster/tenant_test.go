package realcluster

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

const tenantNamespace = "tenant-a"

// tenantOnCloud is a tenant on the cloud the operator deployed: a namespace becomes a Keystone
// project, and its flavor, image (downloaded by the operator from a pod and uploaded to glance),
// network, subnet, security group and key pair become Ready; the VM made of them reaches ACTIVE on
// the node's libvirt with an address from neutron. Deleting the namespace deletes the server and
// the project: nothing is left in the cloud.
func tenantOnCloud(ctx context.Context, t *testing.T, c *cluster, cl client.Client) {
	t.Helper()
	start := time.Now()
	// A raw disk of random bytes: QEMU runs it (nothing boots, the server is ACTIVE all the same).
	dir := t.TempDir()
	payload := make([]byte, 1<<20)
	if _, err := rand.Read(payload); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tiny.raw"), payload, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	serveFiles(ctx, t, c, "images", dir, "/tiny.raw")

	ns := tenantNamespace
	inNS := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }
	flavor := &kupenstackv1.Flavor{ObjectMeta: metav1.ObjectMeta{Name: "rc-nano"},
		Spec: kupenstackv1.FlavorSpec{VCPUs: 1, RAMMiB: 128, DiskGiB: 1}}
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"kupenstack.io/project": "enabled"}}},
		flavor,
		&kupenstackv1.Image{ObjectMeta: inNS("tiny"), Spec: kupenstackv1.ImageSpec{DiskFormat: "raw",
			Source: &kupenstackv1.ImageSource{URL: "http://images." + chartsNamespace + ".svc.cluster.local/tiny.raw",
				SHA256: fmt.Sprintf("%x", sha256.Sum256(payload))}}},
		&kupenstackv1.Network{ObjectMeta: inNS("net")},
		&kupenstackv1.Subnet{ObjectMeta: inNS("sub"), Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", CIDR: "10.77.0.0/24"}},
		&kupenstackv1.SecurityGroup{ObjectMeta: inNS("web")},
		&kupenstackv1.KeyPair{ObjectMeta: inNS("key"), Spec: kupenstackv1.KeyPairSpec{
			PublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGDRGOgCgV1Yx4Zy1a1fGqTXVN+5NqbN2GLhHEakrXzA realcluster"}},
	}
	vm := &kupenstackv1.VirtualMachine{ObjectMeta: inNS("vm"), Spec: kupenstackv1.VirtualMachineSpec{
		FlavorRef: flavor.Name, ImageRef: "tiny", KeyPairRef: "key",
		Networks:          []kupenstackv1.VirtualMachineNIC{{NetworkRef: "net"}},
		SecurityGroupRefs: []string{"web"},
	}}
	for _, o := range append(objects, vm) {
		if err := cl.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}

	var project kupenstackv1.Project
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		return cl.Get(ctx, client.ObjectKey{Name: ns}, &project) == nil && project.Status.ID != "", nil
	}); err != nil {
		t.Fatalf("namespace %s: no Keystone project: %+v", ns, project.Status)
	}
	if err := wait.PollUntilContextTimeout(ctx, 3*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(vm), vm); err != nil {
			return false, nil
		}
		r := vm.Status.Resource
		return r != nil && r.Status == "ACTIVE" && len(r.Addresses) > 0 &&
			meta.IsStatusConditionTrue(vm.Status.Conditions, kupenstackv1.ConditionReady), nil
	}); err != nil {
		for _, o := range objects[1:] {
			_ = cl.Get(ctx, client.ObjectKeyFromObject(o), o)
			t.Logf("%T %s: %s", o, o.GetName(), conditionsOf(o))
		}
		out, _ := openstackCLI(ctx, t, c, "server-list", "server", "list", "--all-projects", "--long")
		t.Fatalf("VM not ACTIVE and Ready: resource %+v, conditions %s\nservers:\n%s", vm.Status.Resource, conditionsOf(vm), out)
	}
	t.Logf("tenant: namespace to VM ACTIVE on %s with %v: %s", vm.Status.Resource.Host, vm.Status.Resource.Addresses,
		time.Since(start).Round(time.Second))
	server := vm.Status.ID

	// The server, seen by the cloud's admin, is in the namespace's project.
	out, err := openstackCLI(ctx, t, c, "server-show", "server", "show", server, "-f", "value", "-c", "project_id", "-c", "status")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, project.Status.ID) || !strings.Contains(out, "ACTIVE") {
		t.Errorf("server %s: %q, want ACTIVE in project %s", server, out, project.Status.ID)
	}

	// Deleting the namespace deletes its resources, then the project.
	start = time.Now()
	if err := cl.Delete(ctx, objects[0]); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(cl.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})) &&
			apierrors.IsNotFound(cl.Get(ctx, client.ObjectKey{Name: ns}, &kupenstackv1.Project{})), nil
	}); err != nil {
		t.Fatalf("namespace %s not deleted: %v", ns, err)
	}
	t.Logf("tenant: namespace deleted with its project: %s", time.Since(start).Round(time.Second))
	if err := cl.Delete(ctx, flavor); err != nil {
		t.Fatal(err)
	}
	if _, err := openstackCLI(ctx, t, c, "project-show", "project", "show", project.Status.ID); err == nil {
		t.Errorf("project %s still in keystone after its namespace was deleted", project.Status.ID)
	}
	if out, err := openstackCLI(ctx, t, c, "servers-left", "server", "list", "--all-projects", "-f", "value", "-c", "ID"); err != nil || out != "" {
		t.Errorf("servers left after the namespace was deleted: %q %v", out, err)
	}
}

// conditionsOf prints an object's conditions (the kinds of this file all have them).
func conditionsOf(o client.Object) string {
	var conds []metav1.Condition
	switch o := o.(type) {
	case *kupenstackv1.VirtualMachine:
		conds = o.Status.Conditions
	case *kupenstackv1.Image:
		conds = o.Status.Conditions
	case *kupenstackv1.Flavor:
		conds = o.Status.Conditions
	case *kupenstackv1.Network:
		conds = o.Status.Conditions
	case *kupenstackv1.Subnet:
		conds = o.Status.Conditions
	case *kupenstackv1.SecurityGroup:
		conds = o.Status.Conditions
	case *kupenstackv1.KeyPair:
		conds = o.Status.Conditions
	}
	var b strings.Builder
	for _, c := range conds {
		fmt.Fprintf(&b, "%s=%s (%s: %s) ", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}
