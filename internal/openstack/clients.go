package openstack

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kupenstack/kupenstack/internal/openstack/cloudconfig"
	"golang.org/x/time/rate"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of every OpenStack API call the operator makes.
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kupenstack_openstack_requests_total",
		Help: "OpenStack API requests, by service type, HTTP method and status code (\"error\" when no answer came).",
	}, []string{"service", "method", "code"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kupenstack_openstack_request_duration_seconds",
		Help:    "Latency of OpenStack API requests, by service type and HTTP method.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"service", "method"})
)

func init() { metrics.Registry.MustRegister(requestsTotal, requestDuration) }

// CredentialSource returns the current clouds.yaml; the cached clients are rebuilt when it changes.
type CredentialSource func(ctx context.Context) ([]byte, error)

// AuthError is a failure to get a token, as opposed to a failure of the service a client was
// asked for: the validation agent tells the two apart.
type AuthError struct {
	Cloud string
	Err   error
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("authenticating to cloud %q: %v", e.Cloud, e.Err)
}
func (e *AuthError) Unwrap() error { return e.Err }

// Clients hands out authenticated gophercloud service clients: admin ones for cloud-wide work
// (Keystone projects, flavors) and ones scoped to a single project, so that everything a namespace
// creates is owned by that namespace's project. Provider clients are cached per project and
// re-authenticate by themselves when their token expires.
type Clients struct {
	source    CredentialSource
	cloudName string
	transport *meteredTransport

	mu       sync.Mutex
	credHash [sha256.Size]byte
	cloud    *cloudconfig.Cloud
	admin    *gophercloud.ProviderClient
	projects map[string]*gophercloud.ProviderClient
	// services are the service clients built so far: building one costs a request (gophercloud
	// asks an unversioned endpoint such as Neutron's or Glance's for its versions), which would
	// otherwise double the cost of every list and get.
	services map[serviceKey]*gophercloud.ServiceClient
	// catalogAt is when each provider's catalog was read: gophercloud keeps the catalog of the
	// first token for the provider's life (re-authentication copies only the new token), so a
	// service registered later stays unknown until the provider is replaced.
	catalogAt map[*gophercloud.ProviderClient]time.Time
}

// catalogRefresh is how old a provider's catalog must be before a missing endpoint replaces the
// provider (one token request) to read the catalog again: a cloud being deployed registers its
// services one by one, and a service that is truly absent costs a token at most this often.
var catalogRefresh = 30 * time.Second

type serviceKey struct{ projectID, service string }

// NewClients returns a client factory for the cloud called cloudName in the clouds.yaml that
// source returns; requests are limited to qps per second on average (bursts of burst).
func NewClients(source CredentialSource, cloudName string, qps float64, burst int) *Clients {
	return &Clients{
		source:    source,
		cloudName: cloudName,
		transport: &meteredTransport{next: http.DefaultTransport, limiter: rate.NewLimiter(rate.Limit(qps), burst), services: &sync.Map{}},
		projects:  map[string]*gophercloud.ProviderClient{},
		services:  map[serviceKey]*gophercloud.ServiceClient{},
		catalogAt: map[*gophercloud.ProviderClient]time.Time{},
	}
}

// refresh re-reads the credentials and drops every cached client when they changed.
func (c *Clients) refresh(ctx context.Context) error {
	data, err := c.source(ctx)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	if c.cloud != nil && sum == c.credHash {
		return nil
	}
	cloud, err := cloudconfig.Parse(data, c.cloudName)
	if err != nil {
		return err
	}
	c.cloud, c.credHash, c.admin = cloud, sum, nil
	clear(c.projects)
	clear(c.services)
	clear(c.catalogAt)
	return nil
}

func (c *Clients) connect(ctx context.Context, cloud *cloudconfig.Cloud, auth gophercloud.AuthOptions) (*gophercloud.ProviderClient, error) {
	provider, err := gcopenstack.NewClient(auth.IdentityEndpoint)
	if err != nil {
		return nil, fmt.Errorf("cloud %q: %w", cloud.Name, err)
	}
	// Token requests and version discovery go to the auth URL, which need not be in the catalog.
	c.transport.services.Store(strings.TrimSuffix(provider.IdentityBase, "/"), "identity")
	transport := c.transport
	if cloud.TLS != nil {
		base := http.DefaultTransport.(*http.Transport).Clone()
		base.TLSClientConfig = cloud.TLS
		transport = &meteredTransport{next: base, limiter: c.transport.limiter, services: c.transport.services}
	}
	provider.HTTPClient = http.Client{Transport: transport, Timeout: 2 * time.Minute}
	if err := gcopenstack.Authenticate(ctx, provider, auth); err != nil {
		return nil, &AuthError{Cloud: cloud.Name, Err: err}
	}
	return provider, nil
}

// provider returns the cached provider client for projectID ("" = the admin scope of clouds.yaml).
func (c *Clients) provider(ctx context.Context, projectID string) (*gophercloud.ProviderClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.refresh(ctx); err != nil {
		return nil, err
	}
	if projectID == "" {
		if c.admin == nil {
			p, err := c.connect(ctx, c.cloud, c.authFor(""))
			if err != nil {
				return nil, err
			}
			c.admin = p
			c.catalogAt[p] = time.Now()
		}
		return c.admin, nil
	}
	if p, ok := c.projects[projectID]; ok {
		return p, nil
	}
	p, err := c.connect(ctx, c.cloud, c.authFor(projectID))
	if err != nil {
		return nil, err
	}
	c.projects[projectID] = p
	c.catalogAt[p] = time.Now()
	return p, nil
}

// authFor is how the provider of projectID authenticates: the credentials' own scope for "",
// else the same admin user (DomainID/DomainName are the user's domain) with a token scoped to the
// namespace's project instead.
func (c *Clients) authFor(projectID string) gophercloud.AuthOptions {
	auth := c.cloud.Auth
	if projectID != "" {
		auth.TenantID, auth.TenantName = "", ""
		auth.Scope = &gophercloud.AuthScope{ProjectID: projectID}
	}
	return auth
}

// renewCatalog replaces projectID's provider p by a newly authenticated one, whose token brings
// the current catalog, when p's catalog is older than catalogRefresh; it returns the provider to
// use (p itself when its catalog is recent or another caller replaced it already).
func (c *Clients) renewCatalog(ctx context.Context, projectID string, p *gophercloud.ProviderClient) (*gophercloud.ProviderClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	current := c.admin
	if projectID != "" {
		current = c.projects[projectID]
	}
	if current != p || time.Since(c.catalogAt[p]) < catalogRefresh {
		if current == nil {
			return p, nil
		}
		return current, nil
	}
	fresh, err := c.connect(ctx, c.cloud, c.authFor(projectID))
	if err != nil {
		return nil, err
	}
	delete(c.catalogAt, p)
	c.catalogAt[fresh] = time.Now()
	if projectID == "" {
		c.admin = fresh
	} else {
		c.projects[projectID] = fresh
	}
	return fresh, nil
}

// IssueToken authenticates anew with the credentials, without touching the cached clients, and
// returns the identity endpoint it used: it proves that Keystone issues tokens right now, which
// the cached clients (whose tokens last hours) cannot tell.
func (c *Clients) IssueToken(ctx context.Context) (string, error) {
	c.mu.Lock()
	err := c.refresh(ctx)
	cloud := c.cloud
	c.mu.Unlock()
	if err != nil {
		return "", err
	}
	// Outside the lock: a slow Keystone must not hold up the controllers' cached clients.
	_, err = c.connect(ctx, cloud, cloud.Auth)
	return cloud.Auth.IdentityEndpoint, err
}

// Forget drops the cached client of a project, e.g. after the project was deleted.
func (c *Clients) Forget(projectID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.catalogAt, c.projects[projectID])
	delete(c.projects, projectID)
	for k := range c.services {
		if k.projectID == projectID {
			delete(c.services, k)
		}
	}
}

func (c *Clients) endpointOpts() gophercloud.EndpointOpts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cloud.Endpoint
}

// serviceClient builds a service client and records its endpoint so metrics can name the service.
func (c *Clients) serviceClient(ctx context.Context, projectID, service string,
	build func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error),
) (*gophercloud.ServiceClient, error) {
	p, err := c.provider(ctx, projectID)
	if err != nil {
		return nil, err
	}
	key := serviceKey{projectID, service}
	c.mu.Lock()
	cached, ok := c.services[key]
	c.mu.Unlock()
	if !ok || cached.ProviderClient != p { // none yet, or the provider was replaced since
		// Built without the lock: the version request may take long on a loaded cloud.
		cached, err = build(p, c.endpointOpts())
		var notFound *gophercloud.ErrEndpointNotFound
		if errors.As(err, &notFound) {
			// Perhaps registered since the provider read its catalog.
			if fresh, rerr := c.renewCatalog(ctx, projectID, p); rerr != nil {
				return nil, rerr
			} else if fresh != p {
				cached, err = build(fresh, c.endpointOpts())
			}
		}
		if err != nil {
			return nil, fmt.Errorf("finding the %s endpoint: %w", service, err)
		}
		c.transport.services.Store(strings.TrimSuffix(cached.Endpoint, "/"), service)
		c.mu.Lock()
		c.services[key] = cached
		c.mu.Unlock()
	}
	// A copy: callers set per-request fields such as Microversion.
	sc := *cached
	return &sc, nil
}

// AdminIdentity is the Keystone client with the credentials' own (admin) scope.
func (c *Clients) AdminIdentity(ctx context.Context) (*gophercloud.ServiceClient, error) {
	return c.serviceClient(ctx, "", "identity", gcopenstack.NewIdentityV3)
}

// AdminUserID is the ID of the user the operator authenticates as.
func (c *Clients) AdminUserID(ctx context.Context) (string, error) {
	p, err := c.provider(ctx, "")
	if err != nil {
		return "", err
	}
	result, ok := p.GetAuthResult().(tokens.CreateResult)
	if !ok {
		return "", fmt.Errorf("cloud %q: only Keystone v3 password or token authentication is supported", c.cloudName)
	}
	user, err := result.ExtractUser()
	if err != nil {
		return "", fmt.Errorf("reading the operator's own user from its token: %w", err)
	}
	return user.ID, nil
}

// Identity is the Keystone client scoped to projectID: application credentials are made in the
// project of the token that asks for them.
func (c *Clients) Identity(ctx context.Context, projectID string) (*gophercloud.ServiceClient, error) {
	return c.serviceClient(ctx, projectID, "identity", gcopenstack.NewIdentityV3)
}

// Location is where the cloud is, as the operator reaches it, without any credential: what a
// clouds.yaml for another identity on the same cloud needs.
type Location struct {
	AuthURL, Region, Interface string
	// Insecure: the operator's clouds.yaml turns TLS verification off.
	Insecure bool
}

// Location returns the cloud's location from the current credentials.
func (c *Clients) Location(ctx context.Context) (Location, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.refresh(ctx); err != nil {
		return Location{}, err
	}
	l := Location{AuthURL: c.cloud.Auth.IdentityEndpoint, Region: c.cloud.Endpoint.Region, Interface: string(c.cloud.Endpoint.Availability)}
	l.Insecure = c.cloud.TLS != nil && c.cloud.TLS.InsecureSkipVerify
	return l, nil
}

// Network is the Neutron client scoped to projectID.
func (c *Clients) Network(ctx context.Context, projectID string) (*gophercloud.ServiceClient, error) {
	return c.serviceClient(ctx, projectID, "network", gcopenstack.NewNetworkV2)
}

// Compute is the Nova client scoped to projectID ("" for the admin scope).
func (c *Clients) Compute(ctx context.Context, projectID string) (*gophercloud.ServiceClient, error) {
	return c.serviceClient(ctx, projectID, "compute", gcopenstack.NewComputeV2)
}

// Image is the Glance client scoped to projectID.
func (c *Clients) Image(ctx context.Context, projectID string) (*gophercloud.ServiceClient, error) {
	return c.serviceClient(ctx, projectID, "image", gcopenstack.NewImageV2)
}

// BlockStorage is the Cinder (v3) client scoped to projectID.
func (c *Clients) BlockStorage(ctx context.Context, projectID string) (*gophercloud.ServiceClient, error) {
	return c.serviceClient(ctx, projectID, "block-storage", gcopenstack.NewBlockStorageV3)
}

// Placement is the Placement client with the admin scope.
func (c *Clients) Placement(ctx context.Context) (*gophercloud.ServiceClient, error) {
	return c.serviceClient(ctx, "", "placement", gcopenstack.NewPlacementV1)
}

// meteredTransport rate-limits every request and records its metrics.
type meteredTransport struct {
	next     http.RoundTripper
	limiter  *rate.Limiter
	services *sync.Map // endpoint URL prefix -> service type
}

func (t *meteredTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.limiter.Wait(req.Context()); err != nil {
		return nil, err
	}
	service := t.serviceOf(req.URL)
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	requestDuration.WithLabelValues(service, req.Method).Observe(time.Since(start).Seconds())
	code := "error"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	requestsTotal.WithLabelValues(service, req.Method, code).Inc()
	return resp, err
}

// serviceOf names the service a request goes to: the type of the longest endpoint (of the catalog
// or the auth URL) that the URL starts with, else the host and port it went to.
func (t *meteredTransport) serviceOf(u *url.URL) string {
	target, service, longest := u.String(), "", 0
	t.services.Range(func(k, v any) bool {
		if prefix := k.(string); len(prefix) > longest && strings.HasPrefix(target, prefix) {
			service, longest = v.(string), len(prefix)
		}
		return true
	})
	if service == "" {
		return u.Host
	}
	return service
}
