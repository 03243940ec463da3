package manifests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kupenstack/kupenstack/internal/testutil/chart"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// TestHelmChart: the chart passes `helm lint --strict`, and everything it renders, with the
// default values and with every option changed, is accepted by the API server: the CRDs applied
// for real (as Helm installs crds/ first), the rest as a server-side dry run into the release
// namespace.
func TestHelmChart(t *testing.T) {
	env.Require(t)
	const ns = "kupenstack-chart"
	if err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	installServiceMonitorCRD(t)

	custom := map[string]any{
		"image":          map[string]any{"repository": "registry.example/kupenstack", "tag": "v9.9.9", "pullPolicy": "Always"},
		"replicaCount":   2,
		"resources":      map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}},
		"serviceAccount": map[string]any{"create": false, "name": "existing"},
		"notifications":  map[string]any{"existingSecret": "bus"},
		"metrics": map[string]any{"port": 9090, "service": map[string]any{"annotations": map[string]any{"a": "b"}},
			"serviceMonitor": map[string]any{"enabled": true, "interval": "15s", "scrapeTimeout": "10s", "labels": map[string]any{"release": "prom"}}},
		"grafanaDashboard":  map[string]any{"enabled": true},
		"nodeSelector":      map[string]any{"kubernetes.io/os": "linux"},
		"tolerations":       []any{map[string]any{"key": "control-plane", "operator": "Exists", "effect": "NoSchedule"}},
		"podAnnotations":    map[string]any{"example.org/x": "y"},
		"extraArgs":         []any{"--openstack-qps=50"},
		"imageSources":      map[string]any{"allowedCIDRs": []any{"10.1.0.0/16"}, "blockedCIDRs": []any{"10.1.96.0/20", "2001:db8:42::/56"}},
		"extraEnv":          []any{map[string]any{"name": "HTTPS_PROXY", "value": "http://127.0.0.1:3128"}},
		"tmp":               map[string]any{"sizeLimit": "5Gi"},
		"extraVolumes":      []any{map[string]any{"name": "charts", "persistentVolumeClaim": map[string]any{"claimName": "openstack-helm"}}},
		"extraVolumeMounts": []any{map[string]any{"name": "charts", "mountPath": "/charts", "readOnly": true}},
	}
	for _, tt := range []struct {
		name   string
		values map[string]any
		check  func(t *testing.T, r chart.Rendered)
	}{
		{"defaults", nil, func(t *testing.T, r chart.Rendered) {
			kinds := map[string]int{}
			for _, o := range r.Objects {
				kinds[o.GetKind()]++
			}
			want := map[string]int{"ServiceAccount": 1, "ClusterRole": 3, "ClusterRoleBinding": 1, "Role": 1,
				"RoleBinding": 1, "Deployment": 1, "Service": 1}
			if !reflect.DeepEqual(kinds, want) {
				t.Errorf("rendered kinds %v, want %v (no ServiceMonitor or dashboard unless enabled)", kinds, want)
			}
			d := deployment(t, r)
			if c := d.Spec.Template.Spec.Containers[0]; !strings.HasPrefix(c.Image, "ghcr.io/kupenstack/kupenstack:") ||
				strings.HasSuffix(c.Image, ":") || c.ImagePullPolicy != corev1.PullIfNotPresent {
				t.Errorf("default image %q (%s)", c.Image, c.ImagePullPolicy)
			}
			if sa := r.Find("ServiceAccount")[0].GetName(); d.Spec.Template.Spec.ServiceAccountName != sa {
				t.Errorf("the Deployment runs as %q, the chart creates %q", d.Spec.Template.Spec.ServiceAccountName, sa)
			}
			checkOperatorPod(t, d, r)
		}},
		{"every option", custom, func(t *testing.T, r chart.Rendered) {
			d := deployment(t, r)
			c := d.Spec.Template.Spec.Containers[0]
			if c.Image != "registry.example/kupenstack:v9.9.9" || c.ImagePullPolicy != corev1.PullAlways {
				t.Errorf("image %q (%s), want the values' registry.example/kupenstack:v9.9.9 (Always)", c.Image, c.ImagePullPolicy)
			}
			if *d.Spec.Replicas != 2 || c.Resources.Limits.Cpu().String() != "1" || d.Spec.Template.Spec.ServiceAccountName != "existing" {
				t.Errorf("replicas %d, limits %v, service account %q not from the values", *d.Spec.Replicas, c.Resources.Limits, d.Spec.Template.Spec.ServiceAccountName)
			}
			if len(r.Find("ServiceAccount")) != 0 {
				t.Error("serviceAccount.create=false still renders a ServiceAccount")
			}
			monitors := r.Find("ServiceMonitor")
			if len(monitors) != 1 {
				t.Fatalf("%d ServiceMonitors with serviceMonitor.enabled", len(monitors))
			}
			sel, _, _ := unstructured.NestedStringMap(monitors[0].Object, "spec", "selector", "matchLabels")
			if svc := r.Find("Service")[0]; !labels.SelectorFromSet(sel).Matches(labels.Set(svc.GetLabels())) {
				t.Errorf("the ServiceMonitor selects %v; the metrics Service has labels %v", sel, svc.GetLabels())
			}
			if monitors[0].GetLabels()["release"] != "prom" {
				t.Errorf("ServiceMonitor labels %v lack the values' release=prom", monitors[0].GetLabels())
			}
			maps := r.Find("ConfigMap")
			if len(maps) != 1 || maps[0].GetLabels()["grafana_dashboard"] != "1" {
				t.Fatalf("dashboard ConfigMaps: %v", maps)
			}
			shipped, _, _ := unstructured.NestedString(maps[0].Object, "data", "kupenstack.json")
			file, err := os.ReadFile(filepath.Join(chart.Dir(), "dashboards", "kupenstack.json"))
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			if json.Unmarshal([]byte(shipped), &a) != nil || json.Unmarshal(file, &b) != nil || !reflect.DeepEqual(a, b) {
				t.Error("the dashboard ConfigMap does not hold dashboards/kupenstack.json")
			}
			checkOperatorPod(t, d, r)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, m := range chart.Lint(ns, tt.values) {
				t.Errorf("helm lint: %s", m.Error())
			}
			r, err := chart.Render("kupenstack", ns, tt.values)
			if err != nil {
				t.Fatal(err)
			}
			checkCRDs(t, "the chart", r.CRDs)
			for _, crd := range r.CRDs {
				//nolint:staticcheck // client.Apply with an unstructured object is the plain SSA patch.
				if err := env.Client.Patch(env.Ctx, crd.DeepCopy(), client.Apply, client.FieldOwner("chart-test"), client.ForceOwnership); err != nil {
					t.Fatalf("applying CRD %s: %v", crd.GetName(), err)
				}
			}
			for _, o := range r.Objects {
				if o.GetNamespace() != "" && o.GetNamespace() != ns {
					t.Errorf("%s %s goes to namespace %q, not the release's", o.GetKind(), o.GetName(), o.GetNamespace())
				}
				//nolint:staticcheck // client.Apply with an unstructured object is the plain SSA patch.
				if err := env.Client.Patch(env.Ctx, o.DeepCopy(), client.Apply, client.FieldOwner("chart-test"), client.DryRunAll); err != nil {
					t.Errorf("the API server refuses %s %s: %v", o.GetKind(), o.GetName(), err)
				}
			}
			checkRBAC(t, r.Objects)
			tt.check(t, r)
		})
	}
}

// checkCRDs: what an install method (the chart, config/default) installs are exactly the generated
// CRDs (make chart copies them into the chart).
func checkCRDs(t *testing.T, installer string, crds []*unstructured.Unstructured) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*unstructured.Unstructured{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := chart.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			want[o.GetName()] = o
		}
	}
	if len(crds) != len(want) {
		t.Errorf("%s has %d CRDs, config/crd/bases %d", installer, len(crds), len(want))
	}
	for _, crd := range crds {
		if w, ok := want[crd.GetName()]; !ok || !reflect.DeepEqual(w.Object, crd.Object) {
			t.Errorf("%s's CRD %s differs from config/crd/bases (make chart copies them into the chart)", installer, crd.GetName())
		}
	}
}

// checkRBAC: an install grants what config/rbac grants (the generated ClusterRole, the leader
// election Role) to the ServiceAccount the Deployment runs as, and nothing else.
func checkRBAC(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	// The manager's roles, and the tenants' ClusterRoles (named ...-tenant-view and -edit, with
	// their aggregation labels), as in config/rbac.
	for _, r := range []struct{ file, kind, suffix string }{
		{"role.yaml", "ClusterRole", ""}, {"leader_election_role.yaml", "Role", ""},
		{"tenant_view_role.yaml", "ClusterRole", "-tenant-view"}, {"tenant_edit_role.yaml", "ClusterRole", "-tenant-edit"},
	} {
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", r.file))
		if err != nil {
			t.Fatal(err)
		}
		generated, err := chart.Decode(data)
		if err != nil || len(generated) != 1 {
			t.Fatalf("config/rbac/%s: %v", r.file, err)
		}
		var rendered []*unstructured.Unstructured
		for _, o := range objs {
			tenant := strings.Contains(o.GetName(), "-tenant-")
			if o.GetKind() == r.kind && ((r.suffix == "" && !tenant) || (r.suffix != "" && strings.HasSuffix(o.GetName(), r.suffix))) {
				rendered = append(rendered, o)
			}
		}
		if len(rendered) != 1 || !reflect.DeepEqual(rendered[0].Object["rules"], generated[0].Object["rules"]) {
			t.Errorf("the %s rules differ from config/rbac/%s", r.kind, r.file)
			continue
		}
		for k, v := range generated[0].GetLabels() {
			if rendered[0].GetLabels()[k] != v {
				t.Errorf("%s %s lacks the label %s=%s of config/rbac/%s", r.kind, rendered[0].GetName(), k, v, r.file)
			}
		}
	}
	var d *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			d = o
		}
	}
	sa, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName")
	for _, o := range objs {
		if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
			continue
		}
		var b rbacv1.RoleBinding // the same subjects as a ClusterRoleBinding
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
			t.Fatal(err)
		}
		if len(b.Subjects) != 1 || b.Subjects[0].Kind != "ServiceAccount" || b.Subjects[0].Name != sa || b.Subjects[0].Namespace != d.GetNamespace() {
			t.Errorf("%s %s binds %+v, not the operator's ServiceAccount %s/%s", o.GetKind(), o.GetName(), b.Subjects, d.GetNamespace(), sa)
		}
	}
}

// checkOperatorPod: probes on the health endpoints, non-root, resources, and a Service that
// reaches the metrics port.
func checkOperatorPod(t *testing.T, d *appsv1.Deployment, r chart.Rendered) {
	t.Helper()
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("probes: liveness %+v, readiness %+v", c.LivenessProbe, c.ReadinessProbe)
	}
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot ||
		c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("not locked down: pod %+v, container %+v", pod.SecurityContext, c.SecurityContext)
	}
	checkWritableTmp(t, d)
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v", c.Resources)
	}
	var args string
	for _, a := range c.Args {
		args += " " + a
	}
	if !strings.Contains(args, " --leader-elect=true") {
		t.Errorf("no leader election: %s", args)
	}
	svcs := r.Find("Service")
	if len(svcs) != 1 {
		t.Fatalf("%d Services", len(svcs))
	}
	var svc corev1.Service
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(svcs[0].Object, &svc); err != nil {
		t.Fatal(err)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) ||
		!labels.SelectorFromSet(d.Spec.Selector.MatchLabels).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the Service (%v) or the Deployment (%v) does not select the pod (%v)", svc.Spec.Selector, d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	}
	metricsPort := false
	for _, p := range c.Ports {
		if p.Name == svc.Spec.Ports[0].TargetPort.StrVal {
			metricsPort = strings.Contains(args, " --metrics-bind-address=:"+strconv.Itoa(int(p.ContainerPort)))
		}
	}
	if !metricsPort {
		t.Errorf("the Service's target port %v is not the port the metrics are served on (%s)", svc.Spec.Ports[0].TargetPort, args)
	}
}

// checkWritableTmp: with a read-only root filesystem, /tmp (where the life-cycle controllers keep
// downloaded charts, --chart-cache-dir) must be an emptyDir.
func checkWritableTmp(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	for _, m := range c.VolumeMounts {
		if m.MountPath != "/tmp" {
			continue
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.EmptyDir != nil && !m.ReadOnly {
				return
			}
		}
	}
	t.Errorf("%s: no writable emptyDir at /tmp (mounts %+v)", d.Name, c.VolumeMounts)
}

func deployment(t *testing.T, r chart.Rendered) *appsv1.Deployment {
	t.Helper()
	objs := r.Find("Deployment")
	if len(objs) != 1 {
		t.Fatalf("%d Deployments", len(objs))
	}
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(d.Spec.Template.Spec.Containers))
	}
	return &d
}

// installServiceMonitorCRD installs the Prometheus Operator's ServiceMonitor kind as far as the
// API server must know it to take the chart's ServiceMonitor (group, version, names, scope); its
// schema is not checked here.
func installServiceMonitorCRD(t *testing.T) {
	t.Helper()
	crd, err := chart.Decode([]byte(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: servicemonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`))
	if err != nil {
		t.Fatal(err)
	}
	//nolint:staticcheck // client.Apply with an unstructured object is the plain SSA patch.
	if err := env.Client.Patch(env.Ctx, crd[0], client.Apply, client.FieldOwner("chart-test"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	// The API server serves the kind once the CRD is Established.
	deadline := time.Now().Add(time.Minute)
	for {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(crd[0].GroupVersionKind())
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: crd[0].GetName()}, got); err != nil {
			t.Fatal(err)
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the ServiceMonitor CRD never became Established")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
