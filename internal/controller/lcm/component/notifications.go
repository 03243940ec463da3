package component

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/types"
)

// NotificationsSecretName is the Secret, beside the published clouds.yaml, holding the AMQP URL
// of the deployed cloud's compute notifications (key NotificationsURLKey): the operator listens
// there, so a server going to ERROR is healed at once rather than at the next list check.
const (
	NotificationsSecretName = "kupenstack-notifications"
	NotificationsURLKey     = "url"
)

// notificationsComponent is the component whose bus the URL names. OpenStack-Helm gives every
// service a virtual host of its own and one URL reaches one; Nova's carries what the operator
// acts on at once (servers going to ERROR, deleted or stopped).
const notificationsComponent = "nova"

// computeNotificationsURL is the URL Nova's services publish on, from its chart's values as
// given to Helm (defaults under the rendered values, passwords included): the user nova, its
// virtual host, the broker's in-cluster service.
func computeNotificationsURL(ch *chart.Chart, vals map[string]any, namespace string) (string, error) {
	merged, err := chartutil.CoalesceValues(ch, vals)
	if err != nil {
		return "", err
	}
	ep, err := merged.Table("endpoints.oslo_messaging")
	if err != nil {
		return "", fmt.Errorf("the chart's endpoints.oslo_messaging: %w", err)
	}
	str := func(path string) string {
		v, err := ep.PathValue(path)
		if err != nil || v == nil {
			return ""
		}
		return fmt.Sprint(v)
	}
	user, password := str("auth.nova.username"), str("auth.nova.password")
	host := str("host_fqdn_override.default")
	if host == "" {
		svc, ns := str("hosts.default"), str("namespace")
		if ns == "" {
			ns = namespace
		}
		host = svc + "." + ns + ".svc.cluster.local"
	}
	port := str("port.amqp.default")
	if user == "" || password == "" || strings.HasPrefix(host, ".") || port == "" {
		return "", fmt.Errorf("endpoints.oslo_messaging lacks the user nova, its password, the host or the amqp port")
	}
	if _, err := strconv.Atoi(port); err != nil {
		return "", fmt.Errorf("endpoints.oslo_messaging.port.amqp.default %q is not a port", port)
	}
	u := url.URL{Scheme: "amqp", User: url.UserPassword(user, password), Host: net.JoinHostPort(host, port),
		Path: "/" + strings.TrimPrefix(str("path"), "/")}
	return u.String(), nil
}

// PublishNotifications publishes the URL of Nova's bus, from the chart and values of its
// release, once nova is ready.
func (c *CloudPublisher) PublishNotifications(ctx context.Context, ch *chart.Chart, vals map[string]any, namespace string) error {
	busURL, err := computeNotificationsURL(ch, vals, namespace)
	if err != nil {
		return err
	}
	return c.publishSecret(ctx, types.NamespacedName{Namespace: c.Secret.Namespace, Name: NotificationsSecretName},
		NotificationsURLKey, []byte(busURL))
}
