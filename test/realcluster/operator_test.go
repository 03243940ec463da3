package realcluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	// operatorRepository and operatorTag: images/kupenstack/image.yaml's ref.
	operatorRepository = "kupenstack.local/kupenstack/kupenstack"
	operatorTag        = "dev"
	operatorNamespace  = "kupenstack-system"
	// leaseName is the operator's LeaderElectionID.
	leaseName = "kupenstack.kupenstack.io"
)

// cluster is a running real cluster for one test.
type cluster struct {
	env
	cfg *rest.Config
	cs  kubernetes.Interface
}

// startCluster starts the real cluster (skipping without KUPENSTACK_REAL_CLUSTER=1) and stops it
// when the test ends.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	if os.Getenv("KUPENSTACK_REAL_CLUSTER") != "1" {
		t.Skip("changes the host while it runs: set KUPENSTACK_REAL_CLUSTER=1 (as root; make test-real-cluster)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("KUPENSTACK_REAL_CLUSTER=1 needs root")
	}
	e := newEnv(t)
	e.run(t, "deps")
	if strings.Contains(e.run(t, "status"), ": running") {
		t.Fatalf("a cluster of %s is running: stop it first (%s down)", e.state, e.script)
	}
	t.Cleanup(func() { e.run(t, "down") })
	e.run(t, "up")
	cfg, err := clientcmd.BuildConfigFromFlags("", e.kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	// client-go caches TLS transports by the certificate files' paths: a second cluster of the
	// same test process (new CA, same paths) would get the first one's. The contents key it.
	for _, f := range []struct {
		file *string
		data *[]byte
	}{{&cfg.CAFile, &cfg.CAData}, {&cfg.CertFile, &cfg.CertData}, {&cfg.KeyFile, &cfg.KeyData}} {
		if *f.file != "" {
			if *f.data, err = os.ReadFile(*f.file); err != nil {
				t.Fatal(err)
			}
			*f.file = ""
		}
	}
	return &cluster{env: e, cfg: cfg, cs: kubernetes.NewForConfigOrDie(cfg)}
}

func (e env) kubeconfig() string { return filepath.Join(e.state, "kubeconfig") }

// importImages builds (or takes from the cache) the 2025.1 images of hack/images.sh and imports
// them into the cluster's containerd.
func (c *cluster) importImages(t *testing.T, names ...string) {
	t.Helper()
	c.importReleaseImages(t, "2025.1", names...)
}

// importReleaseImages is importImages for the images of release (images/release-<release>.yaml).
func (c *cluster) importReleaseImages(t *testing.T, release string, names ...string) {
	t.Helper()
	start := time.Now()
	build := exec.Command(filepath.Join(c.root, "hack", "images.sh"), append([]string{"build"}, names...)...)
	build.Dir = c.root
	build.Env = append(os.Environ(), "IMAGES_RELEASE="+release)
	var out bytes.Buffer
	build.Stdout, build.Stderr = &out, &out
	if err := build.Run(); err != nil {
		t.Fatalf("hack/images.sh build %s: %v\n%s", strings.Join(names, " "), err, out.String())
	}
	t.Logf("hack/images.sh build %s: %s\n%s", strings.Join(names, " "), time.Since(start).Round(100*time.Millisecond), tail(out.String(), 2000))
	archives := exec.Command(filepath.Join(c.root, "hack", "images.sh"), append([]string{"archives"}, names...)...)
	archives.Dir = c.root
	archives.Env = build.Env
	list, err := archives.Output()
	if err != nil {
		t.Fatalf("hack/images.sh archives: %v", err)
	}
	for _, a := range strings.Fields(string(list)) {
		c.run(t, "ctr", "images", "import", a)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// restrictedNamespace creates namespace ns enforcing the restricted Pod Security Standard.
func restrictedNamespace(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: restrictedLabels}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

var restrictedLabels = map[string]string{
	"pod-security.kubernetes.io/enforce": "restricted",
	"pod-security.kubernetes.io/warn":    "restricted",
}

// TestOperatorChart installs the operator's image built by hack/images.sh with the Helm chart
// (the Helm SDK, as `helm install kupenstack charts/kupenstack`), then with `kubectl apply -k`
// of config/default through an overlay that only sets the image: each time the pod becomes
// Ready in a namespace enforcing the restricted Pod Security Standard, serves metrics and
// probes, holds the leader Lease and runs with its own RBAC only.
func TestOperatorChart(t *testing.T) {
	if os.Getenv("KUPENSTACK_REAL_CLUSTER") == "1" {
		skipUnlessWithinBudget(t, operatorChartNeeds)
	}
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	c.importImages(t, "kupenstack")

	t.Run("helm", func(t *testing.T) {
		start := time.Now()
		hc := installOperator(ctx, t, c, nil)
		t.Logf("helm install to a Ready pod holding the lease: %s", time.Since(start).Round(100*time.Millisecond))
		if err := hc.Uninstall("kupenstack"); err != nil {
			t.Fatal(err)
		}
		deleteNamespace(ctx, t, c.cs, operatorNamespace)
	})

	t.Run("kustomize", func(t *testing.T) {
		overlay := t.TempDir()
		base, err := filepath.Rel(overlay, filepath.Join(c.root, "config", "default"))
		if err != nil {
			t.Fatal(err)
		}
		kustomization := fmt.Sprintf(`resources:
- %s
images:
- name: ghcr.io/kupenstack/kupenstack
  newName: %s
  newTag: %s
patches:
- target: {kind: Deployment, name: kupenstack}
  patch: '[{"op": "add", "path": "/spec/template/spec/containers/0/imagePullPolicy", "value": "Never"}]'
`, base, operatorRepository, operatorTag)
		if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		c.kubectl(t, "apply", "--server-side", "-k", overlay)
		ns, err := c.cs.CoreV1().Namespaces().Get(ctx, operatorNamespace, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
			t.Errorf("config/default's namespace labels %v: want it to enforce the restricted Pod Security Standard", ns.Labels)
		}
		checkOperator(ctx, t, c, operatorNamespace, "kupenstack", "kupenstack")
		t.Logf("kubectl apply -k to a Ready pod holding the lease: %s", time.Since(start).Round(100*time.Millisecond))
		c.kubectl(t, "delete", "-k", overlay, "--wait=true", "--timeout=3m")
	})
}

// kubectl runs the cluster's kubectl; the test fails when it fails.
func (c *cluster) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(c.root, "bin", "envtest-v1.37.2", "kubectl"), append([]string{"--kubeconfig", c.kubeconfig()}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func deleteNamespace(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("namespace %s not gone: %v", name, err)
	}
}

// checkOperator waits for the operator's Deployment to be available and checks its pod:
// admitted under the restricted Pod Security Standard, running as non-root, metrics and probes
// served, the leader Lease held, no RBAC error in its log and no more rights than its own.
func checkOperator(ctx context.Context, t *testing.T, c *cluster, ns, deployment, serviceAccount string) {
	t.Helper()
	var dep *appsv1.Deployment
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		dep, err = c.cs.AppsV1().Deployments(ns).Get(ctx, deployment, metav1.GetOptions{})
		return err == nil && dep.Status.ObservedGeneration == dep.Generation && dep.Status.AvailableReplicas == 1 && dep.Status.UpdatedReplicas == 1, nil
	}); err != nil {
		pods, _ := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		events, _ := c.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		var sb strings.Builder
		for _, p := range pods.Items {
			fmt.Fprintf(&sb, "pod %s: %s %+v\n", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
		}
		for _, e := range events.Items {
			fmt.Fprintf(&sb, "event %s %s: %s\n", e.InvolvedObject.Name, e.Reason, e.Message)
		}
		t.Fatalf("deployment %s/%s not available: %v\n%s", ns, deployment, err, sb.String())
	}
	sel := metav1.FormatLabelSelector(dep.Spec.Selector)
	pods, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("pods %s: %v, %d", sel, err, len(pods.Items))
	}
	pod := pods.Items[0]
	if pod.Spec.ServiceAccountName != serviceAccount {
		t.Errorf("service account %q, want %q", pod.Spec.ServiceAccountName, serviceAccount)
	}
	sc := pod.Spec.Containers[0].SecurityContext
	if pod.Spec.SecurityContext.RunAsNonRoot == nil || !*pod.Spec.SecurityContext.RunAsNonRoot || sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("security context %+v / %+v: want non-root and a read-only root", pod.Spec.SecurityContext, sc)
	}

	// Metrics and probes, from the node (the bridge reaches the pod). The controllers' metrics
	// appear once their workers run, shortly after the pod is Ready.
	for _, u := range []string{"http://" + pod.Status.PodIP + ":8081/healthz", "http://" + pod.Status.PodIP + ":8081/readyz"} {
		if _, err := httpGet(ctx, u); err != nil {
			t.Errorf("GET %s: %v", u, err)
		}
	}
	metrics := "http://" + pod.Status.PodIP + ":8080/metrics"
	var body string
	if err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		body, _ = httpGet(ctx, metrics)
		return strings.Contains(body, "controller_runtime_active_workers"), nil
	}); err != nil {
		t.Errorf("GET %s: no controller_runtime_active_workers in %d bytes", metrics, len(body))
	}

	// The leader Lease names this pod.
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := c.cs.CoordinationV1().Leases(ns).Get(ctx, leaseName, metav1.GetOptions{})
		return err == nil && l.Spec.HolderIdentity != nil && strings.HasPrefix(*l.Spec.HolderIdentity, pod.Name+"_"), nil
	}); err != nil {
		t.Errorf("lease %s/%s not held by %s: %v", ns, leaseName, pod.Name, err)
	}

	// Only its own rights: its ClusterRole's and Role's, nothing like cluster-admin.
	sa := "system:serviceaccount:" + ns + ":" + serviceAccount
	for _, a := range []struct {
		attrs authzv1.ResourceAttributes
		want  bool
	}{
		{authzv1.ResourceAttributes{Group: "kupenstack.io", Resource: "kupenstackconfigurations", Verb: "list"}, true},
		{authzv1.ResourceAttributes{Group: "coordination.k8s.io", Resource: "leases", Verb: "update", Namespace: ns}, true},
		{authzv1.ResourceAttributes{Group: "*", Resource: "*", Verb: "*"}, false},
		{authzv1.ResourceAttributes{Resource: "nodes", Verb: "delete"}, false},
		{authzv1.ResourceAttributes{Resource: "users", Verb: "impersonate"}, false},
		{authzv1.ResourceAttributes{Resource: "pods", Subresource: "exec", Verb: "create", Namespace: "kube-system"}, false},
		{authzv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "approval", Verb: "update"}, false},
	} {
		sar, err := c.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User: sa, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}, ResourceAttributes: &a.attrs}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sar.Status.Allowed != a.want {
			t.Errorf("%s may %s %s/%s in %q: %v, want %v", sa, a.attrs.Verb, a.attrs.Group, a.attrs.Resource, a.attrs.Namespace, sar.Status.Allowed, a.want)
		}
	}
	// Bound to its own roles only.
	crbs, err := c.cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range crbs.Items {
		for _, s := range b.Subjects {
			if s.Kind == "ServiceAccount" && s.Namespace == ns && s.Name == serviceAccount && !strings.HasPrefix(b.RoleRef.Name, "kupenstack") {
				t.Errorf("ClusterRoleBinding %s binds %s to %s", b.Name, sa, b.RoleRef.Name)
			}
		}
	}
	// A rejected request (RBAC) shows in the log; give the operator a moment to make them.
	time.Sleep(5 * time.Second)
	logs, err := c.cs.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(logs), "forbidden") {
		t.Errorf("the operator was refused something:\n%s", tail(string(logs), 4000))
	}
	t.Logf("operator pod %s on %s (%s) Ready, lease held; log:\n%s", pod.Name, pod.Spec.NodeName, pod.Status.PodIP, tail(string(logs), 1500))
}

func httpGet(ctx context.Context, u string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, body)
	}
	return string(body), err
}
