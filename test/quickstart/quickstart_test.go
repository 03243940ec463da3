// Package quickstart tests hack/quickstart.sh's handling of the operator process (starting,
// restarting and stopping it) with a stand-in operator binary: the rest of the quickstart needs
// the all-in-one cloud and a cluster, and is run by hand (make quickstart-sim).
package quickstart

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// fakeOperator serves /readyz on --health-probe-bind-address, as the operator does, records its
// arguments, and runs until SIGTERM.
const fakeOperator = `package main

import (
	"net/http"
	"os"
	"strings"
)

func main() {
	probe := ""
	for i, a := range os.Args {
		if a == "--health-probe-bind-address" && i+1 < len(os.Args) {
			probe = os.Args[i+1]
		}
	}
	f, _ := os.OpenFile(os.Getenv("FAKE_OPERATOR_ARGS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	f.WriteString(strings.Join(os.Args[1:], " ") + "\n")
	f.Close()
	http.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })
	panic(http.ListenAndServe(probe, nil))
}
`

// quickstart runs script (bash) with hack/quickstart.sh sourced, its operator binary being
// root/bin/kupenstack and its state in state.
func quickstart(t *testing.T, root, state, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", `set -Eeuo pipefail
source "$QUICKSTART"
ROOT=$FAKE_ROOT OPERATOR=$FAKE_ROOT/bin/kupenstack KC=/dev/null
`+script)
	cmd.Env = append(os.Environ(), "QUICKSTART="+filepath.Join(testenv.RepoRoot(), "hack", "quickstart.sh"),
		"FAKE_ROOT="+root, "QUICKSTART_STATE_DIR="+state, "FAKE_OPERATOR_ARGS="+filepath.Join(state, "args"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

// installBinary puts the fake operator at root/bin/kupenstack the way go build does: the old file
// is removed and a new one written, so a process still running the old one sees it "(deleted)".
func installBinary(t *testing.T, built, root string) {
	t.Helper()
	data, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin", "kupenstack")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(bin)
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// running lists the pids of processes whose executable is a fake operator under dir (replaced
// binaries included).
func running(t *testing.T, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			if data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(data), ") Z ") {
				continue // a zombie: exited
			}
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestOperatorRestartedNotDuplicated: `make quickstart-sim` run again after the operator's code
// changed (its binary rebuilt), or from another checkout sharing the state directory, replaces
// the running operator instead of starting a second one beside it; `make quickstart-down` stops
// it; and the operator runs with leader election. Two operators without a leader reconcile every
// object twice, and once created two servers for one VM: the one nobody tracked kept its port and
// `make quickstart-down` hung on the subnet.
func TestOperatorRestartedNotDuplicated(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "ss", "setsid", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"main.go": fakeOperator, "go.mod": "module fakeoperator\n\ngo 1.22\n"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	built := filepath.Join(dir, "fake-operator")
	build := exec.Command("go", "build", "-o", built, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the fake operator: %v\n%s", err, out)
	}
	checkout, other, state := filepath.Join(dir, "checkout"), filepath.Join(dir, "other"), filepath.Join(dir, "state")
	t.Cleanup(func() {
		for _, pid := range running(t, dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	only := func(when string) int {
		t.Helper()
		pids := running(t, dir)
		if len(pids) != 1 {
			t.Fatalf("%s: %d operators running (%v), want 1", when, len(pids), pids)
		}
		return pids[0]
	}

	installBinary(t, built, checkout)
	quickstart(t, checkout, state, `mkdir -p "$LOGS"; operator`)
	first := only("after the first start")
	quickstart(t, checkout, state, `operator`)
	if only("after up again, binary unchanged") != first {
		t.Error("restarted although the binary did not change")
	}

	// The code changed: up rebuilds bin/kupenstack, and must restart the operator.
	installBinary(t, built, checkout)
	quickstart(t, checkout, state, `operator`)
	second := only("after up with a rebuilt binary")
	if second == first {
		t.Error("the operator was not restarted on its rebuilt binary")
	}

	// Another checkout's quickstart, same state directory: its operator replaces this one.
	installBinary(t, built, other)
	quickstart(t, other, state, `operator`)
	third := only("after up from another checkout")
	if exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(third), "exe")); !strings.HasPrefix(exe, other) {
		t.Errorf("the running operator is %s, want the other checkout's", exe)
	}

	// down, after yet another rebuild: the operator is stopped all the same.
	installBinary(t, built, other)
	quickstart(t, other, state, `stop_operator`)
	if pids := running(t, dir); len(pids) != 0 {
		t.Errorf("operators still running after stop_operator: %v", pids)
	}

	args, err := os.ReadFile(filepath.Join(state, "args"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(args)), "\n") {
		if !strings.Contains(line, "--leader-elect ") || !strings.Contains(line, "--leader-election-namespace kupenstack-system") {
			t.Errorf("operator started without leader election: %s", line)
		}
	}
}
