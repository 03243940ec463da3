package notifications

import (
	"encoding/json"
	"errors"
	"testing"
)

// wrap builds an oslo.messaging 2.0 envelope around a message.
func wrap(t testing.TB, eventType string, payload any) []byte {
	t.Helper()
	inner, err := json.Marshal(map[string]any{"event_type": eventType, "payload": payload, "publisher_id": "compute.aio"})
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]string{"oslo.version": "2.0", "oslo.message": string(inner)})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		body []byte
		want Event
		err  error
	}{
		{"nova unversioned", wrap(t, "compute.instance.update", map[string]any{"instance_id": "i-1", "state": "error"}),
			Event{Kind: "VirtualMachine", ID: "i-1", Type: "compute.instance.update"}, nil},
		{"nova versioned", wrap(t, "instance.update", map[string]any{"nova_object.data": map[string]any{"uuid": "i-2"}}),
			Event{Kind: "VirtualMachine", ID: "i-2", Type: "instance.update"}, nil},
		{"neutron update", wrap(t, "port.update.end", map[string]any{"port": map[string]any{"id": "p-1"}}),
			Event{Kind: "Port", ID: "p-1", Type: "port.update.end"}, nil},
		{"neutron delete", wrap(t, "security_group.delete.end", map[string]any{"security_group_id": "sg-1"}),
			Event{Kind: "SecurityGroup", ID: "sg-1", Type: "security_group.delete.end"}, nil},
		{"floating IP", wrap(t, "floatingip.update.end", map[string]any{"floatingip": map[string]any{"id": "f-1"}}),
			Event{Kind: "FloatingIP", ID: "f-1", Type: "floatingip.update.end"}, nil},
		{"cinder", wrap(t, "volume.attach.end", map[string]any{"volume_id": "v-1"}),
			Event{Kind: "Volume", ID: "v-1", Type: "volume.attach.end"}, nil},
		{"glance", wrap(t, "image.update", map[string]any{"id": "img-1"}),
			Event{Kind: "Image", ID: "img-1", Type: "image.update"}, nil},
		{"without envelope", []byte(`{"event_type":"network.create.end","payload":{"network":{"id":"n-1"}}}`),
			Event{Kind: "Network", ID: "n-1", Type: "network.create.end"}, nil},
		{"other service", wrap(t, "identity.project.created", map[string]any{"resource_info": "x"}),
			Event{Type: "identity.project.created"}, ErrIgnored},
		{"no ID", wrap(t, "compute.instance.update", map[string]any{"state": "active"}),
			Event{Kind: "VirtualMachine", Type: "compute.instance.update"}, ErrIgnored},
		{"ID of the wrong type", wrap(t, "volume.create.end", map[string]any{"volume_id": 7}),
			Event{Kind: "Volume", Type: "volume.create.end"}, ErrIgnored},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.body)
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("Parse = %+v, %v; want %+v, %v", got, err, tc.want, tc.err)
			}
		})
	}
	for _, bad := range []string{``, `[]`, `{"oslo.message": "not json"}`, `{"oslo.message": "{\"payload\": 3}"}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// FuzzParse: bodies come from the cloud's bus; nothing may panic, and an event is never without
// its kind and ID.
func FuzzParse(f *testing.F) {
	f.Add(wrap(f, "compute.instance.update", map[string]any{"instance_id": "i-1"}))
	f.Add(wrap(f, "port.delete.end", map[string]any{"port_id": "p"}))
	f.Add([]byte(`{"event_type":"network.create.end","payload":{"network":{"id":"n-1"}}}`))
	f.Add([]byte(`{"oslo.message": "{\"event_type\": \"instance.update\", \"payload\": {\"nova_object.data\": 1}}"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := Parse(body)
		if err == nil && (ev.Kind == "" || ev.ID == "") {
			t.Fatalf("event without kind or ID: %+v", ev)
		}
	})
}
