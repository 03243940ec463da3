package imagebuild

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// SmokeTimeout bounds one image's smoke test. The image prebuild runs niced beside make test's
// compiles and tests: on the 2-core machine at a load average near 20, nova's smoke test (its
// database migrations) passed 5 minutes and the image was not cached; quiet, it takes under one.
const SmokeTimeout = 12 * time.Minute

// SmokePorts is how many free 127.0.0.1 ports a smoke test gets (SMOKE_PORT1..N).
const SmokePorts = 4

// Smoke unpacks the image in archive under work and runs the recipe's smoke script in it, without
// a container engine: new mount, PID, IPC and UTS namespaces (unshare), a fresh /proc, /dev/shm
// and read-only /sys, and chroot into the image. The network is the host's: the script must
// listen on 127.0.0.1 and only on the SMOKE_PORT<n> ports it is given, which were free when
// picked. Every process dies with the namespace. work is removed afterwards.
func Smoke(ctx context.Context, r *Recipe, archive, work string, log io.Writer) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	rootfs := filepath.Join(work, "rootfs")
	defer func() {
		// A mount left under rootfs would make RemoveAll reach into the host's /dev or /proc.
		if mounted, err := hasMountUnder(rootfs); err != nil || mounted {
			fmt.Fprintf(log, "smoke: %s is still mounted (%v): left in place\n", rootfs, err)
			return
		}
		os.RemoveAll(work)
	}()
	img, err := ReadArchive(archive, filepath.Join(work, "layout"))
	if err != nil {
		return err
	}
	if err := Unpack(ctx, mutate.Extract(img), rootfs); err != nil {
		return err
	}
	if r.Go != nil {
		return smokeGo(ctx, r, rootfs, log)
	}
	if err := prepareRootfs(rootfs, r.Smoke); err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	// The image's own environment, as a runtime would give it.
	env := append(imageEnv(cf.Config.Env), "HOME=/root", "TERM=dumb")
	ports, err := freePorts(SmokePorts)
	if err != nil {
		return err
	}
	for i, port := range ports {
		env = append(env, fmt.Sprintf("SMOKE_PORT%d=%d", i+1, port))
	}
	ctx, cancel := context.WithTimeout(ctx, SmokeTimeout)
	defer cancel()
	// $0 is the root file system; mounts are made inside the new mount namespace only.
	inner := `set -e
mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$0/dev/shm"
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$0/sys"
exec chroot "$0" /usr/bin/env -i "$@" /kupenstack-smoke.sh`
	args := append([]string{"--mount", "--propagation", "private", "--pid", "--ipc", "--uts", "--fork", "--kill-child",
		"--mount-proc=" + filepath.Join(rootfs, "proc"), "/bin/sh", "-c", inner, rootfs}, env...)
	cmd := exec.CommandContext(ctx, "unshare", args...)
	var tail tailBuffer
	out := io.MultiWriter(log, &tail)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err = cmd.Run()
	fmt.Fprintf(log, "smoke %s: %s in %.1fs\n", r.Name, result(err), time.Since(start).Seconds())
	if ctx.Err() != nil {
		return fmt.Errorf("timed out after %s; last output:\n%s", SmokeTimeout, tail.String())
	}
	if err != nil {
		return fmt.Errorf("%w; last output:\n%s", err, tail.String())
	}
	return nil
}

func result(err error) string {
	if err != nil {
		return "FAIL (" + err.Error() + ")"
	}
	return "ok"
}

// Unpack extracts an image's file system stream into dir with GNU tar, as root, keeping owners,
// modes and hard links.
func Unpack(ctx context.Context, stream io.ReadCloser, dir string) error {
	defer stream.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "tar", "-x", "--numeric-owner", "--same-owner", "--same-permissions", "-C", dir)
	cmd.Stdin = stream
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("unpack: %w: %s", err, out)
	}
	return nil
}

// prepareRootfs adds what a runtime would provide (device nodes, /etc/hosts) and the script.
func prepareRootfs(rootfs, script string) error {
	dev := filepath.Join(rootfs, "dev")
	for _, d := range []string{dev, filepath.Join(dev, "shm"), filepath.Join(dev, "pts"), filepath.Join(rootfs, "proc"), filepath.Join(rootfs, "sys")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	nodes := []struct {
		name         string
		major, minor uint32
	}{{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0}}
	for _, n := range nodes {
		p := filepath.Join(dev, n.name)
		os.Remove(p)
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, int(n.major<<8|n.minor)); err != nil {
			return fmt.Errorf("mknod %s: %w", p, err)
		}
		if err := os.Chmod(p, 0o666); err != nil {
			return err
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		os.Remove(filepath.Join(dev, name))
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return err
		}
	}
	hosts := "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
	if err := os.WriteFile(filepath.Join(rootfs, "etc", "hosts"), []byte(hosts), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(rootfs, "kupenstack-smoke.sh"), []byte(script), 0o755)
}

// freePorts are n distinct TCP ports on 127.0.0.1 that nothing listens on now.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// hasMountUnder reports whether anything is mounted at or below dir.
func hasMountUnder(dir string) (bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			return true, nil
		}
	}
	return false, s.Err()
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(bytes.TrimSpace(t.b)) }
