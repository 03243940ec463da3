package realcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kupenstack/kupenstack/internal/imagebuild"
)

// make test runs under a time budget (TEST_BUDGET, its end passed as deadlineEnv in Unix
// seconds): CI stops a run at 90 minutes and keeps nothing of it, and on two cores the real
// cluster's steps alone take 40-60 minutes, more on a slow or cold machine. A step that would not
// end before the deadline is skipped rather than started, said in the test's log and appended to
// skippedEnv's file, which make test prints at its end. Without deadlineEnv every step runs.
const (
	deadlineEnv = "KUPENSTACK_TEST_DEADLINE"
	skippedEnv  = "KUPENSTACK_TEST_SKIPPED"
)

// What the real cluster's steps take at most, measured on the slowest machines of the runs
// recorded in README.md (2026-11-27 to 2026-12-02), with a margin: a step is started only when
// it fits whole.
const (
	operatorChartNeeds = 10 * time.Minute // 7 min 25 s with the operator's image built cold (2026-12-06)
	realClusterNeeds   = 3 * time.Minute  // 55 s
	cloudInstallNeeds  = 22 * time.Minute // the cluster up, images imported, 12 components Ready: 10-16 min
	tenantNeeds        = 12 * time.Minute // 8 min 36 s - 10 min
	suiteOnCloudNeeds  = 16 * time.Minute // 11 min 37 s - 14 min 8 s
	oneSettingNeeds    = 5 * time.Minute  // 2 min 26 s - 3 min 26 s
	upgradeFaultsNeeds = 11 * time.Minute // 7 min 45 s - 9 min 4 s for both cases
	computeNodeNeeds   = 6 * time.Minute
	// The cloud deleted, the operator uninstalled, the cluster down and the host compared.
	cloudTeardownNeeds = 5 * time.Minute
	// An image of the whole cloud's that is not cached yet: 1-3 min each when built alone.
	imageBuildNeeds = 3 * time.Minute
)

// testBudget is make test's deadline as the real cluster's tests see it.
type testBudget struct {
	deadline time.Time // zero: no budget
	skipped  string    // the file skipped steps are appended to; may be empty
}

func parseBudget(deadline, skipped string) (testBudget, error) {
	if deadline == "" {
		return testBudget{}, nil
	}
	secs, err := strconv.ParseInt(deadline, 10, 64)
	if err != nil || secs <= 0 {
		return testBudget{}, fmt.Errorf("%s=%q: want the deadline in Unix seconds", deadlineEnv, deadline)
	}
	return testBudget{deadline: time.Unix(secs, 0), skipped: skipped}, nil
}

// fits tells whether need ends before the deadline, and how long is left.
func (b testBudget) fits(now time.Time, need time.Duration) (bool, time.Duration) {
	if b.deadline.IsZero() {
		return true, 0
	}
	left := b.deadline.Sub(now)
	return need <= left, left
}

// withinBudget says whether step, needing need (reserve included), may start. When it may not,
// the test's log and the skipped file say so; the caller leaves the step out.
func withinBudget(t *testing.T, step string, need time.Duration) bool {
	t.Helper()
	b, err := parseBudget(os.Getenv(deadlineEnv), os.Getenv(skippedEnv))
	if err != nil {
		t.Fatal(err)
	}
	ok, left := b.fits(time.Now(), need)
	if ok {
		return true
	}
	line := fmt.Sprintf("%s: %s: needs about %s, %s of make test's budget left",
		t.Name(), step, need.Round(time.Minute), left.Round(time.Second))
	t.Logf("TIME BUDGET: skipped %s", line)
	if b.skipped != "" {
		f, err := os.OpenFile(b.skipped, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := fmt.Fprintln(f, line); err != nil {
			t.Fatal(err)
		}
	}
	return false
}

// skipUnlessWithinBudget skips the whole test when it does not fit.
func skipUnlessWithinBudget(t *testing.T, need time.Duration) {
	t.Helper()
	if !withinBudget(t, "the whole test", need) {
		t.Skip("not started: make test's time budget would run out (see TIME BUDGET above)")
	}
}

// imagesNotCached counts the images among names that are not in the image cache: each is built
// when the test imports it.
func imagesNotCached(t *testing.T, root string, names []string) int {
	t.Helper()
	recipes, rel := releaseRecipes(t, root, "2025.1")
	dir, err := imagebuild.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	b := &imagebuild.Builder{RepoRoot: root, Release: rel, Cache: imagebuild.Cache{Dir: dir}}
	missing := 0
	for _, n := range names {
		r := recipes[n]
		if r == nil {
			t.Fatalf("no recipe for image %s", n)
		}
		rec, _, err := b.Cached(r)
		if err != nil {
			t.Fatal(err)
		}
		if rec == nil {
			missing++
		}
	}
	return missing
}

func TestParseBudget(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name, deadline string
		need           time.Duration
		wantErr        bool
		wantFits       bool
		wantLeft       time.Duration
	}{
		{name: "no budget: everything runs", deadline: "", need: 10 * time.Hour, wantFits: true},
		{name: "fits", deadline: "1800000600", need: 9 * time.Minute, wantFits: true, wantLeft: 10 * time.Minute},
		{name: "fits exactly", deadline: "1800000600", need: 10 * time.Minute, wantFits: true, wantLeft: 10 * time.Minute},
		{name: "does not fit", deadline: "1800000600", need: 11 * time.Minute, wantLeft: 10 * time.Minute},
		{name: "deadline passed", deadline: "1799999940", need: time.Second, wantLeft: -time.Minute},
		{name: "not a number", deadline: "80m", wantErr: true},
		{name: "zero", deadline: "0", wantErr: true},
		{name: "negative", deadline: "-5", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := parseBudget(tc.deadline, "")
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			fits, left := b.fits(now, tc.need)
			if fits != tc.wantFits || left != tc.wantLeft {
				t.Errorf("fits(%s) = %v, %s; want %v, %s", tc.need, fits, left, tc.wantFits, tc.wantLeft)
			}
		})
	}
}

func TestWithinBudgetRecordsSkippedStep(t *testing.T) {
	file := t.TempDir() + "/skipped.txt"
	t.Setenv(skippedEnv, file)
	t.Setenv(deadlineEnv, strconv.FormatInt(time.Now().Add(5*time.Minute).Unix(), 10))
	if !withinBudget(t, "a short step", time.Minute) {
		t.Error("a 1-minute step with 5 minutes left was not allowed")
	}
	if withinBudget(t, "a long step", time.Hour) {
		t.Error("a 1-hour step with 5 minutes left was allowed")
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := "TestWithinBudgetRecordsSkippedStep: a long step: needs about 1h0m0s, "
	if len(got) < len(want) || string(got[:len(want)]) != want {
		t.Errorf("skipped file = %q, want it to start with %q", got, want)
	}
}

// TestBudgetScript runs hack/budget.sh, make test's shell side of the budget, as make test does.
func TestBudgetScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hack/imagebuild")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	emptyCache := t.TempDir()
	in := func(d time.Duration) string { return strconv.FormatInt(time.Now().Add(d).Unix(), 10) }
	for _, tc := range []struct {
		name     string
		args     []string
		deadline string
		wantOut  string
		wantRC   int
		wantSkip bool // a line in the skipped file
	}{
		{name: "fits: no budget", args: []string{"fits", "600", "make fuzz"}},
		{name: "fits: room left", args: []string{"fits", "600", "make fuzz"}, deadline: in(time.Hour)},
		{name: "fits: no room", args: []string{"fits", "600", "make fuzz"}, deadline: in(5 * time.Minute),
			wantOut: "TIME BUDGET: skipped make fuzz: needs about 10 min", wantRC: 1, wantSkip: true},
		{name: "fits: bad deadline", args: []string{"fits", "600", "make fuzz"}, deadline: "80m", wantRC: 2},
		{name: "fits: bad seconds", args: []string{"fits", "ten", "make fuzz"}, wantRC: 2},
		{name: "leave to cloud: no budget", args: []string{"leave-to-cloud", "3780", "TestRealCluster"}, wantOut: "1"},
		{name: "leave to cloud: no whole cloud", args: []string{"leave-to-cloud", "3780", "TestRealCluster|TestOperatorChart"},
			deadline: in(2 * time.Hour)},
		{name: "leave to cloud: images not cached", args: []string{"leave-to-cloud", "3780", "TestRealCluster|TestWholeCloud"},
			deadline: in(2 * time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			skipped := filepath.Join(t.TempDir(), "skipped.txt")
			cmd := exec.Command(filepath.Join(root, "hack", "budget.sh"), tc.args...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), deadlineEnv+"="+tc.deadline, skippedEnv+"="+skipped,
				"KUPENSTACK_IMAGE_CACHE="+emptyCache)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			rc := 0
			if exit, ok := err.(*exec.ExitError); ok {
				rc = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if rc != tc.wantRC || !strings.HasPrefix(string(out), tc.wantOut) || (tc.wantOut == "" && len(out) > 0) {
				t.Errorf("budget.sh %v: exit %d, stdout %q; want exit %d, stdout starting %q (stderr: %s)",
					tc.args, rc, out, tc.wantRC, tc.wantOut, stderr.String())
			}
			_, statErr := os.Stat(skipped)
			if recorded := statErr == nil; recorded != tc.wantSkip {
				t.Errorf("skipped file written: %v, want %v", recorded, tc.wantSkip)
			}
		})
	}
}
