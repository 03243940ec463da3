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
		// A bad environment value used to fall back to the default without a word.
		{"bad resync period in environment", nil, map[string]string{"KUPENSTACK_RESYNC_PERIOD": "soon"}, nil,
			`environment variable KUPENSTACK_RESYNC_PERIOD="soon" is not a duration`},
		{"bad health period in environment", nil, map[string]string{"KUPENSTACK_VM_HEALTH_PERIOD": "5"}, nil,
			`environment variable KUPENSTACK_VM_HEALTH_PERIOD="5" is not a duration`},
		{"bad validation period in environment", nil, map[string]string{"KUPENSTACK_VALIDATION_PERIOD": "1 minute"}, nil,
			`environment variable KUPENSTACK_VALIDATION_PERIOD="1 minute" is not a duration`},
		// Anything but "true" used to be false without a word.
		{"leader election 1", nil, map[string]string{"KUPENSTACK_LEADER_ELECT": "1"}, func(o options) bool { return o.leaderElect }, ""},
		{"leader election False", nil, map[string]string{"KUPENSTACK_LEADER_ELECT": "False"}, func(o options) bool { return !o.leaderElect }, ""},
		{"leader election empty is the default", nil, map[string]string{"KUPENSTACK_LEADER_ELECT": ""}, func(o options) bool { return !o.leaderElect }, ""},
		{"bad leader election in environment", nil, map[string]string{"KUPENSTACK_LEADER_ELECT": "yes"}, nil,
			`environment variable KUPENSTACK_LEADER_ELECT="yes" is not a boolean (true or false)`},
		{"leader election with a space", nil, map[string]string{"KUPENSTACK_LEADER_ELECT": "true "}, nil,
			`environment variable KUPENSTACK_LEADER_ELECT="true " is not a boolean`},
		{"bad leader election refused even under the flag", []string{"--leader-elect=true"}, map[string]string{"KUPENSTACK_LEADER_ELECT": "on"}, nil,
			"KUPENSTACK_LEADER_ELECT"},
		{"bad environment value is refused even under a flag", []string{"--resync-period=1m"}, map[string]string{"KUPENSTACK_RESYNC_PERIOD": "soon"}, nil,
			"KUPENSTACK_RESYNC_PERIOD"},
		{"empty environment value is the default", nil, map[string]string{"KUPENSTACK_RESYNC_PERIOD": ""},
			func(o options) bool { return o.resyncPeriod == 10*time.Minute }, ""},
		// Bounds: no hot loops, no stopped operator.
		{"resync off", []string{"--resync-period=0"}, nil, func(o options) bool { return o.resyncPeriod == 0 }, ""},
		{"resync 1s", []string{"--resync-period=1s"}, nil, func(o options) bool { return o.resyncPeriod == time.Second }, ""},
		{"resync too short", []string{"--resync-period=10ms"}, nil, nil, "--resync-period (KUPENSTACK_RESYNC_PERIOD) 10ms: must be 0 (off) or at least 1s"},
		{"resync too short in environment", nil, map[string]string{"KUPENSTACK_RESYNC_PERIOD": "1ns"}, nil, "--resync-period (KUPENSTACK_RESYNC_PERIOD) 1ns: must be 0 (off) or at least 1s"},
		{"resync negative", []string{"--resync-period=-1m"}, nil, nil, `"-1m" is not a duration such as 90s`},
		// The CRDs' syntax (the chart's schema holds its values to it): parts add up, at most
		// five digits before the point.
		{"resync parts add up", []string{"--resync-period=500ms500ms"}, nil, func(o options) bool { return o.resyncPeriod == time.Second }, ""},
		{"resync six digits", []string{"--resync-period=1000000us"}, nil, nil, `"1000000us" is not a duration such as 90s`},
		{"resync parts under 1s", []string{"--resync-period=500ms499ms"}, nil, nil, "--resync-period (KUPENSTACK_RESYNC_PERIOD) 999ms: must be 0 (off) or at least 1s"},
		{"health period 1s", []string{"--vm-health-period=1s"}, nil, func(o options) bool { return o.vmHealthPeriod == time.Second }, ""},
		{"health period 0", []string{"--vm-health-period=0"}, nil, nil, "--vm-health-period (KUPENSTACK_VM_HEALTH_PERIOD) 0s: must be at least 1s"},
		{"health period too short", []string{"--vm-health-period=999ms"}, nil, nil, "--vm-health-period (KUPENSTACK_VM_HEALTH_PERIOD) 999ms: must be at least 1s"},
		{"health period negative", nil, map[string]string{"KUPENSTACK_VM_HEALTH_PERIOD": "-5s"}, nil, `environment variable KUPENSTACK_VM_HEALTH_PERIOD="-5s" is not a duration`},
		{"validation too short", []string{"--validation-period=100ms"}, nil, nil, "--validation-period (KUPENSTACK_VALIDATION_PERIOD) 100ms: must be 0 (off) or at least 1s"},
		{"validation negative", []string{"--validation-period=-1s"}, nil, nil, `"-1s" is not a duration such as 90s`},
		{"no workers", []string{"--workers=0"}, nil, nil, "--workers 0: must be at least 1"},
		{"no request rate", []string{"--openstack-qps=0"}, nil, nil, "--openstack-qps 0: must be more than 0"},
		{"negative request rate", []string{"--openstack-qps=-1"}, nil, nil, "--openstack-qps -1: must be more than 0"},
		{"NaN request rate", []string{"--openstack-qps=NaN"}, nil, nil, "--openstack-qps NaN: must be more than 0"},
		{"no burst", []string{"--openstack-burst=0"}, nil, nil, "--openstack-burst 0: must be at least 1"},
		{"every mistake at once", []string{"--workers=0", "--vm-health-period=0"}, map[string]string{"KUPENSTACK_RESYNC_PERIOD": "soon"}, nil,
			`environment variable KUPENSTACK_RESYNC_PERIOD="soon" is not a duration (like 90s, 10m or 1h)
--vm-health-period (KUPENSTACK_VM_HEALTH_PERIOD) 0s: must be at least 1s
--workers 0: must be at least 1`},
		{"image sources blocked by flag", []string{"--image-source-blocked-cidrs=198.51.100.0/24, 2001:db8:42::/56"}, nil, func(o options) bool {
			p, err := o.imageSources()
			return err == nil && len(p.Blocked) == 2 && p.Blocked[1].String() == "2001:db8:42::/56" && len(p.Allowed) == 0
		}, ""},
		{"image sources from the environment", nil, map[string]string{"KUPENSTACK_IMAGE_SOURCE_BLOCKED_CIDRS": "10.1.96.0/20",
			"KUPENSTACK_IMAGE_SOURCE_ALLOWED_CIDRS": "10.1.0.0/16"}, func(o options) bool {
			p, err := o.imageSources()
			return err == nil && len(p.Blocked) == 1 && p.Blocked[0].String() == "10.1.96.0/20" &&
				len(p.Allowed) == 1 && p.Allowed[0].String() == "10.1.0.0/16"
		}, ""},
		{"bad blocked image source", []string{"--image-source-blocked-cidrs=10.96.0.1"}, nil, nil, `--image-source-blocked-cidrs: "10.96.0.1" is not a CIDR`},
		{"bad allowed image source", nil, map[string]string{"KUPENSTACK_IMAGE_SOURCE_ALLOWED_CIDRS": "mirror"}, nil, `--image-source-allowed-cidrs: "mirror" is not a CIDR`},
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
