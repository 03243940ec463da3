package realcluster

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// The rolling update under traffic: a set of web servers, replaced one at a time.
const (
	rolloutReplicas       = 2
	rolloutMaxUnavailable = 0
	rolloutMaxSurge       = 1
	// rolloutMinReady is how long a new member must be Ready before it counts as available, so
	// before an old one goes: the guest's web server starts a few seconds after Nova's ACTIVE.
	rolloutMinReady = 20
)

// webSet is a VirtualMachineSet of guests serving their hostname on port 80, on the tenant's
// network, replaced one at a time with never fewer than rolloutReplicas available.
func webSet(ns, flavor string) *kupenstackv1.VirtualMachineSet {
	labels := map[string]string{"app": "web"}
	return &kupenstackv1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: kupenstackv1.VirtualMachineSetSpec{
		Replicas: ptr.To(int32(rolloutReplicas)),
		Selector: kupenstackv1.LabelSelector{MatchLabels: labels},
		Template: kupenstackv1.VirtualMachineTemplate{
			Metadata: kupenstackv1.VirtualMachineTemplateMeta{Labels: map[string]kupenstackv1.LabelValue{"app": "web"}},
			Spec: kupenstackv1.VirtualMachineSpec{FlavorRef: flavor, ImageRef: "guest",
				Networks:          []kupenstackv1.VirtualMachineNIC{{NetworkRef: "net"}},
				SecurityGroupRefs: []string{"web"},
				Metadata:          map[string]string{"revision": "1"}},
		},
		Strategy: kupenstackv1.VirtualMachineSetStrategy{Type: kupenstackv1.RollingUpdateStrategy,
			RollingUpdate: &kupenstackv1.RollingUpdateVirtualMachineSet{
				MaxSurge:       ptr.To(intstr.FromInt32(rolloutMaxSurge)),
				MaxUnavailable: ptr.To(intstr.FromInt32(rolloutMaxUnavailable))}},
		MinReadySeconds: rolloutMinReady,
	}}
}

// setMembers are the set's VMs that have a fixed address, by VM name.
func setMembers(ctx context.Context, cl client.Client, set *kupenstackv1.VirtualMachineSet) (map[string]string, error) {
	var vms kupenstackv1.VirtualMachineList
	if err := cl.List(ctx, &vms, client.InNamespace(set.Namespace)); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, vm := range vms.Items {
		owned := slices.ContainsFunc(vm.OwnerReferences, func(o metav1.OwnerReference) bool {
			return o.Kind == "VirtualMachineSet" && o.Name == set.Name
		})
		if owned && vm.Status.Resource != nil && len(vm.Status.Resource.Addresses) > 0 {
			out[vm.Name] = vm.Status.Resource.Addresses[0].Address
		}
	}
	return out, nil
}

// setRolledOut says whether the set has rolloutReplicas members, all of its current template and
// available, and no other.
func setRolledOut(ctx context.Context, cl client.Client, set *kupenstackv1.VirtualMachineSet) (bool, error) {
	if err := cl.Get(ctx, client.ObjectKeyFromObject(set), set); err != nil {
		return false, nil
	}
	st := set.Status
	if st.ObservedGeneration != set.Generation || st.Replicas != rolloutReplicas || st.UpdatedReplicas != rolloutReplicas ||
		st.AvailableReplicas != rolloutReplicas || !meta.IsStatusConditionTrue(st.Conditions, kupenstackv1.ConditionReady) {
		return false, nil
	}
	members, err := setMembers(ctx, cl, set)
	return err == nil && len(members) == rolloutReplicas, err
}

// probeScript, run on the tenant's VM, GETs every address of /tmp/targets at once about every
// half second, printing "ok <ip>" or "miss <ip>" for each and "tick" after each round.
const probeScript = `touch /tmp/targets
while :; do
  for ip in $(cat /tmp/targets); do
    (timeout 2 wget -q -O /dev/null "http://$ip/" && echo "ok $ip" || echo "miss $ip") &
  done
  wait
  echo tick
  sleep 0.5
done`

// rolloutProbe is what the probe saw, round by round.
type rolloutProbe struct {
	mu     sync.Mutex
	rounds []map[string]bool // per round: address -> answered
}

// answering is, per round that control answered, how many other addresses answered, and how
// many rounds control missed: then the probe itself was blind (the tenant's VM or its network
// slow), whatever the members did. An address that missed a round between two it answered
// counts as answering: one GET lost on a loaded machine is not an outage.
func (p *rolloutProbe) answering(control string) (counts []int, blind int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, r := range p.rounds {
		if !r[control] {
			blind++
			continue
		}
		n := 0
		for ip := range r {
			if ip != control && (r[ip] || i > 0 && i+1 < len(p.rounds) && p.rounds[i-1][ip] && p.rounds[i+1][ip]) {
				n++
			}
		}
		counts = append(counts, n)
	}
	return counts, blind
}

// rolloutUnderTraffic: set (webSet, created with the tenant's other objects) available, its
// template changed; from the tenant's VM (SSH at addr) a probe GETs every member the set ever had about
// every half second, and the members answering never fall below replicas - maxUnavailable while
// the set replaces them all. control is the address of a guest outside the set, which the probe
// also GETs, to tell its own failures from the members'.
func rolloutUnderTraffic(ctx context.Context, t *testing.T, c *cluster, cl client.Client, addr string, signer ssh.Signer, set *kupenstackv1.VirtualMachineSet, control string) {
	t.Helper()
	start := time.Now()
	if err := wait.PollUntilContextTimeout(ctx, 3*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		return setRolledOut(ctx, cl, set)
	}); err != nil {
		t.Fatalf("VirtualMachineSet %s not rolled out: %+v %v", set.Name, set.Status, err)
	}
	members, err := setMembers(ctx, cl, set)
	if err != nil {
		t.Fatal(err)
	}
	for name, ip := range members {
		var vm kupenstackv1.VirtualMachine
		if err := cl.Get(ctx, client.ObjectKey{Namespace: set.Namespace, Name: name}, &vm); err != nil {
			t.Fatal(err)
		}
		guestWithLease(ctx, t, c, cl, &vm)
		if body, err := fetchFromGuest(ctx, addr, signer, ip); err != nil || body == "" {
			t.Fatalf("member %s at %s does not answer the tenant's VM: %q %v", name, ip, body, err)
		}
	}
	t.Logf("tenant: VirtualMachineSet of %d web servers available and answering (%s more)", rolloutReplicas, time.Since(start).Round(time.Second))

	targets := maps.Clone(members)
	targets["control"] = control
	probe, known, stop := startProbe(ctx, t, addr, signer, targets)
	defer stop()
	before := slices.Sorted(maps.Keys(members))
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(set), set); err != nil {
			return err
		}
		set.Spec.Template.Spec.Metadata = map[string]string{"revision": "2"}
		return cl.Update(ctx, set)
	}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		now, err := setMembers(ctx, cl, set)
		if err != nil {
			return false, nil
		}
		known(now)
		if done, err := setRolledOut(ctx, cl, set); !done || err != nil {
			return false, nil
		}
		return !slices.ContainsFunc(before, func(name string) bool { _, ok := now[name]; return ok }), nil
	}); err != nil {
		t.Fatalf("VirtualMachineSet %s not rolled out to its new template: %+v", set.Name, set.Status)
	}
	took := time.Since(start)
	time.Sleep(3 * time.Second) // a few rounds with the new members only
	stop()

	counts, blind := probe.answering(control)
	if len(counts) < 10 || blind > len(counts)/10 {
		t.Fatalf("the probe saw %d rounds over a rollout of %s, and was blind (the control guest missed) in %d more",
			len(counts), took.Round(time.Second), blind)
	}
	lowest, below := rolloutReplicas, 0
	for _, n := range counts {
		lowest = min(lowest, n)
		if n < rolloutReplicas-rolloutMaxUnavailable {
			below++
		}
	}
	t.Logf("tenant: VirtualMachineSet rollout of %d members (maxSurge %d, maxUnavailable %d, minReadySeconds %d) under traffic: %s, %d probe rounds (%d blind, left out), fewest answering %d, rounds below %d: %d",
		rolloutReplicas, rolloutMaxSurge, rolloutMaxUnavailable, rolloutMinReady, took.Round(time.Second), len(counts), blind, lowest,
		rolloutReplicas-rolloutMaxUnavailable, below)
	if below > 0 {
		t.Errorf("during the rollout, %d of %d probe rounds had fewer than %d members answering (fewest %d)",
			below, len(counts), rolloutReplicas-rolloutMaxUnavailable, lowest)
	}
}

// startProbe runs probeScript on the tenant's VM over one SSH session, with members' addresses
// as its first targets. known adds the addresses of members seen since (an old member's address
// stays a target: it is expected to stop answering once a new one answers). stop ends the probe
// and may be called more than once.
func startProbe(ctx context.Context, t *testing.T, addr string, signer ssh.Signer, members map[string]string) (*rolloutProbe, func(map[string]string), func()) {
	t.Helper()
	targets := map[string]bool{}
	write := func() {
		ips := slices.Sorted(maps.Keys(targets))
		if _, err := pollSSH(ctx, addr, signer, nil, nil,
			fmt.Sprintf("echo %s > /tmp/targets.new && mv /tmp/targets.new /tmp/targets", strings.Join(ips, " ")), time.Minute); err != nil {
			t.Errorf("setting the probe's targets to %v: %v", ips, err)
		}
	}
	for _, ip := range members {
		targets[ip] = true
	}
	write()
	client, err := dialGuest(ctx, addr, signer, nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := client.NewSession()
	if err != nil {
		client.Close()
		t.Fatal(err)
	}
	out, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Start(probeScript); err != nil {
		t.Fatal(err)
	}
	probe := &rolloutProbe{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		round := map[string]bool{}
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			word, ip, _ := strings.Cut(strings.TrimSpace(lines.Text()), " ")
			switch word {
			case "ok", "miss":
				round[ip] = word == "ok"
			case "tick":
				probe.mu.Lock()
				probe.rounds = append(probe.rounds, round)
				probe.mu.Unlock()
				round = map[string]bool{}
			}
		}
	}()
	known := func(now map[string]string) {
		added := false
		for _, ip := range now {
			if !targets[ip] {
				targets[ip], added = true, true
			}
		}
		if added {
			write()
		}
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			sess.Close()
			client.Close()
			<-done
		})
	}
	return probe, known, stop
}
