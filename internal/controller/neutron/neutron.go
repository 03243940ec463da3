// Package neutron holds what the Neutron kinds (Network, Subnet, ...) share: tags, names and the
// search for a resource created for an object.
package neutron

import (
	"context"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// Client is the Neutron client of the scope's project.
func Client(ctx context.Context, s generic.Scope) (*gophercloud.ServiceClient, error) {
	return s.Clients.Network(ctx, s.ProjectID)
}

// Tags are the tags a resource should carry: the user's plus the owner tag, sorted.
func Tags(obj client.Object, user []kupenstackv1.NeutronTag) []string {
	out := []string{generic.OwnerTag(obj)}
	for _, t := range user {
		out = append(out, string(t))
	}
	slices.Sort(out)
	return out
}

// SyncTags replaces the tags of a resource when they differ. It returns the tags the resource
// carries afterwards (Neutron's answer, or have when they did not differ), so that an update
// that only set the tags (the one after every create) needs no second read of the resource.
func SyncTags(ctx context.Context, sc *gophercloud.ServiceClient, resourceType, id string, want, have []string) ([]string, error) {
	if generic.SameSet(want, have) {
		return have, nil
	}
	return attributestags.ReplaceAll(ctx, sc, resourceType, id, attributestags.ReplaceAllOpts{Tags: want}).Extract()
}

// UpdateTags is an Update's first step for a kind whose tags are its field "spec.tags": it sets
// the tags when that field changed (SyncTags), and says whether that was the only change (done).
// Then, as after every create, the tags call's answer completes cur and no read is needed: res is
// cur with those tags (withTags sets them on a copy). On an error, done is true and res is cur.
func UpdateTags[R any](ctx context.Context, sc *gophercloud.ServiceClient, resourceType, id string, want, have []string,
	cur *R, changes generic.Changes, withTags func(R, []string) R,
) (res *R, done bool, err error) {
	if !changes.Has("spec.tags") {
		return cur, false, nil
	}
	tags, err := SyncTags(ctx, sc, resourceType, id, want, have)
	if err != nil {
		return cur, true, err
	}
	if !changes.Only("spec.tags") {
		return cur, false, nil
	}
	tagged := withTags(*cur, tags)
	return &tagged, true, nil
}

// FindOwned returns the resource created for obj: the one carrying its owner tag or, since
// Zed's Neutron cannot tag in the create call, an untagged one named name (from ClaimableName;
// "" looks by the tag only) created after it.
func FindOwned[R any](obj client.Object, name string, list func(tag, name string) ([]R, error),
	tags func(*R) []string, createdAt func(*R) time.Time,
) (*R, error) {
	found, err := list(generic.OwnerTag(obj), "")
	if err != nil || len(found) > 0 || name == "" {
		return first(found), err
	}
	if found, err = list("", name); err != nil {
		return nil, err
	}
	for i := range found {
		if generic.MaybeOurs(obj, tags(&found[i]), createdAt(&found[i])) {
			return &found[i], nil
		}
	}
	return nil, nil
}

func first[R any](found []R) *R {
	if len(found) == 0 {
		return nil
	}
	return &found[0]
}

// Filter narrows a list call; empty fields do not filter.
type Filter struct{ ProjectID, Tags, Name string }

// API are one Neutron resource type's calls.
type API[R any] struct {
	GetFn     func(ctx context.Context, sc *gophercloud.ServiceClient, id string) (*R, error)
	ListFn    func(ctx context.Context, sc *gophercloud.ServiceClient, f Filter) ([]R, error)
	DeleteFn  func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error
	IDOf      func(*R) string
	TagsOf    func(*R) []string
	CreatedAt func(*R) time.Time
	// NameOf is the resource's name; nil for a type without one (floating IPs), whose resources
	// are then told apart by their owner tag only.
	NameOf func(*R) string
}

// Resource implements the actuator methods that are the same for every Neutron kind: reading,
// finding what was created for an object, importing, listing and deleting. A kind embeds it and
// adds Create, Diff, Update and Observe.
type Resource[O generic.Object, R any] struct {
	API    API[R]
	NameOf func(O) string
}

func (r Resource[O, R]) Get(ctx context.Context, s generic.Scope, id string) (*R, error) {
	sc, err := Client(ctx, s)
	if err != nil {
		return nil, err
	}
	return r.API.GetFn(ctx, sc, id)
}

func (r Resource[O, R]) list(ctx context.Context, s generic.Scope, f Filter) ([]R, error) {
	sc, err := Client(ctx, s)
	if err != nil {
		return nil, err
	}
	return r.API.ListFn(ctx, sc, f)
}

func (r Resource[O, R]) FindOwned(ctx context.Context, s generic.Scope, obj O) (*R, error) {
	return FindOwned(obj, r.claimableName(obj), r.byTagOrName(ctx, s), r.API.TagsOf, r.API.CreatedAt)
}

// ListOwned lists every resource made for obj (generic.OwnedLister); see Owned.
func (r Resource[O, R]) ListOwned(ctx context.Context, s generic.Scope, obj O) ([]*R, error) {
	return generic.Pointers(Owned(obj, r.claimableName(obj), r.byTagOrName(ctx, s), r.API.TagsOf, r.API.CreatedAt))
}

// byTagOrName is the project's list call that FindOwned and Owned filter by tag or by name.
func (r Resource[O, R]) byTagOrName(ctx context.Context, s generic.Scope) func(tag, name string) ([]R, error) {
	return func(tag, name string) ([]R, error) {
		return r.list(ctx, s, Filter{ProjectID: s.ProjectID, Tags: tag, Name: name})
	}
}

// Claims (generic.Claimer); see Claimed.
func (r Resource[O, R]) Claims(obj O, res *R, now time.Time) bool {
	resName := ""
	if r.API.NameOf != nil {
		resName = r.API.NameOf(res)
	}
	return Claimed(obj, r.claimableName(obj), resName, r.API.TagsOf(res), r.API.CreatedAt(res), now)
}

func (r Resource[O, R]) claimableName(obj O) string {
	if r.NameOf == nil || r.API.NameOf == nil {
		return ""
	}
	return ClaimableName(r.NameOf(obj))
}

// ClaimableName is the name an untagged resource must have to be taken for an object whose
// resources are named name: name itself, or "" (untagged ones are never the object's) for
// "default", the name Neutron gives a project's own security group.
func ClaimableName(name string) string {
	if name == "default" {
		return ""
	}
	return name
}

// Owned lists every resource made for obj, with list as in FindOwned: those carrying its owner
// tag and, when name is not "", untagged ones of that name made after obj. Zed's Neutron tags
// only after the create call, so a create still in flight when the operator was SIGKILLed can
// land, untagged, after the restarted operator made and tagged its own; deleting the object must
// take that one too (a port left behind blocks its subnet's and network's deletion).
func Owned[R any](obj client.Object, name string, list func(tag, name string) ([]R, error),
	tags func(*R) []string, createdAt func(*R) time.Time,
) ([]R, error) {
	found, err := list(generic.OwnerTag(obj), "")
	if err != nil || name == "" {
		return found, err
	}
	named, err := list("", name)
	if err != nil {
		return nil, err
	}
	for i := range named {
		if lateUntagged(obj, tags(&named[i]), createdAt(&named[i])) {
			found = append(found, named[i])
		}
	}
	return found, nil
}

// lateUntagged: a resource without tags, made after obj, which a create in flight at a crash
// may have left (see Owned).
func lateUntagged(obj client.Object, tags []string, created time.Time) bool {
	return len(tags) == 0 && generic.MaybeOurs(obj, nil, created)
}

// Claimed says whether a resource named resName, with tags, created at created, was made for obj
// (generic.Claimer): it carries obj's owner tag, or it is untagged, named name (from
// ClaimableName; "" never matches), made after obj and at least generic.UntaggedGrace old at now.
func Claimed(obj client.Object, name, resName string, tags []string, created, now time.Time) bool {
	if slices.Contains(tags, generic.OwnerTag(obj)) {
		return true
	}
	return name != "" && resName == name && lateUntagged(obj, tags, created) && now.Sub(created) >= generic.UntaggedGrace
}

// FindImport does not filter by project: an import may name anything the project can see, such
// as the cloud's shared external network.
func (r Resource[O, R]) FindImport(ctx context.Context, s generic.Scope, obj O) (*R, error) {
	return generic.FindImport(obj.GetManagedSpec().Import,
		func(id string) (*R, error) { return r.Get(ctx, s, id) },
		func(name string) ([]R, error) { return r.list(ctx, s, Filter{Name: name}) })
}

func (r Resource[O, R]) Delete(ctx context.Context, s generic.Scope, res *R) error {
	sc, err := Client(ctx, s)
	if err != nil {
		return err
	}
	return r.API.DeleteFn(ctx, sc, r.API.IDOf(res))
}

func (r Resource[O, R]) ID(res *R) string { return r.API.IDOf(res) }

// ListAll lists the project's resources of the kind in one call (for the drift check).
func (r Resource[O, R]) ListAll(ctx context.Context, s generic.Scope) ([]*R, error) {
	return generic.Pointers(r.list(ctx, s, Filter{ProjectID: s.ProjectID}))
}
