package values

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// Node is one configured node, as rendering needs it.
type Node struct {
	Name     string
	Roles    []string
	Disabled bool
	// Profile is the node's own profile, if any.
	Profile *kupenstackv1.OpenstackCloudConfigurationProfileSpec
}

// Input is everything that decides the values.
type Input struct {
	Release string
	// Components (spec.components) and OptionalComponents: see Selected.
	Components         []string
	OptionalComponents []string
	// Profile is the default profile (nil: release defaults only).
	Profile *kupenstackv1.OpenstackCloudConfigurationProfileSpec
	Nodes   []Node
}

// ComponentValues are the Helm values of one component's release.
type ComponentValues struct {
	Component    Component
	ChartVersion string
	Values       map[string]any
	// Hash of Values and of how the chart's other images are decided: a release needs an
	// upgrade exactly when it changes.
	Hash string
	// ImageTags are the rendered images.tags: those the profile sets, and after ForChart every
	// image of the chart.
	ImageTags map[string]string
	// Prerequisites are the objects of the cloud's namespace the pods mount (Ceph's client
	// configuration): no Helm action until they exist.
	Prerequisites []Prerequisite
	// images decides, in ForChart, the images the values leave to the chart.
	images imagePlan
	// drop are the chart's entries ForChart removes unless the values set them.
	drop [][]string
	// noQueueMirroring: the cloud's RabbitMQ runs one replica, so ForChart takes the classic
	// mirroring keys out of the chart's RabbitMQ policies.
	noQueueMirroring bool
}

// imagePlan decides a chart's images.tags entries the values do not set: the profile's images
// by key, else the release table's image (ImageName) moved to Registry.
type imagePlan struct {
	Release  Release           `json:"release"`
	Registry string            `json:"registry,omitempty"`
	Profile  map[string]string `json:"profile,omitempty"`
}

// NodeOverride is one per-node entry: conf.overrides.<DaemonSet>.hosts[] = {name, conf}.
type NodeOverride struct {
	Component, DaemonSet string
	Conf                 map[string]any
}

// NodeValues is what one node gets.
type NodeValues struct {
	// Labels are the OpenStack-Helm labels the node carries (none when disabled).
	Labels map[string]string
	// Components with pods on the node, sorted.
	Components []string
	// Overrides are its per-node entries, by component then DaemonSet.
	Overrides []NodeOverride
	// Ignored lists the fields of the node's profile that cannot apply to one node.
	Ignored []string
	Hash    string
}

// Output is the rendering of a whole cloud.
type Output struct {
	Release Release
	// Components in install order.
	Components []ComponentValues
	Nodes      map[string]NodeValues
}

// Render computes every component's values and every node's entries. Merge order, weakest
// first: release defaults; the profile's debug, replicas, resources, imageRegistry (on the
// release's default images only) and images; the profile's components.<c>.{debug, replicas,
// images}; components.<c>.values; components.<c>.conf (into values.conf). Then each enabled
// node's own profile contributes, for the node-level DaemonSets the node runs, its debug and
// components.<c>.conf as the node's conf.overrides.<chart>_<daemonset>.hosts[] entry, or for
// charts taking the root form, overrides.<chart>_<daemonset>.labels."kubernetes.io/hostname::<node>".values.conf.
func Render(in Input) (*Output, error) {
	rel, err := LookupRelease(in.Release)
	if err != nil {
		return nil, err
	}
	components := Selected(in.Components, in.OptionalComponents)
	if err := checkDAG(components); err != nil {
		return nil, err
	}
	out := &Output{Release: rel, Nodes: map[string]NodeValues{}}
	perComponent := map[string][]hostEntry{}

	nodes := append([]Node(nil), in.Nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		nv, err := renderNode(n, components)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		out.Nodes[n.Name] = nv
		for _, o := range nv.Overrides {
			perComponent[o.Component] = append(perComponent[o.Component], hostEntry{n.Name, o.DaemonSet, o.Conf})
		}
	}
	for _, c := range components {
		cv, err := renderComponent(c, in.Profile)
		if err != nil {
			return nil, fmt.Errorf("component %s: %w", c.Name, err)
		}
		addNodeOverrides(cv.Values, c, perComponent[c.Name])
		cv.ChartVersion, cv.images = rel.ChartVersion, imagePlan{Release: rel}
		if in.Profile != nil {
			cv.images.Registry, cv.images.Profile = in.Profile.ImageRegistry, in.Profile.Images
		}
		out.Components = append(out.Components, cv)
	}
	oneMessagingCluster(out.Components)
	for i := range out.Components {
		cv := &out.Components[i]
		h := map[string]any{"values": cv.Values, "images": cv.images}
		if cv.noQueueMirroring { // only then: the hashes of every other cloud stay as they were
			h["noQueueMirroring"] = true
		}
		cv.Hash = Hash(h)
	}
	return out, nil
}

// oneMessagingCluster makes the service charts agree with the RabbitMQ chart on its size: each
// chart lists the RabbitMQ pods in its transport URL from its own
// endpoints.oslo_messaging.statefulset.replicas (default 2), which would name a pod that does
// not exist when the rabbitmq component runs one. With one replica there is nothing to mirror
// to, so the charts' classic mirroring policies (ha-mode, ha-sync-mode) go too: RabbitMQ 4,
// which Debian ships, refuses them and the charts' rabbit-init Jobs failed. Values that set
// either themselves keep them.
func oneMessagingCluster(cvs []ComponentValues) {
	var replicas any
	for _, cv := range cvs {
		if cv.Component.Chart == "rabbitmq" {
			replicas, _ = get(cv.Values, "pod", "replicas", "server")
		}
	}
	if replicas == nil {
		return
	}
	for i := range cvs {
		cv := &cvs[i]
		if cv.Component.Service == "" {
			continue
		}
		if _, given := get(cv.Values, "endpoints", "oslo_messaging", "statefulset", "replicas"); !given {
			set(cv.Values, replicas, "endpoints", "oslo_messaging", "statefulset", "replicas")
		}
		cv.noQueueMirroring = fmt.Sprint(replicas) == "1" // int64 from the profile, json.Number from values
	}
}

// mirroringKeys are the policy definition keys of RabbitMQ's classic queue mirroring.
var mirroringKeys = []string{"ha-mode", "ha-params", "ha-sync-mode", "ha-sync-batch-size", "ha-promote-on-shutdown", "ha-promote-on-failure"}

// withoutQueueMirroring sets conf.rabbitmq.policies to the chart's own without the mirroring
// keys, unless vals set the policies.
func withoutQueueMirroring(chartValues, vals map[string]any) {
	if _, given := get(vals, "conf", "rabbitmq", "policies"); given {
		return
	}
	declared, _ := get(chartValues, "conf", "rabbitmq", "policies")
	list, _ := declared.([]any)
	changed := false
	kept := make([]any, 0, len(list))
	for _, p := range list {
		pm, ok := p.(map[string]any)
		def, _ := pm["definition"].(map[string]any)
		if !ok || def == nil {
			kept = append(kept, p)
			continue
		}
		nd := map[string]any{}
		for k, v := range def {
			if slices.Contains(mirroringKeys, k) {
				changed = true
				continue
			}
			nd[k] = v
		}
		np := maps.Clone(pm)
		np["definition"] = nd
		kept = append(kept, np)
	}
	if changed {
		set(vals, kept, "conf", "rabbitmq", "policies")
	}
}

type hostEntry struct {
	node, daemonSet string
	conf            map[string]any
}

// addNodeOverrides puts the nodes' entries where the component's chart takes them.
func addNodeOverrides(v map[string]any, c Component, entries []hostEntry) {
	var hosts []hostEntry
	for _, e := range entries {
		if c.rootForm(e.daemonSet) {
			// overrides.<ds>.labels."kubernetes.io/hostname::<node>".values.conf; entries the user
			// wrote for other labels stay.
			set(v, map[string]any{"conf": e.conf}, "overrides", e.daemonSet, "labels", LabelHostname+"::"+e.node, "values")
			continue
		}
		hosts = append(hosts, e)
	}
	addHosts(v, hosts)
}

// rootForm says whether the component's DaemonSet takes the root form of per-node overrides.
func (c Component) rootForm(daemonSet string) bool {
	for _, ds := range c.NodeDaemonSets {
		if ds.Key == daemonSet {
			return ds.RootForm
		}
	}
	return false
}

// addHosts puts the nodes' entries into conf.overrides.<ds>.hosts; entries the user wrote for
// other hosts stay, an entry for a managed node is replaced by the node's.
func addHosts(v map[string]any, entries []hostEntry) {
	byDS := map[string][]hostEntry{}
	for _, e := range entries {
		byDS[e.daemonSet] = append(byDS[e.daemonSet], e)
	}
	for _, ds := range sortedKeys(byDS) {
		mine := map[string]bool{}
		for _, e := range byDS[ds] {
			mine[e.node] = true
		}
		var hosts []any
		if existing, ok := get(v, "conf", "overrides", ds, "hosts"); ok {
			if list, ok := existing.([]any); ok {
				for _, h := range list {
					if hm, ok := h.(map[string]any); ok {
						if name, _ := hm["name"].(string); mine[name] {
							continue
						}
					}
					hosts = append(hosts, h)
				}
			}
		}
		for _, e := range byDS[ds] {
			hosts = append(hosts, map[string]any{"name": e.node, "conf": e.conf})
		}
		set(v, hosts, "conf", "overrides", ds, "hosts")
	}
}

// renderComponent is c's values from the profile: the release defaults, the profile's knobs and
// the component's own, with the rendered images.tags, the chart entries to drop and the objects
// the pods mount (Component, Values, ImageTags, drop and Prerequisites of the result).
func renderComponent(c Component, p *kupenstackv1.OpenstackCloudConfigurationProfileSpec) (ComponentValues, error) {
	v := map[string]any{}
	tags := map[string]string{}
	if p == nil {
		p = &kupenstackv1.OpenstackCloudConfigurationProfileSpec{}
	}
	var drop [][]string
	var needs []Prerequisite
	if ceph := cephClient(p); ceph != nil {
		needs = onCeph(v, c, ceph)
	}
	if needs == nil {
		drop = smallCluster(v, c, p.StorageClass)
	}
	// Profile-wide knobs; the images the values leave unset are decided with the chart (ForChart).
	if p.ImagePullPolicy != "" {
		set(v, string(p.ImagePullPolicy), "images", "pull_policy")
	}
	applyDebug(v, c, p.Debug)
	applyReplicas(v, c, p.Replicas)
	if p.Resources != nil {
		set(v, true, "pod", "resources", "enabled")
		for _, k := range c.ResourceKeys {
			set(v, resourcesValues(p.Resources), append([]string{"pod", "resources"}, strings.Split(k, ".")...)...)
		}
	}
	// This component's own knobs.
	cp, ok := p.Components[c.Name]
	if ok {
		applyDebug(v, c, cp.Debug)
		applyReplicas(v, c, cp.Replicas)
		for k, img := range cp.Images {
			tags[k] = img
		}
	}
	if len(tags) > 0 {
		imgs := map[string]any{}
		for k, t := range tags {
			imgs[k] = t
		}
		set(v, imgs, "images", "tags")
	}
	if !ok {
		surgeBeforeReplace(v, c, p.StorageClass)
		return ComponentValues{Component: c, Values: v, ImageTags: tags, drop: drop, Prerequisites: needs}, nil
	}
	if cp.Values != nil {
		user, err := ParseObject(cp.Values.Raw)
		if err != nil {
			return ComponentValues{}, fmt.Errorf("values: %w", err)
		}
		// Nulls stay: they remove the chart's defaults there (Helm's meaning of null).
		if v, err = MergeKeepNull(v, user); err != nil {
			return ComponentValues{}, fmt.Errorf("values: %w", err)
		}
	}
	if cp.Conf != nil {
		conf, err := ParseObject(cp.Conf.Raw)
		if err != nil {
			return ComponentValues{}, fmt.Errorf("conf: %w", err)
		}
		if v, err = MergeKeepNull(v, map[string]any{"conf": conf}); err != nil {
			return ComponentValues{}, fmt.Errorf("conf: %w", err)
		}
	}
	// After the profile's values: they decide nova's case, and a maxUnavailable they give wins.
	surgeBeforeReplace(v, c, p.StorageClass)
	// Report the tags as finally rendered (values may have changed them).
	return ComponentValues{Component: c, Values: v, ImageTags: imageTags(v), drop: drop, Prerequisites: needs}, nil
}

// maxUnavailable is where the OpenStack-Helm charts take their Deployments' rolling update's
// maxUnavailable.
var maxUnavailable = []string{"pod", "lifecycle", "upgrades", "deployments", "rolling_update", "max_unavailable"}

// novaConsoleOnHostNetwork says whether nova's values deploy a console proxy on the host's
// network: the chart deploys the proxy of console.console_kind (noVNC by default) unless its
// manifests.deployment_<proxy> is off; the noVNC proxy runs on the host's network unless
// pod.useHostNetwork.novncproxy is false, the SPICE proxy always, the serial one only when
// pod.useHostNetwork.serialproxy is true. Such a pod's successor cannot start on the node
// while it holds the port, so the chart's Deployments must stop a pod before its successor.
func novaConsoleOnHostNetwork(v map[string]any) bool {
	kind := "novnc"
	if k, ok := get(v, "console", "console_kind"); ok {
		kind, _ = k.(string)
	}
	proxy := map[string]string{"novnc": "novncproxy", "spice": "spiceproxy", "serial": "serialproxy"}[kind]
	if proxy == "" {
		return false
	}
	if on, ok := get(v, "manifests", "deployment_"+proxy); ok && !truthy(on) {
		return false
	}
	host, set := get(v, "pod", "useHostNetwork", proxy)
	switch proxy {
	case "novncproxy":
		return !set || truthy(host)
	case "serialproxy":
		return truthy(host)
	}
	return true
}

// truthy is a value's truth in a chart's `if`, as Go templates judge it: false, 0, nil and empty
// strings, lists and maps are false ("false", a non-empty string, is true).
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case json.Number: // how ParseObject reads the values' numbers
		f, err := v.Float64()
		return err != nil || f != 0
	case int64:
		return v != 0
	case float64:
		return v != 0
	case map[string]any:
		return len(v) > 0
	case []any:
		return len(v) > 0
	}
	return true
}

// imageTags are the images.tags entries of v that are set.
func imageTags(v map[string]any) map[string]string {
	tags := map[string]string{}
	if m, ok := get(v, "images", "tags"); ok {
		if mm, ok := m.(map[string]any); ok {
			for k, t := range mm {
				if s, ok := t.(string); ok && s != "" {
					tags[k] = s
				}
			}
		}
	}
	return tags
}

// ForChart completes vals, the component's values as given to Helm, for the chart that renders
// them (chartValues are its values.yaml): every images.tags key the chart declares that vals
// leave unset gets the profile's image of that key, else the release's image (Component.ImageName)
// moved to the profile's imageRegistry. So no container runs a chart default, which may belong
// to another release; a key the table cannot map is an error. cv.ImageTags becomes every image.
func (cv *ComponentValues) ForChart(chartValues, vals map[string]any) (map[string]any, error) {
	have := imageTags(vals)
	decided := map[string]any{}
	declared, _ := get(chartValues, "images", "tags")
	keys, _ := declared.(map[string]any)
	for _, k := range sortedKeys(keys) {
		if _, ok := have[k]; ok {
			continue
		}
		if img := cv.images.Profile[k]; img != "" {
			decided[k] = img
			continue
		}
		name, err := cv.Component.ImageName(k)
		if err != nil {
			return nil, err
		}
		ref, err := cv.images.Release.Image(name)
		if err != nil {
			return nil, fmt.Errorf("chart %s: images.tags.%s: %w", cv.Component.Chart, k, err)
		}
		decided[k] = withRegistry(ref, cv.images.Registry)
	}
	over := withoutIngress(chartValues, vals)
	set(over, decided, "images", "tags")
	out, err := Merge(vals, over)
	if err != nil {
		return nil, err
	}
	for _, path := range cv.drop {
		_, given := get(out, path...)
		if _, declared := get(chartValues, path...); declared && !given {
			set(out, nil, path...)
		}
	}
	withoutDisabledJobs(cv.Component.Chart, chartValues, out)
	if cv.noQueueMirroring {
		withoutQueueMirroring(chartValues, out)
	}
	cv.ImageTags = imageTags(out)
	return out, nil
}

// withoutDisabledJobs takes the Jobs the values turn off (manifests.job_<x>: false where the chart
// has it on; the Job is <chart>-<x>) out of the charts' dependencies.static.*.jobs, where the
// pods' init containers would wait for them for ever (cinder without Ceph: cinder-storage-init).
// A list the values set themselves is theirs.
func withoutDisabledJobs(chart string, chartValues, vals map[string]any) {
	manifests, _ := get(chartValues, "manifests")
	declared, _ := manifests.(map[string]any)
	off := map[string]bool{}
	for key, on := range declared {
		job, ok := strings.CutPrefix(key, "job_")
		if !ok || on != true {
			continue
		}
		if v, _ := get(vals, "manifests", key); v == false {
			off[chart+"-"+strings.ReplaceAll(job, "_", "-")] = true
		}
	}
	if len(off) == 0 {
		return
	}
	static, _ := get(chartValues, "dependencies", "static")
	deps, _ := static.(map[string]any)
	for _, name := range sortedKeys(deps) {
		jobs, _ := get(chartValues, "dependencies", "static", name, "jobs")
		list, _ := jobs.([]any)
		if _, given := get(vals, "dependencies", "static", name, "jobs"); given || len(list) == 0 {
			continue
		}
		kept := make([]any, 0, len(list))
		for _, j := range list {
			if s, _ := j.(string); !off[s] {
				kept = append(kept, j)
			}
		}
		if len(kept) != len(list) {
			set(vals, kept, "dependencies", "static", name, "jobs")
		}
	}
}

// withoutIngress is what turns the chart's ingresses off, unless vals turn one of them on:
// every manifests.*ingress* switch the chart declares is off, and every endpoint's public and
// admin host, port and scheme are its internal ones (or its default, where the chart names no
// internal one). So the public endpoints, those registered in Keystone's catalogue included, are
// the cloud's own Services, reachable with no ingress controller. Entries vals set are kept.
func withoutIngress(chartValues, vals map[string]any) map[string]any {
	over := map[string]any{}
	manifests, _ := get(chartValues, "manifests")
	switches, _ := manifests.(map[string]any)
	for k := range switches {
		if on, _ := get(vals, "manifests", k); strings.Contains(k, "ingress") && on == true {
			return over
		}
	}
	for _, k := range sortedKeys(switches) {
		if _, given := get(vals, "manifests", k); strings.Contains(k, "ingress") && !given {
			set(over, false, "manifests", k)
		}
	}
	// lookup reads a value of the chart as vals change it.
	lookup := func(path ...string) (any, bool) {
		if v, ok := get(vals, path...); ok {
			return v, true
		}
		return get(chartValues, path...)
	}
	endpoints, _ := get(chartValues, "endpoints")
	types, _ := endpoints.(map[string]any)
	for _, typ := range sortedKeys(types) {
		ep, _ := types[typ].(map[string]any)
		paths := [][]string{{"hosts"}, {"scheme"}}
		ports, _ := ep["port"].(map[string]any)
		for _, p := range sortedKeys(ports) {
			paths = append(paths, []string{"port", p})
		}
		for _, p := range paths {
			path := append([]string{"endpoints", typ}, p...)
			if m, ok := lookup(path...); !ok || !isMap(m) {
				continue
			}
			target, ok := lookup(append(path, "internal")...)
			if !ok || target == nil {
				target, ok = lookup(append(path, "default")...)
			}
			if !ok || target == nil {
				continue
			}
			for _, side := range []string{"public", "admin"} {
				if _, given := get(vals, append(path, side)...); !given {
					set(over, target, append(path, side)...)
				}
			}
		}
	}
	return over
}

func isMap(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// Host paths of the data MariaDB, RabbitMQ and Glance keep on their node when no StorageClass is
// named. Glance's is also its store's path inside the pod (the chart mounts the host path where
// the store is): the chart's default, /var/lib/glance/images, is the directory of Debian's glance
// package on a host that has it, where the cloud's images would mix with the package's.
const (
	MariadbHostPath  = "/var/lib/openstack-helm/mariadb"
	RabbitmqHostPath = "/var/lib/openstack-helm/rabbitmq"
	GlanceHostPath   = "/var/lib/openstack-helm/glance/images"
)

// smallCluster sets the release defaults that let a cloud deploy on one or a few nodes with no
// Ceph (onCeph replaces it for cinder and libvirt when the profile names a Ceph cluster), Swift, ingress controller or storage provisioner (the charts default to all of these):
// no Ceph in libvirt and nova; Glance images, MariaDB and RabbitMQ data on a host path of their
// node, or on volumes of storageClass when one is named ("default": the cluster's default);
// no image download by Glance's bootstrap; Cinder on LVM (see docs/lcm.md for the volume group it
// needs) without its Ceph or Swift backup. Everything else the profile sets overrides these.
// ForChart turns the ingresses off.
//
// It returns the chart's entries to drop (ForChart makes them null, which Helm reads as "remove
// the chart's default"), unless the values set them.
func smallCluster(v map[string]any, c Component, storageClass string) (drop [][]string) {
	switch c.Chart {
	case "libvirt", "nova":
		set(v, false, "conf", "ceph", "enabled")
	case "mariadb":
		if storageClass == "" {
			set(v, false, "volume", "enabled")
			set(v, map[string]any{"enabled": true, "host_path": MariadbHostPath}, "volume", "use_local_path_for_single_pod_cluster")
		} else {
			set(v, storageClass, "volume", "class_name")
			set(v, storageClass, "volume", "backup", "class_name")
		}
	case "rabbitmq":
		if storageClass == "" {
			set(v, false, "volume", "enabled")
			set(v, map[string]any{"enabled": true, "host_path": RabbitmqHostPath}, "volume", "use_local_path")
		} else {
			set(v, storageClass, "volume", "class_name")
		}
	case "glance":
		if storageClass == "" {
			set(v, "local", "storage")
			set(v, GlanceHostPath, "conf", "glance", "file", "filesystem_store_datadir")
			// The section glance reads for the store before its multi-store configuration.
			set(v, GlanceHostPath, "conf", "glance", "glance_store", "filesystem_store_datadir")
		} else {
			set(v, "pvc", "storage")
			set(v, storageClass, "volume", "class_name")
		}
		set(v, false, "bootstrap", "enabled") // it downloads CirrOS from the internet
		// Its storage-init Job only has work for Swift and Ceph ("No action required" for the
		// file store and a PVC), and runs the Ceph helper image.
		set(v, false, "manifests", "job_storage_init")
	case "cinder":
		set(v, map[string]any{"enabled_backends": lvmBackend, "default_volume_type": lvmBackend}, "conf", "cinder", "DEFAULT")
		set(v, map[string]any{lvmBackend: map[string]any{
			"volume_driver": "cinder.volume.drivers.lvm.LVMVolumeDriver", "volume_backend_name": lvmBackend,
			"volume_group": "cinder-volumes", "target_protocol": "iscsi", "target_helper": "tgtadm",
			"image_volume_cache_enabled": false,
		}}, "conf", "backends")
		set(v, true, "conf", "enable_iscsi")
		// iSCSI mounts /etc/multipath with Bidirectional propagation, which Kubernetes allows
		// only in a privileged container (the API server refuses the Deployment otherwise).
		set(v, true, "pod", "security_context", "cinder_volume", "container", "cinder_volume", "privileged")
		// No Ceph backend left: the storage-init Job would have no container (the API server
		// refuses it).
		for _, m := range []string{"deployment_backup", "job_backup_storage_init", "pvc_backup", "job_storage_init"} {
			set(v, false, "manifests", m)
		}
		return [][]string{{"conf", "backends", "rbd1"}} // the chart's Ceph backend
	}
	return nil
}

// surgeBeforeReplace makes the Deployments of the API charts whose pods can run twice side by
// side replace a pod only once its successor is Ready (maxUnavailable 0; the charts' maxSurge
// stays): the charts default to maxUnavailable 1, which on the one replica of a small cloud
// stops the only API pod as soon as its successor is created, and the API is down until that
// one is Ready. Left at the chart's default: nova with a console proxy on the host's network
// (novaConsoleOnHostNetwork: its successor cannot start on the same node while it holds the
// port), Glance on a volume of a storage class (ReadWriteOnce: a successor on another node
// could not mount it), Cinder (two cinder-volume on one volume group), and the infrastructure
// charts (StatefulSets, or memcached, whose pods are not interchangeable caches). v already
// holds the profile's values, which override it: a maxUnavailable they set, or a map on its
// path they set to null or a scalar, is theirs.
func surgeBeforeReplace(v map[string]any, c Component, storageClass string) {
	switch c.Chart {
	case "keystone", "placement", "neutron", "horizon":
	case "glance":
		if storageClass != "" {
			return
		}
	case "nova":
		if novaConsoleOnHostNetwork(v) {
			return
		}
	default:
		return
	}
	if !givenOnPath(v, maxUnavailable) {
		set(v, int64(0), maxUnavailable...)
	}
}

// givenOnPath says whether v sets path, or something other than a map on the way to it.
func givenOnPath(v map[string]any, path []string) bool {
	var cur any = v
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return true
		}
		if cur, ok = m[p]; !ok {
			return false
		}
	}
	return true
}

// lvmBackend is Cinder's default backend.
const lvmBackend = "lvmdriver-1"

func applyDebug(v map[string]any, c Component, debug *bool) {
	switch {
	case debug == nil:
	case c.DebugKey != "" && c.DebugPython:
		value := "False"
		if *debug {
			value = "True"
		}
		set(v, value, strings.Split(c.DebugKey, ".")...)
	case c.DebugKey != "":
		set(v, *debug, strings.Split(c.DebugKey, ".")...)
	case c.Service != "":
		set(v, *debug, "conf", c.Service, "DEFAULT", "debug")
	}
}

func applyReplicas(v map[string]any, c Component, replicas *int32) {
	if replicas == nil {
		return
	}
	for _, k := range c.ReplicaKeys {
		set(v, int64(*replicas), "pod", "replicas", k)
	}
}

func resourcesValues(r *corev1.ResourceRequirements) map[string]any {
	out := map[string]any{}
	for name, list := range map[string]corev1.ResourceList{"requests": r.Requests, "limits": r.Limits} {
		if len(list) == 0 {
			continue
		}
		m := map[string]any{}
		for res, q := range list {
			m[string(res)] = q.String()
		}
		out[name] = m
	}
	return out
}

func renderNode(n Node, components []Component) (NodeValues, error) {
	nv := NodeValues{Labels: map[string]string{}}
	if n.Disabled {
		nv.Hash = Hash(nv)
		return nv, nil
	}
	nv.Labels = NodeLabels(n.Roles)
	for _, c := range components {
		if c.runsOn(nv.Labels) {
			nv.Components = append(nv.Components, c.Name)
		}
	}
	sort.Strings(nv.Components)
	if p := n.Profile; p != nil {
		nv.Ignored = ignoredNodeFields(p)
		for _, c := range components {
			conf, err := nodeConf(c, p)
			if err != nil {
				return nv, fmt.Errorf("component %s: %w", c.Name, err)
			}
			if len(conf) == 0 {
				continue
			}
			for _, ds := range c.NodeDaemonSets {
				if nv.Labels[ds.Label] == LabelEnabled {
					nv.Overrides = append(nv.Overrides, NodeOverride{Component: c.Name, DaemonSet: ds.Key, Conf: conf})
				}
			}
		}
	}
	nv.Hash = Hash(nv)
	return nv, nil
}

// nodeConf is the conf a node's profile gives a component: its debug switch, then its conf.
func nodeConf(c Component, p *kupenstackv1.OpenstackCloudConfigurationProfileSpec) (map[string]any, error) {
	if len(c.NodeDaemonSets) == 0 {
		return nil, nil
	}
	conf := map[string]any{}
	applyDebug(map[string]any{"conf": conf}, c, p.Debug)
	cp, ok := p.Components[c.Name]
	if !ok {
		return conf, nil
	}
	applyDebug(map[string]any{"conf": conf}, c, cp.Debug)
	if cp.Conf != nil {
		user, err := ParseObject(cp.Conf.Raw)
		if err != nil {
			return nil, fmt.Errorf("conf: %w", err)
		}
		return Merge(conf, user)
	}
	return conf, nil
}

// ignoredNodeFields are the fields of a node's profile that apply cluster-wide only.
func ignoredNodeFields(p *kupenstackv1.OpenstackCloudConfigurationProfileSpec) []string {
	var ignored []string
	if p.Replicas != nil {
		ignored = append(ignored, "replicas")
	}
	if p.ImageRegistry != "" {
		ignored = append(ignored, "imageRegistry")
	}
	if len(p.Images) > 0 {
		ignored = append(ignored, "images")
	}
	if p.Resources != nil {
		ignored = append(ignored, "resources")
	}
	if p.Ceph != nil {
		ignored = append(ignored, "ceph")
	}
	for _, name := range sortedKeys(p.Components) {
		cp := p.Components[name]
		c, _ := ComponentByName(name)
		if len(c.NodeDaemonSets) == 0 && (cp.Debug != nil || cp.Conf != nil) {
			ignored = append(ignored, "components."+name+" (no per-node DaemonSet)")
		}
		if cp.Replicas != nil {
			ignored = append(ignored, "components."+name+".replicas")
		}
		if len(cp.Images) > 0 {
			ignored = append(ignored, "components."+name+".images")
		}
		if cp.Values != nil {
			ignored = append(ignored, "components."+name+".values")
		}
	}
	return ignored
}

// RenderNode computes what one node gets (labels, components, per-node overrides) without
// rendering the whole cloud.
func RenderNode(components, optionalComponents []string, n Node) (NodeValues, error) {
	return renderNode(n, Selected(components, optionalComponents))
}
