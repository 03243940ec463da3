package generic

import (
	"context"
	"time"
)

// Capabilities are what the engine can do with a kind beyond its Actuator. Each is optional: a
// kind's Setup lists the ones it has, so its file shows what the engine will do with it.
type Capabilities[O Object, R any] struct {
	// List lists every resource of the kind in the scope's project in one call. With it the kind
	// takes part in the list-based drift check (one call per project and period, not one per
	// object), and its objects get no per-object resync.
	List func(ctx context.Context, s Scope) ([]*R, error)
	// ListSince lists the resources changed at or after since, deleted ones included (Nova's
	// changes-since), or all when since is zero; at is when the cloud took the list, by its own
	// clock when it tells. With it the drift check runs often and still costs little: most polls
	// ask only for the changes, and the full List is made once per ResyncPeriod (see pollState).
	ListSince func(ctx context.Context, s Scope, since time.Time) (found []*R, at time.Time, err error)
	// SameListInEveryProject says that List returns the same in every project (Nova keeps key
	// pairs per user, and the operator is one user for every project): the drift check lists once
	// per period and checks every project against that list.
	SameListInEveryProject bool
	// Claims says whether res was made for obj, at now: a create still in flight when the
	// operator was SIGKILLed can land after the restarted operator made its own, and so can the
	// creates of two racing operators. The drift check hands Claims every resource of its list
	// that is no object's; one claimed besides the resource in the object's status is deleted by
	// the object's next pass (Event DeletingDuplicate). Where a resource cannot carry the owner tag
	// from its creation on, an untagged one may be claimed only once it is UntaggedGrace old.
	Claims func(obj O, res *R, now time.Time) bool
	// ListOwned lists every resource carrying obj's owner tag, those being deleted included.
	// Deletion deletes, and waits for, all of them before it removes the finalizer, so that a
	// resource made twice (see Claims) is nobody's for no longer than its object lives.
	ListOwned func(ctx context.Context, s Scope, obj O) ([]*R, error)
	// Deleting says whether OpenStack is deleting res already (a server in its deleting task):
	// deletion waits for it rather than asking again.
	Deleting func(res *R) bool
	// Heal replaces failed resources (VirtualMachine).
	Heal *Healing[O, R]
}

// Healing is how a kind's failed resources are replaced. The engine asks it what to do when a
// managed resource has failed or was deleted outside KupenStack.
type Healing[O Object, R any] struct {
	// Failure says why res has failed and needs replacing; "" when it has not.
	Failure func(obj O, res *R) string
	// Decide decides about a failure. When it says Replace, the engine deletes the failed
	// resource, calls the decision's Record and creates a new one.
	Decide func(obj O, failure string, now time.Time) HealDecision
}

// listed says whether the kind takes part in the list-based drift check.
func (c Capabilities[O, R]) listed() bool { return c.List != nil || c.ListSince != nil }
