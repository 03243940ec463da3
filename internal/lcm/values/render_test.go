package values

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

func rawJSON(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

func component(t *testing.T, out *Output, name string) ComponentValues {
	t.Helper()
	for _, c := range out.Components {
		if c.Component.Name == name {
			return c
		}
	}
	t.Fatalf("component %s not rendered", name)
	return ComponentValues{}
}

func at(t *testing.T, v map[string]any, path string) string {
	t.Helper()
	got, ok := get(v, strings.Split(path, ".")...)
	if !ok {
		return "<none>"
	}
	b, _ := json.Marshal(got)
	return string(b)
}

func TestRenderMergeOrder(t *testing.T) {
	profile := &kupenstackv1.OpenstackCloudConfigurationProfileSpec{
		Debug:         ptr.To(true),
		Replicas:      ptr.To[int32](2),
		ImageRegistry: "mirror.local:5000", ImagePullPolicy: corev1.PullNever,
		Images: map[string]string{"dep_check": "mine/entrypoint:1", "unknown_image": "x/y:1"},
		Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceMemory: resource.MustParse("128Mi")}},
		Components: map[string]kupenstackv1.ComponentProfile{
			"nova": {
				Debug: ptr.To(false), Replicas: ptr.To[int32](3),
				Images: map[string]string{"nova_api": "mine/nova:1"},
				Values: rawJSON(`{"pod":{"replicas":{"conductor":5}},"conf":{"nova":{"DEFAULT":{"x":"values"}}},"manifests":{"cron_job_cell_setup":false}}`),
				Conf:   rawJSON(`{"nova":{"DEFAULT":{"x":"conf","y":1}}}`),
			},
		},
	}
	out, err := Render(Input{Release: "2026.1", Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	nova := component(t, out, "nova")
	keystone := component(t, out, "keystone")
	mariadb := component(t, out, "mariadb")
	// The images the values leave unset are decided for the chart that renders them.
	chart := func(keys ...string) map[string]any {
		tags := map[string]any{}
		for _, k := range keys {
			tags[k] = "chart.invalid/default:0"
		}
		return map[string]any{"images": map[string]any{"tags": tags}}
	}
	var ferr error
	keystone.Values, ferr = keystone.ForChart(chart("keystone_api", "bootstrap", "dep_check", "rabbit_init"), keystone.Values)
	if ferr != nil {
		t.Fatal(ferr)
	}
	if mariadb.Values, ferr = mariadb.ForChart(chart("mariadb", "mariadb_backup"), mariadb.Values); ferr != nil {
		t.Fatal(ferr)
	}
	if nova.Values, ferr = nova.ForChart(chart("nova_api", "nova_compute"), nova.Values); ferr != nil {
		t.Fatal(ferr)
	}
	for _, tt := range []struct {
		name string
		v    map[string]any
		path string
		want string
	}{
		{"profile debug", keystone.Values, "conf.keystone.DEFAULT.debug", `true`},
		{"component debug beats profile debug", nova.Values, "conf.nova.DEFAULT.debug", `false`},
		{"infra has no debug switch", mariadb.Values, "conf", `<none>`},
		{"profile replicas", keystone.Values, "pod.replicas.api", `2`},
		{"component replicas beat profile replicas", nova.Values, "pod.replicas.osapi", `3`},
		{"values beat component replicas", nova.Values, "pod.replicas.conductor", `5`},
		{"conf beats values", nova.Values, "conf.nova.DEFAULT.x", `"conf"`},
		{"conf merges", nova.Values, "conf.nova.DEFAULT.y", `1`},
		{"free-form values kept", nova.Values, "manifests.cron_job_cell_setup", `false`},
		{"registry moves default images", keystone.Values, "images.tags.keystone_api", `"mirror.local:5000/airshipit/keystone:2026.1-ubuntu_noble"`},
		{"registry moves infra images", mariadb.Values, "images.tags.mariadb", `"mirror.local:5000/airshipit/mariadb:latest-ubuntu_noble"`},
		{"registry moves helper images", keystone.Values, "images.tags.bootstrap", `"mirror.local:5000/airshipit/openstack-client:2026.1-ubuntu_noble"`},
		{"rabbit_init runs the management image", keystone.Values, "images.tags.rabbit_init", `"mirror.local:5000/library/rabbitmq:3.13-management"`},
		{"registry moves other infra images", mariadb.Values, "images.tags.mariadb_backup", `"mirror.local:5000/airshipit/porthole-mysqlclient-utility:latest-ubuntu_jammy"`},
		{"keys the chart does not declare are not added", mariadb.Values, "images.tags.dep_check", `<none>`},
		{"the table gives the keys the profile leaves", nova.Values, "images.tags.nova_compute", `"mirror.local:5000/airshipit/nova:2026.1-ubuntu_noble"`},
		{"pull policy", nova.Values, "images.pull_policy", `"Never"`},
		{"profile image wins over registry", keystone.Values, "images.tags.dep_check", `"mine/entrypoint:1"`},
		{"component image", nova.Values, "images.tags.nova_api", `"mine/nova:1"`},
		{"unknown profile image not added", keystone.Values, "images.tags.unknown_image", `<none>`},
		{"resources", keystone.Values, "pod.resources", `{"api":{"requests":{"memory":"128Mi"}},"enabled":true}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := at(t, tt.v, tt.path); got != tt.want {
				t.Errorf("%s = %s, want %s", tt.path, got, tt.want)
			}
		})
	}
	if nova.ImageTags["nova_api"] != "mine/nova:1" || len(nova.ImageTags) != 2 || nova.ChartVersion != "2026.1.0" || nova.Component.Chart != "nova" {
		t.Errorf("nova: tags %v, chart %s %s", nova.ImageTags, nova.Component.Chart, nova.ChartVersion)
	}
}

func TestRenderDefaults(t *testing.T) {
	for _, rel := range Releases {
		out, err := Render(Input{Release: rel.Name})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range out.Components {
			names = append(names, c.Component.Name)
			for k, tag := range c.ImageTags {
				if tag == "" || strings.Contains(tag, "@") {
					t.Errorf("%s %s: image %s = %q", rel.Name, c.Component.Name, k, tag)
				}
			}
		}
		if got := strings.Join(names, ","); got != "mariadb,rabbitmq,memcached,openvswitch,keystone,glance,placement,nova,neutron,libvirt" {
			t.Errorf("%s: components = %s", rel.Name, got)
		}
		glance := component(t, out, "glance")
		if _, err := glance.ForChart(map[string]any{"images": map[string]any{"tags": map[string]any{"glance_api": "x"}}}, glance.Values); err != nil {
			t.Fatal(err)
		}
		if tag := glance.ImageTags["glance_api"]; tag != "quay.io/airshipit/glance:"+rel.Name+"-ubuntu_noble" {
			t.Errorf("%s: glance_api = %s", rel.Name, tag)
		}
	}
	out, err := Render(Input{Release: "2026.1", OptionalComponents: []string{"cinder", "horizon"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Components) != 12 {
		t.Errorf("with cinder and horizon: %d components", len(out.Components))
	}
	if _, err := Render(Input{Release: "2024.1"}); err == nil || !strings.Contains(err.Error(), "supported: 2025.1, 2025.2, 2026.1") {
		t.Errorf("unsupported release: %v", err)
	}
}

func TestRenderNodes(t *testing.T) {
	bigNova := &kupenstackv1.OpenstackCloudConfigurationProfileSpec{
		Debug:    ptr.To(true),
		Replicas: ptr.To[int32](4),
		Ceph:     &kupenstackv1.CephClient{}, // the default profile's alone
		Components: map[string]kupenstackv1.ComponentProfile{
			"nova":     {Conf: rawJSON(`{"nova":{"DEFAULT":{"cpu_allocation_ratio":4}}}`)},
			"neutron":  {Conf: rawJSON(`{"plugins":{"openvswitch_agent":{"ovs":{"bridge_mappings":"public:br-ex"}}}}`)},
			"keystone": {Conf: rawJSON(`{"keystone":{}}`)},
			"libvirt":  {Conf: rawJSON(`{"libvirt":{"cpu_mode":"host-passthrough"}}`)},
		},
	}
	in := Input{Release: "2026.1", Nodes: []Node{
		{Name: "z-compute", Roles: []string{"compute"}, Profile: bigNova},
		{Name: "a-control", Roles: []string{"control"}, Profile: bigNova},
		{Name: "plain", Roles: []string{"control", "compute"}},
		{Name: "off", Roles: []string{"compute"}, Disabled: true, Profile: bigNova},
	}}
	out, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	nova := component(t, out, "nova").Values
	if got := at(t, nova, "conf.overrides.nova_compute.hosts"); got != `[{"conf":{"nova":{"DEFAULT":{"cpu_allocation_ratio":4,"debug":true}}},"name":"z-compute"}]` {
		t.Errorf("nova_compute hosts = %s", got)
	}
	neutron := component(t, out, "neutron").Values
	if got := at(t, neutron, "conf.overrides.neutron_ovs-agent.hosts"); !strings.Contains(got, `"name":"a-control"`) || !strings.Contains(got, `"name":"z-compute"`) || strings.Index(got, "a-control") > strings.Index(got, "z-compute") {
		t.Errorf("neutron_ovs-agent hosts (sorted by node) = %s", got)
	}
	if got := at(t, neutron, "conf.overrides.neutron_l3-agent.hosts"); strings.Contains(got, "z-compute") || !strings.Contains(got, "a-control") {
		t.Errorf("neutron_l3-agent runs on control nodes only: %s", got)
	}
	// libvirt takes the root form, keyed on the node's hostname label; a-control runs no libvirt.
	libvirt := component(t, out, "libvirt").Values
	labels, _ := get(libvirt, "overrides", "libvirt_libvirt", "labels")
	if got, _ := json.Marshal(labels); string(got) != `{"kubernetes.io/hostname::z-compute":{"values":{"conf":{"libvirt":{"cpu_mode":"host-passthrough"}}}}}` {
		t.Errorf("libvirt_libvirt labels = %s", got)
	}
	if got := at(t, libvirt, "conf.overrides"); got != "<none>" {
		t.Errorf("libvirt takes no hosts form, got conf.overrides %s", got)
	}
	if got := at(t, component(t, out, "keystone").Values, "conf.overrides"); got != "<none>" {
		t.Errorf("keystone has no per-node DaemonSet, got overrides %s", got)
	}
	off := out.Nodes["off"]
	if len(off.Labels) != 0 || len(off.Overrides) != 0 || len(off.Components) != 0 {
		t.Errorf("disabled node = %+v", off)
	}
	plain := out.Nodes["plain"]
	if len(plain.Overrides) != 0 || plain.Labels[LabelControlPlane] != "enabled" || plain.Labels[LabelComputeNode] != "enabled" {
		t.Errorf("node without profile = %+v", plain)
	}
	if got := strings.Join(out.Nodes["z-compute"].Ignored, ","); got != "replicas,ceph,components.keystone (no per-node DaemonSet)" {
		t.Errorf("ignored = %s", got)
	}

	// Render is deterministic whatever the order of the nodes.
	in.Nodes[0], in.Nodes[3] = in.Nodes[3], in.Nodes[0]
	again, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range out.Components {
		if out.Components[i].Hash != again.Components[i].Hash {
			t.Errorf("%s: hash depends on node order", out.Components[i].Component.Name)
		}
	}

	// A user's own hosts entries stay, except for a node KupenStack manages.
	in.Profile = &kupenstackv1.OpenstackCloudConfigurationProfileSpec{Components: map[string]kupenstackv1.ComponentProfile{
		"nova": {Values: rawJSON(`{"conf":{"overrides":{"nova_compute":{"hosts":[{"name":"elsewhere","conf":{}},{"name":"z-compute","conf":{"stale":true}}]}}}}`)},
	}}
	withUser, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := at(t, component(t, withUser, "nova").Values, "conf.overrides.nova_compute.hosts"); strings.Contains(got, "stale") || !strings.Contains(got, "elsewhere") {
		t.Errorf("hosts with the user's entries = %s", got)
	}
}

// TestRenderHashes: changing one component's settings changes that component's hash only.
func TestRenderHashes(t *testing.T) {
	base := Input{Release: "2026.1", Profile: &kupenstackv1.OpenstackCloudConfigurationProfileSpec{}}
	changed := Input{Release: "2026.1", Profile: &kupenstackv1.OpenstackCloudConfigurationProfileSpec{
		Components: map[string]kupenstackv1.ComponentProfile{"glance": {Conf: rawJSON(`{"glance":{"DEFAULT":{"show_image_direct_url":true}}}`)}},
	}}
	a, err := Render(base)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Render(changed)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Components {
		name := a.Components[i].Component.Name
		if same := a.Components[i].Hash == b.Components[i].Hash; same == (name == "glance") {
			t.Errorf("%s: hash same = %v", name, same)
		}
	}
}

func TestRenderRejectsBadValues(t *testing.T) {
	for _, v := range []string{`[1]`, `"x"`, `{`} {
		_, err := Render(Input{Release: "2026.1", Profile: &kupenstackv1.OpenstackCloudConfigurationProfileSpec{
			Components: map[string]kupenstackv1.ComponentProfile{"nova": {Values: rawJSON(v)}},
		}})
		if err == nil || !strings.Contains(err.Error(), "component nova: values") {
			t.Errorf("values %s: %v", v, err)
		}
	}
}

func TestComponentsDAG(t *testing.T) {
	if err := checkDAG(Components); err != nil {
		t.Fatal(err)
	}
	bad := []Component{{Name: "a", DependsOn: []string{"b"}}, {Name: "b"}}
	if err := checkDAG(bad); err == nil {
		t.Fatal("checkDAG accepted a dependency that comes later")
	}
	for _, c := range Components {
		if c.Phase < PhaseInfra || c.Phase > PhaseDashboard {
			t.Errorf("%s: phase %d", c.Name, c.Phase)
		}
		for _, d := range c.DependsOn {
			dep, _ := ComponentByName(d)
			if dep.Phase > c.Phase {
				t.Errorf("%s (phase %d) depends on %s of a later phase %d", c.Name, c.Phase, d, dep.Phase)
			}
		}
		for _, w := range c.WaitsFor {
			other, ok := ComponentByName(w)
			// An earlier phase is upgraded first in a release upgrade, as it is for a dependency.
			if !ok || other.Phase > c.Phase {
				t.Errorf("%s waits at run time for %s, which is unknown or of a later phase", c.Name, w)
			}
			if slices.Contains(other.DependsOn, c.Name) {
				t.Errorf("%s waits at run time for %s, which is installed only after it", c.Name, w)
			}
		}
	}
}

func TestWithRegistry(t *testing.T) {
	for _, tt := range []struct{ ref, reg, want string }{
		{"quay.io/airshipit/nova:2026.1", "mirror:5000", "mirror:5000/airshipit/nova:2026.1"},
		{"docker.io/library/memcached:1", "m.local/x", "m.local/x/library/memcached:1"},
		{"library/memcached:1", "m.local", "m.local/library/memcached:1"},
		{"localhost/a:1", "m", "m/a:1"},
		{"a:1", "", "a:1"},
	} {
		if got := withRegistry(tt.ref, tt.reg); got != tt.want {
			t.Errorf("withRegistry(%s, %s) = %s, want %s", tt.ref, tt.reg, got, tt.want)
		}
	}
}

// A chart image key the table cannot map is an error naming it, unless the profile decides it:
// a new chart version cannot silently run its own default image.
func TestForChartUnknownImageKey(t *testing.T) {
	chart := map[string]any{"images": map[string]any{"tags": map[string]any{"nova_api": "x", "shiny_new_helper": "x"}}}
	out, err := Render(Input{Release: "2026.1"})
	if err != nil {
		t.Fatal(err)
	}
	nova := component(t, out, "nova")
	if _, err := nova.ForChart(chart, nova.Values); err == nil || !strings.Contains(err.Error(), "images.tags.shiny_new_helper") {
		t.Fatalf("err = %v, want one naming images.tags.shiny_new_helper", err)
	}
	out, err = Render(Input{Release: "2026.1", Profile: &kupenstackv1.OpenstackCloudConfigurationProfileSpec{
		Images: map[string]string{"shiny_new_helper": "mine/helper:1"}}})
	if err != nil {
		t.Fatal(err)
	}
	nova = component(t, out, "nova")
	v, err := nova.ForChart(chart, nova.Values)
	if err != nil {
		t.Fatal(err)
	}
	if got := at(t, v, "images.tags"); got != `{"nova_api":"quay.io/airshipit/nova:2026.1-ubuntu_noble","shiny_new_helper":"mine/helper:1"}` {
		t.Errorf("images.tags = %s", got)
	}
	// What decides the chart's images is part of the hash: a new registry upgrades every component.
	moved, err := Render(Input{Release: "2026.1", Profile: &kupenstackv1.OpenstackCloudConfigurationProfileSpec{ImageRegistry: "mirror.local"}})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := Render(Input{Release: "2026.1"})
	for i := range plain.Components {
		if plain.Components[i].Hash == moved.Components[i].Hash {
			t.Errorf("%s: same hash with and without imageRegistry", plain.Components[i].Component.Name)
		}
	}
}

// The release defaults need no Ceph, Swift, StorageClass or internet; a named storageClass puts
// the data on its volumes; the profile's values still override every default.
func TestRenderSmallClusterDefaults(t *testing.T) {
	out, err := Render(Input{Release: "2026.1", OptionalComponents: []string{"cinder"}, Profile: &kupenstackv1.OpenstackCloudConfigurationProfileSpec{
		Components: map[string]kupenstackv1.ComponentProfile{"nova": {Values: rawJSON(`{"conf":{"ceph":{"enabled":true}}}`)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	named, err := Render(Input{Release: "2026.1", Profile: &kupenstackv1.OpenstackCloudConfigurationProfileSpec{StorageClass: "fast"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		out             *Output
		component, path string
		want            string
	}{
		{out, "libvirt", "conf.ceph.enabled", `false`},
		{out, "nova", "conf.ceph.enabled", `true`}, // the profile's values win
		{out, "mariadb", "volume.enabled", `false`},
		{out, "mariadb", "volume.use_local_path_for_single_pod_cluster", `{"enabled":true,"host_path":"/var/lib/openstack-helm/mariadb"}`},
		{out, "rabbitmq", "volume.use_local_path", `{"enabled":true,"host_path":"/var/lib/openstack-helm/rabbitmq"}`},
		{out, "glance", "storage", `"local"`},
		{out, "glance", "conf.glance.file.filesystem_store_datadir", `"/var/lib/openstack-helm/glance/images"`},
		{out, "glance", "conf.glance.glance_store.filesystem_store_datadir", `"/var/lib/openstack-helm/glance/images"`},
		{named, "glance", "conf.glance.file", `<none>`}, // on the PVC, mounted where the chart's default says
		{out, "glance", "bootstrap.enabled", `false`},
		{out, "cinder", "conf.cinder.DEFAULT.enabled_backends", `"lvmdriver-1"`},
		{out, "cinder", "manifests.deployment_backup", `false`},
		{named, "mariadb", "volume", `{"backup":{"class_name":"fast"},"class_name":"fast"}`},
		{named, "rabbitmq", "volume", `{"class_name":"fast"}`},
		{named, "glance", "storage", `"pvc"`},
		{named, "glance", "volume.class_name", `"fast"`},
		// An API pod is replaced once its successor is Ready, where two can run side by side.
		{out, "keystone", "pod.lifecycle.upgrades.deployments.rolling_update.max_unavailable", `0`},
		{out, "placement", "pod.lifecycle.upgrades.deployments.rolling_update.max_unavailable", `0`},
		{out, "neutron", "pod.lifecycle.upgrades.deployments.rolling_update.max_unavailable", `0`},
		{out, "glance", "pod.lifecycle.upgrades.deployments.rolling_update.max_unavailable", `0`},
		{named, "glance", "pod.lifecycle.upgrades.deployments.rolling_update", `<none>`},
		{out, "nova", "pod.lifecycle", `<none>`}, // the noVNC proxy on the host's network
		{out, "cinder", "pod.lifecycle", `<none>`},
		{out, "memcached", "pod.lifecycle", `<none>`},
	} {
		if got := at(t, component(t, tt.out, tt.component).Values, tt.path); got != tt.want {
			t.Errorf("%s %s = %s, want %s", tt.component, tt.path, got, tt.want)
		}
	}
	// The chart's Ceph backend is dropped for Helm (null), unless the values keep it.
	chart := map[string]any{"conf": map[string]any{"backends": map[string]any{"rbd1": map[string]any{"volume_driver": "rbd"}}}}
	cinder := component(t, out, "cinder")
	v, err := cinder.ForChart(chart, cinder.Values)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := get(v, "conf", "backends", "rbd1"); !ok || got != nil {
		t.Errorf("conf.backends.rbd1 = %v (set %v), want null", got, ok)
	}
	if v, _ = cinder.ForChart(chart, mustMerge(t, cinder.Values, `{"conf":{"backends":{"rbd1":{"rbd_pool":"volumes"}}}}`)); at(t, v, "conf.backends.rbd1") != `{"rbd_pool":"volumes"}` {
		t.Errorf("conf.backends.rbd1 = %s, want the values' entry", at(t, v, "conf.backends.rbd1"))
	}
}

func mustMerge(t *testing.T, base map[string]any, over string) map[string]any {
	t.Helper()
	o, err := ParseObject([]byte(over))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(base, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// With the chart, the ingresses are off and the public and admin endpoints are the internal
// ones, unless the values turn an ingress on or name the endpoint.
func TestForChartWithoutIngress(t *testing.T) {
	chart := map[string]any{
		"manifests": map[string]any{"ingress_api": true, "service_ingress_api": true, "secret_ingress_tls": true, "deployment_api": true},
		"endpoints": map[string]any{
			"identity": map[string]any{
				"hosts":  map[string]any{"default": "keystone", "internal": "keystone-api"},
				"scheme": map[string]any{"default": "http"},
				"port":   map[string]any{"api": map[string]any{"default": 80, "internal": 5000}},
			},
			"compute_novnc_proxy": map[string]any{
				"hosts": map[string]any{"default": "nova-novncproxy", "public": "novncproxy"},
				"port":  map[string]any{"novnc_proxy": map[string]any{"default": 6080, "public": 80}},
			},
			"cluster_domain_suffix": "cluster.local",
		},
	}
	out, err := Render(Input{Release: "2026.1"})
	if err != nil {
		t.Fatal(err)
	}
	keystone := component(t, out, "keystone")
	v, err := keystone.ForChart(chart, mustMerge(t, keystone.Values, `{"endpoints":{"identity":{"hosts":{"admin":"keystone-admin"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"manifests":                                      `{"ingress_api":false,"secret_ingress_tls":false,"service_ingress_api":false}`,
		"endpoints.identity.hosts":                       `{"admin":"keystone-admin","public":"keystone-api"}`,
		"endpoints.identity.port.api":                    `{"admin":5000,"public":5000}`,
		"endpoints.identity.scheme":                      `{"admin":"http","public":"http"}`,
		"endpoints.compute_novnc_proxy.hosts":            `{"admin":"nova-novncproxy","public":"nova-novncproxy"}`,
		"endpoints.compute_novnc_proxy.port.novnc_proxy": `{"admin":6080,"public":6080}`,
	} {
		if got := at(t, v, path); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	withIngress := mustMerge(t, keystone.Values, `{"manifests":{"ingress_api":true}}`)
	if v, err = keystone.ForChart(chart, withIngress); err != nil {
		t.Fatal(err)
	}
	if got := at(t, v, "manifests"); got != `{"ingress_api":true}` {
		t.Errorf("with ingress_api on: manifests = %s", got)
	}
	if got := at(t, v, "endpoints.identity.hosts"); got != `<none>` {
		t.Errorf("with ingress_api on: endpoints.identity.hosts = %s", got)
	}
}

// A per-node key the chart does not take, or takes in the other form, is an error: the chart
// would silently ignore it (neutron's agents were once keyed neutron_ovs_agent).
func TestCheckNodeDaemonSets(t *testing.T) {
	neutron, _ := ComponentByName("neutron")
	libvirt, _ := ComponentByName("libvirt")
	realNeutron := map[string]bool{"neutron_ovs-agent": false, "neutron_dhcp-agent": false, "neutron_l3-agent": false,
		"neutron_metadata-agent": false, "neutron_sriov-agent": false}
	if err := neutron.CheckNodeDaemonSets(realNeutron); err != nil {
		t.Errorf("neutron: %v", err)
	}
	if err := neutron.CheckNodeDaemonSets(nil); err != nil {
		t.Errorf("a chart without helm-toolkit's utilities: %v", err)
	}
	old := map[string]bool{"neutron_ovs_agent": false}
	if err := neutron.CheckNodeDaemonSets(old); err == nil || !strings.Contains(err.Error(), "neutron_ovs-agent (no such DaemonSet)") {
		t.Errorf("neutron with underscored keys: err = %v", err)
	}
	if err := libvirt.CheckNodeDaemonSets(map[string]bool{"libvirt_libvirt": false}); err == nil || !strings.Contains(err.Error(), "other form") {
		t.Errorf("libvirt in the hosts form: err = %v", err)
	}
}

func TestSelectedComponents(t *testing.T) {
	names := func(cs []Component) string {
		var n []string
		for _, c := range cs {
			n = append(n, c.Name)
		}
		return strings.Join(n, ",")
	}
	// The list is taken in install order, whatever its own order.
	if got := names(Selected([]string{"keystone", "memcached", "mariadb", "rabbitmq"}, nil)); got != "mariadb,rabbitmq,memcached,keystone" {
		t.Errorf("selected %s", got)
	}
	if got, want := names(Selected(nil, []string{"horizon"})), names(Enabled([]string{"horizon"})); got != want {
		t.Errorf("without components: %s, want Enabled's %s", got, want)
	}
	out, err := Render(Input{Release: "2025.1", Components: []string{"mariadb", "rabbitmq", "memcached", "keystone"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(out.Components); got != 4 {
		t.Errorf("%d components rendered, want 4", got)
	}
	for list, want := range map[string]string{
		"keystone":                          "keystone needs mariadb",
		"mariadb,rabbitmq,memcached,glance": "glance needs keystone",
		"mariadb,rabbitmq,memcached,keystone,glance,placement,nova": "nova needs neutron",
	} {
		_, err := Render(Input{Release: "2025.1", Components: strings.Split(list, ",")})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("components %s: %v, want %q", list, err, want)
		}
	}
}

// Nova's Deployments are replaced once their successors are Ready when no console proxy holds a
// port of the host's network; the values' own setting wins.
func TestRenderNovaSurgesWithoutAHostNetworkConsole(t *testing.T) {
	const path = "pod.lifecycle.upgrades.deployments.rolling_update.max_unavailable"
	for _, tt := range []struct{ name, values, want string }{
		{"the chart's defaults: noVNC on the host's network", `{}`, `<none>`},
		{"no console", `{"console":{"console_kind":"none"}}`, `0`},
		{"noVNC's Deployment off", `{"manifests":{"deployment_novncproxy":false}}`, `0`},
		{"noVNC on the pod network", `{"pod":{"useHostNetwork":{"novncproxy":false}}}`, `0`},
		{"SPICE, always on the host's network", `{"console":{"console_kind":"spice"},"pod":{"useHostNetwork":{"novncproxy":false}}}`, `<none>`},
		{"SPICE's Deployment off", `{"console":{"console_kind":"spice"},"manifests":{"deployment_spiceproxy":false}}`, `0`},
		{"serial, on the pod network by default", `{"console":{"console_kind":"serial"}}`, `0`},
		{"serial on the host's network", `{"console":{"console_kind":"serial"},"pod":{"useHostNetwork":{"serialproxy":true}}}`, `<none>`},
		// The chart's `if` takes a string as true, whatever it says.
		{"serial on the host's network, as a string", `{"console":{"console_kind":"serial"},"pod":{"useHostNetwork":{"serialproxy":"true"}}}`, `<none>`},
		{"noVNC's Deployment off as a string: still deployed", `{"manifests":{"deployment_novncproxy":"false"}}`, `<none>`},
		{"noVNC's Deployment off as 0", `{"manifests":{"deployment_novncproxy":0}}`, `0`},
		{"the values' own setting", `{"console":{"console_kind":"none"},"pod":{"lifecycle":{"upgrades":{"deployments":{"rolling_update":{"max_unavailable":2}}}}}}`, `2`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Render(Input{Release: "2026.1", Profile: &kupenstackv1.OpenstackCloudConfigurationProfileSpec{
				Components: map[string]kupenstackv1.ComponentProfile{"nova": {Values: rawJSON(tt.values)}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if got := at(t, component(t, out, "nova").Values, path); got != tt.want {
				t.Errorf("%s = %s, want %s", path, got, tt.want)
			}
		})
	}
	// A null the values put on the way is theirs too (Helm drops the chart's default there).
	out, err := Render(Input{Release: "2026.1", Profile: &kupenstackv1.OpenstackCloudConfigurationProfileSpec{
		Components: map[string]kupenstackv1.ComponentProfile{"keystone": {Values: rawJSON(`{"pod":{"lifecycle":{"upgrades":null}}}`)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := at(t, component(t, out, "keystone").Values, "pod.lifecycle.upgrades"); got != `null` {
		t.Errorf("keystone pod.lifecycle.upgrades = %s, want the values' null", got)
	}
}
