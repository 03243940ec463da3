package apivalidation

import (
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// decodeLCM builds a life-cycle object: KupenstackConfiguration and OpenstackNode are
// cluster-scoped, OpenstackCloudConfigurationProfile lives in a namespace.
func decodeLCM(t *testing.T, kind, name, spec string) *unstructured.Unstructured {
	t.Helper()
	doc := "apiVersion: kupenstack.io/v1alpha1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\nspec:\n" + spec
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatalf("test case is not YAML: %v", err)
	}
	if kind == "OpenstackCloudConfigurationProfile" {
		obj.SetNamespace(ns)
	}
	return obj
}

// TestLCMCreateValidation covers every admission rule of the life-cycle kinds.
func TestLCMCreateValidation(t *testing.T) {
	ensureNamespace(t)
	const base = "  release: '2026.1'\n  charts: {localPath: /charts}\n  defaultProfile: {name: default, namespace: openstack}\n"
	const cfg = "KupenstackConfiguration"
	const occp = "OpenstackCloudConfigurationProfile"
	const comp = "  chart: nova\n  chartVersion: 2026.1.0\n  release: '2026.1'\n  namespace: openstack\n  dependsOn: [keystone, placement]\n" +
		"  upgradePhase: 4\n  valuesHash: 0123456789abcdef\n"
	for _, tt := range []struct {
		name, kind, objName, spec, wantErr string
	}{
		// KupenstackConfiguration.
		{"config minimal", cfg, "kupenstack", base, ""},
		{"config full", cfg, "kupenstack", "  release: '2025.2'\n  namespace: os\n  charts: {repository: 'https://charts.example/openstack-helm'}\n" +
			"  defaultProfile: {name: default, namespace: openstack}\n  optionalComponents: [cinder, horizon]\n" +
			"  nodes:\n  - {name: node-a, type: 'control,compute'}\n  - {name: node-b, roles: [compute], disabled: true, profile: {name: big}}\n" +
			"  - {name: node-c, type: compute, profile: {name: big, namespace: other}}\n", ""},
		{"config oci", cfg, "kupenstack", "  release: '2026.1'\n  charts: {oci: 'oci://registry.example/osh'}\n  defaultProfile: {name: d, namespace: ns1}\n", ""},
		{"config second name", cfg, "other", base, "there is one KupenstackConfiguration per cluster and it must be named kupenstack"},
		{"config bad release", cfg, "kupenstack", strings.Replace(base, "'2026.1'", "dalmatian", 1), "release must look like 2026.1"},
		{"config release 2026.3", cfg, "kupenstack", strings.Replace(base, "'2026.1'", "'2026.3'", 1), "release must look like 2026.1"},
		{"config no charts", cfg, "kupenstack", strings.Replace(base, "{localPath: /charts}", "{}", 1), "charts needs exactly one of repository, oci or localPath"},
		{"config two chart sources", cfg, "kupenstack", strings.Replace(base, "{localPath: /charts}", "{localPath: /charts, oci: 'oci://r/x'}", 1), "charts needs exactly one of repository, oci or localPath"},
		{"config ftp repository", cfg, "kupenstack", strings.Replace(base, "{localPath: /charts}", "{repository: 'ftp://r/x'}", 1), "repository must be an http or https URL"},
		{"config oci without scheme", cfg, "kupenstack", strings.Replace(base, "{localPath: /charts}", "{oci: 'registry/x'}", 1), "oci must start with oci://"},
		{"config relative path", cfg, "kupenstack", strings.Replace(base, "{localPath: /charts}", "{localPath: charts}", 1), "localPath must be an absolute path"},
		{"config profile without namespace", cfg, "kupenstack", strings.Replace(base, "{name: default, namespace: openstack}", "{name: default}", 1), "defaultProfile needs a namespace"},
		{"config unknown optional component", cfg, "kupenstack", base + "  optionalComponents: [swift]\n", `Unsupported value: "swift"`},
		{"config components", cfg, "kupenstack", base + "  components: [mariadb, rabbitmq, memcached, keystone]\n", ""},
		{"config unknown component", cfg, "kupenstack", base + "  components: [mariadb, swift]\n", `Unsupported value: "swift"`},
		{"config empty components", cfg, "kupenstack", base + "  components: []\n", "spec.components"},
		{"config components and optional", cfg, "kupenstack", base + "  components: [mariadb]\n  optionalComponents: [horizon]\n", "spec.optionalComponents: Invalid value: set components (the whole list) or optionalComponents"},
		{"config progress deadline", cfg, "kupenstack", base + "  progressDeadline: 20m\n", ""},
		{"config progress deadline too short", cfg, "kupenstack", base + "  progressDeadline: 5s\n", "progressDeadline must be between 10s and 24h"},
		{"config namespace not a name", cfg, "kupenstack", base + "  namespace: OpenStack\n", "namespace must be a namespace name"},
		{"config progress deadline too long", cfg, "kupenstack", base + "  progressDeadline: 48h\n", "progressDeadline must be between 10s and 24h"},
		{"config progress deadline not a duration", cfg, "kupenstack", base + "  progressDeadline: soon\n", "spec.progressDeadline: Invalid value: \"soon\": must be a duration such as 30s"},
		{"node type and roles", cfg, "kupenstack", base + "  nodes: [{name: a, type: compute, roles: [compute]}]\n", "a node needs exactly one of type"},
		{"node without roles", cfg, "kupenstack", base + "  nodes: [{name: a}]\n", "a node needs exactly one of type"},
		{"node bad type", cfg, "kupenstack", base + "  nodes: [{name: a, type: storage}]\n", "type must be control, compute or control,compute"},
		{"node type duplicated", cfg, "kupenstack", base + "  nodes: [{name: a, type: 'compute,compute'}]\n", "type must be control, compute or control,compute"},
		{"node type reversed", cfg, "kupenstack", base + "  nodes: [{name: a, type: 'compute,control'}]\n", ""},
		{"node bad role", cfg, "kupenstack", base + "  nodes: [{name: a, roles: [storage]}]\n", `Unsupported value: "storage"`},
		{"node duplicate role", cfg, "kupenstack", base + "  nodes: [{name: a, roles: [compute, compute]}]\n", "Duplicate value"},
		{"node empty roles", cfg, "kupenstack", base + "  nodes: [{name: a, roles: []}]\n", "spec.nodes[0].roles"},
		{"node duplicate name", cfg, "kupenstack", base + "  nodes: [{name: a, type: compute}, {name: a, type: control}]\n", "Duplicate value"},
		{"node bad name", cfg, "kupenstack", base + "  nodes: [{name: 'Node_A', type: compute}]\n", "spec.nodes[0].name"},
		// OpenstackCloudConfigurationProfile.
		{"profile empty", occp, "p", "  {}\n", ""},
		{"profile full", occp, "p", "  debug: true\n  replicas: 2\n  imageRegistry: registry.local:5000/mirror\n  images: {dep_check: 'r/dep:1'}\n" +
			"  resources: {requests: {cpu: 100m, memory: 128Mi}}\n  components:\n    nova:\n      replicas: 3\n      debug: false\n" +
			"      images: {nova_api: 'r/nova:1'}\n      values: {pod: {replicas: {conductor: 2}}, manifests: {cron_job_cell_setup: false}}\n" +
			"      conf: {nova: {DEFAULT: {cpu_allocation_ratio: 4}}}\n", ""},
		{"profile unknown component", occp, "p", "  components: {swift: {}}\n", "components must be named mariadb"},
		{"profile registry with scheme", occp, "p", "  imageRegistry: 'https://registry.local'\n", "imageRegistry must be a registry host[:port]"},
		{"profile negative replicas", occp, "p", "  replicas: -1\n", "spec.replicas"},
		{"profile component replicas", occp, "p", "  components: {nova: {replicas: 1000}}\n", "spec.components.nova.replicas"},
		{"profile ceph", occp, "p", "  ceph: {configMap: site-ceph, secret: site-ceph-admin, poolReplicas: 1}\n", ""},
		{"profile ceph defaults", occp, "p", "  ceph: {}\n", ""},
		{"profile ceph configMap not a name", occp, "p", "  ceph: {configMap: Ceph_Etc}\n", "configMap must be a ConfigMap name"},
		{"profile ceph secret not a name", occp, "p", "  ceph: {secret: 'a/b'}\n", "secret must be a Secret name"},
		{"profile ceph no replicas", occp, "p", "  ceph: {poolReplicas: 0}\n", "spec.ceph.poolReplicas"},
		// OpenstackNode (written by the operator, validated all the same).
		{"node object ok", "OpenstackNode", "node-1", "  roles: [control, compute]\n  profile: {name: p, namespace: ns1}\n", ""},
		{"node object bad role", "OpenstackNode", "node-1", "  roles: [network]\n", `Unsupported value: "network"`},
		{"node object no roles", "OpenstackNode", "node-1", "  roles: []\n", "spec.roles"},
		{"node object profile without namespace", "OpenstackNode", "node-1", "  roles: [compute]\n  profile: {name: p}\n", "spec.profile: Invalid value: profile needs a namespace"},
		{"node object profile not a name", "OpenstackNode", "node-1", "  roles: [compute]\n  profile: {name: Big_Compute, namespace: ns1}\n", "spec.profile.name: Invalid value: \"Big_Compute\""},
		{"config profile namespace not a name", cfg, "kupenstack", strings.Replace(base, "namespace: openstack}", "namespace: Open_Stack}", 1), "spec.defaultProfile.namespace: Invalid value: \"Open_Stack\""},
		// OpenstackComponent (written by the operator, validated all the same).
		{"component ok", "OpenstackComponent", "nova", comp, ""},
		{"component local chart without version", "OpenstackComponent", "nova", strings.Replace(comp, "  chartVersion: 2026.1.0\n", "", 1), ""},
		{"component named after another chart", "OpenstackComponent", "keystone", comp, "an OpenstackComponent is named after its chart"},
		{"component unknown chart", "OpenstackComponent", "swift", strings.Replace(comp, "chart: nova", "chart: swift", 1), `spec.chart: Unsupported value: "swift"`},
		{"component version not semver", "OpenstackComponent", "nova", strings.Replace(comp, "2026.1.0", "latest", 1), "spec.chartVersion"},
		{"component bad release", "OpenstackComponent", "nova", strings.Replace(comp, "'2026.1'", "epoxy", 1), "release must look like 2026.1"},
		{"component bad namespace", "OpenstackComponent", "nova", strings.Replace(comp, "namespace: openstack", "namespace: Open_Stack", 1), "namespace must be a namespace name"},
		{"component unknown dependency", "OpenstackComponent", "nova", strings.Replace(comp, "[keystone, placement]", "[keystone, swift]", 1), `Unsupported value: "swift"`},
		{"component duplicate dependency", "OpenstackComponent", "nova", strings.Replace(comp, "[keystone, placement]", "[keystone, keystone]", 1), "Duplicate value"},
		{"component phase zero", "OpenstackComponent", "nova", strings.Replace(comp, "upgradePhase: 4", "upgradePhase: 0", 1), "spec.upgradePhase"},
		{"component phase huge", "OpenstackComponent", "nova", strings.Replace(comp, "upgradePhase: 4", "upgradePhase: 1000", 1), "spec.upgradePhase"},
		{"component hash not hex", "OpenstackComponent", "nova", strings.Replace(comp, "0123456789abcdef", "not a hash", 1), "spec.valuesHash"},
		{"component without hash", "OpenstackComponent", "nova", strings.Replace(comp, "  valuesHash: 0123456789abcdef\n", "", 1), "spec.valuesHash: Required value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := env.Client.Create(env.Ctx, decodeLCM(t, tt.kind, tt.objName, tt.spec), client.DryRunAll)
			expectAdmission(t, err, tt.wantErr)
		})
	}
}

// A profile's ceph: {} gets the charts' names for the Ceph client configuration and three copies.
func TestCephClientDefaults(t *testing.T) {
	ensureNamespace(t)
	obj := decodeLCM(t, "OpenstackCloudConfigurationProfile", "p", "  ceph: {}\n")
	if err := env.Client.Create(env.Ctx, obj, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedMap(obj.Object, "spec", "ceph")
	want := map[string]any{"configMap": "ceph-etc", "secret": "pvc-ceph-client-key", "poolReplicas": int64(3)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spec.ceph defaulted to %v, want %v", got, want)
	}
}

// A configuration that names no chart source gets the official OpenStack-Helm chart repository.
func TestChartSourceDefault(t *testing.T) {
	env.Require(t)
	obj := decodeLCM(t, "KupenstackConfiguration", "kupenstack", "  release: '2026.1'\n  defaultProfile: {name: default, namespace: openstack}\n")
	if err := env.Client.Create(env.Ctx, obj, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(obj.Object, "spec", "charts", "repository"); got != "https://tarballs.opendev.org/openstack/openstack-helm" {
		t.Errorf("spec.charts.repository defaulted to %q, want the official OpenStack-Helm repository", got)
	}
}

// TestOneKupenstackConfiguration: with a configuration in place, a second one cannot be created
// under any name.
func TestOneKupenstackConfiguration(t *testing.T) {
	ensureNamespace(t)
	spec := "  release: '2026.1'\n  charts: {localPath: /charts}\n  defaultProfile: {name: default, namespace: openstack}\n"
	first := decodeLCM(t, "KupenstackConfiguration", "kupenstack", spec)
	if err := env.Client.Create(env.Ctx, first); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, first) })
	if got, _, _ := unstructured.NestedString(first.Object, "spec", "namespace"); got != "openstack" {
		t.Errorf("spec.namespace defaulted to %q, want openstack", got)
	}
	err := env.Client.Create(env.Ctx, decodeLCM(t, "KupenstackConfiguration", "kupenstack", spec))
	if !apierrors.IsAlreadyExists(err) {
		t.Errorf("second configuration with the same name: %v, want AlreadyExists", err)
	}
	err = env.Client.Create(env.Ctx, decodeLCM(t, "KupenstackConfiguration", "kupenstack-2", spec))
	if err == nil || !strings.Contains(err.Error(), "must be named kupenstack") {
		t.Errorf("second configuration with another name: %v, want a rejection", err)
	}
}

// TestNodeRename: spec.nodes is keyed by name (a node's OpenstackNode, labels and OpenStack
// services go by it), so an entry's name cannot be changed in place (one name changed, the list
// otherwise the same); adding, removing and reordering entries, and replacing a node by a removal
// and a new entry, are accepted.
func TestNodeRename(t *testing.T) {
	ensureNamespace(t)
	const base = "  release: '2026.1'\n  charts: {localPath: /charts}\n  defaultProfile: {name: default, namespace: openstack}\n"
	nodes := func(entries ...string) []any {
		var out []any
		for _, e := range entries {
			out = append(out, map[string]any{"name": e, "type": "compute"})
		}
		return out
	}
	for _, tt := range []struct {
		name    string
		before  []string
		after   []string
		wantErr string
	}{
		{"rename the only node", []string{"node-a"}, []string{"node-x"}, "a node's name cannot be changed in place"},
		{"rename the middle node", []string{"node-a", "node-b", "node-c"}, []string{"node-a", "node-x", "node-c"}, "a node's name cannot be changed in place"},
		{"rename the last node", []string{"node-a", "node-b"}, []string{"node-a", "node-x"}, "a node's name cannot be changed in place"},
		{"add a node", []string{"node-a"}, []string{"node-a", "node-b"}, ""},
		{"insert a node first", []string{"node-a", "node-b"}, []string{"node-x", "node-a", "node-b"}, ""},
		{"remove a node", []string{"node-a", "node-b", "node-c"}, []string{"node-a", "node-c"}, ""},
		{"remove every node", []string{"node-a", "node-b"}, nil, ""},
		{"reorder", []string{"node-a", "node-b"}, []string{"node-b", "node-a"}, ""},
		{"replace by removal and a new entry", []string{"node-a", "node-b"}, []string{"node-b", "node-x"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeLCM(t, "KupenstackConfiguration", "kupenstack", base)
			if err := unstructured.SetNestedSlice(obj.Object, nodes(tt.before...), "spec", "nodes"); err != nil {
				t.Fatal(err)
			}
			if err := env.Client.Create(env.Ctx, obj); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, obj) })
			if tt.after == nil {
				unstructured.RemoveNestedField(obj.Object, "spec", "nodes")
			} else if err := unstructured.SetNestedSlice(obj.Object, nodes(tt.after...), "spec", "nodes"); err != nil {
				t.Fatal(err)
			}
			err := env.Client.Update(env.Ctx, obj)
			expectAdmission(t, err, tt.wantErr)
			expectOneMessage(t, err)
		})
	}
}
