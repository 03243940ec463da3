package e2e

import (
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// TestCrashBetweenCreateAndStatusWrite, for every kind against the real cloud: the operator dies
// right after the OpenStack create call, before the ID reaches the status (crashAnnotation).
// After the restart exactly one OpenStack resource exists for the object, its ID is in the
// status and the object says it adopted it; an object deleted while its ID is still unknown
// leaves nothing behind in OpenStack.
func TestCrashBetweenCreateAndStatusWrite(t *testing.T) {
	parallel(t)
	c := adminClients(t)
	for _, k := range kindCases {
		t.Run(k.kind, func(t *testing.T) {
			t.Parallel()
			ctx := env.Ctx
			ns := newNamespace(t)
			deps := k.dependencies(ns)
			kept, gone := k.newObj(ns, "kept"), k.newObj(ns, "gone")
			for _, o := range []generic.Object{kept, gone} {
				o.SetAnnotations(map[string]string{crashAnnotation: ""})
			}
			create(t, append(deps, kept, gone)...)
			project := k.project(t, ns)
			// The create call was made; the ID never reached the status.
			for _, o := range []generic.Object{kept, gone} {
				eventually(t, o.GetName()+" created in OpenStack, without its ID in the status", func() error {
					found, err := k.find(ctx, c, project, o)
					if err != nil {
						return err
					}
					if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
						return err
					}
					if len(found) != 1 || o.GetManagedStatus().ID != "" {
						return fmt.Errorf("found %v, status.id %q", found, o.GetManagedStatus().ID)
					}
					return nil
				})
			}

			// Deleted while its ID is unknown: the operator still finds and deletes the resource.
			if err := env.Client.Delete(ctx, gone); err != nil {
				t.Fatal(err)
			}
			waitGone(t, gone)
			if found, err := k.find(ctx, c, project, gone); err != nil || len(found) != 0 {
				t.Errorf("deleted before its ID was recorded: left in OpenStack %v (%v)", found, err)
				for _, id := range found {
					_ = k.remove(ctx, c, id)
				}
			}

			// Restart: the next pass adopts the resource instead of creating a second one.
			time.Sleep(time.Second) // a few more crashing passes
			patch := client.MergeFrom(kept.DeepCopyObject().(client.Object))
			kept.SetAnnotations(nil)
			if err := env.Client.Patch(ctx, kept, patch); err != nil {
				t.Fatal(err)
			}
			waitReady(t, kept)
			found, err := k.find(ctx, c, project, kept)
			if err != nil {
				t.Fatal(err)
			}
			if len(found) != 1 || found[0] != kept.GetManagedStatus().ID {
				t.Errorf("OpenStack has %v for the object, status.id %q; want exactly that one", found, kept.GetManagedStatus().ID)
			}
			if ev := eventsFor(t, kept); ev["Adopted"] == 0 || ev["Created"] != 1 {
				t.Errorf("events %v: want one Created and an Adopted", ev)
			}
			deleteAll(t, ns, k.clusterScoped, append([]client.Object{kept}, deps...)...)
			if found, err := k.find(ctx, c, project, kept); err != nil || len(found) != 0 {
				t.Errorf("left in OpenStack after deletion: %v (%v)", found, err)
			}
		})
	}
}
