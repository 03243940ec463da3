package lcm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/testutil/lcmtest"
)

const (
	ctl = "openstack-control-plane"
	cmp = "openstack-compute-node"
	ovs = "openvswitch"
)

func getOSNode(t *testing.T, name string) (*kupenstackv1.OpenstackNode, error) {
	t.Helper()
	var on kupenstackv1.OpenstackNode
	err := env.Client.Get(env.Ctx, client.ObjectKey{Name: name}, &on)
	return &on, err
}

// wantCondition waits until the OpenstackNode's condition has status and its message contains msg.
func wantCondition(t *testing.T, name, condType string, status metav1.ConditionStatus, msg string) *kupenstackv1.OpenstackNode {
	t.Helper()
	var on *kupenstackv1.OpenstackNode
	eventually(t, func() error {
		var err error
		if on, err = getOSNode(t, name); err != nil {
			return err
		}
		c := meta.FindStatusCondition(on.Status.Conditions, condType)
		if c == nil || c.Status != status || c.ObservedGeneration != on.Generation || !strings.Contains(c.Message, msg) {
			return fmt.Errorf("OpenstackNode %s: %s = %+v, want %s with %q", name, condType, c, status, msg)
		}
		return nil
	})
	return on
}

func TestNodeLifecycle(t *testing.T) {
	env.Require(t)
	applyProfile(t, "lcm-profiles", "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{})
	newNode(t, "life-ctl", nil)
	newNode(t, "life-cmp", nil)
	newNode(t, "life-both", nil)
	applyConfig(t, baseSpec(
		kupenstackv1.ConfiguredNode{Name: "life-ctl", Type: "control"},
		kupenstackv1.ConfiguredNode{Name: "life-cmp", Roles: []string{"compute"}},
		kupenstackv1.ConfiguredNode{Name: "life-both", Type: "control,compute"},
	))

	wantLabels(t, "life-ctl", map[string]string{ctl: "enabled", ovs: "enabled"}, "openstack-control-plane,openvswitch")
	wantLabels(t, "life-cmp", map[string]string{cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openvswitch")
	wantLabels(t, "life-both", map[string]string{ctl: "enabled", cmp: "enabled", ovs: "enabled"},
		"openstack-compute-node,openstack-control-plane,openvswitch")

	on := wantCondition(t, "life-both", kupenstackv1.ConditionReady, metav1.ConditionTrue, "")
	if got := strings.Join(on.Spec.Roles, ","); got != "control,compute" {
		t.Errorf("roles = %s, want control,compute", got)
	}
	if ref := metav1.GetControllerOf(on); ref == nil || ref.Kind != "KupenstackConfiguration" {
		t.Errorf("OpenstackNode not owned by the configuration: %+v", on.OwnerReferences)
	}
	d := on.Status.DesiredClusterConfiguration
	if d == nil || d.Release != "2026.1" || d.Hash == "" || d.Labels[cmp] != "enabled" {
		t.Fatalf("desiredClusterConfiguration = %+v", d)
	}
	if got := strings.Join(d.Components, ","); got != "libvirt,neutron,nova,openvswitch" {
		t.Errorf("components on a control+compute node = %s", got)
	}
	if got := strings.Join(on.Status.AppliedLabels, ","); got != "openstack-compute-node,openstack-control-plane,openvswitch" {
		t.Errorf("appliedLabels = %s", got)
	}

	t.Run("a managed label removed by hand comes back", func(t *testing.T) {
		labels, _ := nodeLabels(t, "life-cmp")
		_ = labels
		patchNodeLabels(t, "life-cmp", map[string]any{cmp: nil})
		wantLabels(t, "life-cmp", map[string]string{cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openvswitch")
	})

	t.Run("a role taken away takes its label", func(t *testing.T) {
		applyConfig(t, baseSpec(
			kupenstackv1.ConfiguredNode{Name: "life-ctl", Type: "control"},
			kupenstackv1.ConfiguredNode{Name: "life-cmp", Roles: []string{"compute"}},
			kupenstackv1.ConfiguredNode{Name: "life-both", Type: "compute"},
		))
		wantLabels(t, "life-both", map[string]string{cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openvswitch")
	})

	t.Run("disabled node loses its labels and keeps its OpenstackNode", func(t *testing.T) {
		applyConfig(t, baseSpec(
			kupenstackv1.ConfiguredNode{Name: "life-ctl", Type: "control"},
			kupenstackv1.ConfiguredNode{Name: "life-cmp", Roles: []string{"compute"}, Disabled: true},
			kupenstackv1.ConfiguredNode{Name: "life-both", Type: "compute"},
		))
		wantLabels(t, "life-cmp", nil, "")
		on := wantCondition(t, "life-cmp", kupenstackv1.ConditionReady, metav1.ConditionTrue, "")
		if !on.Spec.Disabled || len(on.Status.AppliedLabels) != 0 {
			t.Errorf("disabled OpenstackNode: spec %+v, appliedLabels %v", on.Spec, on.Status.AppliedLabels)
		}
		if d := on.Status.DesiredClusterConfiguration; d == nil || len(d.Labels) != 0 || len(d.Components) != 0 {
			t.Errorf("disabled node's desired configuration = %+v", d)
		}
	})

	t.Run("removed node loses its labels and its OpenstackNode", func(t *testing.T) {
		applyConfig(t, baseSpec(
			kupenstackv1.ConfiguredNode{Name: "life-cmp", Roles: []string{"compute"}},
			kupenstackv1.ConfiguredNode{Name: "life-both", Type: "compute"},
		))
		wantLabels(t, "life-ctl", nil, "")
		wantLabels(t, "life-cmp", map[string]string{cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openvswitch")
		eventually(t, func() error {
			if _, err := getOSNode(t, "life-ctl"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("OpenstackNode life-ctl still there (%v)", err)
			}
			return nil
		})
	})

	t.Run("an OpenstackNode deleted by hand comes back", func(t *testing.T) {
		on, err := getOSNode(t, "life-cmp")
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Delete(env.Ctx, on); err != nil {
			t.Fatal(err)
		}
		eventually(t, func() error {
			again, err := getOSNode(t, "life-cmp")
			if err != nil {
				return err
			}
			if again.UID == on.UID {
				return fmt.Errorf("still the old OpenstackNode")
			}
			return nil
		})
		wantLabels(t, "life-cmp", map[string]string{cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openvswitch")
	})

	t.Run("deleting the configuration unlabels every node", func(t *testing.T) {
		if err := env.Client.Delete(env.Ctx, &kupenstackv1.KupenstackConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configKey.Name}}); err != nil {
			t.Fatal(err)
		}
		wantLabels(t, "life-cmp", nil, "")
		wantLabels(t, "life-both", nil, "")
		eventually(t, func() error {
			var list kupenstackv1.OpenstackNodeList
			if err := env.Client.List(env.Ctx, &list); err != nil {
				return err
			}
			if len(list.Items) != 0 {
				return fmt.Errorf("%d OpenstackNodes left", len(list.Items))
			}
			return nil
		})
	})
}

func patchNodeLabels(t *testing.T, name string, labels map[string]any) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	node := &metav1.PartialObjectMetadata{}
	node.SetGroupVersionKind(nodeGVK)
	node.SetName(name)
	if err := env.Client.Patch(env.Ctx, node, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
}

// TestForeignLabelsUntouched: labels the operator did not set are never changed or removed.
func TestForeignLabelsUntouched(t *testing.T) {
	env.Require(t)
	applyProfile(t, "lcm-profiles", "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{})
	newNode(t, "foreign-a", map[string]string{ctl: "enabled", "team": "a"})
	newNode(t, "foreign-b", map[string]string{ovs: "disabled"})
	applyConfig(t, baseSpec(
		kupenstackv1.ConfiguredNode{Name: "foreign-a", Type: "control,compute"},
		kupenstackv1.ConfiguredNode{Name: "foreign-b", Type: "compute"},
	))
	// The admin's control-plane label already says what KupenStack wants: left alone, not owned.
	wantLabels(t, "foreign-a", map[string]string{ctl: "enabled", cmp: "enabled", ovs: "enabled", "team": "a"},
		"openstack-compute-node,openvswitch")
	// The admin's openvswitch=disabled is in the way: reported, not overwritten.
	wantLabels(t, "foreign-b", map[string]string{cmp: "enabled", ovs: "disabled"}, "openstack-compute-node")
	on := wantCondition(t, "foreign-b", kupenstackv1.ConditionDegraded, metav1.ConditionTrue, "openvswitch=disabled")
	if c := meta.FindStatusCondition(on.Status.Conditions, kupenstackv1.ConditionReady); c.Status != metav1.ConditionFalse || c.Reason != kupenstackv1.ReasonInvalidConfiguration {
		t.Errorf("Ready = %+v", c)
	}

	// Disabling takes off only what KupenStack set.
	applyConfig(t, baseSpec(
		kupenstackv1.ConfiguredNode{Name: "foreign-a", Type: "control,compute", Disabled: true},
		kupenstackv1.ConfiguredNode{Name: "foreign-b", Type: "compute", Disabled: true},
	))
	wantLabels(t, "foreign-a", map[string]string{ctl: "enabled", "team": "a"}, "")
	wantLabels(t, "foreign-b", map[string]string{ovs: "disabled"}, "")
	wantCondition(t, "foreign-b", kupenstackv1.ConditionDegraded, metav1.ConditionFalse, "")

	// A hand-edited annotation cannot make KupenStack remove labels it never manages.
	var n = nodeObj(t, "foreign-a")
	n.Annotations[kupenstackv1.AnnotationManagedLabels] = "team"
	if err := env.Client.Update(env.Ctx, n); err != nil {
		t.Fatal(err)
	}
	applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "foreign-a", Type: "compute"}))
	wantLabels(t, "foreign-a", map[string]string{ctl: "enabled", cmp: "enabled", ovs: "enabled", "team": "a"},
		"openstack-compute-node,openvswitch")
}

// TestNodeCreatedLater: a configured node that does not exist yet is waited for, then labelled.
func TestNodeCreatedLater(t *testing.T) {
	env.Require(t)
	applyProfile(t, "lcm-profiles", "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{})
	applyConfig(t, baseSpec(kupenstackv1.ConfiguredNode{Name: "late", Type: "compute"}))
	wantCondition(t, "late", kupenstackv1.ConditionProgressing, metav1.ConditionTrue, "Kubernetes node late does not exist")
	newNode(t, "late", nil)
	wantLabels(t, "late", map[string]string{cmp: "enabled", ovs: "enabled"}, "openstack-compute-node,openvswitch")
	wantCondition(t, "late", kupenstackv1.ConditionReady, metav1.ConditionTrue, "")
}

func raw(t *testing.T, v any) *runtime.RawExtension { return lcmtest.Raw(t, v) }

func componentHashes(t *testing.T) map[string]string {
	t.Helper()
	var cfg kupenstackv1.KupenstackConfiguration
	if err := env.Client.Get(env.Ctx, configKey, &cfg); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range cfg.Status.Components {
		out[c.Name] = c.ValuesHash
	}
	return out
}

// TestPerNodeProfile: a node's own profile becomes its per-node override, and changing it
// changes the rendered values of exactly the component it configures.
func TestPerNodeProfile(t *testing.T) {
	env.Require(t)
	applyProfile(t, "lcm-profiles", "default", kupenstackv1.OpenstackCloudConfigurationProfileSpec{Debug: ptr.To(false)})
	big := kupenstackv1.OpenstackCloudConfigurationProfileSpec{
		Replicas: ptr.To[int32](3), // cluster-wide only: ignored for a node, with an Event
		Components: map[string]kupenstackv1.ComponentProfile{
			"nova": {Conf: raw(t, map[string]any{"nova": map[string]any{"DEFAULT": map[string]any{"cpu_allocation_ratio": 4}}})},
		},
	}
	applyProfile(t, "lcm-profiles", "big", big)
	newNode(t, "prof-a", nil)
	newNode(t, "prof-b", nil)
	spec := baseSpec(
		kupenstackv1.ConfiguredNode{Name: "prof-a", Type: "compute", Profile: &kupenstackv1.ProfileReference{Name: "big"}},
		kupenstackv1.ConfiguredNode{Name: "prof-b", Type: "compute"},
	)
	spec.OptionalComponents = []string{"horizon"}
	applyConfig(t, spec)

	var a *kupenstackv1.OpenstackNode
	eventually(t, func() error {
		var err error
		if a, err = getOSNode(t, "prof-a"); err != nil {
			return err
		}
		if d := a.Status.DesiredClusterConfiguration; d == nil || len(d.Overrides) != 1 {
			return fmt.Errorf("prof-a desired configuration = %+v", a.Status.DesiredClusterConfiguration)
		}
		return nil
	})
	o := a.Status.DesiredClusterConfiguration.Overrides[0]
	if o.Component != "nova" || o.DaemonSet != "nova_compute" ||
		string(o.Conf.Raw) != `{"nova":{"DEFAULT":{"cpu_allocation_ratio":4}}}` {
		t.Errorf("override = %s %s %s", o.Component, o.DaemonSet, o.Conf.Raw)
	}
	if a.Spec.Profile == nil || a.Spec.Profile.Namespace != "lcm-profiles" {
		t.Errorf("node profile namespace not resolved: %+v", a.Spec.Profile)
	}
	b := wantCondition(t, "prof-b", kupenstackv1.ConditionReady, metav1.ConditionTrue, "")
	if d := b.Status.DesiredClusterConfiguration; d == nil || len(d.Overrides) != 0 {
		t.Errorf("prof-b has overrides: %+v", d)
	}

	var before map[string]string
	eventually(t, func() error {
		before = componentHashes(t)
		if len(before) != 11 || before["nova"] == "" || before["horizon"] == "" || before["cinder"] != "" {
			return fmt.Errorf("components = %v, want the 10 core ones and horizon", before)
		}
		return nil
	})

	// Changing the node's profile changes nova's values only.
	big.Components["nova"] = kupenstackv1.ComponentProfile{
		Conf: raw(t, map[string]any{"nova": map[string]any{"DEFAULT": map[string]any{"cpu_allocation_ratio": 8}}})}
	applyProfile(t, "lcm-profiles", "big", big)
	eventually(t, func() error {
		after := componentHashes(t)
		if after["nova"] == before["nova"] {
			return fmt.Errorf("nova's values did not change")
		}
		for name, h := range before {
			if name != "nova" && after[name] != h {
				return fmt.Errorf("component %s changed too", name)
			}
		}
		return nil
	})

	// A missing profile is reported on the configuration.
	spec.Nodes[1].Profile = &kupenstackv1.ProfileReference{Name: "missing"}
	applyConfig(t, spec)
	eventually(t, func() error {
		var cfg kupenstackv1.KupenstackConfiguration
		if err := env.Client.Get(env.Ctx, configKey, &cfg); err != nil {
			return err
		}
		c := meta.FindStatusCondition(cfg.Status.Conditions, kupenstackv1.ConditionDegraded)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != cfg.Generation ||
			!strings.Contains(c.Message, "profile lcm-profiles/missing not found") {
			return fmt.Errorf("Degraded = %+v", c)
		}
		return nil
	})
	wantCondition(t, "prof-b", kupenstackv1.ConditionDegraded, metav1.ConditionTrue, "profile lcm-profiles/missing not found")
	// Creating it heals both.
	applyProfile(t, "lcm-profiles", "missing", kupenstackv1.OpenstackCloudConfigurationProfileSpec{})
	wantCondition(t, "prof-b", kupenstackv1.ConditionReady, metav1.ConditionTrue, "")
}
