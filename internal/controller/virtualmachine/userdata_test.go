package virtualmachine

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// TestUserDataSize: Nova's limit is on the base64 text, so 49149 bytes fit and 49150 do not;
// data that already is base64 goes as it is.
func TestUserDataSize(t *testing.T) {
	script := func(n int) []byte { return bytes.Repeat([]byte("#"), n) } // '#' is not base64
	for _, tt := range []struct {
		data []byte
		fits bool
	}{
		{script(49149), true},
		{script(49150), false},
		{[]byte(base64.StdEncoding.EncodeToString(script(49149))), true},
		{[]byte(base64.StdEncoding.EncodeToString(script(49152))), false},
		{nil, true},
	} {
		if got := userDataSize(tt.data) <= maxUserData; got != tt.fits {
			t.Errorf("%d bytes (size %d): fits = %v, want %v", len(tt.data), userDataSize(tt.data), got, tt.fits)
		}
	}
}

func FuzzUserDataSize(f *testing.F) {
	f.Add([]byte("#cloud-config\n"))
	f.Add([]byte("aGVsbG8="))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := userDataSize(data)
		if n < len(data) || n > base64.StdEncoding.EncodedLen(len(data)) {
			t.Fatalf("size %d for %d bytes", n, len(data))
		}
	})
}
