package generic

import (
	"context"
	"errors"
)

// errUnchanged is a legacy Update's "nothing changed".
var errUnchanged = errors.New("unchanged")

// LegacyActuator is an actuator from before Diff: its Update compares and changes in one, and
// InSync is the drift check's separate, weaker comparison. Legacy adapts one while the kinds move
// to Diff; it goes when the last kind has.
type LegacyActuator[O Object, R any] interface {
	Get(ctx context.Context, s Scope, id string) (*R, error)
	FindOwned(ctx context.Context, s Scope, obj O) (*R, error)
	FindImport(ctx context.Context, s Scope, obj O) (*R, error)
	Create(ctx context.Context, s Scope, obj O) (*R, error)
	Update(ctx context.Context, s Scope, obj O, res *R) (*R, bool, error)
	InSync(obj O, res *R) bool
	Delete(ctx context.Context, s Scope, res *R) error
	ID(res *R) string
	Observe(obj O, res *R) (ready bool, waiting string)
}

// Legacy adapts a LegacyActuator: its Diff always reports the whole spec in a reconcile pass (so
// that Update runs, as it did), and InSync's answer in the drift check.
func Legacy[O Object, R any](a LegacyActuator[O, R]) Actuator[O, R] { return legacy[O, R]{a} }

type legacy[O Object, R any] struct{ a LegacyActuator[O, R] }

// legacySpec is the one change a legacy actuator reports.
const legacySpec = "spec"

func (l legacy[O, R]) Get(ctx context.Context, s Scope, id string) (*R, error) {
	return l.a.Get(ctx, s, id)
}
func (l legacy[O, R]) FindOwned(ctx context.Context, s Scope, obj O) (*R, error) {
	return l.a.FindOwned(ctx, s, obj)
}
func (l legacy[O, R]) FindImport(ctx context.Context, s Scope, obj O) (*R, error) {
	return l.a.FindImport(ctx, s, obj)
}
func (l legacy[O, R]) Create(ctx context.Context, s Scope, obj O) (*R, error) {
	return l.a.Create(ctx, s, obj)
}
func (l legacy[O, R]) Delete(ctx context.Context, s Scope, res *R) error {
	return l.a.Delete(ctx, s, res)
}
func (l legacy[O, R]) ID(res *R) string                     { return l.a.ID(res) }
func (l legacy[O, R]) Observe(obj O, res *R) (bool, string) { return l.a.Observe(obj, res) }

func (l legacy[O, R]) Diff(s Scope, obj O, res *R) Changes {
	if !s.driftCheck || !l.a.InSync(obj, res) {
		return Changes{{Field: legacySpec}}
	}
	return nil
}

func (l legacy[O, R]) Update(ctx context.Context, s Scope, obj O, res *R, _ Changes) (*R, error) {
	updated, changed, err := l.a.Update(ctx, s, obj, res)
	if err == nil && !changed {
		return updated, errUnchanged
	}
	return updated, err
}
