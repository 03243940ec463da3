package openstack

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

func httpErr(code int, header http.Header) error {
	return fmt.Errorf("wrapped: %w", gophercloud.ErrUnexpectedResponseCode{Actual: code, ResponseHeader: header})
}

func TestClassify(t *testing.T) {
	retry := func(v string) http.Header { return http.Header{"Retry-After": []string{v}} }
	for _, tt := range []struct {
		name      string
		err       error
		class     ErrorClass
		wantDelay time.Duration
	}{
		{"connection refused", errors.New("dial tcp 127.0.0.1:9696: connect: connection refused"), Transient, 0},
		{"500", httpErr(500, nil), Transient, 0},
		{"502", httpErr(502, nil), Transient, 0},
		{"401", httpErr(401, nil), Transient, 0},
		{"429 with Retry-After", httpErr(429, retry("7")), Throttled, 7 * time.Second},
		{"503 with Retry-After", httpErr(503, retry("3")), Throttled, 3 * time.Second},
		{"503 without Retry-After", httpErr(503, nil), Transient, 0},
		{"429 with a huge Retry-After is capped", httpErr(429, retry("86400")), Throttled, 10 * time.Minute},
		{"429 with a bad Retry-After", httpErr(429, retry("soon")), Transient, 0},
		{"400", httpErr(400, nil), Rejected, RejectedRetryInterval},
		{"403", httpErr(403, nil), Rejected, RejectedRetryInterval},
		{"409", httpErr(409, nil), Rejected, RejectedRetryInterval},
		{"413 over limit", httpErr(413, nil), Rejected, RejectedRetryInterval},
	} {
		t.Run(tt.name, func(t *testing.T) {
			class, delay := Classify(tt.err)
			if class != tt.class || delay != tt.wantDelay {
				t.Fatalf("Classify = (%v, %v), want (%v, %v)", class, delay, tt.class, tt.wantDelay)
			}
		})
	}
	if !IsNotFound(httpErr(404, nil)) || IsNotFound(httpErr(400, nil)) {
		t.Fatal("IsNotFound is wrong")
	}
}
