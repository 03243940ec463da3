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
	// WaitsFor: components of the same phase some of this one's pods wait for at run time
	// (kubernetes-entrypoint init containers) that cannot be install dependencies because of a
	// cycle; both are installed side by side and become ready together. No Helm hook waits for
	// them (a hook would hold the install), and none of them depends on this one.
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
	// Images are the images.tags.<key> entries, each with its image name (see Release.Image).
	Images map[string]string
	// NodeLabels: the component runs a DaemonSet on nodes with any of these labels.
	NodeLabels []string
	// NodeDaemonSets take per-node overrides.
	NodeDaemonSets []NodeDaemonSet
}

// Helper images every OpenStack chart uses (kubernetes-entrypoint and the bootstrap jobs).
func withCommon(images map[string]string) map[string]string {
	out := map[string]string{"dep_check": imgEntrypoint, "db_init": imgHeat, "db_drop": imgHeat,
		"ks_user": imgHeat, "ks_service": imgHeat, "ks_endpoints": imgHeat, "rabbit_init": imgRabbitmq}
	for k, v := range images {
		out[k] = v
	}
	return out
}

// Image names; Release.Image turns a name into a full reference for the release.
const (
	imgEntrypoint = "@kubernetes-entrypoint"
	imgHeat       = "heat"
	imgRabbitmq   = "@rabbitmq"
	imgMariadb    = "@mariadb"
	imgMemcached  = "@memcached"
	imgOVS        = "@openvswitch"
	imgLibvirt    = "@libvirt"
)

// Components are every component KupenStack knows, in a valid install order.
var Components = []Component{
	{Name: "mariadb", Chart: "mariadb", ResourceKeys: []string{"server", "controller"}, Phase: PhaseInfra, ReplicaKeys: []string{"server"},
		Images: map[string]string{"mariadb": imgMariadb, "dep_check": imgEntrypoint}},
	{Name: "rabbitmq", Chart: "rabbitmq", ResourceKeys: []string{"server"}, Phase: PhaseInfra, ReplicaKeys: []string{"server"},
		Images: map[string]string{"rabbitmq": imgRabbitmq, "dep_check": imgEntrypoint}},
	{Name: "memcached", Chart: "memcached", ResourceKeys: []string{"server"}, Phase: PhaseInfra, ReplicaKeys: []string{"server"},
		Images: map[string]string{"memcached": imgMemcached, "dep_check": imgEntrypoint}},
	{Name: "openvswitch", Chart: "openvswitch", ResourceKeys: []string{"ovs.db", "ovs.vswitchd"}, Phase: PhaseInfra,
		Images:     map[string]string{"openvswitch_db_server": imgOVS, "openvswitch_vswitchd": imgOVS, "dep_check": imgEntrypoint},
		NodeLabels: []string{LabelOpenvswitch}},
	{Name: "keystone", Chart: "keystone", ResourceKeys: []string{"api"}, Phase: PhaseIdentity, Service: "keystone",
		DependsOn: []string{"mariadb", "rabbitmq", "memcached"}, ReplicaKeys: []string{"api"},
		Images: withCommon(map[string]string{"keystone_api": "keystone", "keystone_db_sync": "keystone",
			"keystone_bootstrap": "keystone", "keystone_fernet_setup": "keystone", "keystone_credential_setup": "keystone"})},
	{Name: "glance", Chart: "glance", ResourceKeys: []string{"api"}, Phase: PhaseImagePlacement, Service: "glance",
		DependsOn: []string{"keystone"}, ReplicaKeys: []string{"api"},
		Images: withCommon(map[string]string{"glance_api": "glance", "glance_db_sync": "glance"})},
	{Name: "cinder", Chart: "cinder", Optional: true, ResourceKeys: []string{"api", "scheduler", "volume", "backup"}, Phase: PhaseImagePlacement, Service: "cinder",
		DependsOn: []string{"keystone"}, ReplicaKeys: []string{"api", "scheduler", "volume"},
		Images: withCommon(map[string]string{"cinder_api": "cinder", "cinder_db_sync": "cinder",
			"cinder_scheduler": "cinder", "cinder_volume": "cinder"})},
	{Name: "placement", Chart: "placement", ResourceKeys: []string{"api"}, Phase: PhaseImagePlacement, Service: "placement",
		DependsOn: []string{"keystone"}, ReplicaKeys: []string{"api"},
		Images: withCommon(map[string]string{"placement": "placement", "placement_db_sync": "placement"})},
	{Name: "nova", Chart: "nova", ResourceKeys: []string{"api", "api_metadata", "compute", "conductor", "scheduler", "novncproxy"}, Phase: PhaseComputeNetwork, Service: "nova",
		// nova-compute waits for neutron-server and, on its node, for the libvirt and
		// neutron-ovs-agent pods; neutron's agents wait for nova-api and nova-metadata.
		DependsOn: []string{"keystone", "glance", "placement"}, WaitsFor: []string{"neutron", "libvirt"},
		ReplicaKeys: []string{"osapi", "api_metadata", "conductor", "scheduler", "novncproxy"},
		Images: withCommon(map[string]string{"nova_api": "nova", "nova_compute": "nova", "nova_conductor": "nova",
			"nova_scheduler": "nova", "nova_novncproxy": "nova", "nova_db_sync": "nova", "nova_cell_setup": "nova"}),
		NodeLabels:     []string{LabelComputeNode},
		NodeDaemonSets: []NodeDaemonSet{{Key: "nova_compute", Label: LabelComputeNode}}},
	{Name: "neutron", Chart: "neutron", ResourceKeys: []string{"server", "rpc_server", "agent.ovs", "agent.dhcp", "agent.l3", "agent.metadata", "netns_cleanup_cron"}, Phase: PhaseComputeNetwork, Service: "neutron",
		DependsOn: []string{"keystone", "openvswitch"}, WaitsFor: []string{"nova"}, ReplicaKeys: []string{"server"},
		Images: withCommon(map[string]string{"neutron_server": "neutron", "neutron_db_sync": "neutron",
			"neutron_openvswitch_agent": "neutron", "neutron_dhcp": "neutron", "neutron_l3": "neutron", "neutron_metadata": "neutron"}),
		NodeLabels: []string{LabelOpenvswitch, LabelControlPlane},
		NodeDaemonSets: []NodeDaemonSet{
			{Key: "neutron_ovs-agent", Label: LabelOpenvswitch},
			{Key: "neutron_dhcp-agent", Label: LabelControlPlane},
			{Key: "neutron_l3-agent", Label: LabelControlPlane},
			{Key: "neutron_metadata-agent", Label: LabelControlPlane},
		}},
	// libvirt's pods wait for a neutron-ovs-agent pod on their node, so it comes after neutron,
	// in neutron's phase.
	{Name: "libvirt", Chart: "libvirt", ResourceKeys: []string{"libvirt"}, Phase: PhaseComputeNetwork, DependsOn: []string{"openvswitch", "neutron"},
		Images:         map[string]string{"libvirt": imgLibvirt, "dep_check": imgEntrypoint},
		NodeLabels:     []string{LabelComputeNode},
		NodeDaemonSets: []NodeDaemonSet{{Key: "libvirt_libvirt", Label: LabelComputeNode, RootForm: true}}},
	{Name: "horizon", Chart: "horizon", Optional: true, DebugKey: "conf.horizon.local_settings.config.debug", DebugPython: true, ResourceKeys: []string{"server"}, Phase: PhaseDashboard, Service: "horizon",
		DependsOn: []string{"keystone"}, ReplicaKeys: []string{"server"},
		Images: withCommon(map[string]string{"horizon": "horizon", "horizon_db_sync": "horizon"})},
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

// checkDAG verifies that every dependency exists and comes earlier in Components (so the slice
// order is an install order and there is no cycle).
func checkDAG(components []Component) error {
	seen := map[string]bool{}
	for _, c := range components {
		for _, d := range c.DependsOn {
			if !seen[d] {
				return fmt.Errorf("component %s depends on %s, which is unknown or comes later", c.Name, d)
			}
		}
		seen[c.Name] = true
	}
	return nil
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

// imageKeys are the component's images.tags keys, sorted.
func (c Component) imageKeys() []string {
	keys := make([]string, 0, len(c.Images))
	for k := range c.Images {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
