package image

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// loopbackAllowed is the policy of tests whose sources are httptest servers.
var loopbackAllowed = SourcePolicy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}

func TestSourcePolicy(t *testing.T) {
	deflt := SourcePolicy{}
	mirror := SourcePolicy{Allowed: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}
	clusterRanges := SourcePolicy{Allowed: mirror.Allowed, Blocked: []netip.Prefix{
		netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("2001:db8:42::/56"), netip.MustParsePrefix("10.1.96.0/20")}}
	for _, tt := range []struct {
		p        SourcePolicy
		addr     string
		wantRule string // "" when allowed
	}{
		{deflt, "203.0.113.7", ""},
		{deflt, "2001:db8::1", ""},
		{deflt, "127.0.0.1", "loopback"},
		{deflt, "::1", "loopback"},
		{deflt, "::ffff:127.0.0.1", "loopback"},
		{deflt, "169.254.169.254", "link-local"},
		{deflt, "fe80::1", "link-local"},
		{deflt, "10.96.0.1", "private"},  // a typical Service ClusterIP
		{deflt, "10.244.1.5", "private"}, // a typical pod IP
		{deflt, "172.20.0.1", "private"},
		{deflt, "192.168.1.1", "private"},
		{deflt, "fd00::1", "private"},
		{deflt, "100.64.0.1", "shared address space"},
		{deflt, "0.0.0.0", "unspecified"},
		{deflt, "::", "unspecified"},
		{deflt, "224.0.0.1", "multicast"},
		{deflt, "255.255.255.255", "reserved"},
		{mirror, "10.1.2.3", ""},
		{mirror, "10.2.2.3", "private"},
		{mirror, "169.254.169.254", "link-local"},
		// IPv4 addresses inside IPv6 ones: 6to4 always refused, well-known NAT64 as its IPv4.
		{deflt, "2002:a9fe:a9fe::1", "6to4"},        // 169.254.169.254 by 6to4
		{deflt, "2002:cb00:7107::1", "6to4"},        // even a public one: no use for an image source
		{deflt, "64:ff9b::a9fe:a9fe", "link-local"}, // 169.254.169.254 through NAT64
		{deflt, "64:ff9b::7f00:1", "loopback"},
		{deflt, "64:ff9b::a60:1", "private"},
		{deflt, "64:ff9b::cb00:7107", ""}, // 203.0.113.7: public, as an IPv6-only cluster with DNS64 reaches it
		{deflt, "64:ff9b:1::a9fe:a9fe", "reserved"},
		{mirror, "64:ff9b::a01:203", ""}, // 10.1.2.3, an allowed mirror through NAT64
		// The admin's blocked ranges: a cluster whose Service and pod ranges are public addresses.
		{clusterRanges, "203.0.113.7", ""},
		{clusterRanges, "198.51.100.10", "in 198.51.100.0/24, which the admin blocked"},
		{clusterRanges, "2001:db8:42::1", "in 2001:db8:42::/56, which the admin blocked"},
		{clusterRanges, "64:ff9b::c633:640a", "in 198.51.100.0/24, which the admin blocked"}, // through NAT64
		{clusterRanges, "10.1.2.3", ""},                                                      // allowed and not blocked
		{clusterRanges, "10.1.96.1", "in 10.1.96.0/20, which the admin blocked"},             // blocked wins over allowed
		{clusterRanges, "127.0.0.1", "loopback"},                                             // the rules still apply
	} {
		err := tt.p.check("", netip.MustParseAddr(tt.addr))
		switch {
		case tt.wantRule == "" && err != nil:
			t.Errorf("%s refused: %v", tt.addr, err)
		case tt.wantRule != "" && (err == nil || !strings.Contains(err.Error(), "may not be "+tt.wantRule)):
			t.Errorf("%s: %v, want the %s rule", tt.addr, err, tt.wantRule)
		case err != nil:
			if _, ok := blocked(err); !ok {
				t.Errorf("%s: %T is not a refusal by the policy", tt.addr, err)
			}
		}
	}
	for addr, want := range map[string]string{
		"64:ff9b::a9fe:a9fe": "image sources may not be link-local (cloud metadata) addresses: 64:ff9b::a9fe:a9fe is one through NAT64 (169.254.169.254)",
		"198.51.100.10":      "image sources may not be in 198.51.100.0/24, which the admin blocked (the operator's --image-source-blocked-cidrs): 198.51.100.10 is in it",
	} {
		p := SourcePolicy{Blocked: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")}}
		if err := p.check("", netip.MustParseAddr(addr)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", addr, err, want)
		}
	}
	if err := deflt.checkURL(context.Background(), &url.URL{Scheme: "http", Host: "localhost:8080"}); err == nil ||
		!strings.Contains(err.Error(), "localhost (127.0.0.1) is one") && !strings.Contains(err.Error(), "localhost (::1) is one") {
		t.Errorf("localhost: %v", err)
	}
}

func TestParseCIDRs(t *testing.T) {
	got, err := ParseCIDRs(" 10.1.0.0/16, fd00::/8,192.168.7.9/24 ")
	if err != nil || len(got) != 3 || got[2].String() != "192.168.7.0/24" {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := ParseCIDRs(""); err != nil || len(got) != 0 {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := ParseCIDRs("10.0.0.1"); err == nil {
		t.Fatal("an address without a prefix length accepted")
	}
}

func FuzzParseCIDRs(f *testing.F) {
	for _, s := range []string{"10.0.0.0/8", "fd00::/8,1.2.3.4/32", "", ",,", "x/y", "::ffff:1.2.3.4/128"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ParseCIDRs(s)
		if err != nil {
			return
		}
		p := SourcePolicy{Allowed: ps}
		for _, a := range []string{"127.0.0.1", "169.254.169.254", "8.8.8.8"} {
			_ = p.check("", netip.MustParseAddr(a))
		}
	})
}

// TestUploadRefusesBlockedSources: the operator downloads nothing from loopback, the metadata
// address or a redirect to either; the refusal is invalid configuration naming the rule, and
// Glance is never called.
func TestUploadRefusesBlockedSources(t *testing.T) {
	var hits int
	source := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		switch r.URL.Path {
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-other-loopback":
			http.Redirect(w, r, "http://127.0.0.2:1/secret", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		default:
			_, _ = w.Write([]byte("data"))
		}
	}))
	defer source.Close()
	glanceCalled := false
	glance := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { glanceCalled = true }))
	defer glance.Close()
	sc := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: glance.URL + "/", ResourceBase: glance.URL + "/v2/"}
	onlyThisServer := SourcePolicy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	for _, tt := range []struct {
		name    string
		p       SourcePolicy
		url     string
		wantErr string
	}{
		{"loopback by default", SourcePolicy{}, source.URL + "/disk.img", "image sources may not be loopback addresses: 127.0.0.1 is one"},
		{"metadata", SourcePolicy{}, "http://169.254.169.254/latest/meta-data/", "may not be link-local (cloud metadata) addresses"},
		{"redirect to metadata", onlyThisServer, source.URL + "/to-metadata", "may not be link-local (cloud metadata) addresses"},
		{"redirect to another loopback address", onlyThisServer, source.URL + "/to-other-loopback", "may not be loopback addresses: 127.0.0.2 is one"},
		{"redirect to a file", onlyThisServer, source.URL + "/to-file", "redirects to a file URL"},
		// The admin blocks a range (the cluster's Service range, say) that allowed ones include.
		{"blocked by the admin", SourcePolicy{Allowed: loopbackAllowed.Allowed, Blocked: onlyThisServer.Allowed}, source.URL + "/disk.img",
			"may not be in 127.0.0.1/32, which the admin blocked (the operator's --image-source-blocked-cidrs): 127.0.0.1 is in it"},
		{"redirect into a range the admin blocked", SourcePolicy{Allowed: loopbackAllowed.Allowed, Blocked: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}},
			source.URL + "/to-other-loopback", "may not be in 127.0.0.2/32, which the admin blocked"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := upload(context.Background(), tt.p, sc, "img-1", &kupenstackv1.ImageSource{URL: tt.url})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !isInvalid(err) {
				t.Fatalf("err = %v (%T), want invalid configuration saying %q", err, err, tt.wantErr)
			}
		})
	}
	if glanceCalled {
		t.Fatal("Glance was called for a refused source")
	}
	if hits != 4 {
		t.Fatalf("the source server was reached %d times, want 4 (the redirecting requests only)", hits)
	}
}
