package cloudconfig

import (
	"strings"
	"testing"
)

const testCloudsYAML = `clouds:
  aio:
    auth:
      auth_url: http://127.0.0.1:5000/v3
      username: admin
      password: s3cret-value
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    interface: public
`

func TestParse(t *testing.T) {
	tests := []struct {
		name, yaml, cloud, wantErr string
	}{
		{name: "valid", yaml: testCloudsYAML, cloud: "aio"},
		{name: "unknown cloud", yaml: testCloudsYAML, cloud: "other", wantErr: `cloud "other" not found`},
		{name: "no cloud name", yaml: testCloudsYAML, cloud: "", wantErr: "no cloud name"},
		{name: "not yaml", yaml: "clouds: [", cloud: "aio", wantErr: "reading cloud"},
		{name: "entry without auth", yaml: "clouds:\n aio:", cloud: "aio", wantErr: "no usable auth section"},
		{name: "wrong type leaks no value", yaml: "clouds:\n  aio:\n    auth: s3cret-value\n", cloud: "aio", wantErr: "<redacted>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cloud, err := Parse([]byte(tt.yaml), tt.cloud)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret-value") {
					t.Fatalf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cloud.Auth.IdentityEndpoint != "http://127.0.0.1:5000/v3" || cloud.Auth.Username != "admin" ||
				!cloud.Auth.AllowReauth || cloud.Endpoint.Region != "RegionOne" {
				t.Fatalf("unexpected cloud: %+v / %+v", cloud.Auth, cloud.Endpoint)
			}
		})
	}
}

// FuzzParse: clouds.yaml is user input; parsing must never panic nor echo a secret in its error.
func FuzzParse(f *testing.F) {
	f.Add([]byte(testCloudsYAML), "aio")
	f.Add([]byte("clouds:\n  aio:\n    auth: s3cret-value\n"), "aio")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		_, err := Parse(data, name)
		if err != nil && !strings.Contains(name, "s3cret-value") && strings.Contains(err.Error(), "s3cret-value") {
			t.Fatalf("error leaks the password: %v", err)
		}
	})
}
