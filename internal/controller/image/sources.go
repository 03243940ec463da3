package image

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// An Image's source.url is written by a tenant and fetched by the operator, from the operator's
// pod with its network position: without a check it could read the cloud's metadata service,
// the operator's own ports, in-cluster Services or anything else only the cluster can reach.
// Sources reaches public addresses only, unless the admin allows some ranges
// (--image-source-allowed-cidrs); the admin can block more (--image-source-blocked-cidrs: the
// cluster's Service and pod ranges when they are public addresses). Every connection is checked against the address it actually
// dials (so DNS answers that change between a check and the dial, and redirects, are covered),
// and the URL's host is resolved and checked before the request for a clear message.

// maxRedirects bounds the redirects one download follows.
const maxRedirects = 5

// blockedRange is a range image downloads may not reach unless allowed, with the rule's name.
type blockedRange struct {
	prefix netip.Prefix
	rule   string
}

var blockedRanges = func() []blockedRange {
	var out []blockedRange
	for _, r := range []struct{ rule, cidrs string }{
		{"loopback", "127.0.0.0/8 ::1/128"},
		{"link-local (cloud metadata)", "169.254.0.0/16 fe80::/10"},
		{"private", "10.0.0.0/8 172.16.0.0/12 192.168.0.0/16 fc00::/7"},
		{"shared address space (carrier-grade NAT)", "100.64.0.0/10"},
		{"unspecified or this-network", "0.0.0.0/8 ::/128"},
		{"multicast", "224.0.0.0/4 ff00::/8"},
		// 64:ff9b:1::/48 is the local-use NAT64 prefix (RFC 8215): it translates to whatever IPv4
		// addresses the site chooses, internal ones included. 2002::/16 is 6to4 (RFC 3056,
		// deprecated by RFC 7526): an address there embeds an IPv4 address (2002:a9fe:a9fe:: is
		// 169.254.169.254's) that a relay or the host itself may reach, so it is a way around the
		// IPv4 rules and has no use for an image source. The well-known NAT64 prefix
		// 64:ff9b::/96 (RFC 6052) is not blocked outright, as IPv6-only clusters reach public IPv4
		// mirrors through it (DNS64): its addresses are checked as the IPv4 address they embed
		// (see embeddedIPv4).
		{"reserved", "240.0.0.0/4 192.0.0.0/24 198.18.0.0/15 64:ff9b:1::/48"},
		{"6to4 (2002::/16, which embeds IPv4 addresses)", "2002::/16"},
	} {
		for _, c := range strings.Fields(r.cidrs) {
			out = append(out, blockedRange{netip.MustParsePrefix(c), r.rule})
		}
	}
	return out
}()

// nat64WellKnown is the well-known NAT64 prefix (RFC 6052): 64:ff9b::a9fe:a9fe is
// 169.254.169.254 through the cluster's NAT64 gateway.
var nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")

// embeddedIPv4 returns the IPv4 address a well-known NAT64 address stands for.
func embeddedIPv4(addr netip.Addr) (netip.Addr, bool) {
	if !addr.Is6() || !nat64WellKnown.Contains(addr) {
		return netip.Addr{}, false
	}
	b := addr.As16()
	return netip.AddrFrom4([4]byte(b[12:])), true
}

// SourcePolicy says which addresses image downloads may reach beyond public ones.
type SourcePolicy struct {
	// Allowed ranges are reachable even where a rule blocks them (a mirror on a private network,
	// or the proxy of the environment's HTTP_PROXY).
	Allowed []netip.Prefix
	// Blocked ranges are never reachable, even where Allowed or no rule would let them through:
	// the cluster's Service and pod ranges when they lie outside the private ranges.
	Blocked []netip.Prefix
}

// ParseCIDRs parses a comma-separated list of CIDRs (the flag's form); empty gives none.
func ParseCIDRs(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Fields(strings.ReplaceAll(s, ",", " ")) {
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// blockedError is a download refused by the policy; its message names the rule.
type blockedError struct{ msg string }

func (e *blockedError) Error() string { return e.msg }

// describeAddress names addr as a refusal shows it: with the host it was resolved from, if any.
func describeAddress(host string, addr netip.Addr) string {
	what := addr.String()
	if host != "" && host != what {
		what = host + " (" + what + ")"
	}
	return what
}

func blockedAddress(host string, addr netip.Addr, rule, via string) *blockedError {
	return &blockedError{fmt.Sprintf("image sources may not be %s addresses: %s is one%s (an admin can allow "+
		"a range with the operator's --image-source-allowed-cidrs)", rule, describeAddress(host, addr), via)}
}

// check returns a *blockedError when addr may not be reached. The admin's blocked ranges come
// first, then the allowed ones, then the rules; a well-known NAT64 address is judged as the IPv4
// address it stands for.
func (p SourcePolicy) check(host string, addr netip.Addr) error {
	addr = addr.Unmap()
	inner, nat64 := embeddedIPv4(addr)
	via := ""
	if nat64 {
		via = " through NAT64 (" + inner.String() + ")"
	}
	for _, b := range p.Blocked {
		if b.Contains(addr) || nat64 && b.Contains(inner) {
			return &blockedError{fmt.Sprintf("image sources may not be in %s, which the admin blocked "+
				"(the operator's --image-source-blocked-cidrs): %s is in it%s", b, describeAddress(host, addr), via)}
		}
	}
	for _, a := range p.Allowed {
		if a.Contains(addr) || nat64 && a.Contains(inner) {
			return nil
		}
	}
	for _, b := range blockedRanges {
		if b.prefix.Contains(addr) || nat64 && b.prefix.Contains(inner) {
			return blockedAddress(host, addr, b.rule, via)
		}
	}
	return nil
}

// checkURL resolves the URL's host and checks every address it has.
func (p SourcePolicy) checkURL(ctx context.Context, u *url.URL) error {
	host := u.Hostname()
	if addr, err := netip.ParseAddr(host); err == nil {
		return p.check(host, addr)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil // the request itself reports it, as a transient error
	}
	for _, a := range addrs {
		if err := p.check(host, a); err != nil {
			return err
		}
	}
	return nil
}

// Client is the HTTP client of downloads under the policy: proxies from the environment, a
// bounded wait for the first answer, at most maxRedirects redirects, each checked.
func (p SourcePolicy) Client() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = sourceHeaderTimeout
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("dialing %s: not an address", address)
			}
			return p.check("", ap.Addr())
		}}
	t.DialContext = dialer.DialContext
	return &http.Client{Transport: t, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return &blockedError{fmt.Sprintf("the source redirects more than %d times", maxRedirects)}
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return &blockedError{fmt.Sprintf("the source redirects to a %s URL; image sources are http or https", req.URL.Scheme)}
		}
		return p.checkURL(req.Context(), req.URL)
	}}
}

// blocked returns the policy's refusal inside err, if that is what err is.
func blocked(err error) (*blockedError, bool) {
	var b *blockedError
	return b, errors.As(err, &b)
}
