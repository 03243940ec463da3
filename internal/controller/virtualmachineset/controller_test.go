package virtualmachineset

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/conditions"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// Only the set controller runs here: the test plays the VM controller by marking VMs Ready.
var env = testenv.New(func(mgr ctrl.Manager) error {
	return (&Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(ControllerName)}).SetupWithManager(mgr, 2)
})

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

func vms(t *testing.T, set *kupenstackv1.VirtualMachineSet) []kupenstackv1.VirtualMachine {
	t.Helper()
	var list kupenstackv1.VirtualMachineList
	if err := env.Client.List(env.Ctx, &list, client.InNamespace(set.Namespace), client.MatchingLabels{"app": set.Name}); err != nil {
		t.Fatal(err)
	}
	var out []kupenstackv1.VirtualMachine
	for _, vm := range list.Items {
		if vm.DeletionTimestamp.IsZero() {
			out = append(out, vm)
		}
	}
	return out
}

// markReady plays the VM controller for every VM of the set that is not Ready yet.
func markReady(t *testing.T, set *kupenstackv1.VirtualMachineSet) {
	t.Helper()
	for _, vm := range vms(t, set) {
		if conditions.IsReady(vm.Status.Conditions, vm.Generation) {
			continue
		}
		conditions.Set(&vm.Status.Conditions, vm.Generation, conditions.State{Ready: true})
		if err := env.Client.Status().Update(env.Ctx, &vm); err != nil {
			t.Fatal(err)
		}
	}
}

// settle waits until the set has want VMs, all of the current template, marking new ones Ready.
func settle(t *testing.T, set *kupenstackv1.VirtualMachineSet, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		markReady(t, set)
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(set), set); err != nil {
			t.Fatal(err)
		}
		st := set.Status
		if meta.IsStatusConditionTrue(st.Conditions, kupenstackv1.ConditionReady) && st.ObservedGeneration == set.Generation &&
			int(st.Replicas) == want && int(st.UpdatedReplicas) == want && int(st.AvailableReplicas) == want && len(vms(t, set)) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("set not settled at %d: %+v, %d VMs", want, st, len(vms(t, set)))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createRollingSet creates namespace ns and in it a set of replicas VMs labelled app=name (flavor
// small, image v1) rolling one VM at a time (maxSurge 1, maxUnavailable 0).
func createRollingSet(t *testing.T, ns, name string, replicas int32) *kupenstackv1.VirtualMachineSet {
	t.Helper()
	if err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	set := &kupenstackv1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: kupenstackv1.VirtualMachineSetSpec{
		Replicas: &replicas,
		Selector: kupenstackv1.LabelSelector{MatchLabels: map[string]string{"app": name}},
		Template: kupenstackv1.VirtualMachineTemplate{
			Metadata: kupenstackv1.VirtualMachineTemplateMeta{Labels: map[string]kupenstackv1.LabelValue{"app": kupenstackv1.LabelValue(name)}},
			Spec:     kupenstackv1.VirtualMachineSpec{FlavorRef: "small", ImageRef: "v1"},
		},
		Strategy: kupenstackv1.VirtualMachineSetStrategy{Type: kupenstackv1.RollingUpdateStrategy, RollingUpdate: &kupenstackv1.RollingUpdateVirtualMachineSet{
			MaxSurge: ptr(intstr.FromInt32(1)), MaxUnavailable: ptr(intstr.FromInt32(0))}},
	}}
	if err := env.Client.Create(env.Ctx, set); err != nil {
		t.Fatal(err)
	}
	return set
}

func TestScaleAndRoll(t *testing.T) {
	env.Require(t)
	set := createRollingSet(t, "vmset", "web", 3)
	settle(t, set, 3)
	first := vms(t, set)
	for _, vm := range first {
		if !metav1.IsControlledBy(&vm, set) || vm.Labels[HashLabel] != set.Status.TemplateHash || vm.Spec.ImageRef != "v1" {
			t.Fatalf("VM %s: owner %v, labels %v, spec %+v", vm.Name, vm.OwnerReferences, vm.Labels, vm.Spec)
		}
	}
	if set.Status.Selector != "app=web" {
		t.Errorf("status.selector %q", set.Status.Selector)
	}

	// kubectl scale goes through the scale subresource.
	scaleTo := func(n int32) {
		t.Helper()
		scale := &autoscalingv1.Scale{}
		if err := env.Client.SubResource("scale").Get(env.Ctx, set, scale); err != nil {
			t.Fatal(err)
		}
		if scale.Status.Selector != "app=web" {
			t.Errorf("scale selector %q", scale.Status.Selector)
		}
		scale.Spec.Replicas = n
		if err := env.Client.SubResource("scale").Update(env.Ctx, set, client.WithSubResourceBody(scale)); err != nil {
			t.Fatal(err)
		}
	}
	scaleTo(5)
	settle(t, set, 5)
	scaleTo(2)
	settle(t, set, 2)

	// A new template rolls: with maxUnavailable 0 an old VM goes only after a new one is Ready.
	oldHash := set.Status.TemplateHash
	set.Spec.Template.Spec.ImageRef = "v2"
	if err := env.Client.Update(env.Ctx, set); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		members := vms(t, set)
		var old, ready int
		for _, vm := range members {
			if vm.Labels[HashLabel] == oldHash {
				old++
			}
			if conditions.IsReady(vm.Status.Conditions, vm.Generation) {
				ready++
			}
		}
		if ready < 2 {
			t.Fatalf("only %d Ready VMs during the rollout (maxUnavailable 0)", ready)
		}
		if len(members) > 3 {
			t.Fatalf("%d VMs during the rollout (maxSurge 1)", len(members))
		}
		if old == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rollout stuck: %d old VMs", old)
		}
		time.Sleep(300 * time.Millisecond) // a new VM stays unready a while: the bounds must hold
		markReady(t, set)
	}
	settle(t, set, 2)
	for _, vm := range vms(t, set) {
		if vm.Spec.ImageRef != "v2" {
			t.Errorf("VM %s still has image %s", vm.Name, vm.Spec.ImageRef)
		}
	}
}

// TestSelectorMustMatchTemplate: a set whose template does not meet its selector's expressions,
// stored before admission refused it, is Degraded and makes no VM.
func TestSelectorMustMatchTemplate(t *testing.T) {
	env.Require(t)
	ns := "vmset-bad"
	if err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	set := &kupenstackv1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns}, Spec: kupenstackv1.VirtualMachineSetSpec{
		Selector: kupenstackv1.LabelSelector{MatchExpressions: []kupenstackv1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []kupenstackv1.LabelValue{"db"}}}},
		Template: kupenstackv1.VirtualMachineTemplate{
			Metadata: kupenstackv1.VirtualMachineTemplateMeta{Labels: map[string]kupenstackv1.LabelValue{"app": "web"}},
			Spec:     kupenstackv1.VirtualMachineSpec{FlavorRef: "small", ImageRef: "v1"},
		},
	}}
	const rule = "must meet every requirement of selector.matchExpressions"
	withoutRule := func(spec map[string]any) map[string]any {
		rules, _, _ := unstructured.NestedSlice(spec, "x-kubernetes-validations")
		var kept []any
		for _, r := range rules {
			if !strings.Contains(fmt.Sprint(r.(map[string]any)["message"]), rule) {
				kept = append(kept, r)
			}
		}
		if len(kept) == len(rules) {
			t.Fatalf("no rule saying %q on the spec", rule)
		}
		_ = unstructured.SetNestedSlice(spec, kept, "x-kubernetes-validations")
		return spec
	}
	refused := func() error {
		probe := set.DeepCopy()
		probe.Name = "probe"
		if err := env.Client.Create(env.Ctx, probe, client.DryRunAll); err == nil || !strings.Contains(err.Error(), rule) {
			return fmt.Errorf("a set whose template misses its selector is still accepted (%v)", err)
		}
		return nil
	}
	withRelaxedSchema(t, []string{"properties", "spec"}, withoutRule, refused, func() error {
		return env.Client.Create(env.Ctx, set)
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(set), set); err != nil {
			t.Fatal(err)
		}
		c := meta.FindStatusCondition(set.Status.Conditions, kupenstackv1.ConditionDegraded)
		if c != nil && c.Status == metav1.ConditionTrue {
			if c.Reason != kupenstackv1.ReasonInvalidConfiguration || c.Message != "the selector does not match the template's labels" {
				t.Fatalf("degraded %+v", c)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Degraded condition: %+v", set.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, "a Warning Event for the bad selector", func() error {
		var events eventsv1.EventList
		if err := env.Client.List(env.Ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Regarding.Name == set.Name && e.Type == corev1.EventTypeWarning && e.Reason == kupenstackv1.ReasonInvalidConfiguration &&
				e.Note == "the selector does not match the template's labels" {
				return nil
			}
		}
		return fmt.Errorf("none among %d Events", len(events.Items))
	})
	var list kupenstackv1.VirtualMachineList
	if err := env.Client.List(env.Ctx, &list, client.InNamespace(ns)); err != nil || len(list.Items) != 0 {
		t.Fatalf("VMs made for a bad set: %d (%v)", len(list.Items), err)
	}
}

// withRelaxedSchema runs write with the VirtualMachineSet CRD as it was before a rule existed:
// the schema node at path (under openAPIV3Schema) replaced by relax's answer. Then it puts the
// real CRD back and waits until refused says the API server refuses the bad value again.
func withRelaxedSchema(t *testing.T, path []string, relax func(strict map[string]any) map[string]any, refused func() error, write func() error) {
	t.Helper()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	key := client.ObjectKey{Name: "virtualmachinesets.kupenstack.io"}
	if err := env.Client.Get(env.Ctx, key, crd); err != nil {
		t.Fatal(err)
	}
	path = append([]string{"schema", "openAPIV3Schema"}, path...)
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	strict, _, _ := unstructured.NestedMap(versions[0].(map[string]any), path...)
	if strict == nil {
		t.Fatalf("no %s in the CRD's schema", strings.Join(path, "."))
	}
	setSchema := func(s map[string]any) {
		t.Helper()
		testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, "updating the VirtualMachineSet CRD", func() error {
			if err := env.Client.Get(env.Ctx, key, crd); err != nil {
				return err
			}
			vs, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
			_ = unstructured.SetNestedMap(vs[0].(map[string]any), s, path...)
			_ = unstructured.SetNestedSlice(crd.Object, vs, "spec", "versions")
			return env.Client.Update(env.Ctx, crd)
		})
	}
	setSchema(relax(runtime.DeepCopyJSON(strict)))
	defer func() {
		setSchema(strict)
		testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, "the strict CRD back in force", refused)
	}()
	testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, "a bad value stored", write)
}

// withRelaxedMaxSurge: withRelaxedSchema with maxSurge as it was before admission checked it
// (any number or string stored).
func withRelaxedMaxSurge(t *testing.T, write func() error) {
	t.Helper()
	probe := &kupenstackv1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "default"}, Spec: kupenstackv1.VirtualMachineSetSpec{
		Selector: kupenstackv1.LabelSelector{MatchLabels: map[string]string{"app": "probe"}},
		Template: kupenstackv1.VirtualMachineTemplate{Metadata: kupenstackv1.VirtualMachineTemplateMeta{Labels: map[string]kupenstackv1.LabelValue{"app": "probe"}}},
		Strategy: kupenstackv1.VirtualMachineSetStrategy{Type: kupenstackv1.RollingUpdateStrategy,
			RollingUpdate: &kupenstackv1.RollingUpdateVirtualMachineSet{MaxSurge: ptr(intstr.FromString("abc"))}},
	}}
	withRelaxedSchema(t, []string{"properties", "spec", "properties", "strategy", "properties", "rollingUpdate", "properties", "maxSurge"},
		func(map[string]any) map[string]any { return map[string]any{"x-kubernetes-int-or-string": true} },
		func() error {
			if err := env.Client.Create(env.Ctx, probe, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "maxSurge must be") {
				return fmt.Errorf("a bad maxSurge is still accepted (%v)", err)
			}
			return nil
		}, write)
}

// TestBadStoredMaxSurgeDegrades: a maxSurge stored before admission checked it ("abc" used to
// count as 0, "-5" as a negative surge) leaves the set Degraded with a reason naming the field
// and a Warning Event, and the set touches none of its VMs; a corrected value lets it go on.
func TestBadStoredMaxSurgeDegrades(t *testing.T) {
	env.Require(t)
	set := createRollingSet(t, "vmset-badsurge", "db", 2)
	settle(t, set, 2)
	before := vms(t, set)

	// A new template and a bad maxSurge stored together: a rollout is due, but nothing may move.
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kupenstackv1.GroupVersion.WithKind("VirtualMachineSet"))
	withRelaxedMaxSurge(t, func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(set), u); err != nil {
			return err
		}
		_ = unstructured.SetNestedField(u.Object, "abc", "spec", "strategy", "rollingUpdate", "maxSurge")
		_ = unstructured.SetNestedField(u.Object, "v2", "spec", "template", "spec", "imageRef")
		return env.Client.Update(env.Ctx, u)
	})
	var d *metav1.Condition
	testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, "the set Degraded", func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(set), set); err != nil {
			return err
		}
		if d = meta.FindStatusCondition(set.Status.Conditions, kupenstackv1.ConditionDegraded); d == nil ||
			d.Status != metav1.ConditionTrue || d.ObservedGeneration != set.Generation {
			return fmt.Errorf("Degraded %+v", d)
		}
		return nil
	})
	if d.Reason != kupenstackv1.ReasonInvalidConfiguration ||
		!strings.Contains(d.Message, `spec.strategy.rollingUpdate.maxSurge: "abc" is not a number from 0 to 1000 or a percentage`) {
		t.Fatalf("Degraded = %+v, want InvalidConfiguration naming spec.strategy.rollingUpdate.maxSurge", d)
	}
	testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, "a Warning Event", func() error {
		var events eventsv1.EventList
		if err := env.Client.List(env.Ctx, &events, client.InNamespace(set.Namespace)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Regarding.Name == set.Name && e.Type == corev1.EventTypeWarning && e.Reason == kupenstackv1.ReasonInvalidConfiguration &&
				strings.Contains(e.Note, "maxSurge") {
				return nil
			}
		}
		return fmt.Errorf("none among %d Events", len(events.Items))
	})
	time.Sleep(time.Second) // room for a wrong create or delete
	after := vms(t, set)
	if len(after) != len(before) {
		t.Fatalf("the set went from %d to %d VMs with an invalid maxSurge", len(before), len(after))
	}
	for i := range after {
		if after[i].Name != before[i].Name {
			t.Fatalf("VMs changed with an invalid maxSurge: %s, was %s", after[i].Name, before[i].Name)
		}
	}

	// Corrected, the rollout goes on.
	set.Spec.Strategy.RollingUpdate.MaxSurge = ptr(intstr.FromInt32(1))
	if err := env.Client.Update(env.Ctx, set); err != nil {
		t.Fatal(err)
	}
	settle(t, set, 2)
	for _, vm := range vms(t, set) {
		if vm.Spec.ImageRef != "v2" {
			t.Errorf("VM %s still has image %s", vm.Name, vm.Spec.ImageRef)
		}
	}
}

// TestNewVMKeepsHashLabel: a template that sets the hash label itself (a set stored before
// admission refused it) does not override the operator's: its VMs would never be up to date.
func TestNewVMKeepsHashLabel(t *testing.T) {
	env.Require(t)
	r := &Reconciler{Client: env.Client}
	set := &kupenstackv1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "n", UID: "u"}, Spec: kupenstackv1.VirtualMachineSetSpec{
		Template: kupenstackv1.VirtualMachineTemplate{
			Metadata: kupenstackv1.VirtualMachineTemplateMeta{Labels: map[string]kupenstackv1.LabelValue{"app": "web", HashLabel: "stale"}},
		},
	}}
	vm, err := r.newVM(set, "abc")
	if err != nil {
		t.Fatal(err)
	}
	if vm.Labels[HashLabel] != "abc" || vm.Labels["app"] != "web" {
		t.Fatalf("labels %v", vm.Labels)
	}
}

// TestNoNewVMsInTerminatingNamespace: while its namespace is being deleted, a set does not
// replace the VMs being deleted with it. It tried, and the API server's refusal made the set
// Degraded, with a Warning, retried every minute.
func TestNoNewVMsInTerminatingNamespace(t *testing.T) {
	env.Require(t)
	set := createRollingSet(t, "vmset-terminating", "web", 2)
	settle(t, set, 2)
	// No namespace controller runs here: the namespace stays Terminating.
	if err := env.Client.Delete(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: set.Namespace}}); err != nil {
		t.Fatal(err)
	}
	members := vms(t, set)
	if err := env.Client.Delete(env.Ctx, &members[0]); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, "the set sees its namespace go", func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(set), set); err != nil {
			return err
		}
		c := meta.FindStatusCondition(set.Status.Conditions, kupenstackv1.ConditionProgressing)
		if set.Status.Replicas != 1 || c == nil || !strings.Contains(c.Message, "being deleted") {
			return fmt.Errorf("status %+v", set.Status)
		}
		return nil
	})
	if meta.IsStatusConditionTrue(set.Status.Conditions, kupenstackv1.ConditionDegraded) {
		t.Errorf("set Degraded while its namespace goes: %+v", set.Status.Conditions)
	}
	if n := len(vms(t, set)); n != 1 {
		t.Errorf("%d VMs, want the 1 left", n)
	}
	var events eventsv1.EventList
	if err := env.Client.List(env.Ctx, &events, client.InNamespace(set.Namespace)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "CreateFailed" {
			t.Errorf("event %s: %s", e.Reason, e.Note)
		}
	}
}
