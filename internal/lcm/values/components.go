package values

import (
	"fmt"
	"sort"
	"strings"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// OpenStack-Helm's default node labels: charts select nodes with <label>=enabled.
const (
	LabelControlPlane = "openstack-control-plane"
	LabelComputeNode  = "openstack-compute-node"
	LabelOpenvswitch  = "openvswitch"
	LabelEnabled      = "enabled"
)

// Upgrade phases, in order: a release upgrade finishes one phase before starting the next.
const (
	PhaseInfra = iota + 1
	PhaseIdentity
	PhaseImagePlacement
	PhaseComputeNetwork
	PhaseDashboard
)

// NodeDaemonSet is a DaemonSet of a chart that takes per-node configuration, in one of
// OpenStack-Helm's two forms: conf.overrides.<Key>.hosts[] = {name, conf} (nova, neutron), or
// the root form overrides.<Key>.labels."<label>::<value>".values (libvirt, ovn), which selects
// nodes by label only: KupenStack keys it on the kubernetes.io/hostname label, the label the
// hosts form schedules by too.
type NodeDaemonSet struct {
	// Key is <chart>_<daemonset> exactly as helm-toolkit builds it from the chart's name and the
	// DaemonSet name its template passes: nova_compute, neutron_ovs-agent, libvirt_libvirt.
	// CheckNodeDaemonSets verifies it against the chart.
	Key string
	// Label is the node label (=enabled) that selects the nodes it runs on.
	Label string
	// RootForm: the chart takes the root form.
	RootForm bool
}

// LabelHostname is the node label the per-node overrides select a node by.
const LabelHostname = "kubernetes.io/hostname"

// Component is one OpenStack-Helm chart KupenStack deploys as one Helm release.
type Component struct {
	Name  string
	Chart string
	// Optional components run only when listed in spec.optionalComponents.
	Optional bool
	// DependsOn: components that must be ready before this one is installed or upgraded.
	DependsOn []string
	// WaitsFor: components some of this one's pods wait for at run time (kubernetes-entrypoint
	// init containers) but none of its Helm hooks does (a hook would hold the install): they
	// need not be ready before its install, which then runs beside theirs, as OpenStack-Helm's
	// own scripts install them (a cycle, nova and neutron, could not be ordered otherwise). None
	// of them depends on this one.
	WaitsFor []string
	// Phase of a release upgrade.
	Phase int
	// Service is the key of the service's own configuration (conf.<Service>); empty for
	// infrastructure charts, which have no OpenStack debug switch.
	Service string
	// DebugKey is where the debug switch goes in the values, dotted (empty: oslo.config's
	// conf.<Service>.DEFAULT.debug); DebugPython: the chart wants Python's "True"/"False".
	DebugKey    string
	DebugPython bool
	// ResourceKeys are the pod.resources.<key> entries (dotted) of the containers of its
	// Deployments, StatefulSets and DaemonSets, as the chart's templates read them.
	ResourceKeys []string
	// ReplicaKeys are the pod.replicas.<key> entries of its control-plane pods.
	ReplicaKeys []string
	// Image is the image name (see Release.Image) of the chart's images.tags keys <chart> and
	// <chart>_*; ImageExceptions name the image of its other keys (see ImageName).
	Image           string
	ImageExceptions map[string]string
	// NodeLabels: the component runs a DaemonSet on nodes with any of these labels.
	NodeLabels []string
	// NodeDaemonSets take per-node overrides.
	NodeDaemonSets []NodeDaemonSet
}

// Image names; Release.Image turns a name into a full reference for the release.
const (
	imgClient     = "openstack-client"
	imgCephHelper = "@ceph-config-helper"
)

// commonImages are the images.tags keys of the helpers every chart may have, by image name:
// the kubernetes-entrypoint init containers, the database, keystone and RabbitMQ set-up jobs
// (OpenStack-Helm runs them with its openstack-client image), the image-sync job and the Rally
// test pod.
var commonImages = map[string]string{
	"dep_check": "@kubernetes-entrypoint", "image_repo_sync": "@docker",
	"db_init": imgClient, "db_drop": imgClient, "bootstrap": imgClient,
	"ks_user": imgClient, "ks_service": imgClient, "ks_endpoints": imgClient,
	"rabbit_init": "@rabbitmq-management", "test": "@rally",
}

// ImageName is the image name (see Release.Image) of one of the chart's images.tags keys: the
// component's exceptions, then the helpers every chart has, then the component's own image for
// <chart> and <chart>_*. A key none of these map is an error, so that a chart version adding a
// key cannot silently run its own default image, of whatever release it defaults to.
func (c Component) ImageName(key string) (string, error) {
	if name, ok := c.ImageExceptions[key]; ok {
		return name, nil
	}
	if name, ok := commonImages[key]; ok {
		return name, nil
	}
	if c.Image != "" && (key == c.Chart || strings.HasPrefix(key, c.Chart+"_")) {
		return c.Image, nil
	}
	return "", fmt.Errorf("chart %s: images.tags.%s has no image in KupenStack's table (internal/lcm/values/components.go); set it in the profile's images", c.Chart, key)
}

// Components are every component KupenStack knows, in a valid install order.
var Components = []Component{
	{Name: "mariadb", Chart: "mariadb", Phase: PhaseInfra, ReplicaKeys: []string{"server"}, ResourceKeys: []string{"server", "controller"},
		Image: "@mariadb", ImageExceptions: map[string]string{"mariadb_backup": "@mariadb-backup",
			"prometheus_create_mysql_user": "@mariadb", "prometheus_mysql_exporter": "@mysqld-exporter",
			"prometheus_mysql_exporter_helm_tests": imgClient, "scripted_test": "@mariadb"}},
	{Name: "rabbitmq", Chart: "rabbitmq", Phase: PhaseInfra, ReplicaKeys: []string{"server"}, ResourceKeys: []string{"server"},
		Image: "@rabbitmq", ImageExceptions: map[string]string{"rabbitmq_init": imgClient,
			"scripted_test": "@rabbitmq-management", "prometheus_rabbitmq_exporter": "@rabbitmq-exporter",
			"prometheus_rabbitmq_exporter_helm_tests": imgClient}},
	{Name: "memcached", Chart: "memcached", Phase: PhaseInfra, ReplicaKeys: []string{"server"}, ResourceKeys: []string{"server"},
		Image: "@memcached", ImageExceptions: map[string]string{"prometheus_memcached_exporter": "@memcached-exporter"}},
	{Name: "openvswitch", Chart: "openvswitch", Phase: PhaseInfra, ResourceKeys: []string{"ovs.db", "ovs.vswitchd"}, Image: "@openvswitch",
		NodeLabels: []string{LabelOpenvswitch}},
	{Name: "keystone", Chart: "keystone", Phase: PhaseIdentity, Service: "keystone",
		DependsOn: []string{"mariadb", "rabbitmq", "memcached"}, ReplicaKeys: []string{"api"}, ResourceKeys: []string{"api"},
		Image: "keystone", ImageExceptions: map[string]string{"keystone_credential_cleanup": imgClient}},
	{Name: "glance", Chart: "glance", Phase: PhaseImagePlacement, Service: "glance",
		DependsOn: []string{"keystone"}, ReplicaKeys: []string{"api"}, ResourceKeys: []string{"api"},
		Image: "glance", ImageExceptions: map[string]string{"glance_storage_init": imgCephHelper}},
	{Name: "cinder", Chart: "cinder", Optional: true, Phase: PhaseImagePlacement, Service: "cinder",
		DependsOn: []string{"keystone"}, ReplicaKeys: []string{"api", "scheduler", "volume"},
		ResourceKeys: []string{"api", "scheduler", "volume", "backup"},
		Image:        "cinder", ImageExceptions: map[string]string{"cinder_storage_init": imgCephHelper,
			"cinder_backup_storage_init": imgCephHelper}},
	{Name: "placement", Chart: "placement", Phase: PhaseImagePlacement, Service: "placement",
		DependsOn: []string{"keystone"}, ReplicaKeys: []string{"api"}, ResourceKeys: []string{"api"}, Image: "placement"},
	{Name: "nova", Chart: "nova", Phase: PhaseComputeNetwork, Service: "nova",
		// Its hook Jobs (databases, keystone users and endpoints, RabbitMQ user) need keystone
		// only; nova-compute waits for glance and neutron-server and, on its node, for the
		// libvirt and neutron-ovs-agent pods, the scheduler for placement; neutron's agents wait
		// for nova-api and nova-metadata. Installed once keystone is ready, its Jobs run while
		// glance and placement come up (make bench-deploy, 2026-11-29: after them, nova was the
		// last component Ready by minutes).
		DependsOn: []string{"keystone"}, WaitsFor: []string{"glance", "placement", "neutron", "libvirt"},
		ReplicaKeys:  []string{"osapi", "api_metadata", "conductor", "scheduler", "novncproxy"},
		ResourceKeys: []string{"api", "api_metadata", "compute", "conductor", "scheduler", "novncproxy"},
		Image:        "nova", ImageExceptions: map[string]string{"nova_cell_setup_init": imgClient,
			"nova_service_cleaner": imgCephHelper, "nova_storage_init": imgCephHelper,
			"nova_wait_for_computes_init": imgCephHelper},
		NodeLabels:     []string{LabelComputeNode},
		NodeDaemonSets: []NodeDaemonSet{{Key: "nova_compute", Label: LabelComputeNode}}},
	{Name: "neutron", Chart: "neutron", Phase: PhaseComputeNetwork, Service: "neutron",
		DependsOn: []string{"keystone", "openvswitch"}, WaitsFor: []string{"nova"}, ReplicaKeys: []string{"server"},
		ResourceKeys: []string{"server", "rpc_server", "agent.ovs", "agent.dhcp", "agent.l3", "agent.metadata", "netns_cleanup_cron"},
		Image:        "neutron", ImageExceptions: map[string]string{"netoffload": "@netoffload", "purge_test": "@ospurge"},
		NodeLabels: []string{LabelOpenvswitch, LabelControlPlane},
		NodeDaemonSets: []NodeDaemonSet{
			{Key: "neutron_ovs-agent", Label: LabelOpenvswitch},
			{Key: "neutron_dhcp-agent", Label: LabelControlPlane},
			{Key: "neutron_l3-agent", Label: LabelControlPlane},
			{Key: "neutron_metadata-agent", Label: LabelControlPlane},
		}},
	// libvirt's pods wait for a neutron-ovs-agent pod on their node (run time only: installed
	// beside neutron), in neutron's phase.
	{Name: "libvirt", Chart: "libvirt", Phase: PhaseComputeNetwork, DependsOn: []string{"openvswitch"}, WaitsFor: []string{"neutron"},
		ResourceKeys: []string{"libvirt"},
		Image:        "@libvirt", ImageExceptions: map[string]string{"ceph_config_helper": imgCephHelper,
			"kubectl": "@kubectl", "libvirt_exporter": "@libvirt-exporter"},
		NodeLabels:     []string{LabelComputeNode},
		NodeDaemonSets: []NodeDaemonSet{{Key: "libvirt_libvirt", Label: LabelComputeNode, RootForm: true}}},
	{Name: "horizon", Chart: "horizon", Optional: true, Phase: PhaseDashboard, Service: "horizon",
		DebugKey: "conf.horizon.local_settings.config.debug", DebugPython: true,
		DependsOn: []string{"keystone"}, ReplicaKeys: []string{"server"}, ResourceKeys: []string{"server"},
		Image: "horizon", ImageExceptions: map[string]string{"test": "@osh-selenium"}},
}

// CheckNodeDaemonSets compares the component's per-node DaemonSets with those its chart takes
// overrides for (key → root form, as helm.NodeDaemonSets reads them from the chart's templates):
// a key the chart does not have, or in the other form, would be silently ignored by the chart,
// so it is an error. A nil chartKeys (a chart not built on helm-toolkit) is not checked.
func (c Component) CheckNodeDaemonSets(chartKeys map[string]bool) error {
	if chartKeys == nil {
		return nil
	}
	var wrong []string
	for _, ds := range c.NodeDaemonSets {
		root, ok := chartKeys[ds.Key]
		switch {
		case !ok:
			wrong = append(wrong, ds.Key+" (no such DaemonSet)")
		case root != ds.RootForm:
			wrong = append(wrong, ds.Key+" (the chart takes the other form)")
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	have := make([]string, 0, len(chartKeys))
	for k := range chartKeys {
		have = append(have, k)
	}
	sort.Strings(have)
	return fmt.Errorf("chart %s does not take KupenStack's per-node overrides %s; its DaemonSets with per-node overrides are %s",
		c.Chart, strings.Join(wrong, ", "), strings.Join(have, ", "))
}

// ComponentByName finds a component.
func ComponentByName(name string) (Component, bool) {
	for _, c := range Components {
		if c.Name == name {
			return c, true
		}
	}
	return Component{}, false
}

// NodeLabels are the OpenStack-Helm labels (all =enabled) of a node with these roles.
func NodeLabels(roles []string) map[string]string {
	labels := map[string]string{}
	for _, r := range roles {
		switch r {
		case kupenstackv1.NodeRoleControl:
			labels[LabelControlPlane] = LabelEnabled
			labels[LabelOpenvswitch] = LabelEnabled
		case kupenstackv1.NodeRoleCompute:
			labels[LabelComputeNode] = LabelEnabled
			labels[LabelOpenvswitch] = LabelEnabled
		}
	}
	return labels
}

// ManagedLabelKeys are every label key KupenStack may set on a node.
var ManagedLabelKeys = []string{LabelComputeNode, LabelControlPlane, LabelOpenvswitch}

// Enabled returns the components to deploy, in install order.
func Enabled(optional []string) []Component {
	on := map[string]bool{}
	for _, o := range optional {
		on[o] = true
	}
	var out []Component
	for _, c := range Components {
		if !c.Optional || on[c.Name] {
			out = append(out, c)
		}
	}
	return out
}

// Selected are the components a configuration deploys: exactly components when it is set
// (spec.components), else the core ones plus the optional ones listed (Enabled). Unknown names
// are left out (the CRD admits none).
func Selected(components, optional []string) []Component {
	if len(components) == 0 {
		return Enabled(optional)
	}
	on := map[string]bool{}
	for _, c := range components {
		on[c] = true
	}
	var out []Component
	for _, c := range Components {
		if on[c.Name] {
			out = append(out, c)
		}
	}
	return out
}

// checkDAG verifies that every dependency exists and comes earlier in Components (so the slice
// order is an install order and there is no cycle).
// A dependency (or a component it waits for at run time) that exists but is not selected is
// a configuration error: spec.components left it out.
func checkDAG(components []Component) error {
	seen, selected := map[string]bool{}, map[string]bool{}
	for _, c := range components {
		selected[c.Name] = true
	}
	for _, c := range components {
		for _, d := range append(append([]string(nil), c.DependsOn...), c.WaitsFor...) {
			if !selected[d] && known(d) {
				return fmt.Errorf("component %s needs %s, which is not deployed: list it in spec.components too", c.Name, d)
			}
		}
		for _, d := range c.DependsOn {
			if !seen[d] {
				return fmt.Errorf("component %s depends on %s, which is unknown or comes later", c.Name, d)
			}
		}
		seen[c.Name] = true
	}
	return nil
}

// known says whether name is one of Components.
func known(name string) bool {
	for _, c := range Components {
		if c.Name == name {
			return true
		}
	}
	return false
}

// runsOn says whether the component has pods on a node carrying labels.
func (c Component) runsOn(labels map[string]string) bool {
	for _, l := range c.NodeLabels {
		if labels[l] == LabelEnabled {
			return true
		}
	}
	return false
}
