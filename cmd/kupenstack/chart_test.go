package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kupenstack/kupenstack/internal/testutil/chart"
)

// TestChartFlags feeds the Helm chart's Deployment (its args and environment, as the kubelet would
// resolve them) through the operator's own flag parsing: every flag the chart passes must exist,
// and every value must reach the option it is meant for.
func TestChartFlags(t *testing.T) {
	for _, tt := range []struct {
		name   string
		values map[string]any
		want   options
		debug  bool
	}{
		{"defaults", nil, options{
			metricsAddr: ":8080", probeAddr: ":8081", leaderElect: true, leaderElectionNS: "ops",
			cloudSecret: "ops/kupenstack-cloud", cloudName: "openstack", resyncPeriod: 10 * time.Minute,
			vmHealthPeriod: 5 * time.Second, validationPeriod: time.Minute, workers: 4, lcm: "auto", domainID: "default", memberRole: "member",
			apiQPS: 20, apiBurst: 40, chartCacheDir: "/tmp/kupenstack-charts", chartLocalPaths: "/charts,/opt/openstack-helm",
		}, false},
		{"every value set", map[string]any{
			"leaderElection": map[string]any{"enabled": false},
			"cloud":          map[string]any{"secretName": "creds", "name": "prod"},
			"resyncPeriod":   "90s", "vmHealthPeriod": "45s", "validationPeriod": "2m", "workers": 7, "lcm": "off", "logLevel": "debug",
			"openstack":              map[string]any{"projectDomain": "d1", "projectRole": "r1", "qps": 5.5, "burst": 9},
			"notifications":          map[string]any{"existingSecret": "bus", "existingSecretKey": "amqpURL"},
			"metrics":                map[string]any{"port": 9090},
			"healthProbe":            map[string]any{"port": 9091},
			"chartLocalPathPrefixes": []any{"/srv/osh"},
			"imageSources":           map[string]any{"allowedCIDRs": []any{"10.1.0.0/16", "fd00:1::/64"}, "blockedCIDRs": []any{"198.51.100.0/24"}},
		}, options{
			metricsAddr: ":9090", probeAddr: ":9091", leaderElect: false, leaderElectionNS: "ops",
			cloudSecret: "ops/creds", cloudName: "prod", resyncPeriod: 90 * time.Second,
			vmHealthPeriod: 45 * time.Second, validationPeriod: 2 * time.Minute, workers: 7, lcm: "off", domainID: "d1", memberRole: "r1",
			apiQPS: 5.5, apiBurst: 9, notificationsURL: "from Secret bus key amqpURL", chartCacheDir: "/tmp/kupenstack-charts", chartLocalPaths: "/srv/osh",
			imageSourcesAllowed: "10.1.0.0/16,fd00:1::/64", imageSourcesBlocked: "198.51.100.0/24",
		}, true},
		{"notifications URL in values", map[string]any{
			"notifications": map[string]any{"url": "amqp://u:p@127.0.0.1:5672/"},
		}, options{
			metricsAddr: ":8080", probeAddr: ":8081", leaderElect: true, leaderElectionNS: "ops",
			cloudSecret: "ops/kupenstack-cloud", cloudName: "openstack", resyncPeriod: 10 * time.Minute,
			vmHealthPeriod: 5 * time.Second, validationPeriod: time.Minute, workers: 4, lcm: "auto", domainID: "default", memberRole: "member",
			apiQPS: 20, apiBurst: 40, notificationsURL: "amqp://u:p@127.0.0.1:5672/", chartCacheDir: "/tmp/kupenstack-charts", chartLocalPaths: "/charts,/opt/openstack-helm",
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args, env := managerCommand(t, tt.values)
			fs := flag.NewFlagSet("kupenstack", flag.ContinueOnError)
			fs.SetOutput(&strings.Builder{})
			got, zapOpts, err := parseFlags(fs, args, func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("the operator rejects the chart's args %q: %v", args, err)
			}
			if got != tt.want {
				t.Errorf("options from the chart:\n got %+v\nwant %+v", got, tt.want)
			}
			if zapOpts.Level == nil || zapOpts.Level.Enabled(zapcore.DebugLevel) != tt.debug {
				t.Errorf("log level %v: debug enabled should be %v", zapOpts.Level, tt.debug)
			}
		})
	}
}

func TestChartRefusesTwoNotificationURLs(t *testing.T) {
	_, err := chart.Render("kupenstack", "ops", map[string]any{
		"notifications": map[string]any{"url": "amqp://127.0.0.1/", "existingSecret": "bus"},
	})
	if err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("rendering with both notification settings: %v", err)
	}
}

// managerCommand renders the chart into namespace "ops" and returns the manager container's args
// and environment; a value from a Secret reads "from Secret NAME key KEY".
func managerCommand(t *testing.T, values map[string]any) ([]string, map[string]string) {
	t.Helper()
	r, err := chart.Render("kupenstack", "ops", values)
	if err != nil {
		t.Fatal(err)
	}
	deployments := r.Find("Deployment")
	if len(deployments) != 1 {
		t.Fatalf("the chart renders %d Deployments", len(deployments))
	}
	var d struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(deployments[0].Object, &d); err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "manager" {
			continue
		}
		if len(c.Command) > 0 {
			t.Fatalf("the chart overrides the image's entrypoint: %q", c.Command)
		}
		env := map[string]string{}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom == nil:
				env[e.Name] = e.Value
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
				env[e.Name] = "ops"
			case e.ValueFrom.SecretKeyRef != nil:
				env[e.Name] = "from Secret " + e.ValueFrom.SecretKeyRef.Name + " key " + e.ValueFrom.SecretKeyRef.Key
			default:
				t.Fatalf("environment variable %s: unexpected source %+v", e.Name, e.ValueFrom)
			}
		}
		return c.Args, env
	}
	t.Fatal("the Deployment has no manager container")
	return nil, nil
}

// TestChartValuesSchema: values the operator would refuse at start-up, or that would be silently
// ignored (a misspelt key), fail at `helm install` instead (values.schema.json).
func TestChartValuesSchema(t *testing.T) {
	for _, bad := range []map[string]any{
		{"lcm": "maybe"},
		{"resyncPeriod": "soon"},
		{"workers": 0},
		{"logLevel": "verbose"},
		{"replicas": 2},
		{"cloud": map[string]any{"secret": "creds"}},
		{"imageSources": map[string]any{"blockedCIDRs": "10.96.0.0/12"}}, // a list, not a string
		{"imageSources": map[string]any{"blockedCIDRs": []any{"10.96.0.0/12,10.244.0.0/16"}}},
		{"imageSources": map[string]any{"blockedCIDRs": []any{"10.96.0.1"}}}, // no prefix length
		{"imageSources": map[string]any{"blocked": []any{"10.96.0.0/12"}}},
	} {
		if _, err := chart.Render("kupenstack", "ops", bad); err == nil {
			t.Errorf("values %v accepted", bad)
		}
	}
	if _, err := chart.Render("kupenstack", "ops", map[string]any{"resyncPeriod": "0", "vmHealthPeriod": "1h30m", "logLevel": 3}); err != nil {
		t.Errorf("good values refused: %v", err)
	}
}

// TestChartValuesSchemaPeriods: the chart takes exactly the periods the operator's own flag
// parsing and bounds take (0 where it means off, otherwise at least 1s): the schema's pattern
// for the syntax, the chart's kupenstack.checkPeriod for the sum (a pattern cannot add: the
// chart used to refuse 500ms500ms, which the operator takes as 1s).
func TestChartValuesSchemaPeriods(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chart.Dir(), "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct{ Pattern string } `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	corpus := []string{"0", "-0", "+0", "0s", "0.0m", "-0s", "0h0m0s", ".0s", "1s", "+1s", "-1s", "1", "s", ".", ".s", "1.s", ".5s",
		"999ms", "1000ms", "0999ms", "999.999ms", "1000.5ms", "0.5s", "0.9999999999s", "0.999999999s", "1.0s", "01s", "00.5m", ".5m", "0.01m",
		"0.0166m", "0.0167m", "0.017m", "0.02m", "0.00027h", "0.000277h", "0.0002778h", "0.00028h", "0.0003h", "0.001h",
		"999999us", "99999us", "1000000us", "1000000µs", "999999999ns", "1000000000ns", "1h30m", "10m", "90s", "720h", "1m0.5s",
		"500ms500ms", "0.5s0.5s", "250ms250ms250ms250ms", "250ms250ms250ms249ms", "999ms999us1000ns", "999ms999us999ns",
		"0.3333333333s0.3333333333s0.3333333334s", ".333333333s.333333333s.333333334s", "0.5s500ms", "499ms0.5s", "1ms1s", "1s1ms",
		"μs", "500000μs500000µs", "99999h99999h99999h99999h", "999999h999999h999999h", "1s1s1s1s1s",
		"1d", "1 s", "soon", " 1s", "1s ", "1e3ms", "1.5.5s", "1sm", "1µ", "-1m"}
	// Random forms too: one to five parts, with leading zeros, fractions and every unit.
	rng := rand.New(rand.NewPCG(19, 5))
	units := []string{"ns", "us", "µs", "μs", "ms", "s", "m", "h"}
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		return b.String()
	}
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(5) {
			b.WriteString(digits(rng.IntN(7)))
			if rng.IntN(2) == 0 {
				b.WriteString("." + digits(rng.IntN(11)))
			}
			b.WriteString(units[rng.IntN(len(units))])
		}
		corpus = append(corpus, b.String())
	}
	// Sums near 1s, where a chart that did not add would part from the operator.
	for range 1000 {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			fmt.Fprintf(&b, "%d.%sms", 200+rng.IntN(300), digits(1+rng.IntN(8)))
		}
		corpus = append(corpus, b.String())
	}
	for _, p := range []struct {
		value, flag string
		zeroIsOff   bool
	}{
		{"resyncPeriod", "resync-period", true}, {"validationPeriod", "validation-period", true}, {"vmHealthPeriod", "vm-health-period", false},
	} {
		pattern := regexp.MustCompile(schema.Properties[p.value].Pattern)
		for _, v := range corpus {
			fs := flag.NewFlagSet("kupenstack", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			_, _, err := parseFlags(fs, []string{"--" + p.flag + "=" + v}, func(string) string { return "" })
			operator := err == nil
			chartOK := pattern.MatchString(v)
			var chartErr error
			if chartOK {
				_, chartErr = chart.Include("kupenstack.checkPeriod", []any{p.value, v, p.zeroIsOff})
				chartOK = chartErr == nil
			}
			if chartOK != operator {
				t.Errorf("%s %q: the chart takes it: %v (%v); the operator takes it: %v (%v)", p.value, v, chartOK, chartErr, operator, err)
			}
		}
	}
	// Through Helm itself, at the bounds: the schema, then the template's sum.
	for _, tt := range []struct {
		values map[string]any
		ok     bool
	}{
		{map[string]any{"resyncPeriod": "999ms"}, false},
		{map[string]any{"resyncPeriod": "1s"}, true},
		{map[string]any{"resyncPeriod": "500ms500ms"}, true},
		{map[string]any{"resyncPeriod": "500ms499ms"}, false},
		{map[string]any{"resyncPeriod": "-1s"}, false},
		{map[string]any{"validationPeriod": "0.5s"}, false},
		{map[string]any{"validationPeriod": "0"}, true},
		{map[string]any{"validationPeriod": "0s0ms"}, true},
		{map[string]any{"vmHealthPeriod": "0"}, false},
		{map[string]any{"vmHealthPeriod": "0.5m"}, true},
		{map[string]any{"vmHealthPeriod": ".5s.5s"}, true},
		{map[string]any{"workers": 1}, true},
		{map[string]any{"openstack": map[string]any{"qps": 0}}, false},
		{map[string]any{"openstack": map[string]any{"qps": 0.1}}, true},
		{map[string]any{"openstack": map[string]any{"burst": 0}}, false},
		{map[string]any{"openstack": map[string]any{"burst": 1}}, true},
	} {
		if _, err := chart.Render("kupenstack", "ops", tt.values); (err == nil) != tt.ok {
			t.Errorf("values %v: accepted %v, want %v (%v)", tt.values, err == nil, tt.ok, err)
		}
	}
	// The refusal names the value and the rule.
	_, err = chart.Render("kupenstack", "ops", map[string]any{"vmHealthPeriod": "400ms500ms"})
	if err == nil || !strings.Contains(err.Error(), `vmHealthPeriod "400ms500ms": must be at least 1s`) {
		t.Errorf("vmHealthPeriod 400ms500ms: %v", err)
	}
}
