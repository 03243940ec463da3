package virtualmachineset

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		surge, unavailable *intstr.IntOrString
		replicas           int
		wantS, wantU       int
	}{
		{nil, nil, 4, 1, 1},
		{nil, nil, 10, 3, 2}, // surge rounds up, unavailable down
		{ptr(intstr.FromInt32(0)), ptr(intstr.FromInt32(0)), 3, 0, 1},
		{ptr(intstr.FromInt32(2)), ptr(intstr.FromString("50%")), 5, 2, 2},
		{ptr(intstr.FromString("100%")), ptr(intstr.FromInt32(0)), 3, 3, 0},
	} {
		s := kupenstackv1.VirtualMachineSetStrategy{RollingUpdate: &kupenstackv1.RollingUpdateVirtualMachineSet{MaxSurge: tc.surge, MaxUnavailable: tc.unavailable}}
		if s2, u, err := bounds(s, tc.replicas); err != nil || s2 != tc.wantS || u != tc.wantU {
			t.Errorf("bounds(%v, %v, %d) = %d, %d, %v; want %d, %d", tc.surge, tc.unavailable, tc.replicas, s2, u, err, tc.wantS, tc.wantU)
		}
	}
}

// TestBoundsRefuseBadValues: values admission refuses, stored before it checked them, used to
// become 0 ("abc") or a negative bound ("-5", -5): an error naming the field now, like admission.
func TestBoundsRefuseBadValues(t *testing.T) {
	str, num := intstr.FromString, func(n int32) intstr.IntOrString { return intstr.FromInt32(n) }
	for _, tc := range []struct {
		surge, unavailable intstr.IntOrString
		wantErr            string // "" = valid
	}{
		{str("abc"), num(1), `maxSurge: "abc" is not a number from 0 to 1000 or a percentage from 0% to 1000%`},
		{num(1), str("abc"), `maxUnavailable: "abc" is not a number from 0 to 1000 or a percentage from 0% to 100%`},
		{str("-5"), num(1), `maxSurge: "-5" is not`},
		{str("-5%"), num(1), `maxSurge: "-5%" is not`},
		{str("+5%"), num(1), `maxSurge: "+5%" is not`},
		{num(-5), num(1), "maxSurge: -5 is not a number from 0 to 1000"},
		{num(1), num(-1), "maxUnavailable: -1 is not a number from 0 to 1000"},
		{num(1001), num(1), "maxSurge: 1001 is not"},
		{str("5"), num(1), `maxSurge: "5" is not`}, // a string without % is neither
		{str("%"), num(1), `maxSurge: "%" is not`},
		{str(""), num(1), `maxSurge: "" is not`},
		{str(" 5%"), num(1), `maxSurge: " 5%" is not`},
		{str("5.5%"), num(1), `maxSurge: "5.5%" is not`},
		{str("99999999999999999999%"), num(1), `maxSurge: "99999999999999999999%" is not`},
		{num(1), str("150%"), `maxUnavailable: "150%" is not a number from 0 to 1000 or a percentage from 0% to 100%`},
		{str("1001%"), num(1), `maxSurge: "1001%" is not`},
		{str("150%"), num(1), ""}, // a surge may be above 100%
		{str("1000%"), str("100%"), ""},
		{num(1000), num(0), ""},
		{str("0%"), num(1), ""},
	} {
		s := kupenstackv1.VirtualMachineSetStrategy{Type: kupenstackv1.RollingUpdateStrategy, RollingUpdate: &kupenstackv1.RollingUpdateVirtualMachineSet{
			MaxSurge: ptr(tc.surge), MaxUnavailable: ptr(tc.unavailable)}}
		surge, unavailable, err := bounds(s, 4)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("bounds(%v, %v): %v", tc.surge.String(), tc.unavailable.String(), err)
		case tc.wantErr == "":
		case err == nil:
			t.Errorf("bounds(%v, %v) = %d, %d; want an error", tc.surge.String(), tc.unavailable.String(), surge, unavailable)
		case !strings.Contains(err.Error(), "spec.strategy.rollingUpdate."+tc.wantErr):
			t.Errorf("bounds(%v, %v): %q; want it to contain %q", tc.surge.String(), tc.unavailable.String(), err, tc.wantErr)
		}
		// The plan refuses too, whatever the pass would have done (here: scale up an empty set).
		if _, err := planFor(s, 3, nil); (err == nil) != (tc.wantErr == "") {
			t.Errorf("planFor with (%v, %v): error %v", tc.surge.String(), tc.unavailable.String(), err)
		}
	}
	// Recreate does not use the bounds: a stale rollingUpdate does not stop it.
	recreate := kupenstackv1.VirtualMachineSetStrategy{Type: kupenstackv1.RecreateStrategy,
		RollingUpdate: &kupenstackv1.RollingUpdateVirtualMachineSet{MaxSurge: ptr(str("abc"))}}
	if p, err := planFor(recreate, 2, nil); err != nil || p.create != 2 {
		t.Errorf("Recreate with a stale maxSurge: %+v, %v", p, err)
	}
}

func ptr[T any](v T) *T { return &v }

// members builds a set: o = old available, u = old unavailable, N = new available, n = new
// not yet available; created one second apart in order.
func members(spec string) []member {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var out []member
	for i, c := range spec {
		m := member{name: fmt.Sprintf("%c%d", c, i), created: base.Add(time.Duration(i) * time.Second)}
		m.updated = c == 'N' || c == 'n'
		m.available = c == 'o' || c == 'N'
		m.ready = m.available
		out = append(out, m)
	}
	return out
}

// TestPlan is the rollout state machine, one pass at a time.
func TestPlan(t *testing.T) {
	rolling := func(surge, unavailable int32) kupenstackv1.VirtualMachineSetStrategy {
		return kupenstackv1.VirtualMachineSetStrategy{Type: kupenstackv1.RollingUpdateStrategy, RollingUpdate: &kupenstackv1.RollingUpdateVirtualMachineSet{
			MaxSurge: ptr(intstr.FromInt32(surge)), MaxUnavailable: ptr(intstr.FromInt32(unavailable))}}
	}
	recreate := kupenstackv1.VirtualMachineSetStrategy{Type: kupenstackv1.RecreateStrategy}
	for _, tc := range []struct {
		name     string
		strategy kupenstackv1.VirtualMachineSetStrategy
		replicas int
		members  string
		create   int
		delete   []string
	}{
		{"empty set scales up", rolling(1, 0), 3, "", 3, nil},
		{"steady", rolling(1, 0), 3, "NNN", 0, nil},
		{"scale down removes the unready, then the newest", rolling(1, 0), 2, "NnNN", 0, []string{"n1", "N3"}},
		{"scale to zero", rolling(1, 0), 0, "NN", 0, []string{"N1", "N0"}},
		{"surge 1, unavailable 0: one new first", rolling(1, 0), 3, "ooo", 1, nil},
		{"surge 1, unavailable 0: old goes once the new is available", rolling(1, 0), 3, "oooN", 0, []string{"o2"}},
		{"surge 1, unavailable 0: new not yet available, nothing goes", rolling(1, 0), 3, "ooon", 0, nil},
		{"surge 0, unavailable 1: an old goes first", rolling(0, 1), 3, "ooo", 0, []string{"o2"}},
		{"surge 0, unavailable 1: then a new comes", rolling(0, 1), 3, "oo", 1, nil},
		{"surge 0, unavailable 1: wait for the new", rolling(0, 1), 3, "oon", 0, nil},
		{"unavailable old VMs go at once", rolling(1, 0), 3, "ouu", 1, []string{"u2", "u1"}},
		{"surge 2, unavailable 1", rolling(2, 1), 4, "oooo", 2, []string{"o3"}},
		{"recreate: old first", recreate, 2, "ooN", 0, []string{"o0", "o1"}},
		{"recreate: then new", recreate, 2, "N", 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := planFor(tc.strategy, tc.replicas, members(tc.members))
			if err != nil {
				t.Fatal(err)
			}
			if p.create != tc.create || !slices.Equal(p.delete, tc.delete) {
				t.Errorf("plan = create %d delete %v; want create %d delete %v", p.create, p.delete, tc.create, tc.delete)
			}
		})
	}
}

// TestRollingUpdateConverges runs the state machine to the end, with every new VM becoming
// available at once, and checks the bounds at every step.
func TestRollingUpdateConverges(t *testing.T) {
	for _, tc := range []struct{ surge, unavailable int32 }{{1, 0}, {0, 1}, {2, 2}, {1, 1}} {
		s := kupenstackv1.VirtualMachineSetStrategy{Type: kupenstackv1.RollingUpdateStrategy, RollingUpdate: &kupenstackv1.RollingUpdateVirtualMachineSet{
			MaxSurge: ptr(intstr.FromInt32(tc.surge)), MaxUnavailable: ptr(intstr.FromInt32(tc.unavailable))}}
		const replicas = 5
		ms := members("ooooo")
		for step := 0; ; step++ {
			if step > 50 {
				t.Fatalf("surge %d unavailable %d: no convergence: %+v", tc.surge, tc.unavailable, ms)
			}
			for i := range ms {
				ms[i].available, ms[i].ready = true, true // whatever was starting is now available
			}
			p, err := planFor(s, replicas, ms)
			if err != nil {
				t.Fatal(err)
			}
			if p.create == 0 && len(p.delete) == 0 {
				break
			}
			var next []member
			for _, m := range ms {
				if !slices.Contains(p.delete, m.name) {
					next = append(next, m)
				}
			}
			avail := len(next)
			for i := range p.create {
				next = append(next, member{name: fmt.Sprintf("s%d-%d", step, i), updated: true})
			}
			if len(next) > replicas+int(tc.surge) {
				t.Fatalf("surge %d: %d VMs at step %d", tc.surge, len(next), step)
			}
			if avail < replicas-int(tc.unavailable) {
				t.Fatalf("unavailable %d: only %d available at step %d", tc.unavailable, avail, step)
			}
			ms = next
		}
		for _, m := range ms {
			if !m.updated {
				t.Fatalf("surge %d unavailable %d: old VM %s left: %+v", tc.surge, tc.unavailable, m.name, ms)
			}
		}
		if len(ms) != replicas {
			t.Fatalf("%d VMs at the end", len(ms))
		}
	}
}
