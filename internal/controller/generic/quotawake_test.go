package generic

import (
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

// TestQuotaAppliedWakesRejectedObjects: a create refused over quota is retried as soon as the
// namespace's ProjectQuota has been applied (its status says so), not after the two minutes a
// rejected request otherwise waits; waitFor gives up long before those.
func TestQuotaAppliedWakesRejectedObjects(t *testing.T) {
	ns := readyNamespace(t)
	cloud.block("create", gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusConflict, Body: []byte("Quota exceeded for resources: ['network']")})
	defer cloud.block("create", nil)
	n := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "over-quota", Namespace: ns}}
	if err := env.Client.Create(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(n)
	waitFor(t, key, "degraded", func(n *kupenstackv1.Network) bool {
		return condition(n, kupenstackv1.ConditionDegraded).Status == metav1.ConditionTrue
	})

	// The admin raises the quota; the quota controller (not running here) reports it applied.
	cloud.block("create", nil)
	q := &kupenstackv1.ProjectQuota{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: kupenstackv1.ProjectQuotaSpec{Namespace: ns}}
	if err := env.Client.Create(env.Ctx, q); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, q) })
	now := metav1.Now()
	q.Status.LastSyncTime = &now
	conditions.Set(&q.Status.Conditions, q.Generation, conditions.State{Ready: true})
	if err := env.Client.Status().Update(env.Ctx, q); err != nil {
		t.Fatal(err)
	}
	waitFor(t, key, "ready once the quota is applied", func(n *kupenstackv1.Network) bool {
		return conditions.IsReady(n.Status.Conditions, n.Generation)
	})
}
