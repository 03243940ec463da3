package lcm

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// TestReadyUnknownAtFirstSight: the first Ready written on a new KupenstackConfiguration,
// OpenstackNode and OpenstackComponent is Unknown (kubectl get shows Unknown rather than a blank
// while the first pass works), before any outcome; the configuration's first status also counts
// its nodes and carries ServicesHealthy Unknown (NotProbed: no validation agent runs here), so that
// the SERVICES column is not blank either.
func TestReadyUnknownAtFirstSight(t *testing.T) {
	env.Require(t)
	ensureNamespace(t, "lcm-profiles")
	applyProfile(t, "lcm-profiles", "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{})
	newNode(t, "first-sight", nil)
	// New objects of every kind: whatever an earlier test configured goes first.
	if err := env.Client.Delete(env.Ctx, &kupenstackv1.KupenstackConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configKey.Name}}); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	kinds := []string{"KupenstackConfiguration", "OpenstackNode", "OpenstackComponent"}
	eventually(t, func() error {
		for _, kind := range kinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(kupenstackv1.GroupVersion.WithKind(kind + "List"))
			if err := env.Client.List(env.Ctx, list); err != nil {
				return err
			}
			if n := len(list.Items); n > 0 {
				return fmt.Errorf("%d %s objects of the previous configuration left", n, kind)
			}
		}
		return nil
	})

	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	events, done := make(chan *unstructured.Unstructured), make(chan struct{})
	defer close(done)
	for _, kind := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(kupenstackv1.GroupVersion.WithKind(kind + "List"))
		w, err := wc.Watch(env.Ctx, list)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		go func() {
			for ev := range w.ResultChan() {
				if u, ok := ev.Object.(*unstructured.Unstructured); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
					select {
					case events <- u:
					case <-done:
						return
					}
				}
			}
		}()
	}
	applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "first-sight", Type: "compute"}))

	// Per object, the Ready statuses written, in order; done when every kind has an object
	// whose Ready went past Unknown.
	seen, names := map[types.UID][]string{}, map[types.UID]string{}
	settled := map[string]bool{}
	timeout := time.After(time.Minute)
	for len(settled) < len(kinds) {
		select {
		case u := <-events:
			status, found := readyStatus(u)
			if !found {
				continue
			}
			s := seen[u.GetUID()]
			if len(s) == 0 || s[len(s)-1] != status {
				seen[u.GetUID()] = append(s, status)
			}
			names[u.GetUID()] = u.GetKind() + " " + u.GetName()
			if n, _, _ := unstructured.NestedInt64(u.Object, "status", "nodes"); u.GetKind() == "KupenstackConfiguration" && n != 1 {
				t.Errorf("the configuration's status with Ready %s counts %d nodes, want 1", status, n)
			}
			if u.GetKind() == "KupenstackConfiguration" {
				if st, reason, ok := condition(u, kupenstackv1.ConditionServicesHealthy); !ok || st != "Unknown" || reason != kupenstackv1.ReasonNotProbed {
					t.Errorf("the configuration's status with Ready %s has ServicesHealthy %q (%s, present %v), want Unknown (NotProbed)", status, st, reason, ok)
				}
			}
			if status != "Unknown" {
				settled[u.GetKind()] = true
			}
		case <-timeout:
			t.Fatalf("Ready went past Unknown only for %v; seen %v", settled, seen)
		}
	}
	for uid, statuses := range seen {
		if statuses[0] != "Unknown" {
			t.Errorf("%s: Ready went %v: the first value written must be Unknown", names[uid], statuses)
		}
	}
}

// readyStatus is the status of the object's Ready condition, if it has one.
func readyStatus(u *unstructured.Unstructured) (string, bool) {
	status, _, found := condition(u, kupenstackv1.ConditionReady)
	return status, found
}

// condition is the status and reason of the object's condition of type typ, if it has one.
func condition(u *unstructured.Unstructured, typ string) (status, reason string, found bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			status, _ = m["status"].(string)
			reason, _ = m["reason"].(string)
			return status, reason, true
		}
	}
	return "", "", false
}
