// Package credentials generates the cloud's secrets once (database, messaging and identity
// passwords, and the few shared keys), keeps them in one Secret and writes them into exactly the
// entries each chart declares, so that every chart agrees on them and none keeps a chart default.
package credentials

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kupenstack/kupenstack/internal/lcm/values"
)

// SecretName is the Secret, in the cloud's namespace, holding every generated secret.
const SecretName = "kupenstack-credentials"

// Keys of the Secret that other code reads.
const (
	DatabaseRoot  = "database-root"
	IdentityAdmin = "identity-admin"
	MemcacheKey   = "memcache-secret-key"
)

// Entry is one secret a chart reads: the values path it goes to and the Secret key it comes from.
type Entry struct {
	Path []string
	Key  string
}

func (e Entry) String() string { return strings.Join(e.Path, ".") + " <- " + e.Key }

// The key of a user's password is its kind and its user name, not the chart's entry name: the
// same database, RabbitMQ or Keystone user is declared by several charts under different entry
// names (the RabbitMQ admin is rabbitmq's auth.user and every service's auth.admin; nova's API,
// cell0 and cell1 databases share the user nova, whose password MySQL holds once), and two
// entries of one name can be different users (nova's identity.auth.neutron is the user neutron
// in 2025.1.0 and nova_neutron from 2025.2.0 on).
var endpointKinds = map[string]string{
	"oslo_db": "database", "oslo_db_api": "database", "oslo_db_cell0": "database", "oslo_db_cell1": "database",
	"oslo_messaging": "messaging", "identity": "identity",
}

// skippedEndpoints hold credentials KupenStack cannot generate: a private registry's login is
// the admin's (and the charts use it only when oci_image_registry.enabled is set).
var skippedEndpoints = map[string]bool{"oci_image_registry": true}

// sharedSecrets are the secrets outside endpoints.*: two charts must agree on the metadata proxy
// secret (nova's metadata API and neutron's metadata agents), horizon signs sessions with its key.
var sharedSecrets = map[string][]Entry{
	"nova":    {{Path: []string{"conf", "nova", "neutron", "metadata_proxy_shared_secret"}, Key: "metadata-proxy-shared-secret"}},
	"neutron": {{Path: []string{"conf", "metadata_agent", "DEFAULT", "metadata_proxy_shared_secret"}, Key: "metadata-proxy-shared-secret"}, {Path: []string{"conf", "ovn_metadata_agent", "DEFAULT", "metadata_proxy_shared_secret"}, Key: "metadata-proxy-shared-secret"}},
	"horizon": {{Path: []string{"conf", "horizon", "local_settings", "config", "horizon_secret_key"}, Key: "horizon-secret-key"}},
}

// secretScalar is an endpoints.<e>.auth.<name> entry that is itself a secret rather than a user
// (rabbitmq's erlang_cookie, the services' memcache_secret_key).
var secretScalar = regexp.MustCompile(`(_key|_cookie)$`)

// validKey is what a Secret accepts as a key.
var validKey = regexp.MustCompile(`[^-._a-zA-Z0-9]`)

// Entries lists the secrets a chart declares, from the chart's default values with the rendered
// values over them: every endpoints.<e>.auth.<user> with a password (keyed by kind and user
// name), every secret scalar under an auth map, and the chart's shared secrets. An entry the
// values set to null (dropped) or give a password of their own (overridden) is left out: the
// values decide. The result is sorted by path.
func Entries(chart string, chartDefaults, vals map[string]any) []Entry {
	var out []Entry
	defaults, _ := chartDefaults["endpoints"].(map[string]any)
	for ep, e := range defaults {
		em, ok := e.(map[string]any)
		if !ok || skippedEndpoints[ep] {
			continue
		}
		auth, ok := em["auth"].(map[string]any)
		if !ok {
			continue
		}
		for name, a := range auth {
			path := []string{"endpoints", ep, "auth", name}
			if dropped(vals, path) {
				continue
			}
			switch a := a.(type) {
			case map[string]any:
				if _, ok := a["password"]; !ok {
					continue // not a user with a password (ldap.client)
				}
				if _, set := lookup(vals, append(slices.Clone(path), "password")); set {
					continue
				}
				user, _ := a["username"].(string)
				if u, ok := lookup(vals, append(slices.Clone(path), "username")); ok {
					user, _ = u.(string)
				}
				if user == "" {
					user = name // a user the chart names only by its entry (rabbitmq's guest)
				}
				kind := endpointKinds[ep]
				if kind == "" {
					kind = strings.ReplaceAll(ep, "_", "-")
				}
				out = append(out, Entry{Path: append(path, "password"), Key: kind + "-" + validKey.ReplaceAllString(user, "-")})
			case string, nil:
				if !secretScalar.MatchString(name) {
					continue
				}
				if _, set := lookup(vals, path); set {
					continue
				}
				out = append(out, Entry{Path: path, Key: strings.ReplaceAll(name, "_", "-")})
			}
		}
	}
	for _, s := range sharedSecrets[chart] {
		if _, inChart := lookup(chartDefaults, s.Path); !inChart || dropped(vals, s.Path) {
			continue
		}
		if _, set := lookup(vals, s.Path); set {
			continue
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i].Path, ".") < strings.Join(out[j].Path, ".") })
	return out
}

// Keys are the Secret keys of entries, without repeats.
func Keys(entries []Entry) []string {
	var keys []string
	for _, e := range entries {
		if !slices.Contains(keys, e.Key) {
			keys = append(keys, e.Key)
		}
	}
	return keys
}

// WithValues is a chart's rendered values with the secrets of entries written underneath them:
// the values win where they set something (a profile can still set a password itself, or drop an
// entry with null, which reaches Helm and removes the chart's default).
func WithValues(entries []Entry, secrets map[string]string, vals map[string]any) (map[string]any, error) {
	base := map[string]any{}
	for _, e := range entries {
		s, ok := secrets[e.Key]
		if !ok {
			return nil, fmt.Errorf("no generated secret %s for %s", e.Key, strings.Join(e.Path, "."))
		}
		values.Set(base, s, e.Path...)
	}
	return values.MergeKeepNull(base, vals)
}

// dropped says whether vals set path, or one of its parents, to null.
func dropped(vals map[string]any, path []string) bool {
	m := vals
	for _, p := range path {
		v, ok := m[p]
		if !ok {
			return false
		}
		if v == nil {
			return true
		}
		if m, ok = v.(map[string]any); !ok {
			return false
		}
	}
	return false
}

// lookup returns the value at path and whether it is set (to anything but null).
func lookup(m map[string]any, path []string) (any, bool) {
	v, ok := values.Get(m, path...)
	return v, ok && v != nil
}

// Ensure returns the secrets for keys, creating the Secret (and its namespace) or adding missing
// keys; an existing secret is never changed. Safe to call concurrently from several controllers.
func Ensure(ctx context.Context, c client.Client, namespace string, keys []string) (map[string]string, error) {
	keys = append([]string{DatabaseRoot, IdentityAdmin}, keys...) // the cloud's admin always exists
	key := types.NamespacedName{Namespace: namespace, Name: SecretName}
	var out map[string]string
	err := retry.OnError(retry.DefaultRetry, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
	}, func() error {
		var s corev1.Secret
		err := c.Get(ctx, key, &s)
		if apierrors.IsNotFound(err) {
			if err := ensureNamespace(ctx, c, namespace); err != nil {
				return err
			}
			s = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: SecretName, Namespace: namespace,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "kupenstack"}}, Data: map[string][]byte{}}
			if err := fill(&s, keys); err != nil {
				return err
			}
			if err := c.Create(ctx, &s); err != nil {
				return err
			}
			out = asStrings(s.Data)
			return nil
		}
		if err != nil {
			return err
		}
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		before := len(s.Data)
		if err := fill(&s, keys); err != nil {
			return err
		}
		if len(s.Data) != before {
			if err := c.Update(ctx, &s); err != nil { // optimistic: conflicts retry
				return err
			}
		}
		out = asStrings(s.Data)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("credentials Secret %s: %w", key, err)
	}
	return out, nil
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// alphabet of generated secrets: letters and digits only, so that a secret needs no quoting or
// escaping wherever a chart puts it (URLs, INI and shell files, RabbitMQ's Erlang cookie).
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// fill adds a random 32-character secret (190 bits) for every missing key.
func fill(s *corev1.Secret, keys []string) error {
	for _, k := range keys {
		if len(s.Data[k]) > 0 {
			continue
		}
		secret := make([]byte, 32)
		for i := range secret {
			n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
			if err != nil {
				return err
			}
			secret[i] = alphabet[n.Int64()]
		}
		s.Data[k] = secret
	}
	return nil
}

func asStrings(data map[string][]byte) map[string]string {
	out := make(map[string]string, len(data))
	for k, v := range data {
		out[k] = string(v)
	}
	return out
}
