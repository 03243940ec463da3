package validation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/openstack"
	"github.com/kupenstack/kupenstack/internal/scheme"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

var env = testenv.New(nil)

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// requireCloud skips (or, with KUPENSTACK_E2E=required, fails) a test when no cloud is configured,
// like the end-to-end suite.
func requireCloud(t *testing.T) (cloudsYAML []byte, cloud string) {
	t.Helper()
	env.Require(t)
	path, cloud := os.Getenv("OS_CLIENT_CONFIG_FILE"), os.Getenv("OS_CLOUD")
	if path == "" || cloud == "" {
		if os.Getenv("KUPENSTACK_E2E") == "required" {
			t.Fatal("KUPENSTACK_E2E=required but OS_CLIENT_CONFIG_FILE/OS_CLOUD are not set")
		}
		t.Skip("no OpenStack: set OS_CLIENT_CONFIG_FILE and OS_CLOUD (make openstack-up writes them)")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data, cloud
}

// eventually polls cond until it returns nil; the deadline only bounds how long a broken agent
// makes the test hang.
func eventually(t *testing.T, what string, cond func() error) {
	testenv.Eventually(t, 3*time.Minute, 200*time.Millisecond, what, cond)
}

// TestAgentOnTheCloud runs the agent in a manager against the real cloud: every service
// healthy, no status write while nothing changes; then glance behind a loopback proxy that
// answers 503 (Keystone, behind a second proxy, hands out a catalog pointing at it): glance
// unhealthy with an Event and metrics; then the proxy forwards again and glance recovers.
func TestAgentOnTheCloud(t *testing.T) {
	realClouds, cloudName := requireCloud(t)
	ctx, cancel := context.WithCancel(env.Ctx)
	defer cancel()

	cloudsFile := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := os.WriteFile(cloudsFile, realClouds, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &kupenstackv1.KupenstackConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: kupenstackv1.KupenstackConfigurationName},
		Spec: kupenstackv1.KupenstackConfigurationSpec{
			Release: "2026.1", Charts: kupenstackv1.ChartSource{LocalPath: "/charts"},
			DefaultProfile:     kupenstackv1.ProfileReference{Name: "default", Namespace: "default"},
			OptionalComponents: []string{"cinder"}, // the all-in-one runs cinder: expect it
		},
	}
	if err := env.Client.Create(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), cfg) })

	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: scheme.New(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(&Agent{
		Clients: openstack.NewClients(openstack.FileSource(cloudsFile), cloudName, 50, 100),
		Reader:  mgr.GetAPIReader(), Writer: mgr.GetClient(), Recorder: mgr.GetEventRecorder(Name),
		// Short, so the test sees several rounds; generous timeouts for a loaded machine.
		Period: time.Second, Timeout: 30 * time.Second, Log: ctrl.Log.WithName(Name),
	}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	// 1. The real cloud: every service healthy, cinder included.
	eventually(t, "every service healthy", func() error { return servicesAre(ctx, map[string]string{}) })
	for _, s := range Services {
		if v, ok := gaugeValue(t, "kupenstack_service_healthy", s.Name); !ok || v != 1 {
			t.Errorf("kupenstack_service_healthy{service=%q} = %v (present %v), want 1", s.Name, v, ok)
		}
	}
	// A steady cloud causes no status write: three more rounds leave the object as it was.
	var steady kupenstackv1.KupenstackConfiguration
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cfg), &steady); err != nil {
		t.Fatal(err)
	}
	rounds := probeCount(t, "keystone")
	eventually(t, "three more rounds", func() error {
		if n := probeCount(t, "keystone"); n < rounds+3 {
			return fmt.Errorf("%d rounds so far", n-rounds)
		}
		return nil
	})
	var after kupenstackv1.KupenstackConfiguration
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cfg), &after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != steady.ResourceVersion {
		t.Errorf("status rewritten while nothing changed: %+v -> %+v", steady.Status.Services, after.Status.Services)
	}

	// 2. glance behind a proxy that answers 503.
	glance := startFaultProxy(t)
	glance.fail.Store(true)
	keystone := startCatalogProxy(t, realClouds, cloudName, "image", glance)
	if err := os.WriteFile(cloudsFile, keystone.cloudsYAML, 0o600); err != nil {
		t.Fatal(err)
	}
	failuresBefore := counterValue(t, "kupenstack_service_probe_failures_total", "glance", ReasonUnavailable)
	eventually(t, "glance unhealthy", func() error {
		return servicesAre(ctx, map[string]string{"glance": ReasonUnavailable})
	})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cfg), &after); err != nil {
		t.Fatal(err)
	}
	entry := after.Status.Services[indexOf(after.Status.Services, "glance")]
	if !strings.Contains(entry.Message, glance.host()) || !strings.Contains(entry.Message, "HTTP 503") {
		t.Errorf("glance message %q does not name the proxy %s and the 503", entry.Message, glance.host())
	}
	cond := meta.FindStatusCondition(after.Status.Conditions, kupenstackv1.ConditionServicesHealthy)
	if cond.Reason != ReasonUnavailable || !strings.Contains(cond.Message, "glance") {
		t.Errorf("ServicesHealthy = %+v, want reason Unavailable naming glance", cond)
	}
	eventually(t, "a ServiceUnhealthy Event for glance", func() error {
		return eventFor(ctx, EventServiceUnhealthy, "glance")
	})
	if v, _ := gaugeValue(t, "kupenstack_service_healthy", "glance"); v != 0 {
		t.Errorf("kupenstack_service_healthy{service=glance} = %v, want 0", v)
	}
	if n := counterValue(t, "kupenstack_service_probe_failures_total", "glance", ReasonUnavailable); n <= failuresBefore {
		t.Errorf("kupenstack_service_probe_failures_total{glance,Unavailable} = %v, want more than %v", n, failuresBefore)
	}

	// 3. The proxy forwards to the real glance again: recovery.
	glance.fail.Store(false)
	eventually(t, "glance healthy again", func() error { return servicesAre(ctx, map[string]string{}) })
	eventually(t, "a ServiceHealthy Event for glance", func() error {
		return eventFor(ctx, EventServiceHealthy, "glance")
	})
	if v, _ := gaugeValue(t, "kupenstack_service_healthy", "glance"); v != 1 {
		t.Errorf("kupenstack_service_healthy{service=glance} = %v, want 1", v)
	}
	if !glance.forwarded.Load() {
		t.Error("the glance proxy never forwarded a request: the recovery was not seen through it")
	}
}

// servicesAre checks the configuration's status: the services named in unhealthy have that
// reason, every other one is Healthy, and ServicesHealthy agrees.
func servicesAre(ctx context.Context, unhealthy map[string]string) error {
	var cfg kupenstackv1.KupenstackConfiguration
	if err := env.Client.Get(ctx, client.ObjectKey{Name: kupenstackv1.KupenstackConfigurationName}, &cfg); err != nil {
		return err
	}
	for _, s := range Services {
		i := indexOf(cfg.Status.Services, s.Name)
		if i < 0 {
			return fmt.Errorf("no status for %s yet", s.Name)
		}
		got, want := cfg.Status.Services[i], unhealthy[s.Name]
		if want == "" {
			want = ReasonHealthy
		}
		if got.Reason != want || got.Healthy != (want == ReasonHealthy) {
			return fmt.Errorf("%s: %s (%s), want %s", s.Name, got.Reason, got.Message, want)
		}
	}
	cond := meta.FindStatusCondition(cfg.Status.Conditions, kupenstackv1.ConditionServicesHealthy)
	wantStatus := metav1.ConditionTrue
	if len(unhealthy) > 0 {
		wantStatus = metav1.ConditionFalse
	}
	if cond == nil || cond.Status != wantStatus || cond.ObservedGeneration != cfg.Generation {
		return fmt.Errorf("ServicesHealthy = %+v, want %s", cond, wantStatus)
	}
	return nil
}

func indexOf(services []kupenstackv1.ServiceHealth, name string) int {
	for i, s := range services {
		if s.Name == name {
			return i
		}
	}
	return -1
}

func eventFor(ctx context.Context, reason, service string) error {
	var list eventsv1.EventList
	if err := env.Client.List(ctx, &list); err != nil {
		return err
	}
	for _, e := range list.Items {
		if e.Regarding.Kind == "KupenstackConfiguration" && e.Reason == reason && strings.HasPrefix(
			strings.TrimPrefix(e.Note, ReasonUnavailable+": "), service+" (") {
			return nil
		}
	}
	return fmt.Errorf("no %s Event for %s among %d", reason, service, len(list.Items))
}

// faultProxy stands in front of one real service: it forwards, or answers 503 while fail is set.
type faultProxy struct {
	srv       *httptest.Server
	target    atomic.Pointer[url.URL]
	fail      atomic.Bool
	forwarded atomic.Bool
}

func startFaultProxy(t *testing.T) *faultProxy {
	p := &faultProxy{}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(p.target.Load())
		r.Out.Host = r.Out.URL.Host
	}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.fail.Load() || p.target.Load() == nil {
			http.Error(w, "injected fault", http.StatusServiceUnavailable)
			return
		}
		p.forwarded.Store(true)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *faultProxy) host() string { return strings.TrimPrefix(p.srv.URL, "http://") }

// catalogProxy forwards to the real Keystone and rewrites the catalog of every token it issues
// so that the endpoints of one service type point at a faultProxy, which then forwards to the
// real endpoint.
type catalogProxy struct {
	srv        *httptest.Server
	cloudsYAML []byte // the clouds.yaml that authenticates through this proxy
}

func startCatalogProxy(t *testing.T, realClouds []byte, cloudName, serviceType string, to *faultProxy) *catalogProxy {
	t.Helper()
	var clouds map[string]any
	if err := yaml.Unmarshal(realClouds, &clouds); err != nil {
		t.Fatal(err)
	}
	auth := clouds["clouds"].(map[string]any)[cloudName].(map[string]any)["auth"].(map[string]any)
	authURL, err := url.Parse(auth["auth_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if h := authURL.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
		t.Skipf("the catalog proxy only fronts a loopback Keystone, not %s", h)
	}
	keystone := &url.URL{Scheme: authURL.Scheme, Host: authURL.Host}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(keystone)
			r.Out.Host = keystone.Host
			r.Out.Header.Del("Accept-Encoding") // the body is rewritten: keep it plain
		},
		ModifyResponse: func(resp *http.Response) error {
			if resp.Request.Method != http.MethodPost || !strings.HasSuffix(resp.Request.URL.Path, "/auth/tokens") ||
				resp.StatusCode != http.StatusCreated {
				return nil
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			var token map[string]any
			if err := json.Unmarshal(body, &token); err != nil {
				return err
			}
			catalog, _ := token["token"].(map[string]any)["catalog"].([]any)
			for _, entry := range catalog {
				entry := entry.(map[string]any)
				if entry["type"] != serviceType {
					continue
				}
				for _, ep := range entry["endpoints"].([]any) {
					ep := ep.(map[string]any)
					real, err := url.Parse(ep["url"].(string))
					if err != nil {
						return err
					}
					to.target.Store(&url.URL{Scheme: real.Scheme, Host: real.Host})
					real.Scheme, real.Host = "http", to.host()
					ep["url"] = real.String()
				}
			}
			if body, err = json.Marshal(token); err != nil {
				return err
			}
			resp.Body = io.NopCloser(bytes.NewReader(body))
			resp.ContentLength = int64(len(body))
			resp.Header.Set("Content-Length", fmt.Sprint(len(body)))
			return nil
		},
	}
	p := &catalogProxy{srv: httptest.NewServer(proxy)}
	t.Cleanup(p.srv.Close)
	proxied := *authURL
	proxied.Scheme, proxied.Host = "http", strings.TrimPrefix(p.srv.URL, "http://")
	auth["auth_url"] = proxied.String()
	if p.cloudsYAML, err = yaml.Marshal(clouds); err != nil {
		t.Fatal(err)
	}
	return p
}

// metric finds the sample of a metric family with exactly the given labels.
func metric(t *testing.T, name string, labels map[string]string) (*dto.Metric, bool) {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue next
				}
			}
			return m, true
		}
	}
	return nil, false
}

func gaugeValue(t *testing.T, name, service string) (float64, bool) {
	m, ok := metric(t, name, map[string]string{"service": service})
	return m.GetGauge().GetValue(), ok
}

func counterValue(t *testing.T, name, service, reason string) float64 {
	m, _ := metric(t, name, map[string]string{"service": service, "reason": reason})
	return m.GetCounter().GetValue()
}

func probeCount(t *testing.T, service string) uint64 {
	m, _ := metric(t, "kupenstack_service_probe_duration_seconds", map[string]string{"service": service})
	return m.GetHistogram().GetSampleCount()
}
