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
	"syscall"
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

// chartDataPaths are the charts' host paths that hold the cloud's data and can exist before the
// cluster (Debian's nova, glance and neutron packages, which the all-in-one installs, make their
// /var/lib directories): every entry below them, with its owner, group and mode, must be as found.
// hack/real-cluster.sh's CHART_DATA_PATHS.
var chartDataPaths = []string{"/var/lib/nova", "/var/lib/glance", "/var/lib/neutron", "/var/lib/libvirt",
	"/var/lib/openvswitch", "/var/log/libvirt", "/var/log/neutron", "/var/log/openvswitch", "/etc/libvirt",
	"/etc/openvswitch"}

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
	s["data paths"] = treeEntries(t, chartDataPaths)
	for k := range s {
		if k != "iptables-save" && k != "ip6tables-save" { // rule order matters there
			slices.Sort(s[k])
		}
	}
	return s
}

// treeEntries lists every entry below the roots that are directories, with its owner, group and
// mode.
func treeEntries(t *testing.T, roots []string) []string {
	t.Helper()
	var entries []string
	for _, root := range roots {
		if fi, err := os.Lstat(root); err != nil || !fi.IsDir() {
			continue
		}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // gone while walking
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			st := fi.Sys().(*syscall.Stat_t)
			entries = append(entries, fmt.Sprintf("%s %d:%d %o", path, st.Uid, st.Gid, st.Mode&0o7777))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return entries
}

// diff lists, per part, the lines only before has ("-") and only after has ("+").
func (before hostState) diff(after hostState) string {
	var out strings.Builder
	for _, k := range []string{"sysctl", "iptables-save", "ip6tables-save", "mounts", "links", "paths", "data paths"} {
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

// A file the cloud left in a data path that existed before it, or a mode it changed there, is a
// difference (the leak of 2026-12-01: nova's instances and glance's images in the Debian packages'
// directories, re-owned to 42424, which the comparison of the roots' direct children missed).
func TestTreeEntriesShowALeftFileAndAChangedMode(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "nova")
	if err := os.MkdirAll(filepath.Join(data, "instances"), 0o755); err != nil {
		t.Fatal(err)
	}
	roots := []string{data, filepath.Join(root, "absent")}
	before := hostState{"data paths": treeEntries(t, roots)}
	if len(before["data paths"]) != 2 {
		t.Fatalf("entries %q, want the root and instances", before["data paths"])
	}
	if d := before.diff(hostState{"data paths": treeEntries(t, roots)}); d != "" {
		t.Fatalf("an unchanged tree differs:\n%s", d)
	}
	if err := os.WriteFile(filepath.Join(data, "instances", "disk"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(data, 0o700); err != nil {
		t.Fatal(err)
	}
	d := before.diff(hostState{"data paths": treeEntries(t, roots)})
	for _, want := range []string{"+ " + filepath.Join(data, "instances", "disk") + " ", "- " + data + " ", "+ " + data + " "} {
		if !strings.Contains(d, want) {
			t.Errorf("the difference misses %q:\n%s", want, d)
		}
	}
}
