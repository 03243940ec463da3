package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"

	"github.com/kupenstack/kupenstack/internal/openstack"
	"github.com/kupenstack/kupenstack/internal/openstack/cloudconfig"
)

// fault is what the proxy does to a request instead of (or on top of) forwarding it.
type fault struct {
	status     int           // answer with this status without forwarding (0: forward)
	retryAfter string        // Retry-After header of that answer
	delay      time.Duration // wait before forwarding
	reset      bool          // reset the connection without forwarding
	// loseAnswer forwards a write (POST, PUT, DELETE) and resets the connection instead of
	// answering: the request took effect, the caller cannot know.
	loseAnswer bool
}

func (f fault) String() string {
	switch {
	case f.status != 0 && f.retryAfter != "":
		return fmt.Sprintf("%d with Retry-After %s", f.status, f.retryAfter)
	case f.status != 0:
		return fmt.Sprint(f.status)
	case f.reset:
		return "connection reset"
	case f.loseAnswer:
		return "writes done, answers lost (connection reset)"
	case f.delay > 0:
		return fmt.Sprintf("%s delay", f.delay)
	}
	return "none"
}

// hit is one request seen by the proxy.
type hit struct {
	at      time.Time
	service string
}

// faultProxy is a loopback proxy in front of the all-in-one cloud's APIs. It forwards Keystone
// and rewrites every 127.0.0.1 URL in the answers (the service catalog of a token, version
// documents, Location headers) to a proxy port of its own per upstream port, so that every call
// of a client that authenticated through it passes here. It injects faults on demand into the
// services chosen, and records every request.
type faultProxy struct {
	t         *testing.T
	transport http.RoundTripper

	mu        sync.Mutex
	proxies   map[string]string // upstream origin → proxy origin
	servers   []*http.Server
	fault     fault
	faultOn   map[string]bool // services (by upstream port) the fault applies to
	hits      []hit
	keystoneO string
}

// serviceByPort names the all-in-one's services by their ports (hack/openstack-aio).
var serviceByPort = map[string]string{"5000": "identity", "8774": "compute", "9696": "network", "9292": "image",
	"8776": "volume", "8778": "placement"}

var loopbackURL = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)

// newFaultProxy proxies keystone (an auth URL such as http://127.0.0.1:5000/v3) and returns the
// auth URL to use instead.
func newFaultProxy(t *testing.T, authURL string) (*faultProxy, string) {
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{t: t, transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16},
		proxies: map[string]string{}, faultOn: map[string]bool{}, keystoneO: u.Scheme + "://" + u.Host}
	t.Cleanup(p.close)
	origin, err := p.proxyFor(p.keystoneO)
	if err != nil {
		t.Fatal(err)
	}
	return p, origin + u.Path
}

func (p *faultProxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.servers {
		_ = s.Close()
	}
}

// proxyFor returns the proxy origin of an upstream origin, starting a listener for it the first
// time.
func (p *faultProxy) proxyFor(upstream string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o, ok := p.proxies[upstream]; ok {
		return o, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	u, _ := url.Parse(upstream)
	service := serviceByPort[u.Port()]
	if service == "" {
		service = "port " + u.Port()
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.serve(w, r, u.Host, service)
	}), ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(ln) }()
	p.servers = append(p.servers, srv)
	o := "http://" + ln.Addr().String()
	p.proxies[upstream] = o
	return o, nil
}

// inject sets the fault for the given services (none: clear it).
func (p *faultProxy) inject(f fault, services ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = f
	clear(p.faultOn)
	for _, s := range services {
		p.faultOn[s] = true
	}
}

// requests counts the requests to the given services since `since`, and the most in any
// one-second window.
func (p *faultProxy) requests(since time.Time, services ...string) (total, maxPerSecond int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var at []time.Time
	for _, h := range p.hits {
		for _, s := range services {
			if h.service == s && !h.at.Before(since) {
				at = append(at, h.at)
			}
		}
	}
	for i, start := range at {
		n := 0
		for _, t := range at[i:] {
			if t.Sub(start) < time.Second {
				n++
			}
		}
		maxPerSecond = max(maxPerSecond, n)
	}
	return len(at), maxPerSecond
}

func (p *faultProxy) serve(w http.ResponseWriter, r *http.Request, upstream, service string) {
	p.mu.Lock()
	f := fault{}
	if p.faultOn[service] {
		f = p.fault
	}
	p.hits = append(p.hits, hit{at: time.Now(), service: service})
	p.mu.Unlock()

	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
	}
	if f.status != 0 {
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": f.status, "message": "injected by the test's fault proxy"}})
		return
	}
	if f.reset {
		resetConnection(w)
		return
	}
	out := r.Clone(r.Context())
	out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = "http", upstream, upstream, ""
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		// The service is down: the caller sees its connection go, as without the proxy.
		resetConnection(w)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		resetConnection(w)
		return
	}
	if f.loseAnswer && r.Method != http.MethodGet && r.Method != http.MethodHead {
		resetConnection(w)
		return
	}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") {
		body = p.rewrite(body)
	}
	for k, vs := range resp.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Connection", "Transfer-Encoding":
			continue
		}
		for _, v := range vs {
			w.Header().Add(k, string(p.rewrite([]byte(v))))
		}
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// rewrite points every upstream URL in b at its proxy.
func (p *faultProxy) rewrite(b []byte) []byte {
	return loopbackURL.ReplaceAllFunc(b, func(m []byte) []byte {
		if p.isProxy(string(m)) {
			return m
		}
		o, err := p.proxyFor(string(m))
		if err != nil {
			p.t.Errorf("proxy for %s: %v", m, err)
			return m
		}
		return []byte(o)
	})
}

func (p *faultProxy) isProxy(origin string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, o := range p.proxies {
		if o == origin {
			return true
		}
	}
	return false
}

// resetConnection drops the client's connection with a TCP RST (SO_LINGER 0), not a clean close.
func resetConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("fault proxy: connection cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// proxiedClouds is clouds.yaml with the auth URL of the cloud pointed at the proxy.
func proxiedClouds(clouds []byte, authURL, proxyAuthURL string) []byte {
	return bytes.ReplaceAll(clouds, []byte(authURL), []byte(proxyAuthURL))
}

// TestFaultProxy checks the test's own tool against the all-in-one cloud: a client that
// authenticated through the proxy reaches Nova through it too, and each fault reaches the
// client as the operator's error classification expects it.
func TestFaultProxy(t *testing.T) {
	_, clouds := connect(t)
	cc, err := cloudconfig.Parse(clouds, os.Getenv("OS_CLOUD"))
	if err != nil {
		t.Fatal(err)
	}
	proxy, authURL := newFaultProxy(t, cc.Auth.IdentityEndpoint)
	cc, err = cloudconfig.Parse(proxiedClouds(clouds, cc.Auth.IdentityEndpoint, authURL), os.Getenv("OS_CLOUD"))
	if err != nil {
		t.Fatal(err)
	}
	provider, err := cc.Connect(env.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	nova, err := gcopenstack.NewComputeV2(provider, cc.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if !proxy.isProxy(strings.TrimSuffix(loopbackURL.FindString(nova.Endpoint), "/")) {
		t.Fatalf("Nova's endpoint %s is not one of the proxy's", nova.Endpoint)
	}
	list := func() error { _, err := flavors.ListDetail(nova, nil).AllPages(env.Ctx); return err }
	if err := list(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f     fault
		class openstack.ErrorClass
		after time.Duration
	}{
		{fault{status: 500}, openstack.Transient, 0},
		{fault{status: 429, retryAfter: "3"}, openstack.Throttled, 3 * time.Second},
		{fault{status: 503, retryAfter: "7"}, openstack.Throttled, 7 * time.Second},
		{fault{reset: true}, openstack.Transient, 0},
	} {
		start := time.Now()
		proxy.inject(tc.f, "compute")
		err := list()
		class, after := openstack.Classify(err)
		if err == nil || class != tc.class || after != tc.after {
			t.Errorf("fault %s: error %v classified %v, %s; want %v, %s", tc.f, err, class, after, tc.class, tc.after)
		}
		if n, _ := proxy.requests(start, "compute"); n == 0 {
			t.Errorf("fault %s: no request counted", tc.f)
		}
	}
	proxy.inject(fault{})
	if err := list(); err != nil {
		t.Errorf("after the faults: %v", err)
	}
}
