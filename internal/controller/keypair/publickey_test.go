package keypair

import (
	"strings"
	"testing"
)

const ed25519Key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKl1TxPap+mh4hQxL9QXanMWwZu7OnQ05dcpmltQzOt1 a@b"

func TestCheckPublicKey(t *testing.T) {
	for _, tt := range []struct {
		typ, key, wantErr string
	}{
		{"ssh", ed25519Key, ""},
		{"", ed25519Key + "\n", ""},
		{"x509", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", ""},
		{"ssh", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA test", "not a usable OpenSSH public key"},
		{"ssh", "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIKl1TxPap+mh4hQxL9QXanMWwZu7OnQ05dcpmltQzOt1", "not a usable OpenSSH public key"},
		{"ssh", ed25519Key + "\n" + ed25519Key, "more than one key"},
	} {
		err := CheckPublicKey(tt.typ, tt.key)
		if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%.30q: %v, want %q", tt.key, err, tt.wantErr)
		}
	}
}

// FuzzCheckPublicKey: whatever a user writes, the check answers without panicking.
func FuzzCheckPublicKey(f *testing.F) {
	f.Add(ed25519Key)
	f.Add("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ x")
	f.Add("")
	f.Fuzz(func(t *testing.T, key string) { _ = CheckPublicKey("ssh", key) })
}
