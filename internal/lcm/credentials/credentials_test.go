package credentials

import (
	"slices"
	"strings"
	"testing"

	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

func chartValues(t *testing.T, tag, chart string) map[string]any {
	t.Helper()
	ch, err := (&helm.ChartLoader{}).Load(helm.Source{LocalPath: realcharts.Dir(t, tag)}, chart, tag)
	if err != nil {
		t.Fatal(err)
	}
	return ch.Values
}

func entryMap(entries []Entry) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		out[strings.Join(e.Path, ".")] = e.Key
	}
	return out
}

// Each real chart gets exactly the entries it declares, keyed by the user they are: the same
// user under different entry names (or charts) shares one secret, different users do not.
func TestEntriesOfRealCharts(t *testing.T) {
	cases := []struct {
		tag, chart string
		want       map[string]string // path -> key, a subset of the entries
		absent     []string          // paths that must not be entries
	}{
		{"2025.1.0", "nova", map[string]string{
			"endpoints.oslo_db.auth.admin.password":          "database-root",
			"endpoints.oslo_db.auth.nova.password":           "database-nova",
			"endpoints.oslo_db_api.auth.nova.password":       "database-nova",
			"endpoints.oslo_db_cell0.auth.nova.password":     "database-nova",
			"endpoints.oslo_messaging.auth.admin.password":   "messaging-rabbitmq",
			"endpoints.identity.auth.neutron.password":       "identity-neutron",
			"endpoints.identity.auth.test.password":          "identity-nova-test",
			"endpoints.oslo_cache.auth.memcache_secret_key":  "memcache-secret-key",
			"conf.nova.neutron.metadata_proxy_shared_secret": "metadata-proxy-shared-secret",
		}, []string{"endpoints.identity.auth.glance.password", "endpoints.oci_image_registry.auth.nova.password"}},
		{"2026.1.0", "nova", map[string]string{
			"endpoints.identity.auth.neutron.password": "identity-nova_neutron",
			"endpoints.identity.auth.service.password": "identity-nova_service_user",
		}, nil},
		{"2026.1.0", "neutron", map[string]string{
			"endpoints.identity.auth.neutron.password":                 "identity-neutron",
			"conf.metadata_agent.DEFAULT.metadata_proxy_shared_secret": "metadata-proxy-shared-secret",
			"endpoints.oslo_messaging.auth.neutron.password":           "messaging-neutron",
		}, []string{"endpoints.identity.auth.glance.password", "endpoints.identity.auth.cinder.password"}},
		{"2025.2.0", "cinder", map[string]string{
			"endpoints.identity.auth.swift.password":   "identity-cinder_swift",
			"endpoints.identity.auth.service.password": "identity-cinder_service_user",
		}, []string{"endpoints.identity.auth.placement.password"}},
		{"2025.1.0", "rabbitmq", map[string]string{
			"endpoints.oslo_messaging.auth.user.password":  "messaging-rabbitmq",
			"endpoints.oslo_messaging.auth.guest.password": "messaging-guest",
			"endpoints.oslo_messaging.auth.erlang_cookie":  "erlang-cookie",
		}, nil},
		{"2025.1.0", "mariadb", map[string]string{
			"endpoints.oslo_db.auth.admin.password": "database-root",
			"endpoints.oslo_db.auth.sst.password":   "database-sst",
			"endpoints.oslo_db.auth.audit.password": "database-audit",
		}, nil},
		{"2025.1.0", "horizon", map[string]string{
			"conf.horizon.local_settings.config.horizon_secret_key": "horizon-secret-key",
		}, []string{"endpoints.oslo_messaging.auth.horizon.password"}},
		{"2025.1.0", "memcached", map[string]string{}, nil},
	}
	for _, c := range cases {
		t.Run(c.tag+"/"+c.chart, func(t *testing.T) {
			got := entryMap(Entries(c.chart, chartValues(t, c.tag, c.chart), map[string]any{}))
			for p, k := range c.want {
				if got[p] != k {
					t.Errorf("%s: key %q, want %q", p, got[p], k)
				}
			}
			for _, p := range c.absent {
				if _, ok := got[p]; ok {
					t.Errorf("%s is an entry: the chart does not declare it", p)
				}
			}
		})
	}
}

// A profile drops an entry with null (it reaches Helm as null, removing the chart's default) or
// sets its own password or user name; the values win.
func TestEntriesFollowTheValues(t *testing.T) {
	defaults := chartValues(t, "2026.1.0", "nova")
	vals := map[string]any{"endpoints": map[string]any{"identity": map[string]any{"auth": map[string]any{
		"test":    nil,
		"ironic":  map[string]any{"password": "mine"},
		"neutron": map[string]any{"username": "net"},
	}}}}
	entries := Entries("nova", defaults, vals)
	got := entryMap(entries)
	if _, ok := got["endpoints.identity.auth.test.password"]; ok {
		t.Error("a dropped entry got a password")
	}
	if _, ok := got["endpoints.identity.auth.ironic.password"]; ok {
		t.Error("an entry with the profile's own password got a generated one")
	}
	if got["endpoints.identity.auth.neutron.password"] != "identity-net" {
		t.Errorf("renamed user: key %q, want identity-net", got["endpoints.identity.auth.neutron.password"])
	}
	secrets := map[string]string{}
	for _, k := range Keys(entries) {
		secrets[k] = "s-" + k
	}
	out, err := WithValues(entries, secrets, vals)
	if err != nil {
		t.Fatal(err)
	}
	auth := out["endpoints"].(map[string]any)["identity"].(map[string]any)["auth"].(map[string]any)
	if v, ok := auth["test"]; !ok || v != nil {
		t.Errorf("dropped entry: %v (present %v), want an explicit null for Helm", v, ok)
	}
	if p := auth["ironic"].(map[string]any)["password"]; p != "mine" {
		t.Errorf("profile's password replaced: %v", p)
	}
	if p := auth["admin"].(map[string]any)["password"]; p != "s-identity-admin" {
		t.Errorf("admin password %v", p)
	}
	delete(secrets, "identity-admin")
	if _, err := WithValues(entries, secrets, vals); err == nil || !strings.Contains(err.Error(), "identity-admin") {
		t.Errorf("a missing secret: err = %v", err)
	}
}

// Every key is a valid Secret key and the same keys come out of every tag's charts for the users
// that exist in all of them.
func TestKeysAreSecretKeys(t *testing.T) {
	for _, tag := range realcharts.Tags {
		for _, chart := range []string{"mariadb", "rabbitmq", "keystone", "glance", "placement", "nova", "neutron", "horizon", "cinder"} {
			for _, k := range Keys(Entries(chart, chartValues(t, tag, chart), nil)) {
				if validKey.MatchString(k) || k == "" {
					t.Errorf("%s %s: key %q is not a valid Secret key", tag, chart, k)
				}
			}
			if keys := Keys(Entries(chart, chartValues(t, tag, chart), nil)); !slices.Contains(keys, "database-root") && chart != "rabbitmq" {
				t.Errorf("%s %s: no database-root among %v", tag, chart, keys)
			}
		}
	}
}
