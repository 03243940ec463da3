package component

import (
	"context"
	"time"

	"github.com/kupenstack/kupenstack/internal/controller/conditions"
)

// wait makes no Helm action: the component waits for something else (a dependency, the
// configuration, its workloads) and says what.
type wait struct {
	message string
	requeue time.Duration
	// phase, when set, is shown (not at once: no Helm action follows).
	phase string
	// ready keeps Ready as it was (a suspended component).
	ready bool
}

func (a wait) act(ctx context.Context, p *pass, _ *observation) outcome {
	if a.phase != "" {
		p.setPhase(ctx, a.phase, false)
	}
	return after(a.requeue, conditions.State{Ready: a.ready, Waiting: a.message})
}

// blocked makes no Helm action either: it reports an error that a human, a new configuration
// or time must clear (Degraded with reason).
type blocked struct {
	reason, message string
	requeue         time.Duration
	phase           string
	// lastError: the message is also the component's status.lastError.
	lastError bool
}

func (a blocked) act(ctx context.Context, p *pass, _ *observation) outcome {
	if a.phase != "" {
		p.setPhase(ctx, a.phase, false)
	}
	if a.lastError {
		p.comp.Status.LastError = a.message
	}
	return after(a.requeue, conditions.State{Reason: a.reason, Message: a.message})
}
