package realcluster

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/imagebuild"
)

// cephNamespace holds the one-node Ceph the tests give the cloud as its volume backend, the way
// an admin brings an existing Ceph (Rook, cephadm, ...): KupenStack only reads its client
// configuration.
const cephNamespace = "kupenstack-ceph"

// cephOSDBytes is the size of the test cluster's one OSD (a sparse file on the node).
const cephOSDBytes = "10737418240"

// startCeph runs a one-node Ceph on the node (the ceph image's kupenstack-ceph-one-node, its
// state in an emptyDir) with a new admin key, and gives the cloud's namespace its client
// configuration under the charts' names: the ConfigMap ceph-etc (mon_host) and the Secret
// pvc-ceph-client-key (client.admin's key). It runs on the pod network, at its pod's address:
// pods here reach no address of the node, and the node (libvirt's QEMU) reaches pods.
func startCeph(ctx context.Context, t *testing.T, c *cluster, image string) {
	t.Helper()
	start := time.Now()
	key := cephKey(t)
	for _, ns := range []string{cephNamespace, cloudNamespace} {
		if _, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	waitServiceAccount(ctx, t, c, cephNamespace)
	admin := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ceph-admin"}, Data: map[string][]byte{"key": []byte(key)}}
	if _, err := c.cs.CoreV1().Secrets(cephNamespace).Create(ctx, admin, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "ceph", Labels: map[string]string{"app": "ceph"}},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr.To[int64](5),
			Containers: []corev1.Container{{
				Name: "ceph", Image: image, ImagePullPolicy: corev1.PullNever,
				Command: []string{"kupenstack-ceph-one-node"},
				Env: []corev1.EnvVar{
					{Name: "CEPH_PUBLIC_ADDR", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
					{Name: "CEPH_ADMIN_KEY_FILE", Value: "/etc/ceph-admin/key"},
					{Name: "CEPH_OSD_BYTES", Value: cephOSDBytes},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "state", MountPath: "/var/lib/ceph"},
					{Name: "admin", MountPath: "/etc/ceph-admin", ReadOnly: true},
				},
				ReadinessProbe: &corev1.Probe{PeriodSeconds: 2, ProbeHandler: corev1.ProbeHandler{
					Exec: &corev1.ExecAction{Command: []string{"test", "-e", "/run/ceph/kupenstack-ready"}}}},
			}},
			Volumes: []corev1.Volume{
				{Name: "state", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "admin", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "ceph-admin"}}},
			},
		},
	}
	if _, err := c.cs.CoreV1().Pods(cephNamespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := waitPod(ctx, t, c.cs, cephNamespace, pod.Name, containerReady)
	conf := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ceph-etc"}, Data: map[string]string{
		// Ceph's parser refuses a last line without its newline.
		"ceph.conf": "[global]\nmon_host = [v2:" + got.Status.PodIP + ":3300]\n"}}
	if _, err := c.cs.CoreV1().ConfigMaps(cloudNamespace).Create(ctx, conf, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	client := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pvc-ceph-client-key"}, Data: map[string][]byte{"key": []byte(key)}}
	if _, err := c.cs.CoreV1().Secrets(cloudNamespace).Create(ctx, client, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("one-node Ceph ready on %s:3300 in %s", got.Status.PodIP, time.Since(start).Round(100*time.Millisecond))
}

// cephKey is a new cephx secret as ceph-authtool --gen-print-key prints it: base64 of the key's
// type (1, AES), its creation time (seconds, nanoseconds), its length and 16 random bytes, little
// endian.
func cephKey(t *testing.T) string {
	t.Helper()
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	b := binary.LittleEndian.AppendUint16(nil, 1)
	b = binary.LittleEndian.AppendUint32(b, uint32(now.Unix()))
	b = binary.LittleEndian.AppendUint32(b, uint32(now.Nanosecond()))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(secret)))
	return base64.StdEncoding.EncodeToString(append(b, secret...))
}

// cephCLI runs a ceph or rbd command in the Ceph pod, as its admin.
func cephCLI(t *testing.T, c *cluster, args ...string) string {
	t.Helper()
	return c.kubectl(t, append([]string{"-n", cephNamespace, "exec", "ceph", "--"}, args...)...)
}

// TestCinderOnCeph: the operator deploys cinder on a Ceph cluster the admin brings (a one-node
// Ceph in a pod on the node, no kernel module), with the first cloud it needs (MariaDB, RabbitMQ,
// Memcached, Keystone), from the real 2025.1.0 charts: cinder's storage-init Job creates the
// pool and the cinder user, a volume created through the API becomes available as an RBD image
// in that pool, and is gone from it once deleted; the validation agent reports cinder healthy.
// Before the Ceph client configuration exists, cinder waits and says for what.
func TestCinderOnCeph(t *testing.T) {
	c, chartsDir := startFirstCloudCluster(t)
	holdOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	components := append(slices.Clone(firstCloud), "cinder")
	for _, name := range append([]string{"kupenstack", "kubernetes-entrypoint", "openstack-client", "ceph"}, components...) {
		c.importImages(t, name)
	}
	c.importAgent(t)
	cl := newClient(t, c)
	serveCharts(ctx, t, c, chartsDir)
	hc := installOperator(ctx, t, c, lcmOn)

	rel := releaseImages(t, c.root)
	profile := oneNodeProfile(t, c.root)
	profile.Spec.Components["cinder"] = kupenstackv1.ComponentProfile{Images: rel.Charts["cinder"]}
	profile.Spec.Ceph = &kupenstackv1.CephClient{PoolReplicas: 1}
	if err := cl.Create(ctx, profile); err != nil {
		t.Fatal(err)
	}
	cfg := controlNodeConfiguration(ctx, t, c, profile, components)
	start := time.Now()
	if err := cl.Create(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	// Until the admin gives the Ceph client configuration, cinder waits and says why.
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var comp kupenstackv1.OpenstackComponent
		if err := cl.Get(ctx, client.ObjectKey{Name: "cinder"}, &comp); err != nil {
			return false, nil
		}
		for _, cond := range comp.Status.Conditions {
			if strings.Contains(cond.Message, "waiting for the ConfigMap "+cloudNamespace+"/ceph-etc") {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatal("cinder does not say it waits for the ConfigMap ceph-etc:", err)
	}
	startCeph(ctx, t, c, rel.Images["ceph"])
	waitReady(ctx, t, c, cl, len(components))
	t.Logf("cinder on Ceph with the first cloud (configuration created to %d components ready): %s", len(components), time.Since(start).Round(time.Second))
	t.Logf("memory: %s", clusterMemory(t, c.env))
	t.Logf("pods' memory (cgroup rss):\n%s", podMemory(ctx, t, c))

	// A volume through the API: an RBD image in the pool storage-init made (named after the
	// volume: the chart's volume_name_template is "%s"), gone once the volume is deleted.
	out, err := openstackShell(ctx, t, c, "volume", volumeAPI+`id=$(api -X POST -d '{"volume": {"size": 1, "name": "probe"}}' "$url/volumes" | field id)
for i in $(seq 90); do
  s=$(api "$url/volumes/$id" | field status)
  case $s in available|error) break ;; esac
  sleep 2
done
echo "$id $s"`)
	if err != nil {
		t.Fatal(err)
	}
	var id, status string
	if _, err := fmt.Sscan(lastLine(out), &id, &status); err != nil || status != "available" {
		t.Fatalf("the volume is not available: %q", out)
	}
	if images := cephCLI(t, c, "rbd", "ls", "cinder.volumes"); !strings.Contains(images, id) {
		t.Fatalf("no RBD image %s in the pool cinder.volumes: %q", id, images)
	}
	t.Logf("volume %s available, an RBD image in cinder.volumes", id)
	if _, err := openstackShell(ctx, t, c, "volume-delete", volumeAPI+`api -X DELETE "$url/volumes/`+id+`"
for i in $(seq 60); do
  [ "$(api -o /dev/null -w '%{http_code}' "$url/volumes/`+id+`")" = 404 ] && exit 0
  sleep 2
done
echo "the volume is still there"; exit 1`); err != nil {
		t.Fatal(err)
	}
	if images := cephCLI(t, c, "rbd", "ls", "cinder.volumes"); strings.Contains(images, id) {
		t.Errorf("the RBD image of the deleted volume is still there: %q", images)
	}

	waitHealthy(ctx, t, cl, cfg, "cinder")
	deleteCloud(ctx, t, c, cl, cfg)
	if err := hc.Uninstall("kupenstack"); err != nil {
		t.Fatal(err)
	}
}

// releaseImages reads images/release-2025.1.yaml.
func releaseImages(t *testing.T, root string) *imagebuild.Release {
	t.Helper()
	return releaseImagesOf(t, root, "2025.1")
}

// volumeAPI starts a client pod's script that calls the block storage API with curl: the
// openstack client (7.4) looks up the image service's endpoint for any volume command, and this
// cloud has no glance. It defines api (curl with the admin's token), field (a volume's field from
// the response) and url (the admin project's volume endpoint).
const volumeAPI = `tok=$(openstack token issue -f value -c id)
pid=$(openstack token issue -f value -c project_id)
url=$(openstack endpoint list --service volumev3 --interface internal -f value -c URL | sed "s/%(tenant_id)s/$pid/")
api() { curl -sS -H "X-Auth-Token: $tok" -H 'Content-Type: application/json' "$@"; }
field() { python3 -c 'import json, sys; print(json.load(sys.stdin)["volume"]["'"$1"'"])'; }
`

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
