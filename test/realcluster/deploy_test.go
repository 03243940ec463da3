package realcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/chart/loader"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/scheme"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

const (
	chartsNamespace = "kupenstack-charts"
	// cloudNamespace is where the operator installs the cloud's releases (the configuration's
	// default namespace).
	cloudNamespace = "openstack"
	// hostDataDir is where the life-cycle's small-cluster defaults keep MariaDB's and RabbitMQ's
	// data (hostPath) on the node.
	hostDataDir = "/var/lib/openstack-helm"
)

// firstCloud: the components deployed, all from the project's Debian-built images.
var firstCloud = []string{"mariadb", "rabbitmq", "memcached", "keystone"}

// oneNodeValues are the fixes the life-cycle does not already make (docs/lcm.md: replicas,
// storage, ingress and pull policy are its own). MariaDB's controller Deployment needs pykube,
// which Debian does not package, and only elects a primary among replicas: with one replica it
// has nothing to do. (Debian's RabbitMQ 4.0 refuses the charts' classic mirroring policies; with
// one RabbitMQ replica the life-cycle leaves them out itself.)
var oneNodeValues = map[string]string{
	"mariadb": `{"manifests": {"deployment_controller": false}}`,
}

// TestFirstDeployment: the operator, running as its chart's pod, deploys MariaDB, RabbitMQ,
// Memcached and Keystone from the real 2025.1.0 charts onto the real node through the
// life-cycle flow (a KupenstackConfiguration with spec.components and a profile whose images
// are images/release-2025.1.yaml's, pull policy Never). A pod gets a Keystone token with the
// admin clouds.yaml the operator published, the validation agent reports keystone healthy in
// the configuration's status, and deleting the configuration removes every release and pod.
func TestFirstDeployment(t *testing.T) {
	c, chartsDir := startFirstCloudCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()

	// Images: each built (or taken from the cache) and imported, timed.
	images := append([]string{"kupenstack", "kubernetes-entrypoint", "openstack-client"}, firstCloud...)
	for _, name := range images {
		start := time.Now()
		c.importImages(t, name)
		t.Logf("image %s: build or cache + import %s", name, time.Since(start).Round(100*time.Millisecond))
	}
	c.importAgent(t)
	cl := newClient(t, c)

	// The charts, served as a chart repository by a pod (pods reach no host service).
	serveCharts(ctx, t, c, chartsDir)

	hc := installOperator(ctx, t, c, lcmOn)

	// The profile: the release file's images, pull policy Never, one replica, the fixes above.
	profile := oneNodeProfile(t, c.root)
	if err := cl.Create(ctx, profile); err != nil {
		t.Fatal(err)
	}
	cfg := controlNodeConfiguration(ctx, t, c, profile, firstCloud)
	start := time.Now()
	if err := cl.Create(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	waitReady(ctx, t, c, cl, len(firstCloud))
	deployed := time.Since(start)
	t.Logf("first deployment (configuration created to %s ready): %s", strings.Join(firstCloud, ", "), deployed.Round(time.Second))
	t.Logf("memory: %s", clusterMemory(t, c.env))
	t.Logf("pods' memory (cgroup rss):\n%s", podMemory(ctx, t, c))

	// A token from inside the cluster, with the clouds.yaml the operator published.
	token := tokenFromPod(ctx, t, c)
	// Its length only: a token is a credential, even in a test's log.
	t.Logf("keystone token issued in the cluster (%d characters)", len(token))

	// The validation agent's verdict in the configuration's status.
	services := waitHealthy(ctx, t, cl, cfg, "keystone")
	for _, s := range services {
		t.Logf("service %s: healthy=%v %s %s (%d ms)", s.Name, s.Healthy, s.Reason, s.Message, s.LatencyMilliseconds)
		if s.Name != "keystone" && s.Reason != "NotDeployed" {
			t.Errorf("service %s: %s, want NotDeployed (not in spec.components)", s.Name, s.Reason)
		}
	}

	deleteCloud(ctx, t, c, cl, cfg)
	if err := hc.Uninstall("kupenstack"); err != nil {
		t.Fatal(err)
	}
}

// startFirstCloudCluster starts the cluster for a cloud of the real 2025.1.0 charts
// (../shared/openstack-helm/2025.1.0, or under KUPENSTACK_OSH_CHARTS) and returns their
// directory; the data MariaDB and RabbitMQ leave on the node goes with the test (after down).
func startFirstCloudCluster(t *testing.T) (*cluster, string) {
	t.Helper()
	var chartsDir string
	if os.Getenv("KUPENSTACK_REAL_CLUSTER") == "1" {
		chartsDir = realcharts.Dir(t, "2025.1.0")
		if _, err := os.Stat(hostDataDir); os.IsNotExist(err) {
			t.Cleanup(func() { os.RemoveAll(hostDataDir) })
		}
	}
	return startCluster(t), chartsDir
}

// newClient is a controller-runtime client of the cluster with KupenStack's types.
func newClient(t *testing.T, c *cluster) client.Client {
	t.Helper()
	ctrllog.SetLogger(logr.Discard()) // the client's own warnings would print a stack
	cl, err := client.New(c.cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// controlNodeConfiguration is the configuration of release 2025.1 deploying components on the
// cluster's one node, a control node, with profile and the charts pod's repository.
func controlNodeConfiguration(ctx context.Context, t *testing.T, c *cluster, profile *kupenstackv1.OpenstackCloudConfigurationProfile, components []string) *kupenstackv1.KupenstackConfiguration {
	t.Helper()
	nodes, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 1 {
		t.Fatalf("nodes: %v (%d)", err, len(nodes.Items))
	}
	return &kupenstackv1.KupenstackConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: kupenstackv1.KupenstackConfigurationName},
		Spec: kupenstackv1.KupenstackConfigurationSpec{
			Release:        "2025.1",
			Charts:         kupenstackv1.ChartSource{Repository: "http://charts." + chartsNamespace + ".svc.cluster.local/"},
			DefaultProfile: kupenstackv1.ProfileReference{Name: profile.Name, Namespace: profile.Namespace},
			Components:     components,
			Nodes:          []kupenstackv1.ConfiguredNode{{Name: nodes.Items[0].Name, Type: "control"}},
		},
	}
}

// waitHealthy waits until the validation agent reports service healthy in the configuration's
// status, and returns every service's verdict.
func waitHealthy(ctx context.Context, t *testing.T, cl client.Client, cfg *kupenstackv1.KupenstackConfiguration, service string) []kupenstackv1.ServiceHealth {
	t.Helper()
	var services []kupenstackv1.ServiceHealth
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var got kupenstackv1.KupenstackConfiguration
		if err := cl.Get(ctx, client.ObjectKeyFromObject(cfg), &got); err != nil {
			return false, nil
		}
		services = got.Status.Services
		for _, s := range services {
			if s.Name == service && s.Healthy {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("%s not reported healthy by the validation agent: %+v", service, services)
	}
	return services
}

// lcmOn: the life-cycle on, the validation agent probing every 10 s.
var lcmOn = map[string]any{"lcm": "on", "validationPeriod": "10s", "logLevel": "info"}

// lcmAuto: the chart's default life-cycle mode (auto), as a user installs the operator: started
// before any configuration exists, it turns the life-cycle on when the first one is created.
var lcmAuto = map[string]any{"validationPeriod": "10s", "logLevel": "info"}

// installOperator installs the operator from its chart with the image imported and extra values
// and waits until it runs; the client uninstalls it.
func installOperator(ctx context.Context, t *testing.T, c *cluster, extra map[string]any) *helm.Client {
	t.Helper()
	restrictedNamespace(ctx, t, c.cs, operatorNamespace)
	ch, err := loader.Load(filepath.Join(c.root, "charts", "kupenstack"))
	if err != nil {
		t.Fatal(err)
	}
	hc, err := helm.NewClient(c.cfg, operatorNamespace, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{"image": map[string]any{"repository": operatorRepository, "tag": operatorTag, "pullPolicy": "Never"}}
	maps.Copy(values, extra)
	if _, err := hc.Install(ctx, "kupenstack", ch, values, nil, "realcluster test"); err != nil {
		t.Fatal(err)
	}
	checkOperator(ctx, t, c, operatorNamespace, "kupenstack", "kupenstack")
	return hc
}

// deleteCloud deletes the configuration and waits until every release, pod and component is gone.
func deleteCloud(ctx context.Context, t *testing.T, c *cluster, cl client.Client, cfg *kupenstackv1.KupenstackConfiguration) {
	t.Helper()
	start := time.Now()
	if err := cl.Delete(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	ns := cloudNamespace
	if err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := cl.Get(ctx, client.ObjectKeyFromObject(cfg), &kupenstackv1.KupenstackConfiguration{})
		if !apierrors.IsNotFound(err) {
			return false, nil
		}
		rels, err := c.cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
		if err != nil || len(rels.Items) > 0 {
			return false, nil
		}
		pods, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0, nil
	}); err != nil {
		rels, _ := c.cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
		pods, _ := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		var left []string
		for _, s := range rels.Items {
			left = append(left, "release "+s.Labels["name"])
		}
		for _, p := range pods.Items {
			left = append(left, "pod "+p.Name)
		}
		t.Fatalf("after deleting the configuration: %v; left: %v", err, left)
	}
	t.Logf("configuration deleted, every release and pod gone: %s", time.Since(start).Round(time.Second))
	var comps kupenstackv1.OpenstackComponentList
	if err := cl.List(ctx, &comps); err != nil || len(comps.Items) > 0 {
		t.Errorf("OpenstackComponents left: %v %d", err, len(comps.Items))
	}
}

// oneNodeProfile is the profile of the first cloud: every images.tags key the release file maps
// for the deployed charts (dep_check: the kubernetes-entrypoint image), pull policy Never.
func oneNodeProfile(t *testing.T, root string) *kupenstackv1.OpenstackCloudConfigurationProfile {
	t.Helper()
	rel := releaseImages(t, root)
	comps := map[string]kupenstackv1.ComponentProfile{}
	for _, name := range firstCloud {
		cp := kupenstackv1.ComponentProfile{Images: rel.Charts[name]}
		if v, ok := oneNodeValues[name]; ok {
			cp.Values = &runtime.RawExtension{Raw: []byte(v)}
		}
		comps[name] = cp
	}
	return &kupenstackv1.OpenstackCloudConfigurationProfile{
		ObjectMeta: metav1.ObjectMeta{Name: "one-node", Namespace: operatorNamespace},
		Spec: kupenstackv1.OpenstackCloudConfigurationProfileSpec{
			Replicas: ptr.To[int32](1), ImagePullPolicy: corev1.PullNever, Components: comps,
		},
	}
}

// serveCharts runs the agent as a chart repository of dir (a read-only hostPath) behind the
// Service charts.kupenstack-charts:80.
func serveCharts(ctx context.Context, t *testing.T, c *cluster, dir string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chartsNamespace}}
	if _, err := c.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitServiceAccount(ctx, t, c, chartsNamespace)
	serveFiles(ctx, t, c, "charts", dir, "/index.yaml")
}

// serveFiles serves the host directory dir read-only at http://NAME.<chartsNamespace>.svc.cluster.local/
// from an agent pod and a Service, both called name; it returns once readyPath answers.
func serveFiles(ctx context.Context, t *testing.T, c *cluster, name, dir, readyPath string) {
	t.Helper()
	pod := agentPod(name, corev1.RestartPolicyAlways, "files", "/files", ":8080")
	pod.Labels = map[string]string{"app": name}
	pod.Spec.Volumes = []corev1.Volume{{Name: "files", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: ptr.To(corev1.HostPathDirectory)}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "files", MountPath: "/files", ReadOnly: true}}
	pod.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 1,
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: readyPath, Port: intstr.FromInt32(8080)}}}
	if _, err := c.cs.CoreV1().Pods(chartsNamespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cs.CoreV1().Services(chartsNamespace).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Selector: pod.Labels,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(ctx, t, c.cs, chartsNamespace, name, containerReady)
}

func waitServiceAccount(ctx context.Context, t *testing.T, c *cluster, ns string) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatal("no default ServiceAccount:", err)
	}
}

// waitReady waits until every component of the configuration is ready, logging the progress.
func waitReady(ctx context.Context, t *testing.T, c *cluster, cl client.Client, want int) {
	t.Helper()
	start, last := time.Now(), ""
	err := wait.PollUntilContextTimeout(ctx, 3*time.Second, 30*time.Minute, true, func(ctx context.Context) (bool, error) {
		var got kupenstackv1.KupenstackConfiguration
		if err := cl.Get(ctx, client.ObjectKey{Name: kupenstackv1.KupenstackConfigurationName}, &got); err != nil {
			return false, nil
		}
		var parts []string
		ready := 0
		for _, s := range got.Status.Components {
			parts = append(parts, fmt.Sprintf("%s=%s/%v", s.Name, s.Phase, s.Ready))
			if s.Ready {
				ready++
			}
		}
		line := fmt.Sprintf("ready %s: %s", got.Status.ReadyComponents, strings.Join(parts, " "))
		for _, cond := range got.Status.Conditions {
			if cond.Type == kupenstackv1.ConditionDegraded && cond.Status == metav1.ConditionTrue {
				line += " DEGRADED " + cond.Reason + ": " + cond.Message
			}
		}
		if line != last {
			t.Logf("[%s] %s", time.Since(start).Round(time.Second), line)
			last = line
		}
		return ready == want && len(got.Status.Components) == want, nil
	})
	if err != nil {
		t.Fatalf("components not ready: %v\n%s", err, cloudReport(ctx, c))
	}
}

// cloudReport is what a failed wait for the cloud shows: every cloud pod's containers and the
// operator's log.
func cloudReport(ctx context.Context, c *cluster) string {
	pods, _ := c.cs.CoreV1().Pods(cloudNamespace).List(ctx, metav1.ListOptions{})
	var sb strings.Builder
	for _, p := range pods.Items {
		fmt.Fprintf(&sb, "pod %s: %s", p.Name, p.Status.Phase)
		for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			st, _ := json.Marshal(s.State)
			fmt.Fprintf(&sb, " %s ready=%v restarts=%d %s;", s.Name, s.Ready, s.RestartCount, st)
		}
		sb.WriteString("\n")
	}
	logs, _ := c.cs.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=kupenstack"})
	for _, p := range logs.Items {
		l, _ := c.cs.CoreV1().Pods(operatorNamespace).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		fmt.Fprintf(&sb, "operator log:\n%s\n", tail(string(l), 6000))
	}
	return sb.String()
}

// tokenFromPod runs `openstack token issue` in a pod of the openstack-client image with the
// published clouds.yaml, in the operator's namespace (restricted: the pod is too).
func tokenFromPod(ctx context.Context, t *testing.T, c *cluster) string {
	t.Helper()
	out, err := openstackCLI(ctx, t, c, "token", "token", "issue", "-f", "value", "-c", "id")
	if err != nil {
		t.Fatal(err)
	}
	if out == "" || strings.ContainsAny(out, " \n") {
		t.Fatalf("openstack token issue printed no token (%d characters, not one word)", len(out))
	}
	return out
}

// openstackCLI runs `openstack --os-cloud openstack ARGS` as the cloud's admin in a pod named
// name-<n> of the openstack-client image with the published clouds.yaml, in the operator's
// (restricted) namespace, and returns its output; a failed command is an error with the output.
func openstackCLI(ctx context.Context, t *testing.T, c *cluster, name string, args ...string) (string, error) {
	t.Helper()
	return clientPod(ctx, t, c, name, append([]string{"openstack", "--os-cloud", "openstack"}, args...))
}

// openstackShell is openstackCLI for a shell script (OS_CLOUD=openstack set, /tmp writable).
func openstackShell(ctx context.Context, t *testing.T, c *cluster, name, script string) (string, error) {
	t.Helper()
	return clientPod(ctx, t, c, name, []string{"sh", "-ec", script})
}

// clientPods numbers the client pods: a name the caller reuses (a console read again, a report
// made twice) must not meet the pod of the call before, which may still be terminating.
var clientPods atomic.Int64

func clientPod(ctx context.Context, t *testing.T, c *cluster, name string, command []string) (string, error) {
	t.Helper()
	name = fmt.Sprintf("%s-%d", name, clientPods.Add(1))
	secret, err := c.cs.CoreV1().Secrets(operatorNamespace).Get(ctx, "kupenstack-cloud", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the published clouds.yaml: %v", err)
	}
	if len(secret.Data["clouds.yaml"]) == 0 {
		t.Fatalf("secret kupenstack-cloud has no clouds.yaml: keys %v", keys(secret.Data))
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](42424),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name: "client", Image: "kupenstack.local/openstack/openstack-client:2025.1-trixie", ImagePullPolicy: corev1.PullNever,
				Command: command,
				Env:     []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}, {Name: "OS_CLOUD", Value: "openstack"}},
				VolumeMounts: []corev1.VolumeMount{{Name: "clouds", MountPath: "/etc/openstack", ReadOnly: true},
					{Name: "tmp", MountPath: "/tmp"}},
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
			Volumes: []corev1.Volume{
				{Name: "clouds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "kupenstack-cloud"}}},
				{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
		},
	}
	pods := c.cs.CoreV1().Pods(operatorNamespace)
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pods.Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{}) }()
	p := waitPod(ctx, t, c.cs, operatorNamespace, name, func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	})
	logs, err := pods.GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != corev1.PodSucceeded {
		return "", fmt.Errorf("%s failed:\n%s", strings.Join(command, " "), logs)
	}
	return strings.TrimSpace(string(logs)), nil
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// podMemory lists each pod's resident memory (total_rss of its memory cgroup) and the total.
func podMemory(ctx context.Context, t *testing.T, c *cluster) string {
	t.Helper()
	pods, err := c.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	names := map[string]string{}
	for _, p := range pods.Items {
		names[strings.ReplaceAll(string(p.UID), "-", "_")] = p.Namespace + "/" + p.Name
		names[string(p.UID)] = p.Namespace + "/" + p.Name
	}
	dirs, _ := filepath.Glob("/sys/fs/cgroup/memory/kubepods/*pod*")
	more, _ := filepath.Glob("/sys/fs/cgroup/memory/kubepods/*/pod*")
	var lines []string
	var total int64
	for _, d := range append(dirs, more...) {
		uid := strings.TrimPrefix(filepath.Base(d), "pod")
		name, ok := names[uid]
		if !ok {
			continue
		}
		rss := cgroupRSS(d)
		total += rss
		lines = append(lines, fmt.Sprintf("%6.0f MiB  %s", float64(rss)/(1<<20), name))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + fmt.Sprintf("\n%6.0f MiB  all pods", float64(total)/(1<<20))
}

func cgroupRSS(dir string) int64 {
	data, err := os.ReadFile(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "total_rss "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
