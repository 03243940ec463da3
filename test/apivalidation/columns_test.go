package apivalidation

import (
	"encoding/json"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// table asks the API server for the object as kubectl get -o wide does (a Table, every column)
// and returns the cells by column name.
func table(t *testing.T, path string) map[string]any {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	body, err := cs.CoreV1().RESTClient().Get().AbsPath(path).Param("includeObject", "None").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(env.Ctx).Raw()
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	var tab metav1.Table
	if err := json.Unmarshal(body, &tab); err != nil || len(tab.Rows) != 1 {
		t.Fatalf("GET %s: %v (%d rows)", path, err, len(tab.Rows))
	}
	cells := map[string]any{}
	for i, c := range tab.ColumnDefinitions {
		cells[c.Name] = tab.Rows[0].Cells[i]
	}
	return cells
}

// TestColumnsBeforeFirstReconcile: with no operator running, kubectl get already shows what the
// spec declares (a VM's flavor and image, a set's desired replicas, a port's network, a
// router's gateway, a subnet's CIDR, a flavor's sizes, an aggregate's zone, a server group's
// policy), and the headers read as words. Counts the operator writes show 0 (or Unknown for a
// "<ready>/<total>"), not blank, before it writes any status and once it has written one (here:
// only observedGeneration, as a first reconcile might). A component's Phase reads Pending and its
// Version None (no revision deployed) until the operator writes them.
func TestColumnsBeforeFirstReconcile(t *testing.T) {
	ensureNamespace(t)
	const set = "  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i}\n"
	for _, tt := range []struct {
		name, kind, resource, spec string
		status                     map[string]any // written after creation when not nil
		want                       map[string]any
	}{
		{"VirtualMachine", "VirtualMachine", "virtualmachines", "  flavorRef: m1.small\n  imageRef: jammy\n", nil, map[string]any{"Flavor": "m1.small", "Image": "jammy"}},
		{"VirtualMachineSet", "VirtualMachineSet", "virtualmachinesets", set, nil,
			map[string]any{"Desired": float64(3), "Current": float64(0), "Ready": float64(0), "Up-to-date": float64(0), "Available": float64(0)}},
		{"Port", "Port", "ports", "  networkRef: net\n", nil, map[string]any{"Network": "net"}},
		{"Router", "Router", "routers", "  externalGateway: {networkRef: public}\n", nil, map[string]any{"Gateway": "public"}},
		{"Subnet", "Subnet", "subnets", "  networkRef: net\n  cidr: 10.0.0.0/24\n", nil, map[string]any{"Network": "net", "CIDR": "10.0.0.0/24"}},
		{"Flavor", "Flavor", "flavors", "  vcpus: 2\n  ramMiB: 4096\n  diskGiB: 20\n", nil, map[string]any{"VCPUs": float64(2), "RAM MiB": float64(4096), "Disk GiB": float64(20)}},
		{"VirtualMachine public image", "VirtualMachine", "virtualmachines", "  flavorRef: m1.small\n  publicImageRef: cirros\n", nil, map[string]any{"Flavor": "m1.small", "Public Image": "cirros"}},
		{"PublicImage", "PublicImage", "publicimages", "  source: {url: 'https://images.example/a.img'}\n",
			map[string]any{"id": "0a1b", "resource": map[string]any{"status": "active", "size": int64(1024), "visibility": "public"}},
			map[string]any{"ID": "0a1b", "Status": "active", "Size": float64(1024), "Visibility": "public"}},
		{"ProviderNetwork", "ProviderNetwork", "providernetworks", "  networkType: flat\n  physicalNetwork: external\n  external: true\n", nil, map[string]any{"Type": "flat", "Physical": "external", "External": true}},
		{"ProviderSubnet", "ProviderSubnet", "providersubnets", "  providerNetworkRef: public\n  cidr: 198.51.100.0/24\n", nil, map[string]any{"Network": "public", "CIDR": "198.51.100.0/24"}},
		{"Router on a provider network", "Router", "routers", "  externalGateway: {providerNetworkRef: public}\n", nil, map[string]any{"Provider Gateway": "public"}},
		{"HostAggregate", "HostAggregate", "hostaggregates", "  nodeSelector: {disk: ssd}\n  availabilityZone: az1\n", nil, map[string]any{"Zone": "az1"}},
		{"ServerGroup", "ServerGroup", "servergroups", "  policy: anti-affinity\n", nil, map[string]any{"Policy": "anti-affinity"}},
		// Counts before any status is written: 0, or Unknown for a "<ready>/<total>" not known yet.
		{"VirtualMachine restarts at first", "VirtualMachine", "virtualmachines", "  flavorRef: f\n  imageRef: i\n", nil, map[string]any{"Restarts": float64(0)}},
		{"KupenstackConfiguration at first", "KupenstackConfiguration", "kupenstackconfigurations", "  release: '2026.1'\n  charts: {localPath: /charts}\n  defaultProfile: {name: default, namespace: openstack}\n  nodes: [{name: a, type: control}]\n",
			nil, map[string]any{"Release": "2026.1", "Nodes": float64(0), "Components": "Unknown"}},
		{"OpenstackComponent at first", "OpenstackComponent", "openstackcomponents", "  chart: nova\n  chartVersion: 2026.1.0\n  release: '2026.1'\n  namespace: openstack\n  upgradePhase: 4\n  valuesHash: 0123456789abcdef\n",
			nil, map[string]any{"Chart": "nova", "Revision": float64(0), "Workloads": "Unknown", "Phase": "Pending", "Version": "None"}},
		{"VirtualMachine restarts", "VirtualMachine", "virtualmachines", "  flavorRef: f\n  imageRef: i\n", map[string]any{"observedGeneration": int64(1)}, map[string]any{"Restarts": float64(0)}},
		{"VirtualMachineSet counts", "VirtualMachineSet", "virtualmachinesets", set, map[string]any{"observedGeneration": int64(1)},
			map[string]any{"Desired": float64(3), "Current": float64(0), "Ready": float64(0), "Up-to-date": float64(0), "Available": float64(0)}},
		{"OpenstackComponent phase after a status write", "OpenstackComponent", "openstackcomponents", "  chart: nova\n  chartVersion: 2026.1.0\n  release: '2026.1'\n  namespace: openstack\n  upgradePhase: 4\n  valuesHash: 0123456789abcdef\n",
			map[string]any{"observedGeneration": int64(1)}, map[string]any{"Revision": float64(0), "Workloads": "Unknown", "Phase": "Pending", "Version": "None"}},
		{"KupenstackConfiguration nodes", "KupenstackConfiguration", "kupenstackconfigurations", "  release: '2026.1'\n  charts: {localPath: /charts}\n  defaultProfile: {name: default, namespace: openstack}\n",
			map[string]any{"observedGeneration": int64(1)}, map[string]any{"Release": "2026.1", "Nodes": float64(0)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := decode(t, tt.kind, tt.spec)
			obj.SetName("columns")
			path := fmt.Sprintf("/apis/kupenstack.io/v1alpha1/namespaces/%s/%s/columns", ns, tt.resource)
			switch tt.kind {
			case "Flavor", "HostAggregate", "PublicImage", "ProviderNetwork", "ProviderSubnet":
				path = "/apis/kupenstack.io/v1alpha1/" + tt.resource + "/columns"
			case "KupenstackConfiguration": // cluster-scoped, and there is one, named kupenstack
				obj = decodeLCM(t, tt.kind, "kupenstack", tt.spec)
				path = "/apis/kupenstack.io/v1alpha1/" + tt.resource + "/kupenstack"
			case "OpenstackComponent": // cluster-scoped
				obj = decodeLCM(t, tt.kind, "nova", tt.spec)
				path = "/apis/kupenstack.io/v1alpha1/" + tt.resource + "/nova"
			}
			if err := env.Client.Create(env.Ctx, obj); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = env.Client.Delete(env.Ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
			})
			if tt.status != nil {
				obj.Object["status"] = tt.status
				if err := env.Client.Status().Update(env.Ctx, obj); err != nil {
					t.Fatal(err)
				}
			}
			cells := table(t, path)
			for col, want := range tt.want {
				if got, ok := cells[col]; !ok || got != want {
					t.Errorf("column %s = %v (present %v), want %v; row %v", col, got, ok, want, cells)
				}
			}
			for col := range cells {
				if col != "Name" && (col == "" || col[0] < 'A' || col[0] > 'Z') {
					t.Errorf("header %q is not a word", col)
				}
			}
		})
	}
}
