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

// TestNoCredentialsInStatusOrEvents runs last (file order): after every other e2e test, no Event,
// no KupenStack object of any kind in any namespace and no line the operator logged holds the
// cloud's password.
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
			if strings.Contains(string(raw), secret) {
				t.Errorf("%s %s/%s holds the password", kind, item.GetNamespace(), item.GetName())
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
	quoted, _ := json.Marshal(secret) // as a JSON log line would escape it
	if strings.Contains(log, secret) || strings.Contains(log, strings.Trim(string(quoted), `"`)) {
		t.Error("the operator's log holds the password")
	}
	t.Logf("scanned %d Events, %d objects of %d kinds and %d bytes of log (%d reconcile errors)", len(events.Items), scanned,
		kinds, len(log), strings.Count(log, "Reconciler error"))
}
