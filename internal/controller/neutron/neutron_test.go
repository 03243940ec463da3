package neutron

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

type fakeRes struct {
	name    string
	tags    []string
	created time.Time
}

// TestClaims: which listed resources the drift check may take for a Port's duplicates.
func TestClaims(t *testing.T) {
	made := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	now := made.Add(10 * time.Minute)
	port := func(name string) *kupenstackv1.Port {
		return &kupenstackv1.Port{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "u1", CreationTimestamp: metav1.NewTime(made)}}
	}
	api := API[fakeRes]{
		TagsOf:    func(r *fakeRes) []string { return r.tags },
		CreatedAt: func(r *fakeRes) time.Time { return r.created },
		NameOf:    func(r *fakeRes) string { return r.name },
	}
	named := Resource[*kupenstackv1.Port, fakeRes]{API: api, NameOf: func(p *kupenstackv1.Port) string { return p.Name }}
	unnamedAPI := api
	unnamedAPI.NameOf = nil
	unnamed := Resource[*kupenstackv1.Port, fakeRes]{API: unnamedAPI}
	owner := generic.OwnerTag(port("p"))

	cases := []struct {
		name string
		r    Resource[*kupenstackv1.Port, fakeRes]
		obj  string
		res  fakeRes
		want bool
	}{
		{"owner tag", named, "p", fakeRes{name: "renamed", tags: []string{owner}, created: now}, true},
		{"owner tag, a type without names", unnamed, "p", fakeRes{tags: []string{"x", owner}, created: now}, true},
		{"another object's tag", named, "p", fakeRes{name: "p", tags: []string{"kupenstack-uid-u2"}, created: made}, false},
		{"a user's tag only", named, "p", fakeRes{name: "p", tags: []string{"mine"}, created: made}, false},
		{"untagged, same name, past the grace", named, "p", fakeRes{name: "p", created: now.Add(-generic.UntaggedGrace)}, true},
		{"untagged, same name, younger than the grace", named, "p", fakeRes{name: "p", created: now.Add(-generic.UntaggedGrace + time.Second)}, false},
		{"untagged, other name", named, "p", fakeRes{name: "q", created: made}, false},
		{"untagged, made long before the object", named, "p", fakeRes{name: "p", created: made.Add(-time.Hour)}, false},
		{"untagged, a type without names", unnamed, "p", fakeRes{created: made}, false},
		{"untagged \"default\" (Neutron's own security group)", named, "default", fakeRes{name: "default", created: made}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Claims(port(tc.obj), &tc.res, now); got != tc.want {
				t.Errorf("Claims = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFindOwnedWithoutAName: with no name to go by ("default", or a type without names) only the
// owner tag finds a resource; an empty name filter would list, and adopt from, every resource.
func TestFindOwnedWithoutAName(t *testing.T) {
	obj := &kupenstackv1.SecurityGroup{ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "u1", CreationTimestamp: metav1.Now()}}
	var byName []string
	list := func(tag, name string) ([]fakeRes, error) {
		if tag == "" {
			byName = append(byName, name)
			return []fakeRes{{name: "default", created: time.Now()}}, nil // Neutron's own group
		}
		return nil, nil
	}
	found, err := FindOwned(obj, ClaimableName(obj.Name), list,
		func(r *fakeRes) []string { return r.tags }, func(r *fakeRes) time.Time { return r.created })
	if err != nil || found != nil || len(byName) != 0 {
		t.Errorf("found %+v, err %v, name lists %q: want nothing, and no list by name", found, err, byName)
	}
}
