package depcheck

import (
	"context"
	"time"
)

// Logger is the little the resolver needs to say what it waits for.
type Logger interface {
	Printf(format string, args ...any)
}

// Resolve checks every dependency each interval until all are satisfied (nil) or ctx ends (its
// error). A still-waiting dependency is logged when what it waits for changes, and again every
// repeat so a stuck init container keeps saying why.
func Resolve(ctx context.Context, e *Env, deps []Dependency, interval, repeat time.Duration, log Logger) error {
	type state struct {
		dep    Dependency
		last   string
		logged time.Time
	}
	pending := make([]*state, 0, len(deps))
	for _, d := range deps {
		log.Printf("waiting for %s", d)
		pending = append(pending, &state{dep: d})
	}
	for {
		still := pending[:0]
		for _, s := range pending {
			waiting, err := s.dep.Check(ctx, e)
			if err == nil && waiting == "" {
				log.Printf("resolved: %s", s.dep)
				continue
			}
			msg := "waiting for " + s.dep.String() + ": " + waiting
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				msg = "checking " + s.dep.String() + " failed (retrying): " + err.Error()
			}
			if msg != s.last || time.Since(s.logged) >= repeat {
				log.Printf("%s", msg)
				s.last, s.logged = msg, time.Now()
			}
			still = append(still, s)
		}
		pending = still
		if len(pending) == 0 {
			return nil
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
