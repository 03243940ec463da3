package notifications

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	amqp "github.com/rabbitmq/amqp091-go"
)

// brokerURL is the test cloud's broker (make openstack-up); the test skips without one unless
// KUPENSTACK_E2E=required.
func brokerURL(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the all-in-one cloud's broker")
	}
	u := os.Getenv("KUPENSTACK_NOTIFICATIONS_URL")
	if u == "" {
		if os.Getenv("KUPENSTACK_E2E") == "required" {
			t.Fatal("KUPENSTACK_E2E=required but KUPENSTACK_NOTIFICATIONS_URL is not set")
		}
		t.Skip("KUPENSTACK_NOTIFICATIONS_URL is not set")
	}
	return u
}

// startOnExchange declares a topic exchange on the broker at url (auto-deleted with the test's
// connection) and starts l on it; it returns a channel to publish on and the listener's end.
// The test fails if the listener is not connected within 30 s.
func startOnExchange(ctx context.Context, t *testing.T, url, exchange string, l *Listener) (*amqp.Channel, <-chan error) {
	t.Helper()
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.ExchangeDeclare(exchange, "topic", false, true, false, false, nil); err != nil {
		t.Fatal(err)
	}
	l.Exchanges = []string{exchange}
	done := make(chan error, 1)
	go func() { done <- l.Start(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for testutil.ToFloat64(connected) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("listener never connected")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return ch, done
}

// TestListenerReceivesFromTheBus publishes oslo-style notifications on a real broker, as Nova
// does, and expects the listener's events; a message of another service is dropped.
func TestListenerReceivesFromTheBus(t *testing.T) {
	url := brokerURL(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan Event, 10)
	l := &Listener{URL: url, Handle: func(_ context.Context, ev Event) { events <- ev }}
	ch, done := startOnExchange(ctx, t, url, "kupenstack-test", l)
	publish := func(body []byte) {
		t.Helper()
		if err := ch.PublishWithContext(ctx, "kupenstack-test", "notifications.info", false, false,
			amqp.Publishing{ContentType: "application/json", Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	publish(wrap(t, "identity.project.created", map[string]any{"resource_info": "p"}))
	publish(wrap(t, "compute.instance.update", map[string]any{"instance_id": "i-42", "state": "error"}))
	select {
	case ev := <-events:
		if ev.Kind != "VirtualMachine" || ev.ID != "i-42" {
			t.Fatalf("event %+v", ev)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no event from the bus")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if testutil.ToFloat64(connected) != 0 {
		t.Error("still reported connected after stopping")
	}
}

// TestListenerWithoutBroker keeps retrying (disconnected) and never leaks the password.
func TestListenerWithoutBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("dials 127.0.0.1")
	}
	l := &Listener{URL: "amqp://kupenstack:s3cret-pw@127.0.0.1:1/", MaxBackoff: 50 * time.Millisecond}
	err := l.listen(context.Background(), l.URL)
	if err == nil || strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("listen error %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if testutil.ToFloat64(connected) != 0 {
		t.Error("reported connected without a broker")
	}
}

// TestListenerURLFrom: a listener whose URL is published later (the life-cycle's, once Nova is
// up) waits while there is none and connects once there is.
func TestListenerURLFrom(t *testing.T) {
	url := brokerURL(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var asked atomic.Int32
	l := &Listener{MaxBackoff: 50 * time.Millisecond, URLFrom: func(context.Context) (string, error) {
		switch asked.Add(1) {
		case 1:
			return "", fmt.Errorf("%w: no Secret yet", ErrNotPublished)
		case 2:
			return "", nil // a Secret without the key
		}
		return url, nil
	}}
	_, done := startOnExchange(ctx, t, url, "kupenstack-test-urlfrom", l)
	if n := asked.Load(); n != 3 {
		t.Errorf("URL asked %d times before connecting, want 3", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestListenerURLNeverPublished: without a URL the listener never reports itself connected and
// stops with its context.
func TestListenerURLNeverPublished(t *testing.T) {
	var asked atomic.Int32
	l := &Listener{MaxBackoff: 20 * time.Millisecond, URLFrom: func(context.Context) (string, error) {
		asked.Add(1)
		return "", ErrNotPublished
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if asked.Load() < 2 {
		t.Errorf("URL asked %d times in 300 ms, want it asked again after each wait", asked.Load())
	}
	if testutil.ToFloat64(connected) != 0 {
		t.Error("reported connected without a URL")
	}
}
