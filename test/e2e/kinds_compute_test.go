package e2e

import (
	"context"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// The compute kinds join the table tests (crash safety, out-of-band deletion, import, RBAC).
func init() {
	kindCases = append(kindCases, serverGroupCase, virtualMachineCase)
}

var serverGroupCase = kindCase{
	kind: "ServerGroup",
	newObj: func(ns, name string) generic.Object {
		return &kupenstackv1.ServerGroup{ObjectMeta: objMeta(ns, name), Spec: kupenstackv1.ServerGroupSpec{Policy: "soft-anti-affinity"}}
	},
	find: func(ctx context.Context, c osClients, project string, obj generic.Object) ([]string, error) {
		pages, err := servergroups.List(c.nova, servergroups.ListOpts{AllProjects: true}).AllPages(ctx)
		if err != nil {
			return nil, err
		}
		all, err := servergroups.ExtractServerGroups(pages)
		var out []string
		for _, g := range all {
			if g.ProjectID == project && g.Name == obj.GetName() {
				out = append(out, g.ID)
			}
		}
		return out, err
	},
	get: func(ctx context.Context, c osClients, id string) error { return servergroups.Get(ctx, c.nova, id).Err },
	remove: func(ctx context.Context, c osClients, id string) error {
		return servergroups.Delete(ctx, c.nova, id).ExtractErr()
	},
}

// gone reports a server an admin can still read after its deletion as not found.
func gone(srv *servers.Server) bool { return srv.Status == "DELETED" || srv.Status == "SOFT_DELETED" }

var virtualMachineCase = kindCase{
	kind: "VirtualMachine",
	// A cluster-scoped Flavor named after the namespace, and the cloud's public image.
	deps: func(ns string) []client.Object {
		return []client.Object{
			&kupenstackv1.Flavor{ObjectMeta: objMeta("", ns+"-nano"), Spec: kupenstackv1.FlavorSpec{ManagedSpec: kupenstackv1.ManagedSpec{
				ManagementPolicy: kupenstackv1.ManagementPolicyUnmanaged, Import: &kupenstackv1.ImportSpec{Name: "m1.nano"}}}},
			publicImage(ns),
		}
	},
	newObj: func(ns, name string) generic.Object {
		return &kupenstackv1.VirtualMachine{ObjectMeta: objMeta(ns, name), Spec: kupenstackv1.VirtualMachineSpec{
			FlavorRef: ns + "-nano", ImageRef: "tiny"}}
	},
	find: func(ctx context.Context, c osClients, project string, obj generic.Object) ([]string, error) {
		pages, err := servers.List(c.nova, servers.ListOpts{AllTenants: true, TenantID: project, Name: "^" + obj.GetName() + "$"}).AllPages(ctx)
		if err != nil {
			return nil, err
		}
		all, err := servers.ExtractServers(pages)
		var out []string
		for _, srv := range all {
			if !gone(&srv) && srv.TaskState != "deleting" {
				out = append(out, srv.ID)
			}
		}
		return out, err
	},
	get: func(ctx context.Context, c osClients, id string) error {
		srv, err := servers.Get(ctx, c.nova, id).Extract()
		if err == nil && gone(srv) {
			return gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusNotFound}
		}
		return err
	},
	remove: func(ctx context.Context, c osClients, id string) error {
		return servers.Delete(ctx, c.nova, id).ExtractErr()
	},
}
