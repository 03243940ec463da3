// Package operator runs the real operator binary in tests, as a process of its own with only the
// permissions of its generated ClusterRole, so that tests can SIGKILL it at any moment.
package operator

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// User is the API server user the operator runs as.
const User = "kupenstack-operator"

// Process is the operator binary, started, killed and restarted by a test.
type Process struct {
	bin, kubeconfig, logPath string
	// Args are passed besides --kubeconfig at every start.
	Args []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when the running process has exited
	starts int
	// exits are the exits that Kill did not cause (crashes).
	exits []error
}

// New builds the operator, grants User the operator's ClusterRole and writes its kubeconfig. It
// does not start it. The test's cleanup kills it and, when the test failed, logs its log's end.
func New(t *testing.T, env *testenv.Env, args ...string) *Process {
	t.Helper()
	dir := t.TempDir()
	p := &Process{bin: filepath.Join(dir, "kupenstack"), kubeconfig: filepath.Join(dir, "kubeconfig"),
		logPath: filepath.Join(dir, "operator.log"), Args: args}
	build := exec.Command("go", "build", "-o", p.bin, "./cmd/kupenstack")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the operator: %v\n%s", err, out)
	}
	grantRole(t, env)
	kubeconfig, err := env.KubeConfig(User)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.kubeconfig, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("operator log (last 16 KiB, without start-up lines):\n%s", p.LogTail(16384))
		}
	})
	return p
}

// grantRole installs the operator's generated ClusterRole and binds it to User.
func grantRole(t *testing.T, env *testenv.Env) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &role); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "kupenstack-test-operator"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: User}}}
	for _, o := range []client.Object{&role, binding} {
		if err := env.Client.Create(env.Ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// Start runs the operator; its output is appended to its log.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.bin, append([]string{"--kubeconfig=" + p.kubeconfig}, p.Args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Should the test binary die, the operator dies with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return err
	}
	p.cmd = cmd
	p.starts++
	exited := make(chan struct{})
	p.exited = exited
	go func() {
		err := cmd.Wait()
		close(exited)
		_ = logFile.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.cmd == cmd { // not killed by the test
			p.exits = append(p.exits, fmt.Errorf("exited: %v", err))
			p.cmd = nil
		}
	}()
	return nil
}

// Kill SIGKILLs the operator: no cleanup of any kind runs.
func (p *Process) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		p.cmd = nil
	}
}

// Stop SIGTERMs the operator, as the kubelet does when its pod is deleted, and waits until it
// has exited (its graceful shutdown: in-flight reconciles see their context cancelled).
func (p *Process) Stop(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		t.Fatal("the operator did not exit within 2 minutes of SIGTERM")
	}
}

// Starts counts the starts so far.
func (p *Process) Starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// Crashed says how the operator exited by itself, if it did.
func (p *Process) Crashed() []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]error(nil), p.exits...)
}

// Log is the operator's whole log so far.
func (p *Process) Log() []byte {
	log, _ := os.ReadFile(p.logPath)
	return log
}

// LogTail is the end of the log without the manager's start-up lines, which every restart
// repeats.
func (p *Process) LogTail(n int) string {
	var out []byte
	for _, line := range bytes.Split(p.Log(), []byte("\n")) {
		if !bytes.Contains(line, []byte(`"msg":"Starting `)) {
			out = append(append(out, line...), '\n')
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return string(bytes.ToValidUTF8(out, []byte("?")))
}
