package virtualmachineset

import (
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
// defaulting both to 25%; both 0 would block every update, so unavailable becomes 1.
func bounds(s kupenstackv1.VirtualMachineSetStrategy, replicas int) (surge, unavailable int) {
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
	surge = scaled(maxSurge, replicas, true)
	unavailable = scaled(maxUnavailable, replicas, false)
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable
}

func scaled(v *intstr.IntOrString, replicas int, roundUp bool) int {
	if v.Type == intstr.Int {
		return v.IntValue()
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if err != nil {
		return 0
	}
	f := float64(pct) * float64(replicas) / 100
	if roundUp {
		return int(math.Ceil(f))
	}
	return int(math.Floor(f))
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

// planFor computes one pass of the rollout state machine from the set's members.
func planFor(strategy kupenstackv1.VirtualMachineSetStrategy, replicas int, members []member) plan {
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
			return p
		}
		return scale(replicas, updated)
	}
	if len(old) == 0 {
		return scale(replicas, updated)
	}

	surge, maxUnavailable := bounds(strategy, replicas)
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
	return p
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
