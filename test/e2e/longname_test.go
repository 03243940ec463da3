package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

// TestLongNamespaceName: a namespace of the longest name Kubernetes allows still gets its
// Keystone project (whose names are limited to 64 characters).
func TestLongNamespaceName(t *testing.T) {
	parallel(t)
	requireCloud(t)
	env.Require(t)
	prefix := fmt.Sprintf("e2e-long-%d-", time.Now().Unix()%100000)
	ns := prefix + strings.Repeat("x", 63-len(prefix))
	if err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	net := &kupenstackv1.Network{ObjectMeta: objMeta(ns, "net")}
	create(t, net)
	waitReady(t, net)
	var p kupenstackv1.Project
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: ns}, &p); err != nil {
		t.Fatal(err)
	}
	if !conditions.IsReady(p.Status.Conditions, p.Generation) || len(p.Status.ProjectName) != 64 {
		t.Errorf("project %q (%d characters), conditions %+v", p.Status.ProjectName, len(p.Status.ProjectName), p.Status.Conditions)
	}
	deleteAll(t, ns, false, net)
}
