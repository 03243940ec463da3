// Package credentials generates the cloud's passwords once (database, messaging, identity), keeps
// them in one Secret and turns them into the endpoints.* values every chart needs, so that all
// charts agree on them.
package credentials

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kupenstack/kupenstack/internal/lcm/values"
)

// SecretName is the Secret, in the cloud's namespace, holding every generated password.
const SecretName = "kupenstack-credentials"

// Key names in the Secret.
const (
	DatabaseRoot  = "database-root"
	MessagingRoot = "messaging-admin"
	IdentityAdmin = "identity-admin"
	MemcacheKey   = "memcache-secret-key"
)

// Services with their own database, messaging and identity users.
var Services = []string{"keystone", "glance", "cinder", "placement", "nova", "neutron", "horizon"}

func dbKey(svc string) string        { return "database-" + svc }
func messagingKey(svc string) string { return "messaging-" + svc }
func identityKey(svc string) string  { return "identity-" + svc }

// AllKeys are the keys of every password the cloud uses.
func AllKeys() []string {
	keys := []string{DatabaseRoot, MessagingRoot, IdentityAdmin, MemcacheKey}
	for _, s := range Services {
		keys = append(keys, dbKey(s), messagingKey(s), identityKey(s))
	}
	return keys
}

// Ensure returns the passwords, creating the Secret (and its namespace) or adding missing keys;
// an existing password is never changed. Safe to call concurrently from several controllers.
func Ensure(ctx context.Context, c client.Client, namespace string) (map[string]string, error) {
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
			if err := fill(&s); err != nil {
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
		if err := fill(&s); err != nil {
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

// fill adds a random password for every missing key.
func fill(s *corev1.Secret) error {
	for _, k := range AllKeys() {
		if len(s.Data[k]) > 0 {
			continue
		}
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		s.Data[k] = []byte(base64.RawURLEncoding.EncodeToString(b))
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

// WithValues is a chart's rendered values with the passwords underneath: the values win, so a
// profile can still set an endpoint's password itself.
func WithValues(chart string, pw map[string]string, vals map[string]any) (map[string]any, error) {
	return values.Merge(Values(chart, pw), vals)
}

// Values are the endpoints.* values carrying the passwords for one chart, in OpenStack-Helm's
// layout: endpoints.oslo_db.auth.<user>.password, endpoints.oslo_messaging.auth.<user>.password,
// endpoints.identity.auth.<user>.password, endpoints.oslo_cache.auth.memcache_secret_key. Every
// OpenStack chart gets every service's identity password, because charts create or use other
// services' users (nova's chart configures neutron's and placement's).
func Values(chart string, pw map[string]string) map[string]any {
	auth := func(entries map[string]string) map[string]any {
		out := map[string]any{}
		for user, key := range entries {
			out[user] = map[string]any{"password": pw[key]}
		}
		return map[string]any{"auth": out}
	}
	switch chart {
	case "mariadb":
		return map[string]any{"endpoints": map[string]any{"oslo_db": auth(map[string]string{"admin": DatabaseRoot})}}
	case "rabbitmq":
		return map[string]any{"endpoints": map[string]any{"oslo_messaging": auth(map[string]string{"user": MessagingRoot})}}
	case "memcached", "openvswitch", "libvirt":
		return map[string]any{}
	}
	identity := map[string]string{"admin": IdentityAdmin}
	for _, s := range Services {
		if s != "keystone" && s != "horizon" {
			identity[s] = identityKey(s)
		}
	}
	ep := map[string]any{
		"identity":   auth(identity),
		"oslo_cache": map[string]any{"auth": map[string]any{"memcache_secret_key": pw[MemcacheKey]}},
	}
	if slices.Contains(Services, chart) {
		ep["oslo_db"] = auth(map[string]string{"admin": DatabaseRoot, chart: dbKey(chart)})
		ep["oslo_messaging"] = auth(map[string]string{"admin": MessagingRoot, chart: messagingKey(chart)})
	}
	return map[string]any{"endpoints": ep}
}
