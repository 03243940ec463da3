package render

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kupenstack/kupenstack/internal/lcm/values"
	"github.com/kupenstack/kupenstack/internal/testutil/realcharts"
)

// realSample is the lcm sample for a release, with cinder and horizon too, so that every chart
// of the component table renders; edit changes its default profile.
func realSample(t *testing.T, release string, edit func(p *Documents)) *Documents {
	t.Helper()
	docs := parseSample(t)
	docs.Config.Spec.Release = release
	docs.Config.Spec.OptionalComponents = []string{"cinder", "horizon"}
	if edit != nil {
		edit(docs)
	}
	return docs
}

// renderReal renders every component of docs with the real charts of tag.
func renderReal(t *testing.T, docs *Documents, tag string) []Component {
	t.Helper()
	comps, err := Run(docs, Options{Charts: realcharts.Dir(t, tag)})
	if err != nil {
		t.Fatalf("charts %s: %v", tag, err)
	}
	if len(comps) != len(values.Components) {
		t.Fatalf("charts %s: %d components rendered, want all %d", tag, len(comps), len(values.Components))
	}
	return comps
}

// object is one manifest object, as much of it as the cross-checks read.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec       map[string]any    `json:"spec"`
	Data       map[string]string `json:"data"`
	StringData map[string]string `json:"stringData"`
}

func objects(t *testing.T, c Component) []object {
	t.Helper()
	var out []object
	for _, doc := range releaseutil.SplitManifests(c.Manifest) {
		var o object
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if o.Kind != "" {
			out = append(out, o)
		}
	}
	return out
}

// podSpec is the pod template of a workload (or the spec of a Pod); nil for other kinds.
func podSpec(t *testing.T, o object) *corev1.PodSpec {
	t.Helper()
	var raw any
	switch o.Kind {
	case "Deployment", "StatefulSet", "DaemonSet", "Job":
		raw = nested(o.Spec, "template")["spec"]
	case "CronJob":
		raw = nested(o.Spec, "jobTemplate", "spec", "template")["spec"]
	case "Pod":
		raw = o.Spec
	default:
		return nil
	}
	b, err := yaml.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var ps corev1.PodSpec
	if err := yaml.Unmarshal(b, &ps); err != nil {
		t.Fatalf("%s %s: %v", o.Kind, o.Metadata.Name, err)
	}
	return &ps
}

// containers are every container and init container of every workload and Pod of c.
func containers(t *testing.T, c Component) map[string]corev1.Container {
	t.Helper()
	out := map[string]corev1.Container{}
	for _, o := range objects(t, c) {
		ps := podSpec(t, o)
		if ps == nil {
			continue
		}
		for _, ctr := range append(append([]corev1.Container{}, ps.InitContainers...), ps.Containers...) {
			out[fmt.Sprintf("%s %s/%s", o.Kind, o.Metadata.Name, ctr.Name)] = ctr
		}
	}
	return out
}

// tableImages are the images the release table gives, moved to registry: its infrastructure
// images and the OpenStack images tagged with the release.
func tableImages(t *testing.T, release, registry string) map[string]bool {
	t.Helper()
	rel, err := values.LookupRelease(release)
	if err != nil {
		t.Fatal(err)
	}
	move := func(ref string) string {
		if registry == "" {
			return ref
		}
		_, rest, _ := strings.Cut(ref, "/")
		return registry + "/" + rest
	}
	out := map[string]bool{}
	for _, ref := range rel.Infra {
		out[move(ref)] = true
	}
	for _, name := range []string{"keystone", "glance", "cinder", "placement", "nova", "neutron", "horizon", "openstack-client"} {
		ref, err := rel.Image(name)
		if err != nil {
			t.Fatal(err)
		}
		out[move(ref)] = true
	}
	return out
}

// Every container of every component, for every release on the charts written for it, runs an
// image the release table or the profile decides: none falls back to a chart default, which
// belongs to another release (the 2026.1.0 charts default to 2025.1 images). With imageRegistry
// set, every image comes from that registry, and imagePullPolicy reaches every container.
func TestRealChartsEveryImageDecided(t *testing.T) {
	for _, tag := range realcharts.Tags {
		release := realcharts.Release(tag)
		t.Run(tag, func(t *testing.T) {
			const mine = "registry.example/mine/entrypoint:1"
			plain := renderReal(t, realSample(t, release, func(d *Documents) {
				for _, p := range d.Profiles {
					p.Images = map[string]string{"dep_check": mine}
				}
			}), tag)
			allowed := tableImages(t, release, "")
			allowed[mine] = true
			mineSeen := false
			for _, c := range plain {
				for where, ctr := range containers(t, c) {
					if !allowed[ctr.Image] {
						t.Errorf("%s: %s runs %s, which neither the release table nor the profile gives", c.Name, where, ctr.Image)
					}
					mineSeen = mineSeen || ctr.Image == mine
				}
			}
			if !mineSeen {
				t.Errorf("the profile's dep_check image runs nowhere")
			}

			const registry = "registry.local:5000"
			moved := renderReal(t, realSample(t, release, func(d *Documents) {
				for _, p := range d.Profiles {
					p.ImageRegistry, p.ImagePullPolicy = registry, corev1.PullAlways
				}
			}), tag)
			allowed = tableImages(t, release, registry)
			var wrong []string
			for _, c := range moved {
				for where, ctr := range containers(t, c) {
					if !strings.HasPrefix(ctr.Image, registry+"/") || !allowed[ctr.Image] {
						wrong = append(wrong, fmt.Sprintf("%s: %s runs %s", c.Name, where, ctr.Image))
					}
					if ctr.ImagePullPolicy != corev1.PullAlways {
						t.Errorf("%s: %s pulls %q, want Always", c.Name, where, ctr.ImagePullPolicy)
					}
				}
			}
			sort.Strings(wrong)
			if len(wrong) > 0 {
				t.Errorf("with imageRegistry %s, %d containers run another image:\n%s", registry, len(wrong), strings.Join(wrong, "\n"))
			}
		})
	}
}

// refs are what the objects of a cloud create and what they refer to.
type refs struct {
	created map[string]bool     // "Kind/name"
	wanted  map[string][]string // "Kind/name" → who refers to it
	// backed: the Services whose selector matches a pod template of the cloud.
	services map[string]map[string]string
	pods     []map[string]string
}

func (r *refs) want(ref, who string) { r.wanted[ref] = append(r.wanted[ref], who) }

// serviceHost finds in-cluster Service host names (<name>.<namespace>.svc.cluster.local).
var serviceHost = regexp.MustCompile(`\b([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.openstack\.svc\.cluster\.local\b`)

func (r *refs) add(t *testing.T, c Component) {
	t.Helper()
	for _, o := range objects(t, c) {
		who := fmt.Sprintf("%s: %s %s", c.Name, o.Kind, o.Metadata.Name)
		r.created[o.Kind+"/"+o.Metadata.Name] = true
		var strs []string
		switch o.Kind {
		case "Service":
			sel, _ := o.Spec["selector"].(map[string]any)
			m := map[string]string{}
			for k, v := range sel {
				m[k] = fmt.Sprint(v)
			}
			r.services[o.Metadata.Name] = m
		case "PersistentVolumeClaim":
			if sc, _ := o.Spec["storageClassName"].(string); sc != "" {
				r.want("StorageClass/"+sc, who)
			}
		case "StatefulSet":
			tmpls, _ := o.Spec["volumeClaimTemplates"].([]any)
			for _, tm := range tmpls {
				spec := nested(tm.(map[string]any), "spec")
				if sc, _ := spec["storageClassName"].(string); sc != "" {
					r.want("StorageClass/"+sc, who)
				}
				r.created["PersistentVolumeClaim/"+nested(tm.(map[string]any), "metadata")["name"].(string)] = true
			}
		case "Ingress":
			b, _ := yaml.Marshal(o.Spec)
			for _, m := range regexp.MustCompile(`service:\s+name: ([-a-z0-9]+)`).FindAllStringSubmatch(string(b), -1) {
				r.want("Service/"+m[1], who)
			}
		case "ConfigMap":
			for _, v := range o.Data {
				strs = append(strs, v)
			}
		case "Secret":
			for _, v := range o.StringData {
				strs = append(strs, v)
			}
			for k, v := range o.Data {
				b, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					t.Fatalf("%s: data.%s: %v", who, k, err)
				}
				strs = append(strs, string(b))
			}
		}
		ps := podSpec(t, o)
		if ps == nil {
			for _, s := range strs {
				for _, m := range serviceHost.FindAllStringSubmatch(s, -1) {
					r.want("Service/"+m[1], who)
				}
			}
			continue
		}
		r.pods = append(r.pods, podLabels(o))
		if ps.ServiceAccountName != "" {
			r.want("ServiceAccount/"+ps.ServiceAccountName, who)
		}
		for _, v := range ps.Volumes {
			switch {
			case v.Secret != nil && !ptrTrue(v.Secret.Optional):
				r.want("Secret/"+v.Secret.SecretName, who)
			case v.ConfigMap != nil && !ptrTrue(v.ConfigMap.Optional):
				r.want("ConfigMap/"+v.ConfigMap.Name, who)
			case v.PersistentVolumeClaim != nil:
				r.want("PersistentVolumeClaim/"+v.PersistentVolumeClaim.ClaimName, who)
			case v.Projected != nil:
				for _, s := range v.Projected.Sources {
					if s.Secret != nil && !ptrTrue(s.Secret.Optional) {
						r.want("Secret/"+s.Secret.Name, who)
					}
					if s.ConfigMap != nil && !ptrTrue(s.ConfigMap.Optional) {
						r.want("ConfigMap/"+s.ConfigMap.Name, who)
					}
				}
			}
		}
		for _, ctr := range append(append([]corev1.Container{}, ps.InitContainers...), ps.Containers...) {
			for _, e := range ctr.EnvFrom {
				if e.SecretRef != nil && !ptrTrue(e.SecretRef.Optional) {
					r.want("Secret/"+e.SecretRef.Name, who)
				}
				if e.ConfigMapRef != nil && !ptrTrue(e.ConfigMapRef.Optional) {
					r.want("ConfigMap/"+e.ConfigMapRef.Name, who)
				}
			}
			for _, e := range ctr.Env {
				if f := e.ValueFrom; f != nil && f.SecretKeyRef != nil && !ptrTrue(f.SecretKeyRef.Optional) {
					r.want("Secret/"+f.SecretKeyRef.Name, who)
				}
				if f := e.ValueFrom; f != nil && f.ConfigMapKeyRef != nil && !ptrTrue(f.ConfigMapKeyRef.Optional) {
					r.want("ConfigMap/"+f.ConfigMapKeyRef.Name, who)
				}
				if e.Name == "DEPENDENCY_JOBS" {
					for _, j := range strings.Split(e.Value, ",") {
						if j != "" {
							r.want("Job/"+j, who)
						}
					}
				}
				if e.Name == "DEPENDENCY_SERVICE" {
					for _, s := range strings.Split(e.Value, ",") {
						if _, name, ok := strings.Cut(s, ":"); ok && name != "" {
							r.want("Service/"+name, who)
						}
					}
				}
				for _, m := range serviceHost.FindAllStringSubmatch(e.Value, -1) {
					r.want("Service/"+m[1], who)
				}
			}
		}
	}
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// podLabels are the labels of a workload's pods.
func podLabels(o object) map[string]string {
	var meta map[string]any
	switch o.Kind {
	case "Pod":
		return o.Metadata.Labels
	case "CronJob":
		meta = nested(o.Spec, "jobTemplate", "spec", "template", "metadata")
	default:
		meta = nested(o.Spec, "template", "metadata")
	}
	out := map[string]string{}
	for k, v := range nested(meta, "labels") {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// unresolved are the references nothing of the cloud creates, with who makes them. A Service
// counts as created only when a pod of the cloud backs it: the ingress Services select an ingress
// controller's pods.
func (r *refs) unresolved() map[string][]string {
	backed := func(name string) bool {
		sel, ok := r.services[name]
		if !ok {
			return false
		}
		if len(sel) == 0 {
			return true
		}
	pods:
		for _, labels := range r.pods {
			for k, v := range sel {
				if labels[k] != v {
					continue pods
				}
			}
			return true
		}
		return false
	}
	out := map[string][]string{}
	for ref, who := range r.wanted {
		kind, name, _ := strings.Cut(ref, "/")
		if kind == "Service" && backed(name) || kind != "Service" && r.created[ref] {
			continue
		}
		out[ref] = who
	}
	return out
}

// notDeployed are Services named only by configuration sections of services KupenStack does not
// deploy, read only when those are in use: nova.conf [ironic] (the ironic driver), neutron.conf
// [octavia] (the Octavia service plugin).
var notDeployed = map[string]bool{"Service/ironic-api": true, "Service/octavia-api": true}

// Out of the box, a configuration deploys on a cluster with no Ceph, Swift, ingress controller or
// StorageClass: across every object of every component (cinder and horizon included), every
// Secret, ConfigMap, PersistentVolumeClaim, ServiceAccount, StorageClass, Job waited for and
// Service referred to is created by the cloud itself (Services: and backed by its pods), so the
// admin provides none. Keystone's public endpoint is its own Service. Naming a StorageClass
// makes that StorageClass the one prerequisite.
func TestRealChartsSmallClusterDefault(t *testing.T) {
	for _, tag := range realcharts.Tags {
		release := realcharts.Release(tag)
		t.Run(tag, func(t *testing.T) {
			comps := renderReal(t, realSample(t, release, nil), tag)
			if missing := unresolved(t, comps); len(missing) > 0 {
				t.Errorf("%d references to objects nothing creates:\n%s", len(missing), strings.Join(missing, "\n"))
			}
			for _, c := range comps {
				if c.Name != "keystone" {
					continue
				}
				seen := false
				for where, ctr := range containers(t, c) {
					for _, e := range ctr.Env {
						if e.Name == "OS_BOOTSTRAP_PUBLIC_URL" {
							seen = true
							if !strings.HasPrefix(e.Value, "http://keystone-api.openstack.svc.cluster.local:5000/") {
								t.Errorf("%s: public endpoint %s, want keystone-api's Service", where, e.Value)
							}
						}
					}
				}
				if !seen {
					t.Error("keystone: no OS_BOOTSTRAP_PUBLIC_URL")
				}
			}

			named := renderReal(t, realSample(t, release, func(d *Documents) {
				for _, p := range d.Profiles {
					p.StorageClass = "fast"
				}
			}), tag)
			missing := unresolved(t, named)
			if len(missing) != 1 || !strings.HasPrefix(missing[0], "StorageClass/fast (3: glance: PersistentVolumeClaim glance-images; mariadb: StatefulSet mariadb-server; rabbitmq: StatefulSet rabbitmq-rabbitmq)") {
				t.Errorf("with storageClass fast, unresolved references:\n%s", strings.Join(missing, "\n"))
			}
		})
	}
}

// unresolved lists the references of a cloud's objects that nothing of it creates.
func unresolved(t *testing.T, comps []Component) []string {
	t.Helper()
	r := &refs{created: map[string]bool{}, wanted: map[string][]string{}, services: map[string]map[string]string{}}
	for _, c := range comps {
		r.add(t, c)
	}
	var missing []string
	for ref, who := range r.unresolved() {
		if notDeployed[ref] {
			continue
		}
		sort.Strings(who)
		missing = append(missing, fmt.Sprintf("%s (%d: %s)", ref, len(who), strings.Join(who[:min(3, len(who))], "; ")))
	}
	sort.Strings(missing)
	return missing
}

func nested(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		next, _ := m[p].(map[string]any)
		m = next
	}
	return m
}

// TestRealChartsOneRabbitMQReplica: with one RabbitMQ replica, every chart's transport URL
// names that one pod and no chart asks RabbitMQ for classic queue mirroring (RabbitMQ 4,
// Debian's, refuses the ha-* policy keys: the charts' rabbit-init Jobs failed); with the
// charts' default of two, both stay as the charts have them.
func TestRealChartsOneRabbitMQReplica(t *testing.T) {
	one, two := int32(1), int32(2)
	for _, tag := range realcharts.Tags {
		release := realcharts.Release(tag)
		t.Run(tag, func(t *testing.T) {
			mirrored := func(comps []Component) []string {
				var names []string
				for _, c := range comps {
					if strings.Contains(c.Manifest, "ha-mode") {
						names = append(names, c.Name)
					}
				}
				sort.Strings(names)
				return names
			}
			if got := mirrored(renderReal(t, realSample(t, release, func(d *Documents) {
				for _, p := range d.Profiles {
					p.Replicas = &two
				}
			}), tag)); len(got) == 0 {
				t.Fatal("no chart sets ha-mode with two RabbitMQ replicas: the check below proves nothing")
			}
			comps := renderReal(t, realSample(t, release, func(d *Documents) {
				for _, p := range d.Profiles {
					p.Replicas = &one
				}
			}), tag)
			if got := mirrored(comps); len(got) > 0 {
				t.Errorf("with one RabbitMQ replica, ha-mode still set by %v", got)
			}
			for _, c := range comps {
				if c.Chart == "rabbitmq" || c.Chart == "mariadb" || c.Chart == "memcached" || c.Chart == "openvswitch" || c.Chart == "libvirt" {
					continue
				}
				if r := nested(c.Values, "endpoints", "oslo_messaging", "statefulset")["replicas"]; fmt.Sprint(r) != "1" {
					t.Errorf("%s: endpoints.oslo_messaging.statefulset.replicas = %v, want 1", c.Name, r)
				}
				if strings.Contains(c.Manifest, "rabbitmq-rabbitmq-1") {
					t.Errorf("%s: names rabbitmq-rabbitmq-1, which does not exist", c.Name)
				}
			}
		})
	}
}

// TestRealChartsAPIsSurgeBeforeReplace: the Deployments of keystone, glance, placement, neutron
// and horizon, rendered from the real charts, replace a pod only once its successor is Ready
// (maxUnavailable 0, with room to surge); nova's keep the chart's maxUnavailable 1 (novncproxy
// holds a port of the host: its successor could never start beside it on one node).
func TestRealChartsAPIsSurgeBeforeReplace(t *testing.T) {
	for _, tag := range realcharts.Tags {
		release := realcharts.Release(tag)
		t.Run(tag, func(t *testing.T) {
			seen := map[string]int{}
			for _, c := range renderReal(t, realSample(t, release, nil), tag) {
				for _, o := range objects(t, c) {
					if o.Kind != "Deployment" {
						continue
					}
					ru := nested(o.Spec, "strategy", "rollingUpdate")
					unavailable, surge := fmt.Sprint(ru["maxUnavailable"]), fmt.Sprint(ru["maxSurge"])
					want := "0"
					switch c.Name {
					case "keystone", "glance", "placement", "neutron", "horizon":
						seen[c.Name]++
						if surge == "0" || surge == "<nil>" {
							t.Errorf("%s: Deployment %s has no room to surge (maxSurge %s)", c.Name, o.Metadata.Name, surge)
						}
					case "nova":
						want = "1"
					default:
						continue
					}
					if unavailable != want {
						t.Errorf("%s: Deployment %s has maxUnavailable %s, want %s", c.Name, o.Metadata.Name, unavailable, want)
					}
				}
			}
			for _, name := range []string{"keystone", "glance", "placement", "neutron"} {
				if seen[name] == 0 {
					t.Errorf("%s: no Deployment rendered", name)
				}
			}
		})
	}
}

// Without a StorageClass, Glance keeps the cloud's images in KupenStack's host path, not in the
// chart's default /var/lib/glance/images, which on a host with Debian's glance package is that
// package's directory (the real cluster's runs left images there, owned by 42424). The chart mounts
// the host path where the store is: the volume, its mounts and glance-api.conf must agree.
func TestRealChartsGlanceImagesInTheDataHostPath(t *testing.T) {
	for _, tag := range realcharts.Tags {
		t.Run(tag, func(t *testing.T) {
			var glance *Component
			for _, c := range renderReal(t, realSample(t, realcharts.Release(tag), nil), tag) {
				if c.Name == "glance" {
					glance = &c
				}
			}
			if glance == nil {
				t.Fatal("no glance component")
			}
			volumes, mounts, conf := 0, 0, ""
			for _, o := range objects(t, *glance) {
				if o.Kind == "Secret" && o.Metadata.Name == "glance-etc" {
					b, err := base64.StdEncoding.DecodeString(o.Data["glance-api.conf"])
					if err != nil {
						t.Fatal(err)
					}
					conf = string(b)
				}
				ps := podSpec(t, o)
				if ps == nil {
					continue
				}
				for _, v := range ps.Volumes {
					if v.HostPath != nil && strings.HasPrefix(v.HostPath.Path, "/var/lib/glance") {
						t.Errorf("%s %s: volume %s on the host's %s", o.Kind, o.Metadata.Name, v.Name, v.HostPath.Path)
					}
					if v.Name == "glance-images" {
						volumes++
						if v.HostPath == nil || v.HostPath.Path != values.GlanceHostPath {
							t.Errorf("%s %s: glance-images on host path %v, want %s", o.Kind, o.Metadata.Name, v.HostPath, values.GlanceHostPath)
						}
					}
				}
			}
			for where, ctr := range containers(t, *glance) {
				for _, m := range ctr.VolumeMounts {
					if m.Name == "glance-images" {
						mounts++
						if m.MountPath != values.GlanceHostPath {
							t.Errorf("%s: glance-images mounted at %s", where, m.MountPath)
						}
					}
				}
			}
			if volumes == 0 || mounts == 0 {
				t.Errorf("glance-images: %d volumes, %d mounts", volumes, mounts)
			}
			file := regexp.MustCompile(`(?s)\[file\][^\[]*filesystem_store_datadir = (\S+)`).FindStringSubmatch(conf)
			if file == nil || file[1] != values.GlanceHostPath {
				t.Errorf("glance-api.conf's [file] store: %q, want %s", file, values.GlanceHostPath)
			}
		})
	}
}
