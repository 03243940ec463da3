package generic

import (
	"fmt"
	"slices"
	"strings"
)

// Change is one field in which an OpenStack resource differs from its object's spec.
type Change struct {
	// Field is the spec field's path as a user writes it, e.g. "spec.securityGroupRefs".
	Field string
	// Want and Have are the spec's value (references resolved to IDs) and OpenStack's, for logs
	// and tests. Never a secret: a kind compares secrets by a digest, or not at all.
	Want, Have string
	// Work marks what is not drift but work the spec still asks for, whatever OpenStack did: an
	// upload to retry, nodes that now match a selector. It is never counted or reported as a
	// change made outside KupenStack.
	Work bool
}

// Changes are what a kind's Diff found: empty when the resource matches the spec.
type Changes []Change

// Has says whether field is among the changes.
func (c Changes) Has(field string) bool {
	return slices.ContainsFunc(c, func(ch Change) bool { return ch.Field == field })
}

// Only says whether field is the one change: what an actuator can answer from the one call
// that makes it, without reading the resource again.
func (c Changes) Only(field string) bool { return len(c) == 1 && c[0].Field == field }

// Fields are the changed fields' paths, in the order Diff found them.
func (c Changes) Fields() []string {
	out := make([]string, 0, len(c))
	for _, ch := range c {
		out = append(out, ch.Field)
	}
	return out
}

// Drift are the changes made in OpenStack (not Work).
func (c Changes) Drift() Changes {
	return slices.DeleteFunc(slices.Clone(c), func(ch Change) bool { return ch.Work })
}

// String names the fields, for Events and conditions.
func (c Changes) String() string { return strings.Join(c.Fields(), ", ") }

// Diff collects a kind's Changes; its methods compare one field each. The zero value is ready.
type Diff struct{ changes Changes }

// Changes are the differences found so far.
func (d *Diff) Changes() Changes { return d.changes }

// Add records a change found by a comparison of the kind's own.
func (d *Diff) Add(field string, want, have any) {
	d.changes = append(d.changes, Change{Field: field, Want: fmt.Sprint(want), Have: fmt.Sprint(have)})
}

// AddWork records work the spec still asks for (see Change.Work).
func (d *Diff) AddWork(field string, want, have any) {
	d.changes = append(d.changes, Change{Field: field, Want: fmt.Sprint(want), Have: fmt.Sprint(have), Work: true})
}

// Value compares a field the spec always sets.
func Value[T comparable](d *Diff, field string, want, have T) {
	if want != have {
		d.Add(field, want, have)
	}
}

// Optional compares a field the spec may leave unset (nil): OpenStack's value is then its own
// default, or whatever an admin chose, and not drift.
func Optional[T comparable](d *Diff, field string, want *T, have T) {
	if want != nil && *want != have {
		d.Add(field, *want, have)
	}
}

// Set compares two lists as sets: order and repeats do not matter (tags, security groups).
func Set[T comparable](d *Diff, field string, want, have []T) {
	if !SameSet(want, have) {
		d.Add(field, want, have)
	}
}

// SameSet says whether a and b hold the same elements, in any order and with any repeats.
func SameSet[T comparable](a, b []T) bool {
	in := func(x []T) map[T]bool {
		m := make(map[T]bool, len(x))
		for _, v := range x {
			m[v] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	if len(ma) != len(mb) {
		return false
	}
	for v := range ma {
		if !mb[v] {
			return false
		}
	}
	return true
}

// Sequence compares two lists whose order matters (a server's networks, a route table's order
// where OpenStack keeps it).
func Sequence[T comparable](d *Diff, field string, want, have []T) {
	if !slices.Equal(want, have) {
		d.Add(field, want, have)
	}
}

// Map compares two string maps (metadata, properties), absent and empty alike.
func Map(d *Diff, field string, want, have map[string]string) {
	if len(want) != len(have) {
		d.Add(field, want, have)
		return
	}
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			d.Add(field, want, have)
			return
		}
	}
}
