package main

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(options) bool
		wantErr string
	}{
		{"defaults", nil, nil, func(o options) bool {
			return o.cloudSecret == "kupenstack-system/kupenstack-cloud" && o.cloudName == "openstack" &&
				o.resyncPeriod == 10*time.Minute && o.vmHealthPeriod == 5*time.Second && !o.leaderElect && o.memberRole == "member" &&
				o.validationPeriod == time.Minute && o.chartLocalPaths == "/charts,/opt/openstack-helm"
		}, ""},
		{"chart local paths from the environment", nil, map[string]string{"KUPENSTACK_CHART_LOCAL_PATH_PREFIXES": "/srv/osh,/mnt/charts"},
			func(o options) bool { return o.chartLocalPaths == "/srv/osh,/mnt/charts" }, ""},
		{"no local charts at all", []string{"--chart-local-path-prefixes="}, nil,
			func(o options) bool { return o.chartLocalPaths == "" }, ""},
		{"relative chart local path", []string{"--chart-local-path-prefixes=/charts,charts"}, nil, nil, `--chart-local-path-prefixes: "charts" is not an absolute directory`},
		{"environment", nil, map[string]string{"KUPENSTACK_CLOUD_SECRET": "ops/creds", "KUPENSTACK_CLOUD": "prod",
			"KUPENSTACK_RESYNC_PERIOD": "90s", "KUPENSTACK_LEADER_ELECT": "true"}, func(o options) bool {
			return o.cloudSecret == "ops/creds" && o.cloudName == "prod" && o.resyncPeriod == 90*time.Second && o.leaderElect
		}, ""},
		{"validation agent off", nil, map[string]string{"KUPENSTACK_VALIDATION_PERIOD": "0"},
			func(o options) bool { return o.validationPeriod == 0 }, ""},
		{"validation period flag", []string{"--validation-period=15s"}, nil,
			func(o options) bool { return o.validationPeriod == 15*time.Second }, ""},
		{"flags win over environment", []string{"--cloud=flag"}, map[string]string{"KUPENSTACK_CLOUD": "env"},
			func(o options) bool { return o.cloudName == "flag" }, ""},
		{"bad resync period in environment falls back", nil, map[string]string{"KUPENSTACK_RESYNC_PERIOD": "soon"},
			func(o options) bool { return o.resyncPeriod == 10*time.Minute }, ""},
		{"secret without namespace", []string{"--cloud-secret=creds"}, nil, nil, "want namespace/name"},
		{"secret with extra slash", []string{"--cloud-secret=a/b/c"}, nil, nil, "want namespace/name"},
		{"unknown flag", []string{"--nope"}, nil, nil, "flag provided but not defined"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(&strings.Builder{})
			o, _, err := parseFlags(fs, tt.args, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(o) {
				t.Fatalf("unexpected options %+v", o)
			}
		})
	}
}
