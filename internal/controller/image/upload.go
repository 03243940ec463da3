package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

const (
	// MaxImageBytes is the largest image the operator downloads and uploads.
	MaxImageBytes int64 = 64 << 30
	// transferTimeout bounds one download-and-upload.
	transferTimeout = time.Hour
	// sourceHeaderTimeout bounds the wait for the source's response headers.
	sourceHeaderTimeout = 30 * time.Second
)

// Redact returns rawURL without its user info, query and fragment: what status, Events and logs
// may show of a source URL (presigned URLs carry their credentials in the query).
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return r.String() + " (credentials and query hidden)"
	}
	return r.String()
}

// verifier reads the source data through, counting and hashing it. It fails the read that would
// go past the limit, and turns the end of the data into an error when the size or checksum is
// wrong, so that a chunked upload never sends its final chunk and Glance never activates it.
type verifier struct {
	r        io.Reader
	h        hash.Hash
	n, limit int64
	// wantSize is the announced size (Content-Length), -1 when unknown.
	wantSize int64
	// wantSHA256 is the expected checksum (lower-case hex), "" to accept any.
	wantSHA256 string
	// err is the verification failure, once there is one.
	err error
}

func newVerifier(r io.Reader, limit, wantSize int64, wantSHA256 string) *verifier {
	return &verifier{r: r, h: sha256.New(), limit: limit, wantSize: wantSize, wantSHA256: strings.ToLower(wantSHA256)}
}

// errVerification marks failures that mean the source is not what the spec says.
var errVerification = errors.New("image data verification failed")

func (v *verifier) fail(format string, args ...any) (int, error) {
	v.err = fmt.Errorf("%w: "+format, append([]any{errVerification}, args...)...)
	return 0, v.err
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.r.Read(p)
	v.n += int64(n)
	if v.n > v.limit {
		return v.fail("the data is larger than %d bytes", v.limit)
	}
	v.h.Write(p[:n])
	if !errors.Is(err, io.EOF) {
		return n, err
	}
	if v.wantSize >= 0 && v.n != v.wantSize {
		return v.fail("the source announced %d bytes but sent %d", v.wantSize, v.n)
	}
	if got := v.Sum(); v.wantSHA256 != "" && got != v.wantSHA256 {
		return v.fail("the data's sha256 is %s, spec.source.sha256 says %s", got, v.wantSHA256)
	}
	return n, err
}

// Sum is the hex SHA-256 of what was read so far.
func (v *verifier) Sum() string { return hex.EncodeToString(v.h.Sum(nil)) }

// upload downloads src and streams it into the queued Glance image id, verified on the way.
// Failures of the source (not found, wrong checksum, too large) are invalid configuration; the
// image then stays queued, without data.
func upload(ctx context.Context, p SourcePolicy, sc *gophercloud.ServiceClient, id string, src *kupenstackv1.ImageSource) error {
	ctx, cancel := context.WithTimeout(ctx, transferTimeout)
	defer cancel()
	where := Redact(src.URL)

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.URL, nil)
	if err != nil {
		return generic.InvalidConfig("source URL " + where + " is not usable")
	}
	if err := p.checkURL(ctx, req.URL); err != nil {
		return generic.InvalidConfig(fmt.Sprintf("not downloading %s: %v", where, err))
	}
	resp, err := p.Client().Do(req)
	if b, ok := blocked(err); ok { // a redirect, or an address that changed since the check
		return generic.InvalidConfig(fmt.Sprintf("not downloading %s: %v", where, b))
	}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may carry credentials
		}
		return fmt.Errorf("downloading %s: %w", where, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return fmt.Errorf("downloading %s: HTTP %d", where, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return generic.InvalidConfig(fmt.Sprintf("downloading %s: HTTP %d", where, resp.StatusCode))
	case resp.ContentLength > MaxImageBytes:
		return generic.InvalidConfig(fmt.Sprintf("%s is %d bytes, more than the %d bytes an image may have", where, resp.ContentLength, MaxImageBytes))
	}

	v := newVerifier(resp.Body, MaxImageBytes, resp.ContentLength, src.SHA256)
	err = put(ctx, sc, id, v)
	if v.err != nil {
		return generic.InvalidConfig(fmt.Sprintf("%s: %v; the image was not activated", where, v.err))
	}
	return err
}

// put streams data into Glance (PUT /v2/images/{id}/file). It is made here rather than with
// gophercloud's imagedata.Upload: the provider client's 2-minute request timeout would cut off
// large images, and a body that cannot be rewound must not be re-sent after re-authentication.
// The body goes chunked, so Glance only sees the end of the data after the verifier accepted it.
func put(ctx context.Context, sc *gophercloud.ServiceClient, id string, data io.Reader) error {
	target := sc.ServiceURL("images", id, "file")
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, target, io.NopCloser(data))
	if err != nil {
		return err
	}
	req.ContentLength = -1 // chunked, whatever the source announced
	req.Header.Set("Content-Type", "application/octet-stream")
	for k, v := range sc.ProviderClient.AuthenticatedHeaders() {
		req.Header.Set(k, v)
	}
	token := req.Header.Get("X-Auth-Token")
	resp, err := (&http.Client{Transport: sc.ProviderClient.HTTPClient.Transport}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode == http.StatusUnauthorized {
		_ = sc.ProviderClient.Reauthenticate(ctx, token) // the next pass retries with a new token
	}
	return gophercloud.ErrUnexpectedResponseCode{URL: target, Method: http.MethodPut, Expected: []int{http.StatusNoContent},
		Actual: resp.StatusCode, Body: body, ResponseHeader: resp.Header}
}
