package generic

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kupenstack/kupenstack/internal/openstack"
)

// An object failing through a long outage must be retried within TransientRetryMax of OpenStack
// coming back (the work queue's default would wait up to 1000 s), and still start fast.
func TestTransientRetriesAreCapped(t *testing.T) {
	limiter := RetryLimiter()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "net"}}
	if d := limiter.When(req); d > 10*time.Millisecond {
		t.Fatalf("first retry after %s, want milliseconds", d)
	}
	var d time.Duration
	for range 40 { // 40 failures in a row: 5 ms × 2^40 uncapped
		d = limiter.When(req)
	}
	if d != openstack.TransientRetryMax {
		t.Fatalf("retry after 40 failures in %s, want the cap %s", d, openstack.TransientRetryMax)
	}
	limiter.Forget(req) // a successful pass
	if d := limiter.When(req); d > 10*time.Millisecond {
		t.Fatalf("after a success the next failure is retried in %s, want milliseconds", d)
	}
}
