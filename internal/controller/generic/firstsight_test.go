package generic

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// TestReadyUnknownAtFirstSight: the first thing the operator writes on a new object is Ready
// Unknown (kubectl get shows Unknown rather than a blank while the first pass works), before
// any outcome; the pass then settles it.
func TestReadyUnknownAtFirstSight(t *testing.T) {
	ns := readyNamespace(t)
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(env.Ctx, &kupenstackv1.NetworkList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	n := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "first-sight", Namespace: ns}}
	if err := env.Client.Create(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	var seen []metav1.ConditionStatus
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			got := ev.Object.(*kupenstackv1.Network)
			c := meta.FindStatusCondition(got.Status.Conditions, kupenstackv1.ConditionReady)
			if c == nil {
				continue
			}
			if len(seen) == 0 || seen[len(seen)-1] != c.Status {
				seen = append(seen, c.Status)
			}
			if c.Status == metav1.ConditionTrue {
				if seen[0] != metav1.ConditionUnknown {
					t.Fatalf("Ready went %v: the first value written must be Unknown", seen)
				}
				return
			}
		case <-timeout:
			t.Fatalf("Ready went %v, never True", seen)
		}
	}
}
