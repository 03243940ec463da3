package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/time/rate"
)

// TestMeteredTransport: every request is counted by service (longest endpoint prefix wins; a URL
// of no known endpoint by its host and port), method and status code, and "error" when no answer came.
func TestMeteredTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2.0/missing" {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	tr := &meteredTransport{next: http.DefaultTransport, limiter: rate.NewLimiter(rate.Inf, 1), services: &sync.Map{}}
	tr.services.Store(srv.URL, "network")
	tr.services.Store(srv.URL+"/v2.1", "compute")
	c := &http.Client{Transport: tr}

	before := func(service, method, code string) float64 {
		return testutil.ToFloat64(requestsTotal.WithLabelValues(service, method, code))
	}
	net200, net404, comp200 := before("network", "GET", "200"), before("network", "GET", "404"), before("compute", "POST", "200")
	for _, req := range []struct{ method, path string }{
		{"GET", "/v2.0/networks"}, {"GET", "/v2.0/missing"}, {"POST", "/v2.1/servers"},
	} {
		r, _ := http.NewRequest(req.method, srv.URL+req.path, nil)
		resp, err := c.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if d := before("network", "GET", "200") - net200; d != 1 {
		t.Errorf("network GET 200 counted %v times", d)
	}
	if d := before("network", "GET", "404") - net404; d != 1 {
		t.Errorf("network GET 404 counted %v times", d)
	}
	if d := before("compute", "POST", "200") - comp200; d != 1 {
		t.Errorf("compute POST 200 counted %v times (longest prefix must win)", d)
	}

	// No answer at all.
	srv.Close()
	errs := before("network", "GET", "error")
	if resp, err := c.Get(srv.URL + "/v2.0/networks"); err == nil {
		resp.Body.Close()
		t.Fatal("request to a closed server succeeded")
	}
	if d := before("network", "GET", "error") - errs; d != 1 {
		t.Errorf("failed request counted %v times as error", d)
	}
	tr.services.Store("http://127.0.0.1:5000", "identity")
	for target, want := range map[string]string{
		"http://127.0.0.1:5000/v3/auth/tokens": "identity",
		"http://127.0.0.1:5000/":               "identity",
		// An endpoint of no catalog entry: counted by where it went, not as another service.
		"http://127.0.0.1:8778/placement":  "127.0.0.1:8778",
		"https://glance.example/v2/images": "glance.example",
	} {
		u, _ := url.Parse(target)
		if got := tr.serviceOf(u); got != want {
			t.Errorf("a request to %s counted as %q, want %q", target, got, want)
		}
	}
}

// TestClientsMetricServices: through real clients, a token request counts as identity (the auth
// URL is known before any catalog), a catalog endpoint's requests as its service type, and the
// version discovery that finds the endpoint (sent before it is known) by its host and port.
func TestClientsMetricServices(t *testing.T) {
	neutronMux := http.NewServeMux()
	neutron := httptest.NewServer(neutronMux)
	defer neutron.Close()
	neutronMux.HandleFunc("GET /networking/{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"versions": [{"id": "v2.0", "status": "CURRENT"}]}`)
	})
	neutronMux.HandleFunc("GET /networking/v2.0/networks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"networks": []}`)
	})
	keystone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v3/auth/tokens" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Subject-Token", "token")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"token": {"expires_at": "2999-01-01T00:00:00Z", "catalog": [{"type": "network", "id": "n", "name": "neutron",
			"endpoints": [{"id": "e", "interface": "public", "region": "RegionOne", "region_id": "RegionOne", "url": %q}]}]}}`, neutron.URL+"/networking")
	}))
	defer keystone.Close()
	cloudsYAML := fmt.Sprintf(`clouds:
  test:
    region_name: RegionOne
    auth:
      auth_url: %s/v3
      username: admin
      password: secret
      project_id: p
      user_domain_id: default
`, keystone.URL)
	c := NewClients(func(context.Context) ([]byte, error) { return []byte(cloudsYAML), nil }, "test", 1000, 1000)

	neutronHost := strings.TrimPrefix(neutron.URL, "http://")
	count := func(service, method, code string) float64 {
		return testutil.ToFloat64(requestsTotal.WithLabelValues(service, method, code))
	}
	tokens, discoveries, lists := count("identity", "POST", "201"), count(neutronHost, "GET", "200"), count("network", "GET", "200")
	sc, err := c.Network(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := networks.List(sc, nil).AllPages(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := count("identity", "POST", "201") - tokens; d != 1 {
		t.Errorf("token requests counted as identity: %v, want 1", d)
	}
	if d := count(neutronHost, "GET", "200") - discoveries; d != 1 {
		t.Errorf("version discovery counted as %s: %v, want 1", neutronHost, d)
	}
	if d := count("network", "GET", "200") - lists; d != 1 {
		t.Errorf("network list requests counted: %v, want 1", d)
	}
}

// TestServiceClientBuiltOncePerProvider: gophercloud asks an unversioned endpoint (Neutron's,
// Glance's) for its versions each time a service client is built; the clients are kept, so
// that every list and get does not cost a second request. A copy is handed out each time.
func TestServiceClientBuiltOncePerProvider(t *testing.T) {
	var mu sync.Mutex
	discoveries := 0
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v3/auth/tokens":
			w.Header().Set("X-Subject-Token", "token")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, tokenBody(`{"type":"network","name":"neutron","id":"n","endpoints":[
				{"id":"e","interface":"public","region":"RegionOne","region_id":"RegionOne","url":"`+srv.URL+`/network"}]}`))
		case r.Method == http.MethodGet && strings.TrimSuffix(r.URL.Path, "/") == "/network":
			mu.Lock()
			discoveries++
			mu.Unlock()
			fmt.Fprintf(w, `{"versions":[{"id":"v2.0","status":"CURRENT","links":[{"href":"%s/network/v2.0/","rel":"self"}]}]}`, srv.URL)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := NewClients(testCloud(srv.URL), "test", 100, 100)
	var first *gophercloud.ServiceClient
	for i := range 3 {
		sc, err := c.Network(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = sc
			sc.Microversion = "changed by a caller"
		} else if sc == first || sc.Microversion != "" {
			t.Fatalf("call %d: the same client as before or its caller's changes (%q)", i+1, sc.Microversion)
		}
	}
	if discoveries != 1 {
		t.Fatalf("%d version requests for 3 clients of one provider, want 1", discoveries)
	}
}

// TestCatalogRenewedForLaterServices: a cloud being deployed registers its services one by one;
// a client authenticated before Glance was in the catalog finds it once the catalog is older than
// catalogRefresh (gophercloud keeps a provider's first catalog for good), and a service still
// absent costs at most one token per catalogRefresh. Found on the real cluster: the validation
// agent reported glance, placement, nova and neutron NotInCatalog long after they were deployed.
func TestCatalogRenewedForLaterServices(t *testing.T) {
	defer func(d time.Duration) { catalogRefresh = d }(catalogRefresh)
	catalogRefresh = 200 * time.Millisecond
	var mu sync.Mutex
	tokens, withImage := 0, false
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v3/auth/tokens":
			mu.Lock()
			tokens++
			image := withImage
			mu.Unlock()
			catalog := `{"type":"identity","name":"keystone","id":"k","endpoints":[
				{"id":"ek","interface":"public","region":"RegionOne","region_id":"RegionOne","url":"` + srv.URL + `/v3"}]}`
			if image {
				catalog += `,{"type":"image","name":"glance","id":"g","endpoints":[
				{"id":"eg","interface":"public","region":"RegionOne","region_id":"RegionOne","url":"` + srv.URL + `/image"}]}`
			}
			w.Header().Set("X-Subject-Token", "token")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, tokenBody(catalog))
		case r.Method == http.MethodGet && strings.TrimSuffix(r.URL.Path, "/") == "/image":
			fmt.Fprintf(w, `{"versions":[{"id":"v2.16","status":"CURRENT","links":[{"href":"%s/image/v2/","rel":"self"}]}]}`, srv.URL)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := NewClients(testCloud(srv.URL), "test", 1000, 1000)
	ctx := context.Background()
	tokensNow := func() int { mu.Lock(); defer mu.Unlock(); return tokens }

	// Not deployed yet: not found, and asking again at once costs no token.
	for range 3 {
		var notFound *gophercloud.ErrEndpointNotFound
		if _, err := c.Image(ctx, ""); !errors.As(err, &notFound) {
			t.Fatalf("before glance is registered: %v, want ErrEndpointNotFound", err)
		}
	}
	if n := tokensNow(); n != 1 {
		t.Fatalf("%d tokens for three lookups within catalogRefresh, want 1", n)
	}
	mu.Lock()
	withImage = true
	mu.Unlock()
	time.Sleep(catalogRefresh + 50*time.Millisecond)
	sc, err := c.Image(ctx, "")
	if err != nil {
		t.Fatalf("glance registered since: %v", err)
	}
	if !strings.HasPrefix(sc.Endpoint, srv.URL+"/image") {
		t.Errorf("image endpoint %q", sc.Endpoint)
	}
	if n := tokensNow(); n != 2 {
		t.Errorf("%d tokens, want 2 (one renewal)", n)
	}
	// Once found, the client is kept: no more tokens.
	if _, err := c.Image(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if n := tokensNow(); n != 2 {
		t.Errorf("%d tokens after a cached lookup, want 2", n)
	}
}

// testCloud is the clouds.yaml of a cloud "test" whose Keystone is at url.
func testCloud(url string) CredentialSource {
	return func(context.Context) ([]byte, error) {
		return fmt.Appendf(nil, `clouds:
  test:
    auth: {auth_url: "%s/v3", username: admin, password: secret, project_name: admin, user_domain_name: Default, project_domain_name: Default}
    region_name: RegionOne
    interface: public
    identity_api_version: 3
`, url), nil
	}
}

// tokenBody is Keystone's answer to a token request, with the catalog entries given.
func tokenBody(catalog string) string {
	return `{"token":{"expires_at":"2099-01-01T00:00:00.000000Z","methods":["password"],
		"user":{"id":"u","name":"admin","domain":{"id":"default","name":"Default"}},
		"project":{"id":"p","name":"admin","domain":{"id":"default","name":"Default"}},
		"catalog":[` + catalog + `]}}`
}
