package lcm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/lcm/computeservice"
)

// novaServices stands in for Nova's os-services API in this suite, for fault injection: the
// real calls (computeservice.Nova) are exercised on the real cloud by test/realcluster's
// computeRoleDroppedAndBack. It records whether the node still had its compute label when its
// service was disabled, which is the order the controller promises.
type novaServices struct {
	mu       sync.Mutex
	byHost   map[string]*computeservice.Service
	err      error
	disables []string // "host labelled=<bool>"
	enables  []string
	// lastHeard holds, for a host whose nova-compute stopped heartbeating, its last heartbeat:
	// Nova still counts it up. Every other host up reports now.
	lastHeard map[string]time.Time
	// loseEnableAnswer makes the next enable apply and then fail, as when Nova's API is
	// restarted while it calls the nova-compute after saving the change.
	loseEnableAnswer bool
}

var nova = &novaServices{byHost: map[string]*computeservice.Service{}, lastHeard: map[string]time.Time{}}

func (n *novaServices) Find(_ context.Context, host string) (*computeservice.Service, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err != nil {
		return nil, n.err
	}
	if s := n.byHost[host]; s != nil {
		c := *s
		if c.State == "up" {
			c.UpdatedAt = time.Now()
			if last, silent := n.lastHeard[host]; silent {
				c.UpdatedAt = last
			}
		}
		return &c, nil
	}
	return nil, nil
}

func (n *novaServices) SetEnabled(ctx context.Context, id string, enabled bool, reason string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err != nil {
		return n.err
	}
	for host, s := range n.byHost {
		if s.ID != id {
			continue
		}
		if enabled {
			s.Status, s.DisabledReason = "enabled", ""
			n.enables = append(n.enables, host)
			if n.loseEnableAnswer {
				n.loseEnableAnswer = false
				return errors.New("502 Bad Gateway")
			}
			return nil
		}
		var node metav1.PartialObjectMetadata
		node.SetGroupVersionKind(nodeGVK)
		if err := env.Client.Get(ctx, client.ObjectKey{Name: host}, &node); err != nil {
			return err
		}
		s.Status, s.DisabledReason = "disabled", reason
		n.disables = append(n.disables, fmt.Sprintf("%s labelled=%v", host, node.GetLabels()[cmp] == "enabled"))
		return nil
	}
	return errors.New("404 service not found")
}

func (n *novaServices) set(host string, s *computeservice.Service) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.byHost[host] = s
}

func (n *novaServices) get(host string) computeservice.Service {
	n.mu.Lock()
	defer n.mu.Unlock()
	return *n.byHost[host]
}

// silence stops host's heartbeats at last (zero: heartbeating again).
func (n *novaServices) silence(host string, last time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if last.IsZero() {
		delete(n.lastHeard, host)
		return
	}
	n.lastHeard[host] = last
}

func (n *novaServices) loseNextEnableAnswer() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.loseEnableAnswer = true
}

func (n *novaServices) fail(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.err = err
}

func (n *novaServices) calls() (disables, enables []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.disables...), append([]string(nil), n.enables...)
}

// novaDeployed marks the configuration's nova component as having been ready once: only then
// can compute services exist, and only then does the node controller ask Nova.
func novaDeployed(t *testing.T) { t.Helper(); setNovaLastGoodRevision(t, 1) }

// novaNotServing takes the configuration's nova component back to no good revision, as when it
// is replaced: the node controller must not ask Nova then.
func novaNotServing(t *testing.T) { t.Helper(); setNovaLastGoodRevision(t, 0) }

// setNovaLastGoodRevision sets the nova component's status.lastGoodRevision (no component
// controller runs in this suite to say otherwise).
func setNovaLastGoodRevision(t *testing.T, revision int32) {
	t.Helper()
	eventually(t, func() error {
		var c kupenstackv1.OpenstackComponent
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: novaComponent}, &c); err != nil {
			return err
		}
		if c.Status.LastGoodRevision == revision {
			return nil
		}
		before := c.DeepCopy()
		c.Status.LastGoodRevision = revision
		if err := env.Client.Status().Patch(env.Ctx, &c, client.MergeFrom(before)); err != nil {
			return err
		}
		return fmt.Errorf("just set lastGoodRevision %d", revision)
	})
}

// waitComputeStatusCleared waits until host's OpenstackNode holds nothing about its service.
func waitComputeStatusCleared(t *testing.T, host string) {
	t.Helper()
	eventually(t, func() error {
		on, err := getOSNode(t, host)
		if err != nil {
			return err
		}
		if on.Status.ComputeService != "" || on.Status.ComputeLabelledAt != nil {
			return fmt.Errorf("status: computeService %q, computeLabelledAt %v", on.Status.ComputeService, on.Status.ComputeLabelledAt)
		}
		return nil
	})
}

// waitOSNodeGone waits until host's OpenstackNode is deleted.
func waitOSNodeGone(t *testing.T, host string) {
	t.Helper()
	eventually(t, func() error {
		if _, err := getOSNode(t, host); err == nil {
			return fmt.Errorf("OpenstackNode %s still there", host)
		}
		return nil
	})
}

// waitEnabled waits until host's service is enabled in the stand-in Nova.
func waitEnabled(t *testing.T, host string) {
	t.Helper()
	eventually(t, func() error {
		if s := nova.get(host); s.Status != "enabled" {
			return fmt.Errorf("%s's service %+v", host, s)
		}
		return nil
	})
}

// wantEvent waits for an Event on the OpenstackNode with reason whose note contains note.
func wantEvent(t *testing.T, node, reason, note string) {
	t.Helper()
	eventually(t, func() error {
		var evs eventsv1.EventList
		if err := env.Client.List(env.Ctx, &evs); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Regarding.Kind == "OpenstackNode" && e.Regarding.Name == node && e.Reason == reason && strings.Contains(e.Note, note) {
				return nil
			}
		}
		return fmt.Errorf("no %s Event on OpenstackNode %s with %q", reason, node, note)
	})
}

// TestComputeServiceAroundLabels: a compute node leaving the cloud (disabled, compute role
// dropped, removed) has its nova-compute service disabled before its compute label goes, waits
// with its labels while Nova cannot be asked, and gets the service enabled again when it is back;
// a service an administrator disabled is left as it is.
func TestComputeServiceAroundLabels(t *testing.T) {
	env.Require(t)
	applyProfile(t, "lcm-profiles", "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{})
	newNode(t, "cs-a", nil)
	newNode(t, "cs-b", nil)
	nova.set("cs-a", &computeservice.Service{ID: "id-a", Status: "enabled", State: "up"})
	nova.set("cs-b", &computeservice.Service{ID: "id-b", Status: "enabled", State: "up"})
	t.Cleanup(func() { nova.fail(nil) })
	both := kupenstackv1.ConfiguredNode{Name: "cs-b", Type: "control,compute"}
	applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute"}, both))
	wantLabels(t, "cs-a", map[string]string{cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openvswitch")
	novaDeployed(t)

	t.Run("Nova unreachable: the compute label stays, the condition says why", func(t *testing.T) {
		nova.fail(errors.New("503 nova-api unavailable"))
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute", Disabled: true}, both))
		on := wantCondition(t, "cs-a", kupenstackv1.ConditionReady, metav1.ConditionFalse, "503 nova-api unavailable")
		if c := meta.FindStatusCondition(on.Status.Conditions, kupenstackv1.ConditionReady); c.Reason != kupenstackv1.ReasonDisablingComputeService {
			t.Errorf("Ready reason = %s, want %s", c.Reason, kupenstackv1.ReasonDisablingComputeService)
		}
		wantEvent(t, "cs-a", "ComputeServiceNotDisabled", "503 nova-api unavailable")
		wantLabels(t, "cs-a", map[string]string{cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openvswitch")
		if d, _ := nova.calls(); len(d) != 0 {
			t.Errorf("disabled while Nova failed: %v", d)
		}
	})

	t.Run("Nova back: disabled first, then unlabelled", func(t *testing.T) {
		nova.fail(nil)
		wantLabels(t, "cs-a", nil, "")
		on := wantCondition(t, "cs-a", kupenstackv1.ConditionReady, metav1.ConditionTrue, "")
		if on.Status.ComputeService != kupenstackv1.ComputeServiceDisabled {
			t.Errorf("status.computeService = %q, want Disabled", on.Status.ComputeService)
		}
		if d, _ := nova.calls(); strings.Join(d, ";") != "cs-a labelled=true" {
			t.Errorf("disables = %v, want one, while still labelled", d)
		}
		if s := nova.get("cs-a"); s.Status != "disabled" || !computeservice.DisabledByKupenStack(s.DisabledReason) {
			t.Errorf("service = %+v", s)
		}
		wantEvent(t, "cs-a", "ComputeServiceDisabled", "cs-a")
	})

	t.Run("enabled again: labelled, and the service enabled", func(t *testing.T) {
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute"}, both))
		wantLabels(t, "cs-a", map[string]string{cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openvswitch")
		eventually(t, func() error {
			on, err := getOSNode(t, "cs-a")
			if err != nil {
				return err
			}
			if s := nova.get("cs-a"); s.Status != "enabled" || on.Status.ComputeService != "" {
				return fmt.Errorf("service %+v, status.computeService %q", s, on.Status.ComputeService)
			}
			return nil
		})
		wantEvent(t, "cs-a", "ComputeServiceEnabled", "cs-a")
	})

	t.Run("compute role dropped: disabled first; the control labels stay", func(t *testing.T) {
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute"},
			kupenstackv1.ConfiguredNode{Name: "cs-b", Type: "control"}))
		wantLabels(t, "cs-b", map[string]string{ctl: "enabled", ovs: "enabled"}, "openstack-control-plane,openvswitch")
		if d, _ := nova.calls(); len(d) != 2 || d[1] != "cs-b labelled=true" {
			t.Errorf("disables = %v, want cs-b's while still labelled", d)
		}
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute"}, both))
		wantLabels(t, "cs-b", map[string]string{ctl: "enabled", cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openstack-control-plane,openvswitch")
		waitEnabled(t, "cs-b")
	})

	t.Run("a control and compute node disabled while Nova fails keeps every label", func(t *testing.T) {
		// Its control-plane label too: the Nova API that must be asked may run there.
		nova.fail(errors.New("nova-api connection refused"))
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute"},
			kupenstackv1.ConfiguredNode{Name: "cs-b", Type: "control,compute", Disabled: true}))
		wantCondition(t, "cs-b", kupenstackv1.ConditionReady, metav1.ConditionFalse, "nova-api connection refused")
		wantLabels(t, "cs-b", map[string]string{ctl: "enabled", cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openstack-control-plane,openvswitch")
		nova.fail(nil)
		wantLabels(t, "cs-b", nil, "")
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute"}, both))
		wantLabels(t, "cs-b", map[string]string{ctl: "enabled", cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openstack-control-plane,openvswitch")
		waitEnabled(t, "cs-b")
	})

	t.Run("back while Nova still counts the old nova-compute up: enabled once the new one reports", func(t *testing.T) {
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute", Disabled: true}, both))
		wantLabels(t, "cs-a", nil, "")
		// The pods went with the label; Nova heard the old nova-compute a moment ago.
		nova.silence("cs-a", time.Now().Add(-5*time.Second))
		_, enablesBefore := nova.calls()
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute"}, both))
		wantLabels(t, "cs-a", map[string]string{cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openvswitch")
		on := wantCondition(t, "cs-a", kupenstackv1.ConditionReady, metav1.ConditionFalse, "once the node's new nova-compute reports")
		if c := meta.FindStatusCondition(on.Status.Conditions, kupenstackv1.ConditionReady); c.Reason != kupenstackv1.ReasonEnablingComputeService {
			t.Errorf("Ready reason = %s, want %s", c.Reason, kupenstackv1.ReasonEnablingComputeService)
		}
		if on.Status.ComputeService != kupenstackv1.ComputeServiceDisabled || on.Status.ComputeLabelledAt == nil {
			t.Errorf("status: computeService %q, computeLabelledAt %v", on.Status.ComputeService, on.Status.ComputeLabelledAt)
		}
		if _, e := nova.calls(); len(e) != len(enablesBefore) {
			t.Errorf("enabled while Nova would call the nova-compute that left: %v", e)
		}
		nova.silence("cs-a", time.Time{}) // the new nova-compute reports
		waitEnabled(t, "cs-a")
		on = wantCondition(t, "cs-a", kupenstackv1.ConditionReady, metav1.ConditionTrue, "")
		if on.Status.ComputeService != "" || on.Status.ComputeLabelledAt != nil {
			t.Errorf("status after the enable: computeService %q, computeLabelledAt %v", on.Status.ComputeService, on.Status.ComputeLabelledAt)
		}
	})

	t.Run("an enable applied whose answer was lost: reported enabled, status cleared", func(t *testing.T) {
		// Nova saves the change, then its API is restarted before it answers; the retry finds the
		// service enabled. That pass reported nothing before (the real cloud's missing Event).
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute", Disabled: true}, both))
		wantLabels(t, "cs-a", nil, "")
		nova.loseNextEnableAnswer()
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute"}, both))
		wantEvent(t, "cs-a", "ComputeServiceNotEnabled", "502 Bad Gateway")
		wantEvent(t, "cs-a", "ComputeServiceEnabled", "found so")
		waitComputeStatusCleared(t, "cs-a")
	})

	t.Run("a service an administrator disabled stays disabled", func(t *testing.T) {
		nova.set("cs-a", &computeservice.Service{ID: "id-a", Status: "disabled", State: "up", DisabledReason: "disk replacement"})
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute", Disabled: true}, both))
		wantLabels(t, "cs-a", nil, "")
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute"}, both))
		wantLabels(t, "cs-a", map[string]string{cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openvswitch")
		wantCondition(t, "cs-a", kupenstackv1.ConditionReady, metav1.ConditionTrue, "")
		if s := nova.get("cs-a"); s.Status != "disabled" || s.DisabledReason != "disk replacement" {
			t.Errorf("the administrator's disabled service was changed: %+v", s)
		}
		nova.set("cs-a", &computeservice.Service{ID: "id-a", Status: "enabled", State: "up"})
	})

	t.Run("removed from the configuration, then added again", func(t *testing.T) {
		applyConfig(t, baseSpec(both))
		wantLabels(t, "cs-a", nil, "")
		if d, _ := nova.calls(); d[len(d)-1] != "cs-a labelled=true" {
			t.Errorf("disables = %v, want cs-a's last, while still labelled", d)
		}
		waitOSNodeGone(t, "cs-a")
		// A fresh OpenstackNode knows nothing of the old one: the service disabled by KupenStack is
		// found when the compute label goes back on.
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute"}, both))
		waitEnabled(t, "cs-a")
	})

	t.Run("added again while Nova's component is not serving: enabled once it serves", func(t *testing.T) {
		applyConfig(t, baseSpec(both))
		wantLabels(t, "cs-a", nil, "")
		waitOSNodeGone(t, "cs-a")
		if s := nova.get("cs-a"); s.Status != "disabled" || !computeservice.DisabledByKupenStack(s.DisabledReason) {
			t.Fatalf("service after the removal = %+v", s)
		}
		// Nova's component is being replaced: not serving (no good revision yet).
		novaNotServing(t)
		_, enablesBefore := nova.calls()
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute"}, both))
		wantLabels(t, "cs-a", map[string]string{cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openvswitch")
		eventually(t, func() error {
			on, err := getOSNode(t, "cs-a")
			if err != nil {
				return err
			}
			if on.Status.ComputeLabelledAt == nil {
				return fmt.Errorf("status.computeLabelledAt not set while Nova does not serve")
			}
			return nil
		})
		if _, e := nova.calls(); len(e) != len(enablesBefore) {
			t.Errorf("enabled while Nova's component did not serve: %v", e)
		}
		// Serving again: the watch on the component brings the node back, and the service the
		// node's removal disabled is enabled (before, that pass had been the only chance).
		novaDeployed(t)
		waitEnabled(t, "cs-a")
		waitComputeStatusCleared(t, "cs-a")
	})

	t.Run("a nova-compute gone silent, still counted up: disabled once Nova counts it down", func(t *testing.T) {
		// The node's nova-compute stopped 45 s ago; Nova counts it down only after 60 s. Disabling
		// it before would make Nova's API call the nova-compute that is gone and wait a minute.
		nova.silence("cs-a", time.Now().Add(-45*time.Second))
		disablesBefore, _ := nova.calls()
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute", Disabled: true}, both))
		on := wantCondition(t, "cs-a", kupenstackv1.ConditionReady, metav1.ConditionFalse, "once Nova counts its silent nova-compute down")
		if c := meta.FindStatusCondition(on.Status.Conditions, kupenstackv1.ConditionReady); c.Reason != kupenstackv1.ReasonDisablingComputeService {
			t.Errorf("Ready reason = %s, want %s", c.Reason, kupenstackv1.ReasonDisablingComputeService)
		}
		wantLabels(t, "cs-a", map[string]string{cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openvswitch")
		if d, _ := nova.calls(); len(d) != len(disablesBefore) {
			t.Errorf("disabled while Nova counted the silent nova-compute up: %v", d)
		}
		// Nova counts it down: the disable calls no nova-compute now.
		nova.set("cs-a", &computeservice.Service{ID: "id-a", Status: "enabled", State: "down"})
		nova.silence("cs-a", time.Time{})
		wantLabels(t, "cs-a", nil, "")
		if d, _ := nova.calls(); len(d) != len(disablesBefore)+1 || d[len(d)-1] != "cs-a labelled=true" {
			t.Errorf("disables = %v, want cs-a's once more, while still labelled", d)
		}
		nova.set("cs-a", &computeservice.Service{ID: "id-a", Status: "disabled", State: "up", DisabledReason: computeservice.Reason("cs-a")})
		applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "cs-a", Type: "compute"}, both))
		waitEnabled(t, "cs-a")
	})
}
