package depcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeDep answers from a script, one answer per check; the last repeats.
type fakeDep struct {
	name    string
	mu      sync.Mutex
	answers []fakeAnswer
}

type fakeAnswer struct {
	waiting string
	err     error
}

func (f *fakeDep) String() string { return f.name }

func (f *fakeDep) Check(context.Context, *Env) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.answers[0]
	if len(f.answers) > 1 {
		f.answers = f.answers[1:]
	}
	return a.waiting, a.err
}

type lines struct{ l []string }

func (l *lines) Printf(format string, args ...any) { l.l = append(l.l, fmt.Sprintf(format, args...)) }

func TestResolveLogsChangesOnly(t *testing.T) {
	a := &fakeDep{name: "A", answers: []fakeAnswer{{waiting: "x"}, {waiting: "x"}, {waiting: "x"}, {err: errors.New("boom")}, {waiting: "y"}, {}}}
	b := &fakeDep{name: "B", answers: []fakeAnswer{{}}}
	var log lines
	if err := Resolve(context.Background(), nil, []Dependency{a, b}, time.Millisecond, time.Hour, &log); err != nil {
		t.Fatal(err)
	}
	want := []string{"waiting for A", "waiting for B",
		"waiting for A: x", "resolved: B", "checking A failed (retrying): boom", "waiting for A: y", "resolved: A"}
	if got := strings.Join(log.l, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("log\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

func TestResolveStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	a := &fakeDep{name: "A", answers: []fakeAnswer{{waiting: "never"}}}
	var log lines
	if err := Resolve(ctx, nil, []Dependency{a}, 5*time.Millisecond, 10*time.Millisecond, &log); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's error", err)
	}
	// The same wait is repeated every log-repeat period, not every poll.
	n := strings.Count(strings.Join(log.l, "\n"), "waiting for A: never")
	if n < 2 || n > 7 {
		t.Errorf("the unchanged wait was logged %d times in 50ms with a 10ms repeat, want 2..7", n)
	}
}
