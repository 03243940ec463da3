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

func TestBlockedRetryGrowsWithTheTimeBlocked(t *testing.T) {
	for _, tt := range []struct {
		base, blockedFor, want time.Duration
	}{
		{5 * time.Second, 0, 5 * time.Second},
		{5 * time.Second, 30 * time.Second, 5 * time.Second},
		{5 * time.Second, 40 * time.Second, 5 * time.Second},
		{5 * time.Second, 4 * time.Minute, 30 * time.Second},
		{5 * time.Second, 16 * time.Minute, 2 * time.Minute},
		{5 * time.Second, 24 * time.Hour, MaxDeletionBlockedRetry},
		{time.Hour, time.Minute, time.Hour},              // a test's own longer base wins
		{5 * time.Second, -time.Minute, 5 * time.Second}, // clock skew
	} {
		if got := blockedRetry(tt.base, tt.blockedFor); got != tt.want {
			t.Errorf("blockedRetry(%v, %v) = %v, want %v", tt.base, tt.blockedFor, got, tt.want)
		}
	}
}
