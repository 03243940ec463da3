package openstack

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// IsNotFound says whether OpenStack answered 404.
func IsNotFound(err error) bool { return gophercloud.ResponseCodeIs(err, http.StatusNotFound) }

// IsConflict says whether OpenStack answered 409 (in use, duplicate, over quota in Neutron).
func IsConflict(err error) bool { return gophercloud.ResponseCodeIs(err, http.StatusConflict) }

// ErrorClass is what a failed OpenStack call means for the object that asked for it.
type ErrorClass int

const (
	// Transient errors (5xx, timeouts, resets) are retried with exponential backoff.
	Transient ErrorClass = iota
	// Throttled errors (429, 503 with Retry-After) are retried after the delay OpenStack asked for.
	Throttled
	// Rejected errors (4xx: bad request, forbidden, conflict, quota) need a spec or quota change;
	// they are shown as Degraded and retried slowly, in case the cause goes away by itself.
	Rejected
)

// RejectedRetryInterval is how long a rejected request waits before it is tried again.
const RejectedRetryInterval = 2 * time.Minute

// TransientRetryMax caps the exponential backoff of transient errors. The work queue's own cap
// (1000 s) would leave an object that failed through a few minutes of outage waiting up to a
// quarter of an hour after OpenStack is back: longer than a rejected request waits.
const TransientRetryMax = time.Minute

// Classify sorts an error from an OpenStack call and gives the delay before retrying it (0:
// use the work queue's exponential backoff).
func Classify(err error) (ErrorClass, time.Duration) {
	var unexpected gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &unexpected) {
		return Transient, 0 // no HTTP answer at all: connection refused, reset, timeout
	}
	switch code := unexpected.Actual; {
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		if d := retryAfter(unexpected.ResponseHeader); d > 0 {
			return Throttled, d
		}
		return Transient, 0
	case code == http.StatusUnauthorized, code >= 500, code == http.StatusRequestTimeout:
		return Transient, 0 // 401 after gophercloud's own re-authentication failed: credentials may be rotating
	default:
		return Rejected, RejectedRetryInterval
	}
}

// retryAfter reads a Retry-After header in seconds or as an HTTP date; capped at 10 minutes.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	return min(max(d, 0), 10*time.Minute)
}
