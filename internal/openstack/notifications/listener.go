package notifications

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	amqp "github.com/rabbitmq/amqp091-go"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	connected = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kupenstack_notifications_connected",
		Help: "1 while the notification listener is connected to the bus; 0 means changes are found by polling only.",
	})
	received = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kupenstack_notifications_received_total",
		Help: "Notifications received, by the kind they concern (\"\" for other resources).",
	}, []string{"kind"})
)

func init() { metrics.Registry.MustRegister(connected, received) }

// DefaultExchanges are the topic exchanges the OpenStack services publish notifications on
// (their control_exchange; cinder's and glance's default is "openstack").
var DefaultExchanges = []string{"nova", "neutron", "openstack", "cinder", "glance"}

// routingKeys are the notification topics of every priority.
var routingKeys = []string{"notifications.*", "versioned_notifications.*"}

// Listener reads notifications from an AMQP 0-9-1 broker with a queue of its own (so it takes no
// message from any other consumer) and hands each Event to Handle. It reconnects with backoff;
// while disconnected the periodic list checks keep everything correct, only slower.
type Listener struct {
	// URL of the broker, amqp://user:password@host:port/vhost. Never logged.
	URL string
	// URLFrom, when set, gives the URL at every connection attempt instead: the broker of a
	// cloud the operator deploys is known only once the cloud is up, and its credentials can
	// change. ErrNotPublished means "not yet": the listener waits without logging an error.
	URLFrom func(context.Context) (string, error)
	// Exchanges to bind to; DefaultExchanges when empty. Missing ones are skipped.
	Exchanges []string
	// Handle is called for every notification about a KupenStack kind.
	Handle func(context.Context, Event)
	// MaxBackoff caps the wait between reconnection attempts.
	MaxBackoff time.Duration
}

// NeedLeaderElection: only the leader reconciles, so only it needs to hear about changes.
func (l *Listener) NeedLeaderElection() bool { return true }

// redacted is the broker address without its credentials, for logs.
func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	return u.Redacted()
}

// ErrNotPublished is what a URLFrom answers while there is no broker to connect to yet.
var ErrNotPublished = errors.New("the notification bus's URL is not published yet")

// Start listens until ctx ends.
func (l *Listener) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("notifications")
	maxBackoff := l.MaxBackoff
	if maxBackoff <= 0 {
		maxBackoff = time.Minute
	}
	first := min(time.Second, maxBackoff)
	backoff := first
	for {
		start := time.Now()
		raw, err := l.url(ctx)
		if err == nil {
			err = l.listen(ctx, raw)
		}
		connected.Set(0)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(start) > maxBackoff { // it worked for a while: start over quickly
			backoff = first
		}
		switch {
		case errors.Is(err, ErrNotPublished):
			log.V(1).Info("waiting for the notification bus's URL; changes are found by the periodic checks meanwhile", "reason", err.Error(), "retryIn", backoff)
		default:
			log.Error(err, "notification listener disconnected; changes are found by the periodic checks until it reconnects", "broker", redacted(raw), "retryIn", backoff)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// url is the broker to connect to now.
func (l *Listener) url(ctx context.Context) (string, error) {
	if l.URLFrom == nil {
		return l.URL, nil
	}
	raw, err := l.URLFrom(ctx)
	if err == nil && raw == "" {
		err = ErrNotPublished
	}
	return raw, err
}

// listen runs one connection to the broker at raw until it fails or ctx ends.
func (l *Listener) listen(ctx context.Context, raw string) error {
	conn, err := amqp.DialConfig(raw, amqp.Config{Heartbeat: 10 * time.Second, Dial: amqp.DefaultDial(10 * time.Second)})
	if err != nil {
		return fmt.Errorf("connecting: %w", scrub(err, raw))
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	// A server-named, exclusive, auto-deleted queue: it goes away with the connection.
	q, err := ch.QueueDeclare("", false, true, true, false, amqp.Table{"x-max-length": int32(10000)})
	if err != nil {
		return fmt.Errorf("declaring the queue: %w", err)
	}
	bound := 0
	exchanges := l.Exchanges
	if len(exchanges) == 0 {
		exchanges = DefaultExchanges
	}
	for _, ex := range exchanges {
		// A failed passive declare closes the channel: check each exchange on its own channel.
		probe, err := conn.Channel()
		if err != nil {
			return err
		}
		if err := probe.ExchangeDeclarePassive(ex, "topic", false, false, false, false, nil); err != nil {
			continue // this service does not publish here (yet)
		}
		_ = probe.Close()
		for _, key := range routingKeys {
			if err := ch.QueueBind(q.Name, key, ex, false, nil); err != nil {
				return fmt.Errorf("binding to exchange %s: %w", ex, err)
			}
		}
		bound++
	}
	if bound == 0 {
		return errors.New("none of the notification exchanges exists yet")
	}
	deliveries, err := ch.Consume(q.Name, "kupenstack", true, true, false, false, nil)
	if err != nil {
		return err
	}
	connected.Set(1)
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-closed:
			if err == nil {
				return errors.New("connection closed")
			}
			return err
		case d, ok := <-deliveries:
			if !ok {
				return errors.New("delivery channel closed")
			}
			ev, err := Parse(d.Body)
			received.WithLabelValues(ev.Kind).Inc()
			if err == nil && l.Handle != nil {
				l.Handle(ctx, ev)
			}
		}
	}
}

// scrub removes the broker URL and its password from a dial error.
func scrub(err error, raw string) error {
	msg := strings.ReplaceAll(err.Error(), raw, redacted(raw))
	if u, perr := url.Parse(raw); perr == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return errors.New(msg)
}
