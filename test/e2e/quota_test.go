package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	volumequotas "github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/quotasets"
	computequotas "github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	networkquotas "github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/quotas"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

// quotas is a project's quotas as the three services report them.
type quotas struct {
	compute *computequotas.QuotaSet
	network *networkquotas.Quota
	volume  *volumequotas.QuotaSet
}

func readQuotas(t *testing.T, c osClients, cinder *gophercloud.ServiceClient, project string) (quotas, error) {
	t.Helper()
	var q quotas
	var err error
	if q.compute, err = computequotas.Get(env.Ctx, c.nova, project).Extract(); err != nil {
		return q, err
	}
	if q.network, err = networkquotas.Get(env.Ctx, c.neutron, project).Extract(); err != nil {
		return q, err
	}
	q.volume, err = volumequotas.Get(env.Ctx, cinder, project).Extract()
	return q, err
}

func i64(v int64) *int64 { return &v }

// TestProjectQuota, on the real cloud: a ProjectQuota sets the declared limits of its namespace's
// project in Nova, Neutron and Cinder (and only those), shows usage against limit, puts back a
// limit changed behind its back; a Network over the quota is Degraded with Neutron's message and
// turns Ready once the quota is raised; deleting the ProjectQuota resets the limits to the defaults.
func TestProjectQuota(t *testing.T) {
	parallel(t)
	c := adminClients(t)
	cinder := cinderClient(t)
	ns := newNamespace(t)
	_, seed := projectOf(t, ns)
	waitReady(t, seed)
	project := projectID(t, ns)
	defaults, err := readQuotas(t, c, cinder, project) // a new project has the cloud's defaults
	if err != nil {
		t.Fatal(err)
	}

	q := &kupenstackv1.ProjectQuota{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: kupenstackv1.ProjectQuotaSpec{
		Namespace:    ns,
		Compute:      &kupenstackv1.ComputeQuota{Instances: i64(3), Cores: i64(6), RAMMiB: i64(4096)},
		Network:      &kupenstackv1.NetworkQuota{Networks: i64(2), FloatingIPs: i64(0), SecurityGroupRules: i64(-1)},
		Volume:       &kupenstackv1.VolumeQuota{Volumes: i64(2), Gigabytes: i64(5)},
		ResyncPeriod: &kupenstackv1.Duration{Duration: 2 * time.Second},
	}}
	create(t, q)
	waitQuota(t, q, "applied", func(q *kupenstackv1.ProjectQuota) error { return nil })

	// Set in OpenStack: the declared limits, nothing else.
	got, err := readQuotas(t, c, cinder, project)
	if err != nil {
		t.Fatal(err)
	}
	for what, pair := range map[string][2]int{
		"instances": {got.compute.Instances, 3}, "cores": {got.compute.Cores, 6}, "ram": {got.compute.RAM, 4096},
		"networks": {got.network.Network, 2}, "floating IPs": {got.network.FloatingIP, 0},
		"security group rules": {got.network.SecurityGroupRule, -1},
		"volumes":              {got.volume.Volumes, 2}, "gigabytes": {got.volume.Gigabytes, 5},
		"server groups (not declared)": {got.compute.ServerGroups, defaults.compute.ServerGroups},
		"routers (not declared)":       {got.network.Router, defaults.network.Router},
		"snapshots (not declared)":     {got.volume.Snapshots, defaults.volume.Snapshots},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s: %d in OpenStack, want %d", what, pair[0], pair[1])
		}
	}

	// Usage against limit: the seed network is the one network in use.
	waitQuota(t, q, "usage in the status", func(q *kupenstackv1.ProjectQuota) error {
		st := q.Status
		if st.ProjectID != project || st.Compute == nil || st.Network == nil || st.Volume == nil {
			return fmt.Errorf("status %+v", st)
		}
		if st.Network.Networks != (kupenstackv1.QuotaUsage{Limit: 2, InUse: 1}) || st.Compute.Instances != (kupenstackv1.QuotaUsage{Limit: 3}) ||
			st.Volume.Gigabytes != (kupenstackv1.QuotaUsage{Limit: 5}) || st.Network.Routers.Limit != int64(defaults.network.Router) {
			return fmt.Errorf("networks %+v, instances %+v, gigabytes %+v, routers %+v", st.Network.Networks, st.Compute.Instances,
				st.Volume.Gigabytes, st.Network.Routers)
		}
		return nil
	})

	// Drift: an admin raises the limit with the OpenStack API; the next resync puts it back.
	updates := eventsFor(t, q)["Updated"]
	if err := computequotas.Update(env.Ctx, c.nova, project, computequotas.UpdateOpts{Instances: gophercloud.IntToPointer(50)}).Err; err != nil {
		t.Fatal(err)
	}
	eventually(t, "drift repaired", func() error {
		qs, err := computequotas.Get(env.Ctx, c.nova, project).Extract()
		if err != nil {
			return err
		}
		if qs.Instances != 3 || eventsFor(t, q)["Updated"] <= updates {
			return fmt.Errorf("instances %d, events %v", qs.Instances, eventsFor(t, q))
		}
		return nil
	})

	// Over quota: no network allowed, below the seed's usage (accepted: the seed stays); another
	// is refused with Neutron's message, and created once the quota grows (at once: the quota
	// wakes it).
	updateSpec(t, q, func(q *kupenstackv1.ProjectQuota) { q.Spec.Network.Networks = i64(0) })
	waitQuota(t, q, "lowered below the usage", func(q *kupenstackv1.ProjectQuota) error {
		if u := q.Status.Network.Networks; u != (kupenstackv1.QuotaUsage{Limit: 0, InUse: 1}) {
			return fmt.Errorf("networks %+v", u)
		}
		return nil
	})
	over := &kupenstackv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "over", Namespace: ns}}
	create(t, over)
	eventually(t, "over quota", func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(over), over); err != nil {
			return err
		}
		d := meta.FindStatusCondition(over.Status.Conditions, kupenstackv1.ConditionDegraded)
		if d == nil || d.Status != metav1.ConditionTrue || d.Reason != kupenstackv1.ReasonInvalidConfiguration ||
			!strings.Contains(d.Message, "Quota exceeded") {
			return fmt.Errorf("conditions %+v", over.Status.Conditions)
		}
		return nil
	})
	raised := time.Now()
	updateSpec(t, q, func(q *kupenstackv1.ProjectQuota) { q.Spec.Network.Networks = i64(2) })
	waitReady(t, over)
	// That the quota's change wakes the refused object, rather than the two-minute retry of a
	// rejected request, is TestQuotaAppliedWakesRejectedObjects' (internal/controller/generic);
	// a time compared here would fail on a busy machine, not on a wrong program.
	t.Logf("the network over quota was created %v after the quota grew", time.Since(raised).Round(time.Millisecond))
	waitQuota(t, q, "both networks in use", func(q *kupenstackv1.ProjectQuota) error {
		if u := q.Status.Network.Networks; u != (kupenstackv1.QuotaUsage{Limit: 2, InUse: 2}) {
			return fmt.Errorf("networks %+v", u)
		}
		return nil
	})

	// Deleted: the declared sections go back to the cloud's defaults.
	if err := env.Client.Delete(env.Ctx, q); err != nil {
		t.Fatal(err)
	}
	waitGone(t, q)
	got, err = readQuotas(t, c, cinder, project)
	if err != nil {
		t.Fatal(err)
	}
	if got.compute.Instances != defaults.compute.Instances || got.compute.RAM != defaults.compute.RAM ||
		got.network.Network != defaults.network.Network || got.network.FloatingIP != defaults.network.FloatingIP ||
		got.volume.Gigabytes != defaults.volume.Gigabytes {
		t.Errorf("after deletion %+v %+v %+v, want the defaults %+v %+v %+v", got.compute, got.network, got.volume,
			defaults.compute, defaults.network, defaults.volume)
	}
	if n := eventsFor(t, q)["Reset"]; n != 1 {
		t.Errorf("%d Reset events", n)
	}
	deleteAll(t, ns, false, over, seed)
}

// waitQuota waits until q is Ready for its generation with OpenStack in line, and check passes;
// q is refreshed.
func waitQuota(t *testing.T, q *kupenstackv1.ProjectQuota, what string, check func(*kupenstackv1.ProjectQuota) error) {
	t.Helper()
	eventually(t, "ProjectQuota "+q.Name+" "+what, func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(q), q); err != nil {
			return err
		}
		if !conditions.IsReady(q.Status.Conditions, q.Generation) || q.Status.ObservedGeneration != q.Generation {
			return fmt.Errorf("conditions %+v", q.Status.Conditions)
		}
		return check(q)
	})
}

// TestVirtualMachineOverQuota: a quota declared before the namespace has any object is applied
// first (the quota makes the project); a VM over its instances limit is Degraded with Nova's
// message and is created once the limit grows; a limit then lowered below the usage is taken and
// the VM stays. The ProjectQuota deleted after its project (namespace gone) lets go all the same.
func TestVirtualMachineOverQuota(t *testing.T) {
	parallel(t)
	requireCloud(t)
	c := adminClients(t)
	ns := newNamespace(t)
	q := &kupenstackv1.ProjectQuota{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: kupenstackv1.ProjectQuotaSpec{
		Namespace: ns, Compute: &kupenstackv1.ComputeQuota{Instances: i64(0)},
		// The usage in the status is as of the last comparison: often, for the test to see the VM counted.
		ResyncPeriod: &kupenstackv1.Duration{Duration: 2 * time.Second}}}
	create(t, q)
	waitQuota(t, q, "applied", func(q *kupenstackv1.ProjectQuota) error { return nil })
	flavor := vmFlavor(t, ns+"-nano")
	img := publicImage(ns)
	vm := &kupenstackv1.VirtualMachine{ObjectMeta: objMeta(ns, "vm"), Spec: kupenstackv1.VirtualMachineSpec{
		FlavorRef: flavor.Name, ImageRef: "tiny"}}
	create(t, img, vm)
	waitVM(t, vm, "over quota", func(vm *kupenstackv1.VirtualMachine) error {
		d := meta.FindStatusCondition(vm.Status.Conditions, kupenstackv1.ConditionDegraded)
		if d == nil || d.Status != metav1.ConditionTrue || d.Reason != kupenstackv1.ReasonInvalidConfiguration ||
			!strings.Contains(d.Message, "Quota exceeded for instances") {
			return fmt.Errorf("conditions %+v", vm.Status.Conditions)
		}
		return nil
	})
	updateSpec(t, q, func(q *kupenstackv1.ProjectQuota) { q.Spec.Compute.Instances = i64(1) })
	waitReady(t, vm)
	id := vm.Status.ID
	waitQuota(t, q, "the VM counted", func(q *kupenstackv1.ProjectQuota) error {
		if u := q.Status.Compute.Instances; u != (kupenstackv1.QuotaUsage{Limit: 1, InUse: 1}) {
			return fmt.Errorf("instances %+v", u)
		}
		return nil
	})
	// Below the usage: Nova takes it (the operator forces it), the VM stays.
	updateSpec(t, q, func(q *kupenstackv1.ProjectQuota) { q.Spec.Compute.Instances = i64(0) })
	waitQuota(t, q, "lowered below the usage", func(q *kupenstackv1.ProjectQuota) error {
		if u := q.Status.Compute.Instances; u != (kupenstackv1.QuotaUsage{Limit: 0, InUse: 1}) {
			return fmt.Errorf("instances %+v", u)
		}
		return nil
	})
	waitReady(t, vm)

	// The namespace goes, and its project with it; the quota stays, waiting for the namespace to
	// come back, until the admin deletes it.
	var p kupenstackv1.Project
	if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: ns}, &p); err != nil {
		t.Fatal(err)
	}
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := env.Client.Delete(env.Ctx, namespace); err != nil {
		t.Fatal(err)
	}
	waitGone(t, namespace)
	waitGone(t, &p)
	requireServerGone(t, c, id)
	eventually(t, "the quota waiting for its namespace", func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(q), q); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(q.Status.Conditions, kupenstackv1.ConditionProgressing); c == nil ||
			!strings.Contains(c.Message, "waiting for namespace "+ns+" to be created") {
			return fmt.Errorf("conditions %+v", q.Status.Conditions)
		}
		return nil
	})
	if err := env.Client.Delete(env.Ctx, q); err != nil {
		t.Fatal(err)
	}
	waitGone(t, q)
}
