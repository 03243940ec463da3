package lcm

import (
	"fmt"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// TestChartPathNotAllowed: a charts.localPath outside the directories the operator allows
// (--chart-local-path-prefixes; here the default, /charts and /opt/openstack-helm) makes the
// configuration Degraded with a message naming the rule and a Warning Event, before any chart
// is read; admission cannot know the flag. Going back to an allowed path heals it.
func TestChartPathNotAllowed(t *testing.T) {
	env.Require(t)
	ensureNamespace(t, "lcm-profiles")
	applyProfile(t, "lcm-profiles", "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{})
	for _, path := range []string{"/var/run/secrets/kubernetes.io/serviceaccount", "/charts/../etc", "/chartsx"} {
		spec := baseSpec()
		spec.Charts.LocalPath = path
		applyConfig(t, spec)
		eventually(t, func() error {
			var cfg kupenstackv1.KupenstackConfiguration
			if err := env.Client.Get(env.Ctx, configKey, &cfg); err != nil {
				return err
			}
			c := meta.FindStatusCondition(cfg.Status.Conditions, kupenstackv1.ConditionDegraded)
			if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != cfg.Generation ||
				c.Reason != kupenstackv1.ReasonInvalidConfiguration || !strings.Contains(c.Message, "spec.charts.localPath: local charts may only be read from the directories the admin allows (/charts, /opt/openstack-helm): "+path) ||
				!strings.Contains(c.Message, "--chart-local-path-prefixes") {
				return fmt.Errorf("Degraded = %+v", c)
			}
			var evs eventsv1.EventList
			if err := env.Client.List(env.Ctx, &evs); err != nil {
				return err
			}
			for _, e := range evs.Items {
				if e.Regarding.Name == configKey.Name && e.Reason == ReasonChartPathNotAllowed && e.Type == "Warning" && strings.Contains(e.Note, path) {
					return nil
				}
			}
			return fmt.Errorf("no ChartPathNotAllowed Event naming %s", path)
		})
	}
	applyConfig(t, baseSpec())
	eventually(t, func() error {
		var cfg kupenstackv1.KupenstackConfiguration
		if err := env.Client.Get(env.Ctx, configKey, &cfg); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(cfg.Status.Conditions, kupenstackv1.ConditionDegraded); c == nil || c.Status != metav1.ConditionFalse || c.ObservedGeneration != cfg.Generation {
			return fmt.Errorf("Degraded = %+v", c)
		}
		return nil
	})
}
