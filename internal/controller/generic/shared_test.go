package generic

import (
	"context"
	"errors"
	"testing"
	"time"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// userLister lists the same resources whatever the project, like Nova's key pairs.
type userLister struct {
	listingActuator
	calls []string // the project of each list call
	err   error
}

func (u *userLister) ListAll(_ context.Context, s Scope) ([]*string, error) {
	u.calls = append(u.calls, s.ProjectID)
	id := "kp-1"
	return []*string{&id}, u.err
}

// TestSharedListOncePerPeriod: the drift check of a kind whose list is the same in every project
// lists once per period for all the projects, a failed list included; any other kind lists once
// per project.
func TestSharedListOncePerPeriod(t *testing.T) {
	projects := []string{"p1", "p2", "p3"}
	period := func(rs *resyncer[*kupenstackv1.Subnet, string]) (errs int) {
		rs.round = nil // what once does at the start of a period
		for _, p := range projects {
			found, full, err := rs.list(context.Background(), p, time.Now())
			if err != nil {
				errs++
				continue
			}
			if len(found) != 1 || !full {
				t.Fatalf("project %s: %d found, full %v", p, len(found), full)
			}
		}
		return errs
	}
	newResyncer := func(l *userLister, shared bool) *resyncer[*kupenstackv1.Subnet, string] {
		return &resyncer[*kupenstackv1.Subnet, string]{r: &Reconciler[*kupenstackv1.Subnet, string]{Kind: Kind[*kupenstackv1.Subnet, string]{Name: "Shared",
			Can: Capabilities[*kupenstackv1.Subnet, string]{List: l.ListAll, SameListInEveryProject: shared}}},
			polls: map[string]pollState{}}
	}

	user := &userLister{}
	rs := newResyncer(user, true)
	period(rs)
	period(rs)
	if len(user.calls) != 2 {
		t.Errorf("shared: %d list calls in 2 periods of 3 projects (%v), want 2", len(user.calls), user.calls)
	}
	user.err = errors.New("nova down")
	if errs := period(rs); errs != 3 || len(user.calls) != 3 {
		t.Errorf("shared, failing: %d projects saw the error, %d calls in all; want 3 and 3", errs, len(user.calls))
	}

	own := &userLister{}
	period(newResyncer(own, false))
	if len(own.calls) != 3 {
		t.Errorf("not shared: %d list calls for 3 projects, want 3", len(own.calls))
	}
}
