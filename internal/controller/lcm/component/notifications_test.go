package component

import (
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

// TestComputeNotificationsURL: the URL comes from the real nova chart's defaults under the
// values given to Helm, the password escaped, on every chart tag.
func TestComputeNotificationsURL(t *testing.T) {
	auth := func(password string) map[string]any {
		return map[string]any{"endpoints": map[string]any{"oslo_messaging": map[string]any{
			"auth": map[string]any{"nova": map[string]any{"password": password}}}}}
	}
	cases := []struct {
		name string
		vals map[string]any
		want string // "" wants an error
	}{
		{"chart defaults and the generated password", auth("p@ss/w:rd"),
			"amqp://nova:p%40ss%2Fw%3Ard@rabbitmq.openstack.svc.cluster.local:5672/nova"},
		{"a broker elsewhere", map[string]any{"endpoints": map[string]any{"oslo_messaging": map[string]any{
			"auth":               map[string]any{"nova": map[string]any{"username": "compute", "password": "pw"}},
			"host_fqdn_override": map[string]any{"default": "bus.example.internal"},
			"port":               map[string]any{"amqp": map[string]any{"default": 5673}},
			"path":               "/compute"}}},
			"amqp://compute:pw@bus.example.internal:5673/compute"},
		{"another namespace for the broker", map[string]any{"endpoints": map[string]any{"oslo_messaging": map[string]any{
			"auth": map[string]any{"nova": map[string]any{"password": "pw"}}, "namespace": "infra"}}},
			"amqp://nova:pw@rabbitmq.infra.svc.cluster.local:5672/nova"},
		{"no password", auth(""), ""},
		{"the user dropped", map[string]any{"endpoints": map[string]any{"oslo_messaging": map[string]any{
			"auth": map[string]any{"nova": nil}}}}, ""},
	}
	for _, tag := range realcharts.Tags {
		ch, err := loader.Load(filepath.Join(realcharts.Dir(t, tag), "nova-"+tag+".tgz"))
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range cases {
			t.Run(tag+"/"+tc.name, func(t *testing.T) {
				got, err := computeNotificationsURL(ch, tc.vals, "openstack")
				switch {
				case tc.want == "" && err == nil:
					t.Fatalf("want an error, got %q", got)
				case tc.want != "" && (err != nil || got != tc.want):
					t.Fatalf("got %q, %v; want %q", got, err, tc.want)
				}
			})
		}
	}
}
