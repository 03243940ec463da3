package virtualmachineset

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// member is what the planner needs to know of one VM of the set.
type member struct {
	name      string
	updated   bool // made from the current template
	ready     bool
	available bool // ready for minReadySeconds
	created   time.Time
}

// plan is what one pass does: create this many VMs of the current template and delete these.
type plan struct {
	create int
	delete []string
}

// bounds resolves maxSurge (rounded up) and maxUnavailable (rounded down) against replicas,
// defaulting both to 25%; both 0 would block every update, so unavailable becomes 1. A value
// admission would refuse (stored before admission checked it: "abc", "-5", "150%" for
// maxUnavailable) is an error naming the field, never quietly 0 or a negative bound.
func bounds(s kupenstackv1.VirtualMachineSetStrategy, replicas int) (surge, unavailable int, err error) {
	def := intstr.FromString("25%")
	maxSurge, maxUnavailable := &def, &def
	if ru := s.RollingUpdate; ru != nil {
		if ru.MaxSurge != nil {
			maxSurge = ru.MaxSurge
		}
		if ru.MaxUnavailable != nil {
			maxUnavailable = ru.MaxUnavailable
		}
	}
	if surge, err = scaled(maxSurge, replicas, true, maxSurgePercent); err != nil {
		return 0, 0, fmt.Errorf("spec.strategy.rollingUpdate.maxSurge: %w", err)
	}
	if unavailable, err = scaled(maxUnavailable, replicas, false, maxUnavailablePercent); err != nil {
		return 0, 0, fmt.Errorf("spec.strategy.rollingUpdate.maxUnavailable: %w", err)
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable, nil
}

// The bounds admission applies (the CRD's CEL rules): a number 0-1000, or a percentage up to
// 1000% for maxSurge and up to 100% for maxUnavailable.
const (
	maxBoundNumber        = 1000
	maxSurgePercent       = 1000
	maxUnavailablePercent = 100
)

// scaled resolves a number or a percentage of replicas, parsed as strictly as admission does:
// digits only, a trailing % for a percentage.
func scaled(v *intstr.IntOrString, replicas int, roundUp bool, maxPercent int) (int, error) {
	if v.Type == intstr.Int {
		n := v.IntValue()
		if n < 0 || n > maxBoundNumber {
			return 0, fmt.Errorf("%d is not a number from 0 to %d; correct it", n, maxBoundNumber)
		}
		return n, nil
	}
	digits, isPercent := strings.CutSuffix(v.StrVal, "%")
	pct, err := strconv.Atoi(digits)
	if !isPercent || err != nil || digits == "" || strings.TrimLeft(digits, "0123456789") != "" || pct > maxPercent {
		return 0, fmt.Errorf("%q is not a number from 0 to %d or a percentage from 0%% to %d%%; correct it",
			v.StrVal, maxBoundNumber, maxPercent)
	}
	f := float64(pct) * float64(replicas) / 100
	if roundUp {
		return int(math.Ceil(f)), nil
	}
	return int(math.Floor(f)), nil
}

// removalOrder sorts VMs to delete first: old before updated, unready before ready, newest first
// (the newest have done the least work and are the likeliest to be still starting).
func removalOrder(ms []member) {
	sort.SliceStable(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if a.updated != b.updated {
			return !a.updated
		}
		if a.ready != b.ready {
			return !a.ready
		}
		return a.created.After(b.created)
	})
}

// planFor computes one pass of the rollout state machine from the set's members. An invalid
// rolling-update bound is an error whatever the pass would do: the set then touches no member
// until the value is corrected.
func planFor(strategy kupenstackv1.VirtualMachineSetStrategy, replicas int, members []member) (plan, error) {
	var surge, maxUnavailable int
	if strategy.Type != kupenstackv1.RecreateStrategy {
		var err error
		if surge, maxUnavailable, err = bounds(strategy, replicas); err != nil {
			return plan{}, err
		}
	}
	var updated, old []member
	for _, m := range members {
		if m.updated {
			updated = append(updated, m)
		} else {
			old = append(old, m)
		}
	}
	var p plan
	if strategy.Type == kupenstackv1.RecreateStrategy {
		if len(old) > 0 { // every old VM goes before any new one is made
			for _, m := range old {
				p.delete = append(p.delete, m.name)
			}
			return p, nil
		}
		return scale(replicas, updated), nil
	}
	if len(old) == 0 {
		return scale(replicas, updated), nil
	}

	// Surge: new VMs up to replicas+surge in total.
	if room := replicas + surge - len(members); room > 0 {
		p.create = min(room, max(replicas-len(updated), 0))
	}
	// Unavailability: old VMs may go while at least replicas-maxUnavailable stay available;
	// unavailable old VMs go first, since they serve nothing.
	available := 0
	for _, m := range members {
		if m.available {
			available++
		}
	}
	removable := available - (replicas - maxUnavailable)
	removalOrder(old)
	for _, m := range old {
		switch {
		case !m.available:
			p.delete = append(p.delete, m.name)
		case removable > 0:
			p.delete = append(p.delete, m.name)
			removable--
		}
	}
	// Never go below replicas in total because of old VMs that were unavailable anyway: the
	// creations above make up for them.
	return p, nil
}

// scale keeps exactly replicas VMs of the current template.
func scale(replicas int, updated []member) plan {
	if len(updated) < replicas {
		return plan{create: replicas - len(updated)}
	}
	removalOrder(updated)
	var p plan
	for _, m := range updated[:len(updated)-replicas] {
		p.delete = append(p.delete, m.name)
	}
	return p
}
