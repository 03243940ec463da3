package helm

import (
	"slices"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
)

func TestUpgradeHookJobs(t *testing.T) {
	job := func(name string, events ...release.HookEvent) *release.Hook {
		return &release.Hook{Name: name, Kind: "Job", Events: events,
			Manifest: "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\n"}
	}
	last := &release.Release{
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "nova", Version: "2025.1.0"}},
		Hooks: []*release.Hook{
			job("nova-db-sync", release.HookPostInstall, release.HookPostUpgrade),
			job("nova-ks-user", release.HookPostInstall, release.HookPostUpgrade),
			job("nova-pre", release.HookPreUpgrade),
			// Made at install only: no upgrade would make it again.
			job("nova-install-only", release.HookPostInstall),
			// Uninstall's own: nothing waits for it.
			job("nova-cleanup", release.HookPreDelete),
			{Name: "nova-test", Kind: "Pod", Events: []release.HookEvent{release.HookPostUpgrade},
				Manifest: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: nova-test\n"},
		},
	}
	for _, tt := range []struct {
		name, version string
		want          []string
	}{
		{"another chart version: the upgrade hooks' Jobs", "2026.1.0", []string{"openstack/nova-db-sync", "openstack/nova-ks-user", "openstack/nova-pre"}},
		{"the same chart version: none", "2025.1.0", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := UpgradeHookJobs(last, &chart.Chart{Metadata: &chart.Metadata{Name: "nova", Version: tt.version}}, "openstack")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range got {
				if o.GVK.Kind != "Job" {
					t.Errorf("%s: kind %s", o, o.GVK.Kind)
				}
				names = append(names, o.Namespace+"/"+o.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("got %v, want %v", names, tt.want)
			}
		})
	}
}
