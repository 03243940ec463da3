package component

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

// repair restores objects of the judged revision deleted or changed by hand.
type repair struct {
	// objects names what is restored ("<kind> <name>", "<kind> <name>: <what>").
	objects []string
	// restart: other objects than the last repair's, or its hold-off is over; count afresh.
	restart bool
}

func (a repair) act(ctx context.Context, p *pass, o *observation) outcome {
	comp := p.comp
	what := strings.Join(a.objects, ", ")
	if a.restart {
		p.r.lastRepair, p.r.repairs, p.r.firstRepairAt = what, 0, time.Now()
	}
	// An upgrade to the same chart and values repairs both: Helm creates the objects of the
	// manifest that do not exist, and its three-way merge sets back what differs from it.
	repaired, err := p.helm.Upgrade(ctx, comp.Name, o.chart, o.values, o.labels, "kupenstack: restore "+what)
	countAction(p.r.Component, "repair", err)
	if err != nil {
		p.event(corev1.EventTypeWarning, "DriftRepairFailed", "Repair", "restoring %s: %v", what, err)
		return after(waitingPeriod, transient(err))
	}
	p.event(corev1.EventTypeNormal, "DriftRepaired", "Repair", "restored %s (revision %d)", what, repaired.Version)
	comp.Status.Revision = int32(repaired.Version)
	p.r.repairs++
	return after(deployingPeriod, conditions.State{Waiting: "restored " + what})
}
