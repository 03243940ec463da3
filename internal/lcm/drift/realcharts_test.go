package drift_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kupenstack/kupenstack/internal/lcm/credentials"
	"github.com/kupenstack/kupenstack/internal/lcm/drift"
	"github.com/kupenstack/kupenstack/internal/lcm/helm"
	"github.com/kupenstack/kupenstack/internal/lcm/render"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

// A plain API server: Helm creates the objects, nothing runs them.
var env = testenv.New(nil)

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// Every component of the lcm sample (plus the optional cinder and horizon), on the real charts of
// every tag, installed by the project's Helm client with the values the operator renders: right
// after the install the drift check finds nothing, also once mariadb's controller has re-pointed
// its Service; a field changed by hand is reported alone, one repair (an upgrade with the same
// chart and values, as the component controller does) restores it, and then nothing is reported.
// Hooks are left out (no pod runs here to complete their Jobs); they are not part of a release's
// manifest, so the drift check never looks at them.
func TestRealChartsNoFalseDrift(t *testing.T) {
	env.Require(t)
	for _, tag := range realcharts.Tags {
		t.Run(tag, func(t *testing.T) {
			f, err := os.Open(filepath.Join(testenv.RepoRoot(), "config", "samples", "lcm", "cloud.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			docs, err := render.Parse(f)
			_ = f.Close()
			if err != nil {
				t.Fatal(err)
			}
			ns := "drift-" + strings.ReplaceAll(tag, ".", "-")
			docs.Config.Spec.Release = realcharts.Release(tag)
			docs.Config.Spec.Namespace = ns
			docs.Config.Spec.OptionalComponents = []string{"cinder", "horizon"}
			out, err := docs.Values()
			if err != nil {
				t.Fatal(err)
			}
			hc, err := helm.NewClient(env.Config, ns, logr.Discard())
			if err != nil {
				t.Fatal(err)
			}
			hc.DisableHooks = true
			loader := &helm.ChartLoader{}
			for _, cv := range out.Components {
				name := cv.Component.Name
				t.Run(name, func(t *testing.T) {
					ch, err := loader.Load(helm.Source{LocalPath: realcharts.Dir(t, tag)}, cv.Component.Chart, cv.ChartVersion)
					if err != nil {
						t.Fatal(err)
					}
					entries := credentials.Entries(cv.Component.Chart, ch.Values, cv.Values)
					pw := map[string]string{}
					for _, k := range credentials.Keys(entries) {
						pw[k] = "pw-" + k
					}
					vals, err := credentials.WithValues(entries, pw, cv.Values)
					if err != nil {
						t.Fatal(err)
					}
					checkNoFalseDrift(t, hc, name, ch, vals, ns)
				})
			}
		})
	}
}

func checkNoFalseDrift(t *testing.T, hc *helm.Client, name string, ch *chart.Chart, vals map[string]any, ns string) {
	ctx := env.Ctx
	rel, err := hc.Install(ctx, name, ch, vals, nil, "drift test")
	if err != nil {
		t.Fatal(err)
	}
	// Cluster-scoped objects (nova's ClusterRoles) have the same names in every tag.
	t.Cleanup(func() {
		if err := hc.Uninstall(name); err != nil {
			t.Errorf("uninstall: %v", err)
		}
	})
	checker := &drift.Checker{Client: env.Client, Reader: env.Client}
	check := func(when string, rel *release.Release, want ...string) {
		t.Helper()
		objs, err := helm.Objects(rel.Manifest, ns)
		if err != nil {
			t.Fatal(err)
		}
		got, err := checker.Check(ctx, rel.Version, objs, nil)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s (revision %d, %d objects): drift %q, want %q", when, rel.Version, len(objs), got, want)
		}
	}
	check("right after install", rel)

	if name == "mariadb" {
		// What the chart's mariadb-controller does once a server pod is ready.
		svc := &corev1.Service{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mariadb"}, svc); err != nil {
			t.Fatal(err)
		}
		svc.Spec.Selector["statefulset.kubernetes.io/pod-name"] = "mariadb-server-0"
		if err := env.Client.Update(ctx, svc); err != nil {
			t.Fatal(err)
		}
		check("after mariadb-controller re-pointed Service mariadb", rel)
	}

	objs, err := helm.Objects(rel.Manifest, ns)
	if err != nil {
		t.Fatal(err)
	}
	edited, restored := editOneField(t, ns, objs)
	check("after an edit by hand", rel, edited)
	repaired, err := hc.Upgrade(ctx, name, ch, vals, nil, "kupenstack: restore "+edited)
	if err != nil {
		t.Fatal(err)
	}
	check("after the repair", repaired)
	if err := restored(); err != nil {
		t.Errorf("after the repair: %v", err)
	}
	if name == "mariadb" {
		// The repair leaves the controller's selector alone (Helm's three-way merge).
		svc := &corev1.Service{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mariadb"}, svc); err != nil {
			t.Fatal(err)
		}
		if svc.Spec.Selector["statefulset.kubernetes.io/pod-name"] != "mariadb-server-0" {
			t.Errorf("the repair changed Service mariadb's selector: %v", svc.Spec.Selector)
		}
	}
}

// editOneField changes one field of one object of the release by hand: the replicas of its first
// Deployment, or else the last key (a block-scalar script or file) of its first ConfigMap. It
// returns the drift message expected and a check that the field has its manifest value again.
func editOneField(t *testing.T, ns string, objs []helm.ObjectRef) (string, func() error) {
	t.Helper()
	ctx := env.Ctx
	for _, ref := range objs {
		if ref.GVK.Kind != "Deployment" {
			continue
		}
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, d); err != nil {
			t.Fatal(err)
		}
		want := ptr.Deref(d.Spec.Replicas, 1)
		d.Spec.Replicas = ptr.To(want + 2)
		if err := env.Client.Update(ctx, d); err != nil {
			t.Fatal(err)
		}
		return "Deployment " + ref.Name + ": spec.replicas changed", func() error {
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, d); err != nil {
				return err
			}
			if got := ptr.Deref(d.Spec.Replicas, 1); got != want {
				return fmt.Errorf("Deployment %s replicas %d, want %d", ref.Name, got, want)
			}
			return nil
		}
	}
	for _, ref := range objs {
		if ref.GVK.Kind != "ConfigMap" {
			continue
		}
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, cm); err != nil {
			t.Fatal(err)
		}
		if len(cm.Data) == 0 {
			continue
		}
		keys := make([]string, 0, len(cm.Data))
		for k := range cm.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		key := keys[len(keys)-1]
		want := cm.Data[key]
		cm.Data[key] = "#!/bin/sh\necho edited by hand\n"
		if err := env.Client.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		return "ConfigMap " + ref.Name + ": data." + key + " changed", func() error {
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, cm); err != nil {
				return err
			}
			if cm.Data[key] != want {
				return fmt.Errorf("ConfigMap %s data.%s = %q, want %q", ref.Name, key, cm.Data[key], want)
			}
			return nil
		}
	}
	t.Fatal("the release has neither a Deployment nor a ConfigMap with data")
	return "", nil
}
