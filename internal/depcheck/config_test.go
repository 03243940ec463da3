package depcheck

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []Ref
		wantErr string
	}{
		{in: ""},
		{in: " , ,"},
		{in: "mariadb", want: []Ref{{"os", "mariadb"}}},
		{in: "mysql:mariadb,keystone-api", want: []Ref{{"mysql", "mariadb"}, {"os", "keystone-api"}}},
		{in: " a , b:c ,", want: []Ref{{"os", "a"}, {"b", "c"}}},
		{in: "a,,b", want: []Ref{{"os", "a"}, {"os", "b"}}},
		{in: "ns:", wantErr: `"ns:": empty namespace or name`},
		{in: ":a", wantErr: `":a": empty namespace or name`},
		{in: "a,x:y:z", wantErr: `"x:y:z": want name or namespace:name`},
		{in: "ns/a", wantErr: `"ns/a": not a Kubernetes object name`},
		{in: "Mariadb", wantErr: `not a Kubernetes object name`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseList(tc.in, "os")
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseJobs(t *testing.T) {
	for _, tc := range []struct {
		name, plain, json string
		want              []JobSelector
		wantErr, wantWarn string
	}{
		{name: "none"},
		{name: "plain", plain: "nova-db-sync,other:nova-ks-user",
			want: []JobSelector{{Name: "nova-db-sync", Namespace: "os"}, {Name: "nova-ks-user", Namespace: "other"}}},
		{name: "json", json: `[{"namespace":"foo","name":"nova-init"},{"labels":{"initializes":"neutron"}}]`,
			want: []JobSelector{{Name: "nova-init", Namespace: "foo"}, {Labels: map[string]string{"initializes": "neutron"}, Namespace: "os"}}},
		{name: "json wins", plain: "a", json: `[{"name":"b"}]`, want: []JobSelector{{Name: "b", Namespace: "os"}},
			wantWarn: "DEPENDENCY_JOBS is ignored because DEPENDENCY_JOBS_JSON is set"},
		{name: "json blank falls back to plain", plain: "a", json: "  ", want: []JobSelector{{Name: "a", Namespace: "os"}}},
		{name: "name and labels", json: `[{"name":"a","labels":{"k":"v"}}]`, wantErr: "want exactly one of name and labels"},
		{name: "neither", json: `[{"namespace":"x"}]`, wantErr: "want exactly one of name and labels"},
		{name: "not a list", json: `{"name":"a"}`, wantErr: "not a JSON list"},
		{name: "bad plain", plain: "a:b:c", wantErr: "want name or namespace:name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warned []string
			warn := func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }
			got, err := ParseJobs(tc.plain, tc.json, "os", warn)
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if w := strings.Join(warned, "\n"); w != tc.wantWarn {
				t.Errorf("warnings %q, want %q", w, tc.wantWarn)
			}
		})
	}
}

func TestParsePodJSON(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []PodSelector
		wantErr  string
	}{
		{name: "empty"},
		{name: "null", in: "null"},
		{name: "nova compute on ovs", in: `[{"labels":{"application":"neutron","component":"neutron-ovs-agent"},"requireSameNode":true}]`,
			want: []PodSelector{{Labels: map[string]string{"application": "neutron", "component": "neutron-ovs-agent"}, Namespace: "os", RequireSameNode: true}}},
		{name: "namespace kept", in: `[{"namespace":"foo","labels":{"k1":"v1"}}]`,
			want: []PodSelector{{Labels: map[string]string{"k1": "v1"}, Namespace: "foo"}}},
		{name: "no labels", in: `[{"requireSameNode":true}]`, wantErr: "entry 0: no labels"},
		{name: "null entry", in: `[null]`, wantErr: "entry 0: no labels"},
		{name: "bad json", in: `[{"labels":`, wantErr: "not a JSON list"},
		{name: "wrong type", in: `[{"labels":{"k":1}}]`, wantErr: "not a JSON list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePodJSON(tc.in, "os")
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseCustomResources(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []CustomResource
		wantErr  string
	}{
		{name: "empty"},
		{name: "helm-toolkit example",
			in: `[{"apiVersion":"argoproj.io/v1alpha1","kind":"Workflow","namespace":"default","name":"wf-example","fields":[{"key":"status.phase","value":"Succeeded"}]}]`,
			want: []CustomResource{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Namespace: "default", Name: "wf-example",
				Fields: []Field{{Key: "status.phase", Value: "Succeeded"}}}}},
		{name: "conditions, namespace defaulted",
			in: `[{"apiVersion":"x.io/v1","kind":"Foo","name":"a","conditions":[{"type":"Ready"},{"type":"Degraded","status":"False"}]}]`,
			want: []CustomResource{{APIVersion: "x.io/v1", Kind: "Foo", Namespace: "os", Name: "a",
				Conditions: []Condition{{Type: "Ready"}, {Type: "Degraded", Status: "False"}}}}},
		{name: "no kind", in: `[{"apiVersion":"x.io/v1","name":"a"}]`, wantErr: "apiVersion, kind and name are required"},
		{name: "bad key", in: `[{"apiVersion":"x.io/v1","kind":"Foo","name":"a","fields":[{"key":"status..phase"}]}]`, wantErr: "not a dotted path"},
		{name: "condition without type", in: `[{"apiVersion":"x.io/v1","kind":"Foo","name":"a","conditions":[{"status":"True"}]}]`, wantErr: "without type"},
		{name: "bad json", in: `[{]`, wantErr: "not a JSON list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCustomResources(tc.in, "os")
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	// What helm-toolkit renders for a component without dependencies: every variable present, empty.
	chartEmpty := map[string]string{EnvPodName: "p", EnvNamespace: "openstack", EnvInterfaceName: "eth0",
		EnvService: "", EnvDaemonSet: "", EnvContainer: "", EnvPodJSON: "", EnvCustomResource: ""}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		wantDeps []string
		wantNS   string
		wantCmd  []string
		wantErr  string
		wantWarn string
	}{
		{name: "nothing at all", env: map[string]string{}, wantNS: "default"},
		{name: "chart, no dependencies", env: chartEmpty, wantNS: "openstack"},
		{name: "chart, every kind", wantNS: "openstack", wantCmd: []string{"nova-api", "--debug"},
			env: with(chartEmpty,
				EnvService, "openstack:mariadb,keystone-api",
				EnvJobs, "nova-db-sync",
				EnvDaemonSet, "openvswitch",
				EnvContainer, "nova-libvirt",
				EnvPodJSON, `[{"labels":{"application":"neutron"},"requireSameNode":true}]`,
				EnvCustomResource, `[{"apiVersion":"x.io/v1","kind":"Foo","name":"f","fields":[{"key":"status.phase","value":"Ready"}]}]`,
				EnvSocket, "/run/ovs.sock",
				EnvCommand, "  nova-api   --debug "),
			wantDeps: []string{
				"Service openstack/mariadb", "Service openstack/keystone-api", "Job openstack/nova-db-sync",
				"DaemonSet openstack/openvswitch", "Container nova-libvirt",
				"Pod in openstack with labels application=neutron on this node", "Foo openstack/f (x.io/v1)",
				"Socket /run/ovs.sock"}},
		{name: "container namespace ignored", env: with(chartEmpty, EnvContainer, "x:c"), wantNS: "openstack",
			wantDeps: []string{"Container c"}, wantWarn: `namespace "x" ignored`},
		{name: "no POD_NAME for a daemonset", env: map[string]string{EnvDaemonSet: "ovs"},
			wantErr: "POD_NAME is not set, but DaemonSet default/ovs needs"},
		{name: "no POD_NAME, pods anywhere", env: map[string]string{EnvPodJSON: `[{"labels":{"a":"b"}}]`}, wantNS: "default",
			wantDeps: []string{"Pod in default with labels a=b"}},
		{name: "errors are all reported", env: with(chartEmpty, EnvService, "a:b:c", EnvPodJSON, "[", EnvCustomResource, "{}"),
			wantErr: "DEPENDENCY_SERVICE: \"a:b:c\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warned []string
			cfg, err := FromEnv(func(k string) string { return tc.env[k] }, func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) })
			checkErr(t, err, tc.wantErr)
			if tc.wantErr != "" {
				if tc.name == "errors are all reported" {
					for _, want := range []string{EnvPodJSON, EnvCustomResource} {
						if !strings.Contains(err.Error(), want) {
							t.Errorf("error %q does not mention %s", err, want)
						}
					}
				}
				return
			}
			var deps []string
			for _, d := range cfg.Deps {
				deps = append(deps, d.String())
			}
			if !reflect.DeepEqual(deps, tc.wantDeps) {
				t.Errorf("deps\n got %q\nwant %q", deps, tc.wantDeps)
			}
			if cfg.Namespace != tc.wantNS || !slices.Equal(cfg.Command, tc.wantCmd) {
				t.Errorf("namespace %q command %q, want %q %q", cfg.Namespace, cfg.Command, tc.wantNS, tc.wantCmd)
			}
			if w := strings.Join(warned, "\n"); !strings.Contains(w, tc.wantWarn) || (tc.wantWarn == "" && w != "") {
				t.Errorf("warnings %q, want %q", w, tc.wantWarn)
			}
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q, want one containing %q", err, want)
	}
}

// FuzzParsers feeds arbitrary values to every parser: none may panic, and whatever they accept
// must be usable (names and namespaces set, selectors well-formed).
func FuzzParsers(f *testing.F) {
	for _, s := range []string{"", "a", "ns:a,b", "a:b:c", ",,", "[]", "null",
		`[{"labels":{"a":"b"},"requireSameNode":true}]`, `[{"name":"j"},{"labels":{"k":"v"}}]`,
		`[{"apiVersion":"x/v1","kind":"K","name":"n","fields":[{"key":"a.b","value":"c"}],"conditions":[{"type":"Ready"}]}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if refs, err := ParseList(s, "d"); err == nil {
			for _, r := range refs {
				if r.Name == "" || r.Namespace == "" || len(validation.IsDNS1123Subdomain(r.Name)) > 0 || len(validation.IsDNS1123Subdomain(r.Namespace)) > 0 {
					t.Fatalf("ParseList(%q) accepted %+v", s, r)
				}
			}
		}
		if pods, err := ParsePodJSON(s, "d"); err == nil {
			for _, p := range pods {
				if p.Namespace == "" || len(p.Labels) == 0 {
					t.Fatalf("ParsePodJSON(%q) accepted %+v", s, p)
				}
			}
		}
		for _, in := range [][2]string{{s, ""}, {"", s}, {"x", s}} {
			if jobs, err := ParseJobs(in[0], in[1], "d", nil); err == nil {
				for _, j := range jobs {
					if j.Namespace == "" || (j.Name == "") == (len(j.Labels) == 0) {
						t.Fatalf("ParseJobs(%q, %q) accepted %+v", in[0], in[1], j)
					}
				}
			}
		}
		if crs, err := ParseCustomResources(s, "d"); err == nil {
			for _, cr := range crs {
				if cr.Namespace == "" || cr.APIVersion == "" || cr.Kind == "" || cr.Name == "" {
					t.Fatalf("ParseCustomResources(%q) accepted %+v", s, cr)
				}
				for _, fl := range cr.Fields {
					for p := range strings.SplitSeq(fl.Key, ".") {
						if p == "" {
							t.Fatalf("ParseCustomResources(%q) accepted key %q", s, fl.Key)
						}
					}
				}
			}
		}
	})
}
