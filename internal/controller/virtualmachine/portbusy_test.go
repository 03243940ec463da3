package virtualmachine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// TestReplacingPortBusy: a replacement whose port the failed server still holds waits briefly;
// a busy port outside a replacement, and any other error, stay errors.
func TestReplacingPortBusy(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	status := func(code int, msg string) error {
		return gophercloud.ErrUnexpectedResponseCode{Method: "POST", URL: "http://127.0.0.1:8774/v2.1/servers",
			Expected: []int{202}, Actual: code, Body: []byte(`{"conflictingRequest": {"code": 409, "message": "` + msg + `"}}`)}
	}
	busy := status(409, "Port 401fa01a is still in use.")
	restarted := func(ago time.Duration) *kupenstackv1.VirtualMachine {
		return &kupenstackv1.VirtualMachine{Status: kupenstackv1.VirtualMachineStatus{LastRestartTime: &metav1.Time{Time: now.Add(-ago)}}}
	}
	cases := []struct {
		name string
		vm   *kupenstackv1.VirtualMachine
		err  error
		wait bool
	}{
		{"replacement, port still held", restarted(3 * time.Second), busy, true},
		{"never replaced", &kupenstackv1.VirtualMachine{}, busy, false},
		{"replaced long ago", restarted(10 * time.Minute), busy, false},
		{"other conflict", restarted(time.Second), status(409, "Quota exceeded"), false},
		{"bad request", restarted(time.Second), status(400, "Port 401fa01a is still in use."), false},
		{"no error", restarted(time.Second), nil, false},
	}
	for _, c := range cases {
		got := replacingPortBusy(c.vm, c.err, now)
		waits := got != nil && strings.Contains(got.Error(), "release its port")
		if waits != c.wait || (!c.wait && fmt.Sprint(got) != fmt.Sprint(c.err)) {
			t.Errorf("%s: %v, want a wait: %v", c.name, got, c.wait)
		}
	}
}

func TestNetworkWithoutSubnet(t *testing.T) {
	status := func(code int, msg string) error {
		return gophercloud.ErrUnexpectedResponseCode{Method: "POST", URL: "http://127.0.0.1:8774/v2.1/servers",
			Expected: []int{202}, Actual: code, Body: []byte(`{"badRequest": {"code": 400, "message": "` + msg + `"}}`)}
	}
	noSubnet := "Network 5b3e0c7e-51a8-4a43-9d0b-2f6b8a4c0d11 requires a subnet in order to boot instances on."
	for _, c := range []struct {
		name string
		err  error
		wait bool
	}{
		{"network without subnet", status(400, noSubnet), true},
		{"other bad request", status(400, "Invalid flavorRef provided."), false},
		{"same words, not a 400", status(409, noSubnet), false},
		{"no error", nil, false},
	} {
		got := networkWithoutSubnet(c.err)
		waits := got != nil && strings.Contains(got.Error(), "waiting for a subnet")
		if waits != c.wait || (!c.wait && fmt.Sprint(got) != fmt.Sprint(c.err)) {
			t.Errorf("%s: %v, want a wait: %v", c.name, got, c.wait)
		}
	}
}
