package applicationcredential

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// TestRotationDue: rotateEvery wins; expiresAfter alone rotates at two thirds of the lifetime, so
// the current credential never expires; neither means on request only.
func TestRotationDue(t *testing.T) {
	made := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	d := func(v time.Duration) *kupenstackv1.Duration { return &kupenstackv1.Duration{Duration: v} }
	for _, tt := range []struct {
		name                      string
		rotateEvery, expiresAfter *kupenstackv1.Duration
		want                      time.Duration // 0: none
	}{
		{"neither", nil, nil, 0},
		{"rotateEvery", d(time.Hour), d(3 * time.Hour), time.Hour},
		{"expiresAfter alone", nil, d(3 * time.Hour), 2 * time.Hour},
	} {
		a := &kupenstackv1.ApplicationCredential{Spec: kupenstackv1.ApplicationCredentialSpec{RotateEvery: tt.rotateEvery, ExpiresAfter: tt.expiresAfter},
			Status: kupenstackv1.ApplicationCredentialStatus{Current: &kupenstackv1.ApplicationCredentialRef{CreatedAt: metav1.NewTime(made)}}}
		due, ok := rotationDue(a)
		if ok != (tt.want != 0) || (ok && !due.Equal(made.Add(tt.want))) {
			t.Errorf("%s: due %v %v, want %v after creation", tt.name, due, ok, tt.want)
		}
	}
}

// TestSecretDataInsecure: verify false (and OS_INSECURE) only when the operator's own clouds.yaml
// turns verification off.
func TestSecretDataInsecure(t *testing.T) {
	c := Credential{ID: "id", Secret: "s"}
	for _, insecure := range []bool{false, true} {
		data, err := secretData(openstack.Location{AuthURL: "https://k/v3", Insecure: insecure}, c)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(data[KeyCloudsYAML]), "verify: false"); got != insecure || (string(data["OS_INSECURE"]) == "true") != insecure {
			t.Errorf("insecure %v: %s %v", insecure, data[KeyCloudsYAML], data["OS_INSECURE"])
		}
	}
}
