package apivalidation

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestApplicationCredentialValidation: roles are member and/or reader (member by default), the
// durations are bounded, a credential is rotated before it expires, and the Secret is named as
// Kubernetes names Secrets.
func TestApplicationCredentialValidation(t *testing.T) {
	ensureNamespace(t)
	for _, tt := range []struct {
		name, spec, field, wantErr string
	}{
		{"empty", "  {}\n", "", ""},
		{"everything", "  roles: [member, reader]\n  secretName: my.cloud-creds\n  expiresAfter: 720h\n  rotateEvery: 168h\n  rotation: '2026-11-27'\n  revokeGracePeriod: 5m\n", "", ""},
		{"no grace", "  revokeGracePeriod: 0s\n", "", ""},
		// Schema errors: the API server adds that the rules were not checked, so no field check.
		{"admin role", "  roles: [admin]\n", "", `spec.roles[0]: Unsupported value: "admin"`},
		{"no roles", "  roles: []\n", "spec.roles", "should have at least 1 items"},
		{"same role twice", "  roles: [member, member]\n", "spec.roles[1]", "Duplicate value"},
		{"secret name with capitals", "  secretName: Creds\n", "spec.secretName", "secretName must be a Secret name"},
		{"expires too soon", "  expiresAfter: 5m\n", "spec.expiresAfter", "expiresAfter must be between 10m and 87600h"},
		{"expiresAfter not a duration", "  expiresAfter: weekly\n", "spec.expiresAfter", "must be a duration such as 30s"},
		{"rotates too often", "  rotateEvery: 30s\n", "spec.rotateEvery", "rotateEvery must be between 1m and 87600h"},
		{"rotates after expiry", "  expiresAfter: 1h\n  rotateEvery: 2h\n", "spec.rotateEvery", "rotateEvery must be shorter than expiresAfter"},
		{"rotates at expiry", "  expiresAfter: 1h\n  rotateEvery: 60m\n", "spec.rotateEvery", "rotateEvery must be shorter than expiresAfter"},
		{"grace too long", "  revokeGracePeriod: 25h\n", "spec.revokeGracePeriod", "revokeGracePeriod must be at most 24h"},
		{"rotation too long", "  rotation: '0123456789012345678901234567890123456789012345678901234567890123'\n", "", "spec.rotation: Too long"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := env.Client.Create(env.Ctx, decode(t, "ApplicationCredential", tt.spec), client.DryRunAll)
			expectAdmission(t, err, tt.wantErr)
			if tt.field != "" {
				expectField(t, err, tt.field)
				expectOneMessage(t, err)
			}
		})
	}
}

// TestApplicationCredentialDefaultsAndImmutability: roles default to member; secretName can be
// neither changed, set nor removed later (the Secret it names holds the credential).
func TestApplicationCredentialDefaultsAndImmutability(t *testing.T) {
	ensureNamespace(t)
	obj := decode(t, "ApplicationCredential", "  {}\n")
	obj.SetName("immutable")
	if err := env.Client.Create(env.Ctx, obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, obj) })
	if roles, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "roles"); len(roles) != 1 || roles[0] != "member" {
		t.Errorf("roles %v, want the default [member]", roles)
	}
	for _, tt := range []struct{ name, value, wantErr string }{
		{"set later", "other", "secretName is immutable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			changed := obj.DeepCopy()
			if err := unstructured.SetNestedField(changed.Object, tt.value, "spec", "secretName"); err != nil {
				t.Fatal(err)
			}
			err := env.Client.Update(env.Ctx, changed, client.DryRunAll)
			expectAdmission(t, err, tt.wantErr)
		})
	}
	withName := decode(t, "ApplicationCredential", "  secretName: first\n")
	withName.SetName("immutable-named")
	if err := env.Client.Create(env.Ctx, withName); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, withName) })
	for _, tt := range []struct{ name, value, wantErr string }{
		{"changed", "second", "secretName is immutable"},
		{"removed", "", "secretName is immutable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			changed := withName.DeepCopy()
			if tt.value == "" {
				unstructured.RemoveNestedField(changed.Object, "spec", "secretName")
			} else if err := unstructured.SetNestedField(changed.Object, tt.value, "spec", "secretName"); err != nil {
				t.Fatal(err)
			}
			err := env.Client.Update(env.Ctx, changed, client.DryRunAll)
			expectAdmission(t, err, tt.wantErr)
			expectField(t, err, "spec.secretName")
		})
	}
}
