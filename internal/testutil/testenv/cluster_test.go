package testenv_test

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// The workers carry a compute label, as OpenStack-Helm's DaemonSets select their nodes by label.
var env = testenv.New(nil).WithCluster(
	testenv.Node{Name: "control-0", Labels: map[string]string{"openstack-control-plane": "enabled"}},
	testenv.Node{Name: "worker-0", Labels: map[string]string{"openstack-compute-node": "enabled"}},
	testenv.Node{Name: "worker-1", Labels: map[string]string{"openstack-compute-node": "enabled"}},
)

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// eventually polls cond until it returns nil; the deadline only bounds how long a broken
// cluster makes the test hang (the pod garbage collector alone takes up to a minute).
func eventually(t *testing.T, what string, cond func() error) {
	testenv.Eventually(t, 3*time.Minute, 200*time.Millisecond, what+" (control-plane logs: "+env.ProcessLogDir()+")", cond)
}

func namespace(t *testing.T) string {
	t.Helper()
	env.Require(t)
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func podTemplate(app string, nodeSelector map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{
			NodeSelector: nodeSelector,
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.invalid/" + app,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("100m"),
				}},
			}},
		},
	}
}

// podNodes lists the nodes of the namespace's pods labelled app, sorted, with their phases.
func podNodes(t *testing.T, ns, app string) []string {
	t.Helper()
	var pods corev1.PodList
	if err := env.Client.List(env.Ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, p := range pods.Items {
		nodes = append(nodes, p.Spec.NodeName+":"+string(p.Status.Phase))
	}
	sort.Strings(nodes)
	return nodes
}

func TestDeploymentBecomesAvailable(t *testing.T) {
	ns := namespace(t)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: podTemplate("web", nil),
		},
	}
	if err := env.Client.Create(env.Ctx, d); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deployment available", func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return err
		}
		if d.Status.ObservedGeneration != d.Generation || d.Status.AvailableReplicas != 3 || d.Status.UpdatedReplicas != 3 {
			return fmt.Errorf("status %+v", d.Status)
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not Available: %+v", d.Status.Conditions)
	})
	var pods corev1.PodList
	if err := env.Client.List(env.Ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		// Simulated, but shaped as a kubelet would report: bound, loopback IPs, Running.
		if p.Spec.NodeName == "" || !strings.HasPrefix(p.Status.PodIP, "127.") || p.Status.HostIP != "127.0.0.1" ||
			p.Status.Phase != corev1.PodRunning || p.Spec.ServiceAccountName != "default" {
			t.Errorf("pod %s: node %q, pod IP %q, host IP %q, phase %s, service account %q", p.Name,
				p.Spec.NodeName, p.Status.PodIP, p.Status.HostIP, p.Status.Phase, p.Spec.ServiceAccountName)
		}
	}
}

func TestStatefulSetBecomesReady(t *testing.T) {
	ns := namespace(t)
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](2),
			ServiceName: "db",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template:    podTemplate("db", map[string]string{"openstack-control-plane": "enabled"}),
		},
	}
	if err := env.Client.Create(env.Ctx, s); err != nil {
		t.Fatal(err)
	}
	eventually(t, "statefulset ready", func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(s), s); err != nil {
			return err
		}
		st := s.Status
		if st.ObservedGeneration != s.Generation || st.ReadyReplicas != 2 || st.AvailableReplicas != 2 ||
			st.UpdatedReplicas != 2 || st.CurrentRevision != st.UpdateRevision {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	if got := podNodes(t, ns, "db"); fmt.Sprint(got) != "[control-0:Running control-0:Running]" {
		t.Errorf("pods on %v, want both on the only control-plane node", got)
	}
}

func TestDaemonSetFollowsNodeLabels(t *testing.T) {
	ns := namespace(t)
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: podTemplate("agent", map[string]string{"openstack-compute-node": "enabled"}),
		},
	}
	if err := env.Client.Create(env.Ctx, ds); err != nil {
		t.Fatal(err)
	}
	ready := func(n int32, nodes string) func() error {
		return func() error {
			if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(ds), ds); err != nil {
				return err
			}
			st := ds.Status
			if st.ObservedGeneration != ds.Generation || st.DesiredNumberScheduled != n || st.NumberReady != n ||
				st.NumberAvailable != n || st.UpdatedNumberScheduled != n || st.NumberMisscheduled != 0 {
				return fmt.Errorf("status %+v", st)
			}
			if got := fmt.Sprint(podNodes(t, ns, "agent")); got != nodes {
				return fmt.Errorf("pods on %s, want %s", got, nodes)
			}
			return nil
		}
	}
	eventually(t, "daemonset ready on the labelled nodes", ready(2, "[worker-0:Running worker-1:Running]"))

	if err := env.LabelNode(env.Ctx, "control-0", map[string]string{"openstack-compute-node": "enabled"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.LabelNode(env.Ctx, "control-0", nil, "openstack-compute-node") })
	eventually(t, "daemonset pod on the newly labelled node",
		ready(3, "[control-0:Running worker-0:Running worker-1:Running]"))

	if err := env.LabelNode(env.Ctx, "worker-1", nil, "openstack-compute-node"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.LabelNode(env.Ctx, "worker-1", map[string]string{"openstack-compute-node": "enabled"}) })
	eventually(t, "daemonset pod gone from the unlabelled node", ready(2, "[control-0:Running worker-0:Running]"))
}

func TestJobsComplete(t *testing.T) {
	ns := namespace(t)
	withInit := podTemplate("init", nil)
	withInit.Spec.InitContainers = []corev1.Container{{Name: "wait-for-db", Image: "registry.invalid/dep-check"}}
	jobs := map[string]corev1.PodTemplateSpec{"plain": podTemplate("plain", nil), "with-init": withInit}
	for name, tmpl := range jobs {
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       batchv1.JobSpec{Template: tmpl, BackoffLimit: ptr.To[int32](0)},
		}
		if err := env.Client.Create(env.Ctx, job); err != nil {
			t.Fatal(err)
		}
	}
	for name := range jobs {
		eventually(t, "job "+name+" complete", func() error {
			var job batchv1.Job
			if err := env.Client.Get(env.Ctx, client.ObjectKey{Namespace: ns, Name: name}, &job); err != nil {
				return err
			}
			for _, c := range job.Status.Conditions {
				if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
					return fmt.Errorf("failed: %s", c.Message) // keeps failing until the deadline; says why
				}
				if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue && job.Status.Succeeded == 1 {
					return nil
				}
			}
			return fmt.Errorf("status %+v", job.Status)
		})
	}
}

func TestDeletingANodeRemovesItsPods(t *testing.T) {
	ns := namespace(t)
	if err := env.AddNode(env.Ctx, "doomed", map[string]string{"doomed": "yes"}); err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pinned"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pinned"}},
			Template: podTemplate("pinned", map[string]string{"doomed": "yes"}),
		},
	}
	if err := env.Client.Create(env.Ctx, d); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pods running on the node", func() error {
		if got := fmt.Sprint(podNodes(t, ns, "pinned")); got != "[doomed:Running doomed:Running]" {
			return fmt.Errorf("pods %s", got)
		}
		return nil
	})

	if err := env.DeleteNode(env.Ctx, "doomed"); err != nil {
		t.Fatal(err)
	}
	// Their replacements have no node to go to: Pending, unbound.
	eventually(t, "the node's pods deleted", func() error {
		if got := fmt.Sprint(podNodes(t, ns, "pinned")); got != "[:Pending :Pending]" {
			return fmt.Errorf("pods %s", got)
		}
		return nil
	})
}
