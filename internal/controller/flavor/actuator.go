// Package flavor maps the cluster-scoped Flavor kind to Nova flavors (with the admin scope).
package flavor

import (
	"context"
	"fmt"
	"maps"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	novaclient "github.com/kupenstack/kupenstack/internal/controller/nova"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=flavors,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=flavors/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=flavors/finalizers,verbs=update

// Setup registers the Flavor controller.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	a := actuator{}
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.Flavor, flavors.Flavor]{
		Name:          "Flavor",
		Controller:    "flavor",
		Actuator:      a,
		Can:           generic.Capabilities[*kupenstackv1.Flavor, flavors.Flavor]{List: a.ListAll},
		New:           func() *kupenstackv1.Flavor { return &kupenstackv1.Flavor{} },
		NewList:       func() client.ObjectList { return &kupenstackv1.FlavorList{} },
		ClusterScoped: true,
	})
}

// ownerSpec is the extra spec that marks a flavor as created for a Flavor object (by UID): Nova
// flavors have no tags.
const ownerSpec = "kupenstack:owner-uid"

type actuator struct{}

var (
	_ generic.Actuator[*kupenstackv1.Flavor, flavors.Flavor] = actuator{}
)

func name(f *kupenstackv1.Flavor) string {
	if f.Spec.Name != "" {
		return f.Spec.Name
	}
	return f.Name
}

// nova is the admin compute client; microversion 2.61 returns extra specs with each flavor and
// 2.55 allows description updates.
func nova(ctx context.Context, s generic.Scope) (*gophercloud.ServiceClient, error) {
	return novaclient.ClientFor(ctx, s, "", "2.61")
}

func (actuator) Get(ctx context.Context, s generic.Scope, id string) (*flavors.Flavor, error) {
	sc, err := nova(ctx, s)
	if err != nil {
		return nil, err
	}
	return flavors.Get(ctx, sc, id).Extract()
}

func (actuator) ListAll(ctx context.Context, s generic.Scope) ([]*flavors.Flavor, error) {
	sc, err := nova(ctx, s)
	if err != nil {
		return nil, err
	}
	pages, err := flavors.ListDetail(sc, flavors.ListOpts{AccessType: flavors.AllAccess}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return generic.Pointers(flavors.ExtractFlavors(pages))
}

func (a actuator) byName(ctx context.Context, s generic.Scope, n string) ([]*flavors.Flavor, error) {
	all, err := a.ListAll(ctx, s)
	var out []*flavors.Flavor
	for _, f := range all {
		if f.Name == n {
			out = append(out, f)
		}
	}
	return out, err
}

// FindOwned finds the flavor created for this object: the one whose ID is the object's UID
// (Create chooses it, so a flavor created just before a crash, owner spec not yet set, is found
// too), else one carrying its owner spec. A flavor of the same name without either is not
// adopted (it may be an admin's): the create then fails with Nova's conflict, shown as
// Degraded, and the flavor can be imported instead.
func (a actuator) FindOwned(ctx context.Context, s generic.Scope, f *kupenstackv1.Flavor) (*flavors.Flavor, error) {
	if fl, err := a.Get(ctx, s, string(f.UID)); !openstack.IsNotFound(err) {
		return fl, err
	}
	found, err := a.byName(ctx, s, name(f))
	for _, fl := range found {
		if fl.ExtraSpecs[ownerSpec] == string(f.UID) {
			return fl, err
		}
	}
	return nil, err
}

func (a actuator) FindImport(ctx context.Context, s generic.Scope, f *kupenstackv1.Flavor) (*flavors.Flavor, error) {
	if id := f.Spec.Import.ID; id != "" {
		fl, err := a.Get(ctx, s, id)
		if openstack.IsNotFound(err) {
			return nil, nil
		}
		return fl, err
	}
	found, err := a.byName(ctx, s, f.Spec.Import.Name)
	if err != nil || len(found) != 1 {
		return nil, generic.ImportMatches(len(found), err)
	}
	return found[0], nil
}

func (actuator) Create(ctx context.Context, s generic.Scope, f *kupenstackv1.Flavor) (*flavors.Flavor, error) {
	sc, err := nova(ctx, s)
	if err != nil {
		return nil, err
	}
	// The owner spec follows in Update; the ID, the object's UID, finds the flavor until then.
	return flavors.Create(ctx, sc, flavors.CreateOpts{
		ID: string(f.UID), Name: name(f), VCPUs: f.Spec.VCPUs, RAM: f.Spec.RAMMiB, Disk: &f.Spec.DiskGiB,
		Ephemeral: &f.Spec.EphemeralGiB, Swap: &f.Spec.SwapMiB, IsPublic: f.Spec.IsPublic, Description: f.Spec.Description,
	}).Extract()
}

// wantSpecs are the extra specs the flavor should carry: the user's plus the owner spec.
func wantSpecs(f *kupenstackv1.Flavor) map[string]string {
	want := maps.Clone(f.Spec.ExtraSpecs)
	if want == nil {
		want = map[string]string{}
	}
	want[ownerSpec] = string(f.UID)
	return want
}

// Diff compares what Nova lets change after creation: the description and the extra specs (the
// owner spec included). Nova has no update for name, sizes or isPublic (all immutable in the spec
// too). Flavor access lists are not compared: the spec declares none, and for a private flavor
// they are the admin's to grant.
func (actuator) Diff(_ generic.Scope, f *kupenstackv1.Flavor, res *flavors.Flavor) generic.Changes {
	var d generic.Diff
	generic.Value(&d, "spec.description", f.Spec.Description, res.Description)
	generic.Map(&d, "spec.extraSpecs", wantSpecs(f), res.ExtraSpecs)
	return d.Changes()
}

func (a actuator) Update(ctx context.Context, s generic.Scope, f *kupenstackv1.Flavor, cur *flavors.Flavor, changes generic.Changes) (*flavors.Flavor, error) {
	sc, err := nova(ctx, s)
	if err != nil {
		return nil, err
	}
	if changes.Has("spec.description") {
		if _, err := flavors.Update(ctx, sc, cur.ID, flavors.UpdateOpts{Description: f.Spec.Description}).Extract(); err != nil {
			return nil, err
		}
	}
	if changes.Has("spec.extraSpecs") {
		want := wantSpecs(f)
		missing := map[string]string{}
		for k, v := range want {
			if cur.ExtraSpecs[k] != v {
				missing[k] = v
			}
		}
		if len(missing) > 0 {
			if _, err := flavors.CreateExtraSpecs(ctx, sc, cur.ID, flavors.ExtraSpecsOpts(missing)).Extract(); err != nil {
				return nil, fmt.Errorf("setting extra specs: %w", err)
			}
		}
		for k := range cur.ExtraSpecs {
			if _, ok := want[k]; !ok {
				if err := flavors.DeleteExtraSpec(ctx, sc, cur.ID, k).ExtractErr(); err != nil && !openstack.IsNotFound(err) {
					return nil, fmt.Errorf("removing extra spec %s: %w", k, err)
				}
			}
		}
	}
	return a.Get(ctx, s, cur.ID)
}

func (actuator) Delete(ctx context.Context, s generic.Scope, res *flavors.Flavor) error {
	sc, err := nova(ctx, s)
	if err != nil {
		return err
	}
	return flavors.Delete(ctx, sc, res.ID).ExtractErr()
}

func (actuator) ID(res *flavors.Flavor) string { return res.ID }

func (actuator) Observe(f *kupenstackv1.Flavor, res *flavors.Flavor) (bool, string) {
	specs := maps.Clone(res.ExtraSpecs)
	delete(specs, ownerSpec)
	f.Status.Resource = &kupenstackv1.FlavorResourceStatus{
		Name: res.Name, Description: res.Description, VCPUs: res.VCPUs, RAMMiB: res.RAM, DiskGiB: res.Disk,
		EphemeralGiB: res.Ephemeral, SwapMiB: res.Swap, IsPublic: res.IsPublic, ExtraSpecs: specs,
	}
	return true, ""
}
