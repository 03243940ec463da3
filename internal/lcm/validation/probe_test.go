package validation

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kupenstack/kupenstack/internal/openstack"
)

// fault is how the fault-injecting cloud answers one service.
type fault int

const (
	answer       fault = iota // a valid, empty list
	status401                 // the token is refused, also after re-authentication
	status503                 // the service is down behind its proxy
	hang                      // no answer until the client gives up, version discovery included
	hangList                  // version discovery answers, the list call does not
	refused                   // the catalog points at a closed port
	notInCatalog              // the catalog has no entry
)

// faultCloud is a loopback Keystone with a catalog of the five other services, all served by
// itself under /<type>/, each answering as faults says. It stands in for a cloud only to inject
// faults a real one cannot be made to show on demand; integration_test.go probes the real one.
type faultCloud struct {
	srv    *httptest.Server
	closed string // an address nothing listens on
	faults map[string]fault
	// keystone is the answer to token requests (answer, status401, status503, hang).
	keystone fault
	// stop ends hanging handlers when the test is over.
	stop chan struct{}
}

const fakeToken = "tok-SECRET-123"

func newFaultCloud(t *testing.T, keystone fault, faults map[string]fault) *faultCloud {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	fc := &faultCloud{closed: closed, faults: faults, keystone: keystone, stop: make(chan struct{})}
	fc.srv = httptest.NewServer(http.HandlerFunc(fc.serve))
	t.Cleanup(fc.srv.Close)
	t.Cleanup(func() { close(fc.stop) }) // runs first
	return fc
}

func (fc *faultCloud) respond(w http.ResponseWriter, r *http.Request, f fault, ok func()) {
	switch f {
	case status401:
		http.Error(w, `{"error": {"code": 401}}`, http.StatusUnauthorized)
	case status503:
		http.Error(w, "down", http.StatusServiceUnavailable)
	case hang:
		// The server notices a client that gave up only once the body has been read.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-fc.stop:
		}
	default:
		ok()
	}
}

func (fc *faultCloud) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/v3/auth/tokens" && r.Method == http.MethodPost {
		fc.respond(w, r, fc.keystone, func() {
			w.Header().Set("X-Subject-Token", fakeToken)
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(fc.token())
		})
		return
	}
	typ, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if r.Header.Get("X-Auth-Token") != fakeToken {
		http.Error(w, "no token", http.StatusUnauthorized)
		return
	}
	f := fc.faults[typ]
	if f == hangList && rest != "" {
		f = hang
	}
	fc.respond(w, r, f, func() {
		switch {
		case rest == "": // version discovery, which gophercloud does for every new service client
			_, _ = fmt.Fprintf(w, `{"versions": [{"id": "%s", "status": "CURRENT"}]}`, apiVersions[typ])
		case typ == "compute":
			_, _ = fmt.Fprint(w, `{"servers": []}`)
		case typ == "network":
			_, _ = fmt.Fprint(w, `{"networks": []}`)
		case typ == "image":
			_, _ = fmt.Fprint(w, `{"images": []}`)
		case typ == "placement":
			_, _ = fmt.Fprint(w, `{"resource_providers": []}`)
		case typ == "block-storage":
			_, _ = fmt.Fprint(w, `{"volumes": []}`)
		default:
			http.NotFound(w, r)
		}
	})
}

var apiVersions = map[string]string{
	"compute": "v2.1", "network": "v2.0", "image": "v2.16", "placement": "v1.0", "block-storage": "v3.0",
}

func (fc *faultCloud) token() map[string]any {
	var catalog []map[string]any
	for _, typ := range []string{"compute", "network", "image", "placement", "block-storage"} {
		if fc.faults[typ] == notInCatalog {
			continue
		}
		u := fc.srv.URL + "/" + typ + "/"
		if fc.faults[typ] == refused {
			u = "http://" + fc.closed + "/" + typ + "/"
		}
		catalog = append(catalog, map[string]any{"type": typ, "id": typ, "name": typ, "endpoints": []map[string]any{
			{"id": typ + "-public", "interface": "public", "region": "RegionOne", "region_id": "RegionOne", "url": u},
		}})
	}
	return map[string]any{"token": map[string]any{
		"methods": []string{"password"}, "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"user":    map[string]any{"id": "u1", "name": "admin", "domain": map[string]any{"id": "default", "name": "Default"}},
		"project": map[string]any{"id": "p1", "name": "admin", "domain": map[string]any{"id": "default", "name": "Default"}},
		"catalog": catalog,
	}}
}

const fakePassword = "pw-SECRET-456"

func (fc *faultCloud) clients() *openstack.Clients {
	clouds := fmt.Sprintf(`clouds:
  test:
    auth:
      auth_url: %s/v3
      username: admin
      password: %s
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    interface: public
    identity_api_version: 3
`, fc.srv.URL, fakePassword)
	return openstack.NewClients(func(context.Context) ([]byte, error) { return []byte(clouds), nil }, "test", 1000, 1000)
}

func TestProbeClassification(t *testing.T) {
	const timeout = 500 * time.Millisecond
	for _, tt := range []struct {
		name     string
		keystone fault
		faults   map[string]fault
		expected map[string]bool
		want     map[string]string // service -> reason; unnamed ones are Healthy
	}{
		{name: "all healthy", want: map[string]string{}},
		{name: "401 from a service", faults: map[string]fault{"image": status401},
			want: map[string]string{"glance": ReasonUnauthorized}},
		{name: "503 from a service", faults: map[string]fault{"network": status503},
			want: map[string]string{"neutron": ReasonUnavailable}},
		{name: "a service that hangs", faults: map[string]fault{"placement": hangList},
			want: map[string]string{"placement": ReasonTimeout}},
		{name: "a service that hangs in version discovery", faults: map[string]fault{"image": hang},
			want: map[string]string{"glance": ReasonTimeout}},
		{name: "connection refused", faults: map[string]fault{"compute": refused},
			want: map[string]string{"nova": ReasonUnavailable}},
		{name: "core service missing from the catalog", faults: map[string]fault{"image": notInCatalog},
			want: map[string]string{"glance": ReasonNotInCatalog}},
		{name: "optional service missing, not expected", faults: map[string]fault{"block-storage": notInCatalog},
			want: map[string]string{"cinder": ReasonNotDeployed}},
		{name: "optional service missing, expected", faults: map[string]fault{"block-storage": notInCatalog},
			expected: map[string]bool{"keystone": true, "nova": true, "glance": true, "placement": true, "neutron": true, "cinder": true},
			want:     map[string]string{"cinder": ReasonNotInCatalog}},
		{name: "core service missing, not in the configuration's components", faults: map[string]fault{"compute": notInCatalog},
			expected: map[string]bool{"keystone": true, "glance": true, "placement": true, "neutron": true},
			want:     map[string]string{"nova": ReasonNotDeployed}},
		{name: "optional service deployed, not expected, failing", faults: map[string]fault{"block-storage": status503},
			want: map[string]string{"cinder": ReasonUnavailable}},
		{name: "keystone refuses the credentials", keystone: status401, want: map[string]string{
			"keystone": ReasonUnauthorized, "nova": ReasonAuthenticationFailed, "neutron": ReasonAuthenticationFailed,
			"glance": ReasonAuthenticationFailed, "placement": ReasonAuthenticationFailed, "cinder": ReasonAuthenticationFailed}},
		{name: "keystone down", keystone: status503, want: map[string]string{
			"keystone": ReasonUnavailable, "nova": ReasonAuthenticationFailed, "neutron": ReasonAuthenticationFailed,
			"glance": ReasonAuthenticationFailed, "placement": ReasonAuthenticationFailed, "cinder": ReasonAuthenticationFailed}},
		{name: "keystone hangs", keystone: hang, want: map[string]string{
			"keystone": ReasonTimeout, "nova": ReasonAuthenticationFailed, "neutron": ReasonAuthenticationFailed,
			"glance": ReasonAuthenticationFailed, "placement": ReasonAuthenticationFailed, "cinder": ReasonAuthenticationFailed}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFaultCloud(t, tt.keystone, tt.faults)
			results := ProbeAll(context.Background(), fc.clients(), timeout, tt.expected)
			if len(results) != len(Services) {
				t.Fatalf("%d results, want %d", len(results), len(Services))
			}
			for _, r := range results {
				want := tt.want[r.Service.Name]
				if want == "" {
					want = ReasonHealthy
				}
				if r.Reason != want || r.Healthy != (want == ReasonHealthy) {
					t.Errorf("%s: reason %s healthy %v (%q), want %s", r.Service.Name, r.Reason, r.Healthy, r.Message, want)
				}
				if !strings.HasPrefix(r.Message, r.Service.Name+" ("+r.Service.Type+")") {
					t.Errorf("%s: message %q does not name the service", r.Service.Name, r.Message)
				}
				for _, secret := range []string{fakeToken, fakePassword, "SECRET"} {
					if strings.Contains(r.Message, secret) {
						t.Errorf("%s: message %q holds a credential", r.Service.Name, r.Message)
					}
				}
				// Only version discovery, which takes no context, leaves the host unknown.
				if r.Counted() && r.Reason != ReasonNotInCatalog && r.Reason != ReasonAuthenticationFailed && tt.faults[r.Service.Type] != hang {
					host := strings.TrimPrefix(fc.srv.URL, "http://")
					if tt.faults[r.Service.Type] == refused {
						host = fc.closed
					}
					if !strings.Contains(r.Message, " at "+host) {
						t.Errorf("%s: message %q does not name the endpoint host %s", r.Service.Name, r.Message, host)
					}
				}
			}
		})
	}
}

// TestProbeMessagesAreStable: an unchanged failure must give the same message, or every probe
// would rewrite the status.
func TestProbeMessagesAreStable(t *testing.T) {
	fc := newFaultCloud(t, answer, map[string]fault{"image": status503, "compute": refused, "placement": hangList, "network": hang})
	clients := fc.clients()
	first := ProbeAll(context.Background(), clients, 300*time.Millisecond, nil)
	second := ProbeAll(context.Background(), clients, 300*time.Millisecond, nil)
	for i := range first {
		if first[i].Message != second[i].Message || first[i].Reason != second[i].Reason {
			t.Errorf("%s: %s %q then %s %q", first[i].Service.Name, first[i].Reason, first[i].Message, second[i].Reason, second[i].Message)
		}
	}
}
