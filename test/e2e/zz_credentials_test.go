package e2e

import (
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/openstack/cloudconfig"
)

// TestNoCredentialsInStatusOrEvents runs last: after every other e2e test (the sequential ones
// before it in file order, the parallel ones waited for), no Event, no KupenStack object of any
// kind in any namespace and no line the operator logged holds the cloud's password, or the
// notification bus's when the listener is on.
func TestNoCredentialsInStatusOrEvents(t *testing.T) {
	requireCloud(t)
	env.Require(t)
	t.Parallel()
	parallelTests.Wait()
	data, err := os.ReadFile(cloudsPath)
	if err != nil {
		t.Fatal(err)
	}
	cloud, err := cloudconfig.Parse(data, cloudName)
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{"the cloud's password": cloud.Auth.Password}
	if raw := os.Getenv("KUPENSTACK_NOTIFICATIONS_URL"); raw != "" {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("KUPENSTACK_NOTIFICATIONS_URL: %v", err)
		}
		// The all-in-one's broker is guest:guest, a word an OpenStack error could hold by itself.
		if pw, _ := u.User.Password(); len(pw) >= 8 {
			secrets["the notification bus's password"] = pw
		} else {
			t.Logf("the notification bus's password has %d characters: too common a word to search for", len(pw))
		}
	}
	for what, secret := range secrets {
		if len(secret) < 4 {
			t.Fatalf("%s is too short to search for: %d characters", what, len(secret))
		}
	}
	// holds names the secrets s contains, as written or as a JSON string would escape them.
	holds := func(s string) []string {
		var found []string
		for what, secret := range secrets {
			quoted, _ := json.Marshal(secret)
			if strings.Contains(s, secret) || strings.Contains(s, strings.Trim(string(quoted), `"`)) {
				found = append(found, what)
			}
		}
		return found
	}
	var events eventsv1.EventList
	if err := env.Client.List(env.Ctx, &events); err != nil {
		t.Fatal(err)
	}
	if len(events.Items) == 0 {
		t.Fatal("no Events recorded: the scan would prove nothing")
	}
	for _, e := range events.Items {
		if found := holds(e.Note + "\n" + e.Reason); len(found) > 0 {
			t.Errorf("Event %s/%s holds %v", e.Namespace, e.Name, found)
		}
	}
	scanned := 0
	kinds := 0
	// Every kind the API group has, in every namespace: kinds added later are scanned too.
	for gvk := range env.Client.Scheme().AllKnownTypes() {
		if gvk.GroupVersion() != kupenstackv1.GroupVersion || !strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		kinds++
		kind := strings.TrimSuffix(gvk.Kind, "List")
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		if err := env.Client.List(env.Ctx, list); err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			raw, _ := json.Marshal(item.Object)
			if found := holds(string(raw)); len(found) > 0 {
				t.Errorf("%s %s/%s holds %v", kind, item.GetNamespace(), item.GetName(), found)
			}
			scanned++
		}
	}
	if kinds < 9 {
		t.Errorf("scanned %d kinds only", kinds)
	}
	// What the operator logged (errors from OpenStack included) while every test ran.
	log := operatorLog.String()
	// Captured from the start (controller-runtime logs each controller's workers starting); a run
	// whose selection of tests met no OpenStack error still scans what was logged.
	if !strings.Contains(log, "Starting workers") {
		t.Error("the operator's log was not captured: the scan would prove nothing")
	}
	if found := holds(log); len(found) > 0 {
		t.Errorf("the operator's log holds %v", found)
	}
	t.Logf("scanned %d Events, %d objects of %d kinds and %d bytes of log (%d reconcile errors) for %d secrets", len(events.Items), scanned,
		kinds, len(log), strings.Count(log, "Reconciler error"), len(secrets))
}
