// Package validation is the validation agent: it probes each OpenStack service of the cloud (a
// token issue, then one cheap list call per service) on a period and reports the verdicts as the
// KupenstackConfiguration's status.services and ServicesHealthy condition, as Events and as
// metrics. It works the same on a cloud KupenStack deployed and on an existing one.
package validation

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/placement/v1/resourceproviders"
	"github.com/gophercloud/gophercloud/v2/pagination"

	"github.com/kupenstack/kupenstack/internal/openstack"
)

// Reasons of a verdict, as written to status.services[].reason and the failures metric.
const (
	ReasonHealthy = "Healthy"
	// ReasonNotDeployed: not in the catalog and not expected; not counted as unhealthy.
	ReasonNotDeployed = "NotDeployed"
	// ReasonNotInCatalog: expected, but the catalog has no endpoint for it.
	ReasonNotInCatalog = "NotInCatalog"
	// ReasonUnauthorized: the service (or Keystone) rejected the credentials or token (401, 403).
	ReasonUnauthorized = "Unauthorized"
	// ReasonUnavailable: a 5xx answer, or no connection at all (refused, reset, unresolvable).
	ReasonUnavailable = "Unavailable"
	// ReasonTimeout: no answer within the probe's timeout.
	ReasonTimeout = "Timeout"
	// ReasonAuthenticationFailed: no token, so the service itself could not be asked.
	ReasonAuthenticationFailed = "AuthenticationFailed"
	// ReasonError: any other failure, e.g. an unexpected 4xx.
	ReasonError = "Error"
)

// Service is one OpenStack service the agent probes.
type Service struct {
	// Name is the service's component (as in spec.optionalComponents): keystone, nova, ...
	Name string
	// Type is its catalog type.
	Type string
	// Optional services are expected only when spec.optionalComponents lists them; missing from
	// the catalog otherwise, they are NotDeployed.
	Optional bool
	// client builds the service's client through the operator's factory; nil for keystone.
	client func(context.Context, *openstack.Clients) (*gophercloud.ServiceClient, error)
	// call is the probe proper: one request, as cheap as the service offers.
	call func(context.Context, *gophercloud.ServiceClient) error
}

// Services are the services probed, in the order they are reported.
var Services = []Service{
	{Name: "keystone", Type: "identity"},
	{Name: "nova", Type: "compute",
		client: func(ctx context.Context, c *openstack.Clients) (*gophercloud.ServiceClient, error) {
			return c.Compute(ctx, "")
		},
		call: func(ctx context.Context, sc *gophercloud.ServiceClient) error {
			return firstPage(ctx, servers.ListSimple(sc, servers.ListOpts{Limit: 1}))
		}},
	{Name: "neutron", Type: "network",
		client: func(ctx context.Context, c *openstack.Clients) (*gophercloud.ServiceClient, error) {
			return c.Network(ctx, "")
		},
		call: func(ctx context.Context, sc *gophercloud.ServiceClient) error {
			return firstPage(ctx, networks.List(sc, networks.ListOpts{Limit: 1}))
		}},
	{Name: "glance", Type: "image",
		client: func(ctx context.Context, c *openstack.Clients) (*gophercloud.ServiceClient, error) {
			return c.Image(ctx, "")
		},
		call: func(ctx context.Context, sc *gophercloud.ServiceClient) error {
			return firstPage(ctx, images.List(sc, images.ListOpts{Limit: 1}))
		}},
	{Name: "placement", Type: "placement",
		client: func(ctx context.Context, c *openstack.Clients) (*gophercloud.ServiceClient, error) {
			return c.Placement(ctx)
		},
		call: func(ctx context.Context, sc *gophercloud.ServiceClient) error {
			// Placement does not paginate; a cloud has one provider per compute node.
			return firstPage(ctx, resourceproviders.List(sc, resourceproviders.ListOpts{}))
		}},
	{Name: "cinder", Type: "block-storage", Optional: true,
		client: func(ctx context.Context, c *openstack.Clients) (*gophercloud.ServiceClient, error) {
			return c.BlockStorage(ctx, "")
		},
		call: func(ctx context.Context, sc *gophercloud.ServiceClient) error {
			return firstPage(ctx, volumes.List(sc, volumes.ListOpts{Limit: 1}))
		}},
}

// firstPage fetches one page only: following the next links would list everything.
func firstPage(ctx context.Context, pager pagination.Pager) error {
	return pager.EachPage(ctx, func(context.Context, pagination.Page) (bool, error) { return false, nil })
}

// Result is the verdict of one probe.
type Result struct {
	Service Service
	Healthy bool
	Reason  string
	// Message names the service and its endpoint host, never credentials; it is the same for
	// the same failure, so that an unchanged verdict causes no status write.
	Message string
	Latency time.Duration
	Time    time.Time
}

// Counted says whether the result takes part in the ServicesHealthy verdict.
func (r Result) Counted() bool { return r.Reason != ReasonNotDeployed }

// ProbeAll probes every service at once, each within timeout. With expected nil, the core
// services are expected; otherwise the services expected names (a configuration's components).
// The results are in the order of Services.
func ProbeAll(ctx context.Context, clients *openstack.Clients, timeout time.Duration, expected map[string]bool) []Result {
	results := make([]Result, len(Services))
	var wg sync.WaitGroup
	for i, s := range Services {
		wg.Go(func() {
			results[i] = Probe(ctx, clients, s, timeout, (expected == nil && !s.Optional) || expected[s.Name])
		})
	}
	wg.Wait()
	return results
}

// Probe runs one service's probe within timeout.
func Probe(outer context.Context, clients *openstack.Clients, s Service, timeout time.Duration, expected bool) Result {
	ctx, cancel := context.WithTimeout(outer, timeout)
	defer cancel()
	start := time.Now()
	r := Result{Service: s, Time: start}
	verdict := make(chan [2]string, 1)
	go func() {
		reason, message := probe(ctx, clients, s, timeout, expected)
		verdict <- [2]string{reason, message}
	}()
	// gophercloud's version discovery, run when a service client is built, takes no context: a
	// hung service holds it until the HTTP client's own timeout. The probe waits for it only a
	// little longer than for calls that honour ctx, which give their own, more precise verdict.
	giveUp := time.NewTimer(timeout + max(timeout/5, time.Second))
	defer giveUp.Stop()
	select {
	case v := <-verdict:
		r.Reason, r.Message = v[0], v[1]
	case <-giveUp.C:
		r.Reason, r.Message = ReasonTimeout, fmt.Sprintf("%s (%s): no answer within %s", s.Name, s.Type, timeout)
	case <-outer.Done():
		r.Reason, r.Message = ReasonError, "probe cancelled"
	}
	r.Latency = time.Since(start)
	r.Healthy = r.Reason == ReasonHealthy
	return r
}

func probe(ctx context.Context, clients *openstack.Clients, s Service, timeout time.Duration, expected bool) (reason, message string) {
	name := fmt.Sprintf("%s (%s)", s.Name, s.Type)
	if s.client == nil {
		endpoint, err := clients.IssueToken(ctx)
		if err != nil {
			reason, detail := classify(ctx, err, timeout)
			return reason, fmt.Sprintf("%s at %s: %s", name, hostOf(err, endpoint), detail)
		}
		return ReasonHealthy, fmt.Sprintf("%s at %s issued a token", name, hostOf(nil, endpoint))
	}
	sc, err := s.client(ctx, clients)
	var notFound *gophercloud.ErrEndpointNotFound
	var authErr *openstack.AuthError
	switch {
	case errors.As(err, &notFound) && !expected:
		return ReasonNotDeployed, name + " is not in the service catalog"
	case errors.As(err, &notFound):
		return ReasonNotInCatalog, name + " is expected but not in the service catalog"
	case errors.As(err, &authErr):
		_, detail := classify(ctx, authErr.Err, timeout)
		return ReasonAuthenticationFailed, fmt.Sprintf("%s not probed: no token from keystone: %s", name, detail)
	case err != nil: // version discovery, which asks the service itself
		reason, detail := classify(ctx, err, timeout)
		return reason, fmt.Sprintf("%s at %s: %s", name, hostOf(err, ""), detail)
	}
	if err := s.call(ctx, sc); err != nil {
		reason, detail := classify(ctx, err, timeout)
		return reason, fmt.Sprintf("%s at %s: %s", name, hostOf(err, sc.Endpoint), detail)
	}
	return ReasonHealthy, fmt.Sprintf("%s at %s answered", name, hostOf(nil, sc.Endpoint))
}

// statusCoder is what gophercloud's ErrUnexpectedResponseCode offers, by value or pointer.
type statusCoder interface{ GetStatusCode() int }

// classify gives a failure's reason and a short description of it that holds no URL path,
// body or header: only what happened.
func classify(ctx context.Context, err error, timeout time.Duration) (reason, detail string) {
	// A failed re-authentication is Keystone's failure, not the service's.
	var reauth *gophercloud.ErrUnableToReauthenticate
	if errors.As(err, &reauth) {
		_, detail := classify(ctx, reauth.ErrReauth, timeout)
		return ReasonAuthenticationFailed, "re-authentication failed: " + detail
	}
	var coded statusCoder
	var netErr net.Error
	switch {
	// The probe's own deadline, wherever it struck (the rate limiter gives up early, unwrapped).
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded,
		errors.As(err, &netErr) && netErr.Timeout(),
		// The operator's rate limiter refuses early, with an unwrapped error, a wait that would
		// outlast the deadline.
		strings.Contains(err.Error(), "would exceed context deadline"):
		return ReasonTimeout, fmt.Sprintf("no answer within %s", timeout)
	case errors.As(err, &coded):
		code := coded.GetStatusCode()
		detail := fmt.Sprintf("HTTP %d", code)
		switch {
		case code == 401 || code == 403:
			return ReasonUnauthorized, detail
		case code >= 500:
			return ReasonUnavailable, detail
		case code == 408:
			return ReasonTimeout, detail
		}
		return ReasonError, detail
	case errors.Is(err, syscall.ECONNREFUSED):
		return ReasonUnavailable, "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return ReasonUnavailable, "connection reset"
	}
	var dnsErr *net.DNSError
	var opErr *net.OpError
	if errors.As(err, &dnsErr) || errors.As(err, &opErr) {
		return ReasonUnavailable, "cannot connect"
	}
	return ReasonError, err.Error()
}

// hostOf is the host (and port) the failed request went to, from the error when it says, else
// from fallback; never a path or query, which may carry a project ID or a token.
func hostOf(err error, fallback string) string {
	var urlErr *url.Error
	var coded *gophercloud.ErrUnexpectedResponseCode
	var codedValue gophercloud.ErrUnexpectedResponseCode
	switch {
	case errors.As(err, &urlErr):
		fallback = urlErr.URL
	case errors.As(err, &coded):
		fallback = coded.URL
	case errors.As(err, &codedValue):
		fallback = codedValue.URL
	}
	if u, perr := url.Parse(fallback); perr == nil && u.Host != "" {
		return u.Host
	}
	return "an unknown endpoint"
}
