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
// router's gateway), and the headers read as words.
func TestColumnsBeforeFirstReconcile(t *testing.T) {
	ensureNamespace(t)
	for _, tt := range []struct {
		kind, resource, spec string
		want                 map[string]any
	}{
		{"VirtualMachine", "virtualmachines", "  flavorRef: m1.small\n  imageRef: jammy\n", map[string]any{"Flavor": "m1.small", "Image": "jammy"}},
		{"VirtualMachineSet", "virtualmachinesets", "  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i}\n",
			map[string]any{"Desired": float64(3)}},
		{"Port", "ports", "  networkRef: net\n", map[string]any{"Network": "net"}},
		{"Router", "routers", "  externalGateway: {networkRef: public}\n", map[string]any{"Gateway": "public"}},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			obj := decode(t, tt.kind, tt.spec)
			obj.SetName("columns")
			if err := env.Client.Create(env.Ctx, obj); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = env.Client.Delete(env.Ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
			})
			cells := table(t, fmt.Sprintf("/apis/kupenstack.io/v1alpha1/namespaces/%s/%s/columns", ns, tt.resource))
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
