package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gophercloud/gophercloud/v2"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestVerifier(t *testing.T) {
	data := bytes.Repeat([]byte("kupenstack"), 1000)
	for _, tt := range []struct {
		name     string
		limit    int64
		wantSize int64
		sha      string
		wantErr  string // "" = the whole data is read and io.EOF ends it
	}{
		{"no checks", 1 << 20, -1, "", ""},
		{"right size and checksum", 1 << 20, int64(len(data)), sum(data), ""},
		{"checksum in upper case", 1 << 20, -1, strings.ToUpper(sum(data)), ""},
		{"wrong checksum", 1 << 20, -1, sum([]byte("other")), "the data's sha256 is " + sum(data)},
		{"short of the announced size", 1 << 20, int64(len(data)) + 1, "", "announced 10001 bytes but sent 10000"},
		{"over the announced size", 1 << 20, int64(len(data)) - 1, "", "announced 9999 bytes but sent 10000"},
		{"over the limit", 4096, -1, "", "larger than 4096 bytes"},
		{"exactly the limit", int64(len(data)), -1, sum(data), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time and in one piece: the verdict must not depend on read sizes.
			for _, r := range []io.Reader{bytes.NewReader(data), iotest.OneByteReader(bytes.NewReader(data))} {
				v := newVerifier(r, tt.limit, tt.wantSize, tt.sha)
				got, err := io.ReadAll(v)
				if tt.wantErr == "" {
					if err != nil || v.err != nil || !bytes.Equal(got, data) {
						t.Fatalf("read %d bytes, err %v, verifier %v", len(got), err, v.err)
					}
					continue
				}
				if err == nil || !errors.Is(err, errVerification) || !strings.Contains(err.Error(), tt.wantErr) || v.err != err {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if _, again := v.Read(make([]byte, 8)); again != err {
					t.Fatalf("a read after the failure returned %v", again)
				}
			}
		})
	}
}

// TestVerifierPassesReadErrors: a broken source is an error of its own, not a verification failure.
func TestVerifierPassesReadErrors(t *testing.T) {
	boom := errors.New("connection reset")
	v := newVerifier(iotest.ErrReader(boom), 1<<20, -1, "")
	if _, err := io.ReadAll(v); !errors.Is(err, boom) || v.err != nil {
		t.Fatalf("err = %v, verifier %v", err, v.err)
	}
}

func TestRedact(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://images.example/jammy.img", "https://images.example/jammy.img"},
		{"https://user:s3cret@images.example/a.qcow2", "https://images.example/a.qcow2 (credentials and query hidden)"},
		{"https://bucket.example/a.img?X-Amz-Signature=abc&X-Amz-Credential=key", "https://bucket.example/a.img (credentials and query hidden)"},
		{"http://127.0.0.1:8080/a#frag", "http://127.0.0.1:8080/a (credentials and query hidden)"},
		{"http://[::1", "(unparsable URL)"},
	} {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzRedact: whatever the URL, the password, the query and the fragment never show.
func FuzzRedact(f *testing.F) {
	f.Add("https://user:pw@host/path?token=x#y")
	f.Add("http://h/%zz")
	f.Fuzz(func(t *testing.T, raw string) {
		// The fixed note may contain anything short by chance ("000 "): judge the URL part only.
		got := strings.TrimSuffix(Redact(raw), " (credentials and query hidden)")
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		if p, ok := u.User.Password(); ok && len(p) > 3 && strings.Contains(got, p) && !strings.Contains(u.Host+u.Path, p) {
			t.Fatalf("Redact(%q) = %q shows the password", raw, got)
		}
		// A query or fragment can only show after a '?' or '#' (in a path they are escaped).
		if strings.ContainsAny(got, "?#") {
			t.Fatalf("Redact(%q) = %q shows the query or fragment", raw, got)
		}
	})
}

// TestUpload runs a download-and-upload against a stand-in Glance on 127.0.0.1: the data arrives
// chunked and whole, and a checksum mismatch never completes the upload.
func TestUpload(t *testing.T) {
	payload := bytes.Repeat([]byte{7, 1, 3}, 50_000)
	source := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/disk.img":
			_, _ = w.Write(payload)
		case "/busy":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	defer source.Close()
	var received []byte
	var complete bool
	glance := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || r.URL.Path != "/v2/images/img-1/file" || r.Header.Get("X-Auth-Token") != "tok" ||
			len(r.TransferEncoding) == 0 || r.TransferEncoding[0] != "chunked" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		var err error
		received, err = io.ReadAll(r.Body)
		if complete = err == nil; !complete {
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer glance.Close()
	provider := &gophercloud.ProviderClient{}
	provider.SetToken("tok")
	sc := &gophercloud.ServiceClient{ProviderClient: provider, Endpoint: glance.URL + "/", ResourceBase: glance.URL + "/v2/"}

	for _, tt := range []struct {
		name, path, sha, wantErr string
		invalid, wantComplete    bool
	}{
		{"verified", "/disk.img", sum(payload), "", false, true},
		{"no checksum", "/disk.img", "", "", false, true},
		{"wrong checksum", "/disk.img", sum([]byte("x")), "sha256 is " + sum(payload), true, false},
		{"not found", "/missing", "", "HTTP 404", true, false},
		{"source busy", "/busy", "", "HTTP 503", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			received, complete = nil, false
			err := upload(context.Background(), loopbackAllowed, sc, "img-1", &kupenstackv1.ImageSource{URL: source.URL + tt.path + "?sig=SECRET", SHA256: tt.sha})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("upload: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			case err != nil && strings.Contains(err.Error(), "SECRET"):
				t.Fatalf("the error shows the URL's query: %v", err)
			case err != nil && isInvalid(err) != tt.invalid:
				t.Fatalf("invalid configuration = %v, want %v (%v)", !tt.invalid, tt.invalid, err)
			}
			if complete != tt.wantComplete || (complete && !bytes.Equal(received, payload)) {
				t.Fatalf("Glance got a complete upload: %v (%d bytes), want %v", complete, len(received), tt.wantComplete)
			}
		})
	}
}

// isInvalid says whether err is generic.InvalidConfig's (the engine shows it as
// InvalidConfiguration); its type is the engine's own.
func isInvalid(err error) bool { return fmt.Sprintf("%T", err) == "generic.invalidConfigError" }
