// Package servergroup maps the ServerGroup kind to Nova server groups.
package servergroup

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/nova"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=servergroups,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=servergroups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=servergroups/finalizers,verbs=update

// Setup registers the ServerGroup controller.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	a := actuator{}
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.ServerGroup, servergroups.ServerGroup]{
		Name:       "ServerGroup",
		Controller: "servergroup",
		Actuator:   a,
		Can:        generic.Capabilities[*kupenstackv1.ServerGroup, servergroups.ServerGroup]{List: a.ListAll},
		New:        func() *kupenstackv1.ServerGroup { return &kupenstackv1.ServerGroup{} },
		NewList:    func() client.ObjectList { return &kupenstackv1.ServerGroupList{} },
	})
}

type actuator struct{}

var (
	_ generic.Actuator[*kupenstackv1.ServerGroup, servergroups.ServerGroup] = actuator{}
)

// compute is the project's Nova client; 2.64 has the single policy and its rules.
func compute(ctx context.Context, s generic.Scope) (*gophercloud.ServiceClient, error) {
	return nova.Client(ctx, s, "2.64")
}

func (actuator) Get(ctx context.Context, s generic.Scope, id string) (*servergroups.ServerGroup, error) {
	sc, err := compute(ctx, s)
	if err != nil {
		return nil, err
	}
	return servergroups.Get(ctx, sc, id).Extract()
}

func (actuator) ListAll(ctx context.Context, s generic.Scope) ([]*servergroups.ServerGroup, error) {
	sc, err := compute(ctx, s)
	if err != nil {
		return nil, err
	}
	pages, err := servergroups.List(sc, nil).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return generic.Pointers(servergroups.ExtractServerGroups(pages))
}

// byName lists the project's server groups called name.
func (a actuator) byName(ctx context.Context, s generic.Scope, name string) ([]*servergroups.ServerGroup, error) {
	all, err := a.ListAll(ctx, s)
	var out []*servergroups.ServerGroup
	for _, g := range all {
		if g.Name == name {
			out = append(out, g)
		}
	}
	return out, err
}

// FindOwned: server groups have no tags, so the group named after the object in the namespace's
// project (where only KupenStack creates resources) with the object's policy is the object's.
func (a actuator) FindOwned(ctx context.Context, s generic.Scope, g *kupenstackv1.ServerGroup) (*servergroups.ServerGroup, error) {
	found, err := a.byName(ctx, s, g.Name)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	if len(found) > 1 || policy(found[0]) != string(g.Spec.Policy) {
		return nil, generic.InvalidConfig(fmt.Sprintf("the project already has %d other server group(s) named %s; import one or delete them", len(found), g.Name))
	}
	return found[0], nil
}

func (a actuator) FindImport(ctx context.Context, s generic.Scope, g *kupenstackv1.ServerGroup) (*servergroups.ServerGroup, error) {
	return generic.FindImport(g.Spec.Import,
		func(id string) (*servergroups.ServerGroup, error) { return a.Get(ctx, s, id) },
		func(name string) ([]servergroups.ServerGroup, error) {
			found, err := a.byName(ctx, s, name)
			out := make([]servergroups.ServerGroup, len(found))
			for i, g := range found {
				out[i] = *g
			}
			return out, err
		})
}

func (actuator) Create(ctx context.Context, s generic.Scope, g *kupenstackv1.ServerGroup) (*servergroups.ServerGroup, error) {
	sc, err := compute(ctx, s)
	if err != nil {
		return nil, err
	}
	opts := servergroups.CreateOpts{Name: g.Name, Policy: string(g.Spec.Policy)}
	if n := g.Spec.MaxServersPerHost; n != nil {
		opts.Rules = &servergroups.Rules{MaxServerPerHost: int(*n)}
	}
	return servergroups.Create(ctx, sc, opts).Extract()
}

// Diff finds nothing: Nova has no update API for server groups (name, policy and rules are
// fixed at creation), and the spec's policy and maxServersPerHost are immutable too.
func (actuator) Diff(generic.Scope, *kupenstackv1.ServerGroup, *servergroups.ServerGroup) generic.Changes {
	return nil
}

// Update is never called, since Diff finds no changes; were it, there is nothing it could do.
func (actuator) Update(_ context.Context, _ generic.Scope, _ *kupenstackv1.ServerGroup, cur *servergroups.ServerGroup, changes generic.Changes) (*servergroups.ServerGroup, error) {
	return cur, fmt.Errorf("server groups cannot be updated (asked to change %s)", changes)
}

func (actuator) Delete(ctx context.Context, s generic.Scope, res *servergroups.ServerGroup) error {
	sc, err := compute(ctx, s)
	if err != nil {
		return err
	}
	return servergroups.Delete(ctx, sc, res.ID).ExtractErr()
}

func (actuator) ID(res *servergroups.ServerGroup) string { return res.ID }

func policy(g *servergroups.ServerGroup) string {
	if g.Policy != nil {
		return *g.Policy
	}
	if len(g.Policies) > 0 {
		return g.Policies[0]
	}
	return ""
}

func (actuator) Observe(g *kupenstackv1.ServerGroup, res *servergroups.ServerGroup) (bool, string) {
	g.Status.Resource = &kupenstackv1.ServerGroupResourceStatus{Name: res.Name, Policy: policy(res), Members: res.Members}
	return true, ""
}
