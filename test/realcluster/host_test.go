package realcluster

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// hostState is what `down` must leave as `up` found it, each part normalised to sorted or ordered
// lines so that two states compare line by line.
type hostState map[string][]string

// volatileSysctl matches kernel counters and triggers that change on their own.
var volatileSysctl = regexp.MustCompile(`^(fs/(dentry-state|file-nr|inode-nr|inode-state)|fs/quota/|` +
	`kernel/(ns_last_pid|random/|pty/nr)|net/netfilter/nf_conntrack_count|vm/(drop_caches|compact_memory)|` +
	`net/ipv[46]/route/flush|kernel/init_private_)`)

// counters strips packet/byte counters from iptables-save output ("[12:345]").
var counters = regexp.MustCompile(`\[\d+:\d+\]`)

// peerGroup drops the numbers of mount propagation groups (shared:12 -> shared).
var peerGroup = regexp.MustCompile(`^(shared|master|propagate_from):\d+$`)

// hostPathRoots: new entries directly below these are host paths the cluster created.
var hostPathRoots = []string{"/", "/etc", "/run", "/opt", "/var/lib", "/var/log"}

// keptState is where the scripts keep what is meant to outlive a cluster (its imported images,
// the all-in-one's state), as the packages they install stay: created by the first run on a
// machine, it is no leftover.
const keptState = "/var/lib/kupenstack"

func snapshotHost(t *testing.T) hostState {
	t.Helper()
	s := hostState{}
	// Kernel tunables, as `sysctl -a` shows them, minus the volatile counters.
	err := filepath.WalkDir("/proc/sys", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		key := strings.TrimPrefix(path, "/proc/sys/")
		if volatileSysctl.MatchString(key) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil // write-only or permission-restricted
		}
		s["sysctl"] = append(s["sysctl"], strings.ReplaceAll(key, "/", ".")+" = "+strings.TrimSpace(string(b)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"iptables-save", "ip6tables-save"} {
		for _, l := range lines(t, cmd) {
			if !strings.HasPrefix(l, "#") {
				s[cmd] = append(s[cmd], counters.ReplaceAllString(l, "[0:0]"))
			}
		}
	}
	// Mounts: mount point, root, options, propagation, type, source, super options; no IDs.
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(mi)), "\n") {
		f := strings.Fields(l)
		sep := slices.Index(f, "-")
		if sep < 6 {
			t.Fatalf("mountinfo line %q", l)
		}
		opt := []string{}
		for _, o := range f[6:sep] {
			opt = append(opt, peerGroup.ReplaceAllString(o, "$1"))
		}
		if strings.HasPrefix(f[4], "/tmp/") {
			continue // never the cluster's; other work (image builds in a chroot) mounts there
		}
		s["mounts"] = append(s["mounts"], strings.Join(append(append([]string{f[4], f[3], f[5]}, opt...), f[sep+1:]...), " "))
	}
	s["links"] = lines(t, "ip", "-o", "link")
	for _, root := range hostPathRoots {
		entries, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if p := filepath.Join(root, e.Name()); p != keptState {
				s["paths"] = append(s["paths"], p)
			}
		}
	}
	for k := range s {
		if k != "iptables-save" && k != "ip6tables-save" { // rule order matters there
			slices.Sort(s[k])
		}
	}
	return s
}

// diff lists, per part, the lines only before has ("-") and only after has ("+").
func (before hostState) diff(after hostState) string {
	var out strings.Builder
	for _, k := range []string{"sysctl", "iptables-save", "ip6tables-save", "mounts", "links", "paths"} {
		b, a := before[k], after[k]
		if slices.Equal(a, b) {
			continue
		}
		fmt.Fprintf(&out, "%s:\n", k)
		n := 0
		for _, l := range b {
			if !slices.Contains(a, l) {
				fmt.Fprintf(&out, "  - %s\n", l)
				n++
			}
		}
		for _, l := range a {
			if !slices.Contains(b, l) {
				fmt.Fprintf(&out, "  + %s\n", l)
				n++
			}
		}
		if n == 0 {
			fmt.Fprintf(&out, "  (the same lines in another order or number)\n")
		}
	}
	return out.String()
}

func lines(t *testing.T, name string, args ...string) []string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, stderr.String())
	}
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n")
}
