package render

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

// TestRealChartsOnCeph: a profile naming a Ceph cluster puts cinder on the charts' RBD backend
// and gives libvirt the cinder user's key, across every chart tag. What the admin provides is
// exactly the Ceph client configuration (the ConfigMap and the admin key's Secret, under the
// names the profile gives); the cinder user's key Secret is made by cinder's storage-init Job,
// which the volume pods wait for. No LVM, iSCSI, privileged cinder-volume or backup service is
// left, and nova keeps its ephemeral disks local.
func TestRealChartsOnCeph(t *testing.T) {
	for _, tag := range realcharts.Tags {
		release := realcharts.Release(tag)
		t.Run(tag, func(t *testing.T) {
			comps := renderReal(t, realSample(t, release, func(d *Documents) {
				for _, p := range d.Profiles {
					p.Ceph = &kupenstackv1.CephClient{ConfigMap: "site-ceph", Secret: "site-ceph-admin", PoolReplicas: 1}
				}
			}), tag)
			var got []string
			for _, m := range unresolved(t, comps) {
				got = append(got, m[:strings.Index(m, " (")])
			}
			want := []string{"ConfigMap/site-ceph", "Secret/cinder-volume-rbd-keyring", "Secret/site-ceph-admin"}
			if !slices.Equal(got, want) {
				t.Errorf("references to objects the cloud does not create: %v, want %v", got, want)
			}
			byName := map[string]Component{}
			for _, c := range comps {
				byName[c.Name] = c
			}
			cinder := byName["cinder"]
			var storageInit, backup bool
			for _, o := range objects(t, cinder) {
				switch {
				case o.Kind == "Job" && o.Metadata.Name == "cinder-storage-init":
					storageInit = true
				case o.Kind == "Deployment" && o.Metadata.Name == "cinder-backup":
					backup = true
				case o.Kind == "Secret" && o.Metadata.Name == "cinder-etc":
					conf := decoded(t, o, "backends.conf")
					if !strings.Contains(conf, "[rbd1]") || !strings.Contains(conf, "cinder.volume.drivers.rbd.RBDDriver") || strings.Contains(conf, "lvm") {
						t.Errorf("backends.conf is not the RBD backend alone:\n%s", conf)
					}
					if c := decoded(t, o, "cinder.conf"); !strings.Contains(c, "enabled_backends = rbd1") {
						t.Errorf("cinder.conf does not enable rbd1")
					}
				}
			}
			if !storageInit || backup {
				t.Errorf("cinder-storage-init Job %v (want true), cinder-backup Deployment %v (want false)", storageInit, backup)
			}
			replication := ""
			var volumeCaps *corev1.Capabilities
			for where, ctr := range containers(t, cinder) {
				// The chart names the container after the backend.
				if where == "Job cinder-storage-init/cinder-storage-init-rbd1" {
					for _, e := range ctr.Env {
						if e.Name == "RBD_POOL_REPLICATION" {
							replication = e.Value
						}
					}
				}
				if sc := ctr.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
					t.Errorf("%s is privileged", where)
				}
				if sc := ctr.SecurityContext; where == "Deployment cinder-volume/cinder-volume" && sc != nil {
					volumeCaps = sc.Capabilities
				}
			}
			// Every capability of cinder's privsep context (cinder/privsep/__init__.py): its
			// daemon fails to start without one, and volumes from an image with it.
			var added []string
			if volumeCaps != nil {
				for _, c := range volumeCaps.Add {
					added = append(added, string(c))
				}
			}
			for _, c := range []string{"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "NET_ADMIN", "SYS_ADMIN"} {
				if !slices.Contains(added, c) {
					t.Errorf("cinder-volume's capabilities add %v, missing %s", added, c)
				}
			}
			if replication != "1" {
				t.Errorf("cinder-storage-init-rbd1: RBD_POOL_REPLICATION %q, want the profile's 1", replication)
			}
			var keyring bool
			for where := range containers(t, byName["libvirt"]) {
				keyring = keyring || strings.HasSuffix(where, "/ceph-keyring-placement")
			}
			if !keyring {
				t.Error("libvirt has no ceph-keyring-placement init container")
			}
			for where := range containers(t, byName["nova"]) {
				if strings.Contains(where, "ceph") {
					t.Errorf("nova mounts Ceph (%s): its ephemeral disks should stay local", where)
				}
			}
		})
	}
}

// decoded is the text under key of a rendered Secret (data, base64) or ConfigMap.
func decoded(t *testing.T, o object, key string) string {
	t.Helper()
	if s, ok := o.StringData[key]; ok {
		return s
	}
	v, ok := o.Data[key]
	if !ok {
		t.Fatalf("%s %s has no %s", o.Kind, o.Metadata.Name, key)
	}
	if o.Kind != "Secret" {
		return v
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		t.Fatalf("%s %s: %s: %v", o.Kind, o.Metadata.Name, key, err)
	}
	return string(b)
}
