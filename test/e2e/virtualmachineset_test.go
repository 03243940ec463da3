package e2e

import (
	"fmt"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/controller/virtualmachineset"
)

// TestVirtualMachineSet: kubectl scale 1→5→2 against the real cloud, a template change rolled
// within maxUnavailable, and a member's server deleted out of band replaced by the member itself.
func TestVirtualMachineSet(t *testing.T) {
	parallel(t)
	requireCloud(t)
	c := adminClients(t)
	ns := newNamespace(t)
	flavor := vmFlavor(t, ns+"-nano")
	img := publicImage(ns)
	one := int32(1)
	unavailable := intstr.FromInt32(1)
	set := &kupenstackv1.VirtualMachineSet{ObjectMeta: objMeta(ns, "web"), Spec: kupenstackv1.VirtualMachineSetSpec{
		Replicas: &one,
		Selector: kupenstackv1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: kupenstackv1.VirtualMachineTemplate{
			Metadata: kupenstackv1.VirtualMachineTemplateMeta{Labels: map[string]kupenstackv1.LabelValue{"app": "web"}},
			Spec: kupenstackv1.VirtualMachineSpec{FlavorRef: flavor.Name, ImageRef: "tiny",
				Metadata: map[string]string{"version": "1"}},
		},
		Strategy: kupenstackv1.VirtualMachineSetStrategy{RollingUpdate: &kupenstackv1.RollingUpdateVirtualMachineSet{
			MaxSurge: &unavailable, MaxUnavailable: &unavailable}},
	}}
	create(t, img, set)
	members := func() []kupenstackv1.VirtualMachine {
		var list kupenstackv1.VirtualMachineList
		if err := env.Client.List(env.Ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
			t.Fatal(err)
		}
		return list.Items
	}
	settled := func(want int32) {
		t.Helper()
		eventually(t, fmt.Sprintf("%d VMs ready", want), func() error {
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(set), set); err != nil {
				return err
			}
			st := set.Status
			if !conditions.IsReady(st.Conditions, set.Generation) || st.Replicas != want || st.AvailableReplicas != want || st.UpdatedReplicas != want {
				return fmt.Errorf("status %+v", st)
			}
			return nil
		})
	}
	scaleTo := func(n int32) {
		t.Helper()
		scale := &autoscalingv1.Scale{}
		if err := env.Client.SubResource("scale").Get(env.Ctx, set, scale); err != nil {
			t.Fatal(err)
		}
		scale.Spec.Replicas = n
		if err := env.Client.SubResource("scale").Update(env.Ctx, set, client.WithSubResourceBody(scale)); err != nil {
			t.Fatal(err)
		}
	}
	settled(1)
	scaleTo(5)
	settled(5)
	scaleTo(2)
	settled(2)
	for _, vm := range members() {
		if vm.DeletionTimestamp.IsZero() && (vm.Status.Resource == nil || vm.Status.Resource.Status != "ACTIVE") {
			t.Errorf("member %s: %+v", vm.Name, vm.Status.Resource)
		}
	}

	// A template change rolls the members; never fewer than replicas-maxUnavailable Ready.
	oldHash := set.Status.TemplateHash
	updateSpec(t, set, func(s *kupenstackv1.VirtualMachineSet) {
		s.Spec.Template.Spec.Metadata = map[string]string{"version": "2"}
	})
	eventually(t, "rolled", func() error {
		ready, old := 0, 0
		for _, vm := range members() {
			if !vm.DeletionTimestamp.IsZero() {
				continue
			}
			if conditions.IsReady(vm.Status.Conditions, vm.Generation) {
				ready++
			}
			if vm.Labels[virtualmachineset.HashLabel] == oldHash {
				old++
			}
		}
		if ready < 1 {
			t.Fatalf("%d Ready members during the rollout, maxUnavailable is 1 of 2", ready)
		}
		if old > 0 {
			return fmt.Errorf("%d members of the old template", old)
		}
		return nil
	})
	settled(2)

	// A member's server deleted out of band: the member (a VirtualMachine) replaces it.
	var victim kupenstackv1.VirtualMachine
	for _, vm := range members() { // not one of the old template's, still being deleted
		if vm.DeletionTimestamp.IsZero() && vm.Labels[virtualmachineset.HashLabel] == set.Status.TemplateHash {
			victim = vm
			break
		}
	}
	if victim.Status.ID == "" {
		t.Fatal("no member of the current template")
	}
	if err := servers.Delete(env.Ctx, c.nova, victim.Status.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "member healed", func() error {
		var vm kupenstackv1.VirtualMachine
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(&victim), &vm); err != nil {
			return err
		}
		// One more replacement than before: on a small real cloud a member may have been
		// replaced already, its first server refused by the scheduler ("No valid host") while
		// the old template's servers still held the host's vCPUs.
		if vm.Status.RestartCount != victim.Status.RestartCount+1 || vm.Status.ID == victim.Status.ID || !conditions.IsReady(vm.Status.Conditions, vm.Generation) {
			// The last failure says why a count above the one wanted replaced the server again.
			return fmt.Errorf("restarts %d (%d before), id %s, last failure %q, resource %+v", vm.Status.RestartCount,
				victim.Status.RestartCount, vm.Status.ID, vm.Status.LastFailureReason, vm.Status.Resource)
		}
		return nil
	})

	// Deleting the set deletes its members (garbage collection) and their servers.
	deleteAll(t, ns, false, set, img)
	eventually(t, "members gone", func() error {
		if n := len(members()); n > 0 {
			return fmt.Errorf("%d members left", n)
		}
		return nil
	})
}
