package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/openstack/cloudconfig"
)

// TestNoCredentialsInStatusOrEvents runs last (file order): after every other e2e test, no Event
// and no object's status anywhere holds the cloud's password.
func TestNoCredentialsInStatusOrEvents(t *testing.T) {
	requireCloud(t)
	env.Require(t)
	data, err := os.ReadFile(cloudsPath)
	if err != nil {
		t.Fatal(err)
	}
	cloud, err := cloudconfig.Parse(data, cloudName)
	if err != nil {
		t.Fatal(err)
	}
	secret := cloud.Auth.Password
	if len(secret) < 4 {
		t.Fatalf("password too short to search for: %d characters", len(secret))
	}
	var events eventsv1.EventList
	if err := env.Client.List(env.Ctx, &events); err != nil {
		t.Fatal(err)
	}
	if len(events.Items) == 0 {
		t.Fatal("no Events recorded: the scan would prove nothing")
	}
	for _, e := range events.Items {
		if strings.Contains(e.Note, secret) || strings.Contains(e.Reason, secret) {
			t.Errorf("Event %s/%s holds the password", e.Namespace, e.Name)
		}
	}
	scanned := 0
	for _, kind := range []string{"Project", "Network", "Subnet", "Router", "SecurityGroup", "Port", "FloatingIP", "KeyPair", "Flavor"} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(kupenstackv1.GroupVersion.WithKind(kind + "List"))
		if err := env.Client.List(env.Ctx, list); err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			raw, _ := json.Marshal(item.Object)
			if strings.Contains(string(raw), secret) {
				t.Errorf("%s %s/%s holds the password", kind, item.GetNamespace(), item.GetName())
			}
			scanned++
		}
	}
	t.Logf("scanned %d Events and %d objects", len(events.Items), scanned)
}
