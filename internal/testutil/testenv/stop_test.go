package testenv

import (
	"errors"
	"testing"
	"time"
)

// TestWaitManagerIsBounded: a manager that never returns from Start (still waiting for its
// caches when the API server went) no longer holds the test binary until go test's timeout, as it
// did for the generic package's quick -run on 2026-12-01 (killed after 11 minutes).
func TestWaitManagerIsBounded(t *testing.T) {
	never := make(chan error)
	finished := make(chan struct{})
	go func() { waitManager(never, 50*time.Millisecond); close(finished) }()
	select {
	case <-finished:
	case <-time.After(time.Minute):
		t.Fatal("waitManager still waiting a minute later for a manager that never stops")
	}

	stopped := make(chan error, 1)
	stopped <- errors.New("a runnable failed")
	start := time.Now()
	waitManager(stopped, time.Hour) // returns at once: the manager has stopped
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("waitManager took %s for a manager that had stopped", d)
	}
}
