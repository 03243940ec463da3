package apivalidation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// quota is a ProjectQuota called name with spec (indented YAML under `spec:`), cluster-scoped.
func quota(t *testing.T, name, spec string) *unstructured.Unstructured {
	t.Helper()
	obj := decode(t, "ProjectQuota", spec)
	obj.SetNamespace("")
	obj.SetName(name)
	return obj
}

// TestProjectQuotaValidation: a ProjectQuota is named after its namespace; its limits are -1
// (unlimited) up to the largest value the services store; every field is optional.
func TestProjectQuotaValidation(t *testing.T) {
	ensureNamespace(t)
	for _, tt := range []struct {
		name, objName, spec, field, wantErr string
	}{
		{"minimal", "team-a", "  namespace: team-a\n", "", ""},
		{"every limit", "team-a", "  namespace: team-a\n" +
			"  compute: {instances: 10, cores: 20, ramMiB: 40960, serverGroups: 5, serverGroupMembers: 4}\n" +
			"  network: {networks: 5, subnets: 5, ports: 50, routers: 1, floatingIPs: 2, securityGroups: 10, securityGroupRules: 100}\n" +
			"  volume: {volumes: 10, gigabytes: 500, snapshots: 10}\n  resyncPeriod: 5m\n", "", ""},
		{"empty sections", "team-a", "  namespace: team-a\n  compute: {}\n  network: {}\n  volume: {}\n", "", ""},
		{"unlimited and zero", "team-a", "  namespace: team-a\n  compute: {instances: -1, cores: 0}\n", "", ""},
		{"largest", "team-a", "  namespace: team-a\n  volume: {gigabytes: 2147483647}\n", "", ""},
		{"below unlimited", "team-a", "  namespace: team-a\n  compute: {instances: -2}\n", "spec.compute.instances",
			"spec.compute.instances: Invalid value: -2: spec.compute.instances in body should be greater than or equal to -1"},
		{"too large", "team-a", "  namespace: team-a\n  network: {ports: 2147483648}\n", "spec.network.ports",
			"spec.network.ports: Invalid value: 2147483648: spec.network.ports in body should be less than or equal to 2147483647"},
		// The API server adds that the rules were not checked: not a second mistake, not checked further.
		{"not a number", "team-a", "  namespace: team-a\n  volume: {gigabytes: lots}\n", "", "spec.volume.gigabytes: Invalid value: \"string\""},
		{"named after another namespace", "team-b", "  namespace: team-a\n", "metadata", "a ProjectQuota is named after its namespace"},
		{"namespace not a namespace name", "team.a", "  namespace: team.a\n", "spec.namespace", "namespace must be a namespace name"},
		{"no namespace", "team-a", "  compute: {instances: 1}\n", "", "spec.namespace: Required value"},
		{"resyncPeriod hot loop", "team-a", "  namespace: team-a\n  resyncPeriod: 100ms\n", "spec.resyncPeriod", "resyncPeriod must be 0 (off) or between 1s and 720h"},
		{"resyncPeriod not a duration", "team-a", "  namespace: team-a\n  resyncPeriod: hourly\n", "spec.resyncPeriod", "must be a duration such as 30s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := env.Client.Create(env.Ctx, quota(t, tt.objName, tt.spec), client.DryRunAll)
			expectAdmission(t, err, tt.wantErr)
			if tt.field != "" && tt.field != "metadata" {
				expectField(t, err, tt.field)
			}
			if tt.field == "metadata" && !strings.Contains(err.Error(), "metadata: ") {
				t.Errorf("error %q does not name metadata", err)
			}
			if tt.field != "" {
				expectOneMessage(t, err)
			}
		})
	}
}

// TestProjectQuotaUpdates: the namespace cannot change; limits and sections can, both ways.
func TestProjectQuotaUpdates(t *testing.T) {
	ensureNamespace(t)
	for _, tt := range []struct {
		name    string
		path    []string
		value   any // nil removes the field
		wantErr string
	}{
		{"namespace", []string{"namespace"}, "team-b", "namespace is immutable"},
		{"limit raised", []string{"compute", "instances"}, int64(20), ""},
		{"limit removed", []string{"compute", "instances"}, nil, ""},
		{"section removed", []string{"compute"}, nil, ""},
		{"section added", []string{"volume"}, map[string]any{"volumes": int64(3)}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := quota(t, "team-a", "  namespace: team-a\n  compute: {instances: 10}\n")
			if err := env.Client.Create(env.Ctx, obj); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = env.Client.Delete(env.Ctx, obj) }()
			path := append([]string{"spec"}, tt.path...)
			if tt.value == nil {
				unstructured.RemoveNestedField(obj.Object, path...)
			} else if err := unstructured.SetNestedField(obj.Object, tt.value, path...); err != nil {
				t.Fatal(err)
			}
			expectAdmission(t, env.Client.Update(env.Ctx, obj), tt.wantErr)
		})
	}
}

// TestProjectQuotaColumns: kubectl get shows readiness and the instances and cores used against
// their limit; -o wide the memory, the reason and the project.
func TestProjectQuotaColumns(t *testing.T) {
	ensureNamespace(t)
	obj := quota(t, "columns", "  namespace: columns\n  compute: {instances: 10}\n")
	if err := env.Client.Create(env.Ctx, obj); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Client.Delete(env.Ctx, obj) }()
	obj.Object["status"] = map[string]any{
		"projectID": "5b0c",
		"compute": map[string]any{
			"instances": map[string]any{"limit": int64(10), "inUse": int64(2)}, "cores": map[string]any{"limit": int64(20), "inUse": int64(4)},
			"ramMiB": map[string]any{"limit": int64(-1), "inUse": int64(1024)}, "serverGroups": map[string]any{"limit": int64(10), "inUse": int64(0)},
			"serverGroupMembers": map[string]any{"limit": int64(10), "inUse": int64(0)},
		},
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Success", "message": "",
			"lastTransitionTime": "2026-01-02T03:04:05Z", "observedGeneration": int64(1)}},
	}
	if err := env.Client.Status().Update(env.Ctx, obj); err != nil {
		t.Fatal(err)
	}
	cells := table(t, "/apis/kupenstack.io/v1alpha1/projectquotas/columns")
	for col, want := range map[string]any{
		"Ready": "True", "Instances Used": float64(2), "Instances Limit": float64(10), "Cores Used": float64(4), "Cores Limit": float64(20),
		"RAM MiB Used": float64(1024), "RAM MiB Limit": float64(-1), "Reason": "Success", "Project ID": "5b0c",
	} {
		if got := cells[col]; got != want {
			t.Errorf("column %s = %v, want %v; row %v", col, got, want, cells)
		}
	}
}
