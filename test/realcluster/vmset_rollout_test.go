package realcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// rolloutReplicas, rolloutMaxUnavailable: the set under traffic. With maxUnavailable 0 every
// member must keep answering until its replacement answers: minReadySeconds covers the time
// from ACTIVE to the guest's web server (a TCG boot), as a readiness delay would for a Pod.
const (
	rolloutReplicas       = 2
	rolloutMaxUnavailable = 0
	rolloutMinReady       = 45
)

// webSet is a VirtualMachineSet of web servers on the tenant's network, each serving the version
// its template's user data writes, and the two user data Secrets (v1, v2). It is created with the
// tenant's other objects, so its members boot while the first VM is checked.
func webSet(ns string) []client.Object {
	page := func(v string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-" + v, Namespace: ns}, StringData: map[string]string{
			// The guest makes /srv/www (its web root) only after the user data has run.
			"script": "#!/bin/sh\nmkdir -p /srv/www && echo " + v + " > /srv/www/version\n"}}
	}
	return []client.Object{page("v1"), page("v2"), &kupenstackv1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: kupenstackv1.VirtualMachineSetSpec{
			Replicas:        ptr.To[int32](rolloutReplicas),
			Selector:        metav1.LabelSelector{MatchLabels: webLabels},
			MinReadySeconds: rolloutMinReady,
			Strategy: kupenstackv1.VirtualMachineSetStrategy{Type: kupenstackv1.RollingUpdateStrategy,
				RollingUpdate: &kupenstackv1.RollingUpdateVirtualMachineSet{
					MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(rolloutMaxUnavailable))}},
			Template: kupenstackv1.VirtualMachineTemplate{Metadata: kupenstackv1.VirtualMachineTemplateMeta{Labels: map[string]kupenstackv1.LabelValue{"app": "web"}},
				Spec: kupenstackv1.VirtualMachineSpec{FlavorRef: "rc-nano", ImageRef: "guest", KeyPairRef: "key",
					UserData:          &kupenstackv1.SecretKeyRef{Name: "web-v1", Key: "script"},
					Networks:          []kupenstackv1.VirtualMachineNIC{{NetworkRef: "net"}},
					SecurityGroupRefs: []string{"web"}}},
		}}}
}

var webLabels = map[string]string{"app": "web"}

// vmSetRollout: the webSet rolls to a new template (another user data, which serves another
// version) while the probe, the tenant's first VM on the same network, asks every member for its
// version each second. First every member must answer v1 (VMs on one network reach each other);
// during the rollout the members answering never fall below replicas - maxUnavailable; the
// lowest count, the rollout's time and the probe's ticks are logged. The set is deleted with the
// namespace.
func vmSetRollout(ctx context.Context, t *testing.T, cl client.Client, ns string, probe *guestProbe) {
	t.Helper()
	set := &kupenstackv1.VirtualMachineSet{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, set); err != nil {
		t.Fatal(err)
	}
	labels := webLabels
	// answering asks every member with an address for /version: member name -> version.
	answering := func() (map[string]string, error) {
		var vms kupenstackv1.VirtualMachineList
		if err := cl.List(ctx, &vms, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
			return nil, err
		}
		var script strings.Builder
		for _, vm := range vms.Items {
			if r := vm.Status.Resource; r != nil && len(r.Addresses) > 0 {
				// timeout, not wget -T, which crashes busybox 1.35's wget (images/guest/rootfs/init).
				fmt.Fprintf(&script, "v=$(timeout 2 wget -q -Y off -O - http://%s/version 2>/dev/null) && echo %s $v; ", r.Addresses[0].Address, vm.Name)
			}
		}
		if script.Len() == 0 {
			return map[string]string{}, nil
		}
		// Members that do not answer are left out; the script's own status is that of the last one.
		out, err := probe.run(ctx, script.String(), 20*time.Second)
		if err != nil {
			return nil, err
		}
		got := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if name, v, ok := strings.Cut(l, " "); ok {
				got[name] = v
			}
		}
		return got, nil
	}
	countVersion := func(m map[string]string, v string) int {
		n := 0
		for _, got := range m {
			if got == v {
				n++
			}
		}
		return n
	}

	start := time.Now()
	if err := wait.PollUntilContextTimeout(ctx, 3*time.Second, 8*time.Minute, true, func(context.Context) (bool, error) {
		got, err := answering()
		return err == nil && countVersion(got, "v1") == rolloutReplicas, nil
	}); err != nil {
		got, _ := answering()
		t.Fatalf("set %s: %d members did not all answer v1: %v", set.Name, rolloutReplicas, got)
	}
	t.Logf("tenant: set of %d web servers answering: %s", rolloutReplicas, time.Since(start).Round(time.Second))

	// The rollout, under the probe.
	if err := cl.Get(ctx, client.ObjectKeyFromObject(set), set); err != nil {
		t.Fatal(err)
	}
	set.Spec.Template.Spec.UserData = &kupenstackv1.SecretKeyRef{Name: "web-v2", Key: "script"}
	if err := cl.Update(ctx, set); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	lowest, ticks, failedTicks := rolloutReplicas+1, 0, 0
	var lowestAt []string
	for {
		if ctx.Err() != nil || time.Since(start) > 15*time.Minute {
			got, _ := answering()
			t.Fatalf("rollout not done after %s: answering %v", time.Since(start).Round(time.Second), got)
		}
		got, err := answering()
		if err != nil {
			failedTicks++ // the probe's own trouble, not the set's: not counted as a member down
			time.Sleep(time.Second)
			continue
		}
		ticks++
		if len(got) < lowest {
			lowest = len(got)
			lowestAt = append(lowestAt, fmt.Sprintf("%s: %s", time.Since(start).Round(time.Second), describe(got)))
		}
		if countVersion(got, "v2") == rolloutReplicas && len(got) == rolloutReplicas {
			break
		}
		time.Sleep(time.Second)
	}
	t.Logf("tenant: rolled %d members to a new template under a probe each second: %s, %d ticks (%d the probe missed), lowest answering %d (replicas - maxUnavailable = %d); lows: %v",
		rolloutReplicas, time.Since(start).Round(time.Second), ticks, failedTicks, lowest, rolloutReplicas-rolloutMaxUnavailable, lowestAt)
	if lowest < rolloutReplicas-rolloutMaxUnavailable {
		t.Errorf("during the rollout only %d members answered, below replicas - maxUnavailable = %d: %v",
			lowest, rolloutReplicas-rolloutMaxUnavailable, lowestAt)
	}
}

// describe prints a member -> version map in a stable order.
func describe(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

// guestProbe runs shell scripts on a guest over SSH (root, the KeyPair's key, the host key its
// console printed), keeping one connection and dialing again after any failure.
type guestProbe struct {
	addr    string
	hostKey ssh.PublicKey
	signer  ssh.Signer
	client  *ssh.Client
}

func (p *guestProbe) Close() {
	if p.client != nil {
		p.client.Close()
		p.client = nil
	}
}

// run runs script and returns its output, whatever its exit status; a session that has not ended
// within d is given up (and the connection with it), so a stalled probe never stalls the test.
func (p *guestProbe) run(ctx context.Context, script string, d time.Duration) (string, error) {
	if p.client == nil {
		c, err := dialGuest(ctx, p.addr, p.hostKey, p.signer)
		if err != nil {
			return "", err
		}
		p.client = c
	}
	sess, err := p.client.NewSession()
	if err != nil {
		p.Close()
		return "", err
	}
	defer sess.Close()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := sess.Output(script)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		var exit *ssh.ExitError
		if r.err != nil && !errors.As(r.err, &exit) {
			p.Close()
			return "", r.err
		}
		return string(r.out), nil
	case <-time.After(d):
		p.Close()
		return "", fmt.Errorf("%s: the probe's session did not end within %s", p.addr, d)
	case <-ctx.Done():
		p.Close()
		return "", ctx.Err()
	}
}

// dialGuest is an SSH client to root@addr with signer, the guest offering hostKey.
func dialGuest(ctx context.Context, addr string, hostKey ssh.PublicKey, signer ssh.Signer) (*ssh.Client, error) {
	conn, err := externalDialer(10*time.Second).DialContext(ctx, "tcp", net.JoinHostPort(addr, "22"))
	if err != nil {
		return nil, err
	}
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(hostKey), HostKeyAlgorithms: []string{ssh.KeyAlgoED25519}, Timeout: 10 * time.Second})
	if err != nil {
		conn.Close()
		return nil, err
	}
	return ssh.NewClient(sc, chans, reqs), nil
}
