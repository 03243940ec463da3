package values

import (
	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// The charts' names for the Ceph client configuration, and the pool size they default to; the
// profile's CRD defaults are the same, repeated here for profiles that never met the API server
// (kupenstack render).
const (
	cephDefaultConfigMap = "ceph-etc"
	cephDefaultSecret    = "pvc-ceph-client-key"
	cephDefaultReplicas  = 3
	// cephBackend is the cinder chart's own RBD backend (pool cinder.volumes, user cinder, and
	// the libvirt secret UUID the libvirt chart defines for that user).
	cephBackend = "rbd1"
)

// Prerequisite is an object a component's pods mount that the cloud does not create: its release
// waits until the object exists rather than leave pods stuck in ContainerCreating.
type Prerequisite struct {
	Kind string // ConfigMap or Secret, in the cloud's namespace
	Name string
	// Why names the setting that asks for it.
	Why string
}

// cephClient is the profile's Ceph client with the defaults filled in; nil without Ceph.
func cephClient(p *kupenstackv1.OpenstackCloudConfigurationProfileSpec) *kupenstackv1.CephClient {
	if p == nil || p.Ceph == nil {
		return nil
	}
	c := *p.Ceph
	if c.ConfigMap == "" {
		c.ConfigMap = cephDefaultConfigMap
	}
	if c.Secret == "" {
		c.Secret = cephDefaultSecret
	}
	if c.PoolReplicas == 0 {
		c.PoolReplicas = cephDefaultReplicas
	}
	return &c
}

// onCeph sets cinder and libvirt up for the profile's Ceph cluster: cinder keeps the chart's
// RBD backend and its storage-init Job (which creates the pool and the cinder user with the
// admin key and stores the user's key for cinder-volume), without the backup service (it
// would need its own pool and user); libvirt's init containers fetch the cinder user's key and
// define it as the libvirt secret nova's volume attachments name. Nova keeps its ephemeral
// disks local. It returns the objects the chart's pods then mount (its prerequisites), nil for
// a chart it leaves alone.
func onCeph(v map[string]any, c Component, ceph *kupenstackv1.CephClient) []Prerequisite {
	client := map[string]any{"configmap": ceph.ConfigMap, "user_secret_name": ceph.Secret}
	switch c.Chart {
	case "cinder":
		set(v, map[string]any{"enabled_backends": cephBackend, "default_volume_type": cephBackend}, "conf", "cinder", "DEFAULT")
		set(v, client, "ceph_client")
		set(v, int64(ceph.PoolReplicas), "conf", "ceph", "pools", "cinder.volumes", "replication")
		// librbd needs no device of the node: the 2025.2.0 charts on make cinder-volume
		// privileged by default, for iSCSI.
		set(v, false, "pod", "security_context", "cinder_volume", "container", "cinder_volume", "privileged")
		// Unprivileged, the container's bounding set must still hold every capability of
		// cinder's privsep context: its daemon (sudo, rootwrap, privsep-helper) keeps exactly
		// those and fails to start ("FailedToDropPrivileges") if one is missing, which breaks
		// volumes made from an image (the format check runs there). The chart adds SYS_ADMIN
		// alone and containerd's defaults hold CHOWN, DAC_OVERRIDE and FOWNER, not
		// DAC_READ_SEARCH or NET_ADMIN.
		set(v, []any{"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "NET_ADMIN", "SYS_ADMIN"},
			"pod", "security_context", "cinder_volume", "container", "cinder_volume", "capabilities", "add")
		for _, m := range []string{"deployment_backup", "job_backup_storage_init", "pvc_backup"} {
			set(v, false, "manifests", m)
		}
	case "libvirt":
		set(v, true, "conf", "ceph", "enabled")
		set(v, client, "ceph_client")
	default:
		return nil
	}
	return []Prerequisite{
		{Kind: "ConfigMap", Name: ceph.ConfigMap, Why: "the profile's spec.ceph.configMap"},
		{Kind: "Secret", Name: ceph.Secret, Why: "the profile's spec.ceph.secret"},
	}
}
