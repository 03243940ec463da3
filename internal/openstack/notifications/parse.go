// Package notifications listens to OpenStack's notification bus (oslo.messaging over RabbitMQ)
// and turns state changes of resources into the KupenStack kind and OpenStack ID they concern,
// so that the object is reconciled at once instead of at the next list check.
package notifications

import (
	"encoding/json"
	"errors"
	"strings"
)

// Event says which resource a notification is about.
type Event struct {
	// Kind is the KupenStack kind, e.g. "VirtualMachine".
	Kind string
	// ID is the resource's OpenStack ID.
	ID string
	// Type is the notification's event_type, e.g. "compute.instance.update".
	Type string
}

// envelope is oslo.messaging's wrapper (version 2.0): the message itself is a JSON string.
type envelope struct {
	Version string `json:"oslo.version"`
	Message string `json:"oslo.message"`
}

type message struct {
	EventType string          `json:"event_type"`
	Payload   json.RawMessage `json:"payload"`
}

// neutronKinds maps Neutron's resource names (event_type prefixes) to kinds.
var neutronKinds = map[string]string{
	"network": "Network", "subnet": "Subnet", "port": "Port", "router": "Router",
	"floatingip": "FloatingIP", "security_group": "SecurityGroup",
}

// ErrIgnored marks a notification about nothing KupenStack manages.
var ErrIgnored = errors.New("notification about no KupenStack kind")

// Parse reads one message body from the bus. Bodies come from the cloud, not from KupenStack:
// anything unexpected is an error, never a panic.
func Parse(body []byte) (Event, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return Event{}, err
	}
	raw := []byte(env.Message)
	if env.Message == "" { // oslo.messaging without the envelope (older senders)
		raw = body
	}
	var msg message
	if err := json.Unmarshal(raw, &msg); err != nil {
		return Event{}, err
	}
	ev := Event{Type: msg.EventType}
	var payload map[string]any
	if len(msg.Payload) > 0 && json.Unmarshal(msg.Payload, &payload) != nil {
		return ev, errors.New("payload is not an object")
	}
	str := func(m map[string]any, key string) string {
		s, _ := m[key].(string)
		return s
	}
	obj := func(m map[string]any, key string) map[string]any {
		o, _ := m[key].(map[string]any)
		return o
	}
	t := msg.EventType
	switch {
	case strings.HasPrefix(t, "compute.instance."):
		ev.Kind, ev.ID = "VirtualMachine", str(payload, "instance_id")
	case strings.HasPrefix(t, "instance."): // Nova's versioned notifications
		ev.Kind, ev.ID = "VirtualMachine", str(obj(payload, "nova_object.data"), "uuid")
	case strings.HasPrefix(t, "volume."):
		ev.Kind, ev.ID = "Volume", str(payload, "volume_id")
	case strings.HasPrefix(t, "image."):
		ev.Kind, ev.ID = "Image", str(payload, "id")
	default:
		resource, _, _ := strings.Cut(t, ".")
		kind, ok := neutronKinds[resource]
		if !ok {
			return ev, ErrIgnored
		}
		ev.Kind = kind
		// Updates carry the resource, deletions its ID.
		if ev.ID = str(obj(payload, resource), "id"); ev.ID == "" {
			ev.ID = str(payload, resource+"_id")
		}
	}
	if ev.ID == "" {
		return ev, ErrIgnored
	}
	return ev, nil
}
