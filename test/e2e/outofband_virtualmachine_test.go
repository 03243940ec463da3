package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/tags"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/volumeattach"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// vmDriftObjects: a small VM on the fake driver that sets every field its Diff compares (a NIC
// with a security group, metadata, tags, a volume, restartPolicy Always), with what it needs.
func vmDriftObjects(ns string) []client.Object {
	return []client.Object{
		&kupenstackv1.Flavor{ObjectMeta: metav1.ObjectMeta{Name: ns + "-nano"}, Spec: kupenstackv1.FlavorSpec{
			ManagedSpec: kupenstackv1.ManagedSpec{ManagementPolicy: kupenstackv1.ManagementPolicyUnmanaged,
				Import: &kupenstackv1.ImportSpec{Name: "m1.nano"}}}},
		publicImage(ns),
		&kupenstackv1.Network{ObjectMeta: objMeta(ns, "net")},
		&kupenstackv1.Subnet{ObjectMeta: objMeta(ns, "sub"), Spec: kupenstackv1.SubnetSpec{
			NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "10.64.0.0/24"}}},
		&kupenstackv1.SecurityGroup{ObjectMeta: objMeta(ns, "web")},
		&kupenstackv1.Volume{ObjectMeta: objMeta(ns, "data"), Spec: kupenstackv1.VolumeSpec{SizeGiB: 1}},
		&kupenstackv1.VirtualMachine{ObjectMeta: objMeta(ns, "vm"), Spec: kupenstackv1.VirtualMachineSpec{
			FlavorRef: ns + "-nano", ImageRef: "tiny",
			Networks:          []kupenstackv1.VirtualMachineNIC{{NetworkRef: "net"}},
			SecurityGroupRefs: []string{"web"},
			Metadata:          map[string]string{"role": "web"},
			Tags:              []kupenstackv1.NovaTag{"e2e"},
			Volumes:           []kupenstackv1.VirtualMachineVolume{{VolumeRef: "data"}},
			RestartPolicy:     kupenstackv1.RestartPolicyAlways,
		}},
	}
}

// vmDrift is a VirtualMachine case: change acts on the server, repaired checks it read back.
func vmDrift(field string, change func(ctx context.Context, c driftClients, vm *kupenstackv1.VirtualMachine) error,
	repaired func(ctx context.Context, c driftClients, vm *kupenstackv1.VirtualMachine, srv *servers.Server) error) fieldDrift {
	return fieldDrift{kind: "VirtualMachine", field: field, objects: vmDriftObjects,
		change: func(ctx context.Context, c driftClients, obj generic.Object) error {
			return change(ctx, c, obj.(*kupenstackv1.VirtualMachine))
		},
		repaired: func(ctx context.Context, c driftClients, obj generic.Object) error {
			vm := obj.(*kupenstackv1.VirtualMachine)
			srv, err := servers.Get(ctx, c.nova, vm.Status.ID).Extract()
			if err != nil {
				return err
			}
			return repaired(ctx, c, vm, srv)
		}}
}

// vmDependencyID is the OpenStack ID of the object name of the VM's namespace (obj gives the kind).
func vmDependencyID(ctx context.Context, vm *kupenstackv1.VirtualMachine, name string, obj generic.Object) (string, error) {
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: vm.Namespace, Name: name}, obj); err != nil {
		return "", err
	}
	return obj.GetManagedStatus().ID, nil
}

func init() {
	addFieldDrifts(
		vmDrift("spec.name",
			func(ctx context.Context, c driftClients, vm *kupenstackv1.VirtualMachine) error {
				return servers.Update(ctx, c.nova, vm.Status.ID, servers.UpdateOpts{Name: "renamed"}).Err
			},
			func(_ context.Context, _ driftClients, vm *kupenstackv1.VirtualMachine, srv *servers.Server) error {
				if srv.Name != vm.Name {
					return fmt.Errorf("name %q", srv.Name)
				}
				return nil
			}),
		vmDrift("spec.metadata",
			func(ctx context.Context, c driftClients, vm *kupenstackv1.VirtualMachine) error {
				return servers.UpdateMetadata(ctx, c.nova, vm.Status.ID, servers.MetadataOpts{"role": "db", "added": "x"}).Err
			},
			func(_ context.Context, _ driftClients, vm *kupenstackv1.VirtualMachine, srv *servers.Server) error {
				if !maps.Equal(srv.Metadata, vm.Spec.Metadata) {
					return fmt.Errorf("metadata %v", srv.Metadata)
				}
				return nil
			}),
		vmDrift("spec.tags",
			func(ctx context.Context, c driftClients, vm *kupenstackv1.VirtualMachine) error {
				// The spec's tag and the owner tag replaced by another.
				return tags.ReplaceAll(ctx, c.nova, vm.Status.ID, tags.ReplaceAllOpts{Tags: []string{"intruder"}}).Err
			},
			func(_ context.Context, _ driftClients, vm *kupenstackv1.VirtualMachine, srv *servers.Server) error {
				want := []string{"e2e", generic.OwnerTag(vm)}
				if srv.Tags == nil || !generic.SameSet(*srv.Tags, want) {
					return fmt.Errorf("tags %v, want %v", srv.Tags, want)
				}
				return nil
			}),
		vmDrift("spec.securityGroupRefs",
			func(ctx context.Context, c driftClients, vm *kupenstackv1.VirtualMachine) error {
				// On the server's port, as Nova's removeSecurityGroup would do it.
				ports, err := neutronList(ctx, c.osClients, "ports", url.Values{"device_id": {vm.Status.ID}})
				if err != nil || len(ports) != 1 {
					return fmt.Errorf("the server's ports %v: %v", ports, err)
				}
				body := map[string]any{"port": map[string]any{"security_groups": []string{}}}
				_, err = c.neutron.Put(ctx, c.neutron.ServiceURL("ports", ports[0]), body, nil, &gophercloud.RequestOpts{OkCodes: []int{200}})
				return err
			},
			func(_ context.Context, _ driftClients, _ *kupenstackv1.VirtualMachine, srv *servers.Server) error {
				var names []string
				for _, g := range srv.SecurityGroups {
					names = append(names, fmt.Sprint(g["name"]))
				}
				if !slices.Equal(names, []string{"web"}) {
					return fmt.Errorf("security groups %v", names)
				}
				return nil
			}),
		vmDrift("spec.volumes",
			func(ctx context.Context, c driftClients, vm *kupenstackv1.VirtualMachine) error {
				id, err := vmDependencyID(ctx, vm, "data", &kupenstackv1.Volume{})
				if err != nil {
					return err
				}
				// The VM is Ready once Nova lists the volume on the server, which can be before
				// Cinder ends the attach; an admin's detach before then is refused (400, "Volume
				// status must be 'in-use'"), as a CI run of 2026-11-29 met.
				if err := wait.PollUntilContextTimeout(ctx, eventuallyPoll, eventuallyTimeout, true, func(ctx context.Context) (bool, error) {
					v, err := volumes.Get(ctx, c.cinder, id).Extract()
					return err == nil && v.Status == "in-use", nil
				}); err != nil {
					return fmt.Errorf("volume %s never in-use in Cinder: %w", id, err)
				}
				return volumeattach.Delete(ctx, c.nova, vm.Status.ID, id).ExtractErr()
			},
			func(ctx context.Context, _ driftClients, vm *kupenstackv1.VirtualMachine, srv *servers.Server) error {
				id, err := vmDependencyID(ctx, vm, "data", &kupenstackv1.Volume{})
				if err != nil {
					return err
				}
				if len(srv.AttachedVolumes) != 1 || srv.AttachedVolumes[0].ID != id {
					return fmt.Errorf("attached %v, want %s", srv.AttachedVolumes, id)
				}
				return nil
			}),
		// restartPolicy Always: a server stopped out of band is started again.
		vmDrift("spec.powerState",
			func(ctx context.Context, c driftClients, vm *kupenstackv1.VirtualMachine) error {
				return servers.Stop(ctx, c.nova, vm.Status.ID).ExtractErr()
			},
			func(_ context.Context, _ driftClients, _ *kupenstackv1.VirtualMachine, srv *servers.Server) error {
				if srv.Status != "ACTIVE" {
					return fmt.Errorf("server %s (%s)", srv.Status, srv.TaskState)
				}
				return nil
			}),
		// An admin's resize to another flavor is reverted: the server is back on the spec's.
		vmDrift("spec.flavorRef",
			func(ctx context.Context, c driftClients, vm *kupenstackv1.VirtualMachine) error {
				pages, err := flavors.ListDetail(c.nova, flavors.ListOpts{AccessType: flavors.AllAccess}).AllPages(ctx)
				if err != nil {
					return err
				}
				all, err := flavors.ExtractFlavors(pages)
				if err != nil {
					return err
				}
				i := slices.IndexFunc(all, func(f flavors.Flavor) bool { return f.Name == "m1.small" })
				if i < 0 {
					return fmt.Errorf("no flavor m1.small in the cloud")
				}
				return servers.Resize(ctx, c.nova, vm.Status.ID, servers.ResizeOpts{FlavorRef: all[i].ID}).ExtractErr()
			},
			func(_ context.Context, _ driftClients, _ *kupenstackv1.VirtualMachine, srv *servers.Server) error {
				if srv.Status != "ACTIVE" || srv.Flavor["original_name"] != "m1.nano" {
					return fmt.Errorf("server %s (%s) on %v", srv.Status, srv.TaskState, srv.Flavor["original_name"])
				}
				return nil
			}),
	)
}
