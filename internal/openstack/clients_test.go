package openstack

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/time/rate"
)

// TestMeteredTransport: every request is counted by service (longest endpoint prefix wins; token
// requests count as identity), method and status code, and "error" when no answer came.
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
	if got := tr.serviceOf("http://127.0.0.1:5000/v3/auth/tokens"); got != "identity" {
		t.Errorf("token request counted as %q", got)
	}
}
