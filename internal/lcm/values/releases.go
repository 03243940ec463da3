package values

import (
	"fmt"
	"sort"
	"strings"
)

// Release is one OpenStack release KupenStack can deploy: which chart versions and image tags
// make it up. Tags follow OpenStack-Helm's values_overrides/<chart>/<release>-<distro>.yaml.
type Release struct {
	Name string
	// ChartVersion of every chart (OpenStack-Helm versions its charts after the release).
	ChartVersion string
	// Registry and Distro of the OpenStack service images: <Registry>/<image>:<Name>-<Distro>.
	Registry, Distro string
	// Infra images, by image name (the "@name" image names, see Release.Image).
	Infra map[string]string
}

// Releases are the supported releases, oldest first.
//
// RabbitMQ stays on 3.13 in every release: the 2025.x charts are written for 3.13, and the
// 2026.1.0 charts still set ha-mode policies (rabbit_ha_queues), which RabbitMQ 4.x rejects. Their
// own default, 3.10, would be a downgrade from 2025.2's 3.13, which RabbitMQ refuses on existing
// data (feature flags).
var Releases = []Release{
	{
		Name: "2025.1", ChartVersion: "2025.1.0", Registry: "quay.io/airshipit", Distro: "ubuntu_noble",
		Infra: infraImages(map[string]string{
			"memcached": "docker.io/library/memcached:1.6.32",
			"libvirt":   "quay.io/airshipit/libvirt:2025.1-ubuntu_noble",
		}),
	},
	{
		Name: "2025.2", ChartVersion: "2025.2.0", Registry: "quay.io/airshipit", Distro: "ubuntu_noble",
		Infra: infraImages(map[string]string{
			"memcached": "docker.io/library/memcached:1.6.32",
			"libvirt":   "quay.io/airshipit/libvirt:2025.2-ubuntu_noble",
		}),
	},
	{
		Name: "2026.1", ChartVersion: "2026.1.0", Registry: "quay.io/airshipit", Distro: "ubuntu_noble",
		Infra: infraImages(map[string]string{
			"memcached": "docker.io/library/memcached:1.6.38",
			"libvirt":   "quay.io/airshipit/libvirt:2026.1-ubuntu_noble",
		}),
	},
}

// infraImages are the infrastructure and helper images every release shares, with the release's
// own on top. Every reference names its registry, so that imageRegistry can move it.
func infraImages(release map[string]string) map[string]string {
	out := map[string]string{
		"kubernetes-entrypoint": "quay.io/airshipit/kubernetes-entrypoint:latest-ubuntu_noble",
		"rabbitmq":              "docker.io/library/rabbitmq:3.13-management",
		// rabbit_init runs rabbitmqadmin, which the management image carries.
		"rabbitmq-management": "docker.io/library/rabbitmq:3.13-management",
		"rabbitmq-exporter":   "docker.io/kbudde/rabbitmq-exporter:v1.0.0-RC7.1",
		"mariadb":             "quay.io/airshipit/mariadb:latest-ubuntu_noble",
		"mariadb-backup":      "quay.io/airshipit/porthole-mysqlclient-utility:latest-ubuntu_jammy",
		"mysqld-exporter":     "docker.io/prom/mysqld-exporter:v0.12.1",
		"memcached-exporter":  "docker.io/prom/memcached-exporter:v0.4.1",
		"openvswitch":         "quay.io/airshipit/openvswitch:latest-ubuntu_noble",
		"libvirt-exporter":    "docker.io/vexxhost/libvirtd-exporter:latest",
		"ceph-config-helper":  "quay.io/airshipit/ceph-config-helper:latest-ubuntu_jammy",
		"kubectl":             "docker.io/bitnami/kubectl:latest",
		"docker":              "quay.io/airshipit/docker:27.5.0",
		"rally":               "docker.io/xrally/xrally-openstack:2.0.0",
		"osh-selenium":        "quay.io/airshipit/osh-selenium:latest-ubuntu_noble",
		"netoffload":          "ghcr.io/vexxhost/netoffload:v1.0.1",
		"ospurge":             "docker.io/openstackhelm/ospurge:latest",
	}
	for k, v := range release {
		out[k] = v
	}
	return out
}

// LookupRelease finds a supported release.
func LookupRelease(name string) (Release, error) {
	for _, r := range Releases {
		if r.Name == name {
			return r, nil
		}
	}
	names := make([]string, len(Releases))
	for i, r := range Releases {
		names[i] = r.Name
	}
	sort.Strings(names)
	return Release{}, fmt.Errorf("release %q is not supported (supported: %s)", name, strings.Join(names, ", "))
}

// Image is the full reference of an image name in this release: "@x" names an infrastructure
// image, anything else an OpenStack image tagged with the release (e.g. nova, openstack-client).
// An infrastructure image the release does not have is an error.
func (r Release) Image(name string) (string, error) {
	if infra, ok := strings.CutPrefix(name, "@"); ok {
		ref, ok := r.Infra[infra]
		if !ok {
			return "", fmt.Errorf("release %s has no image %s", r.Name, infra)
		}
		return ref, nil
	}
	return fmt.Sprintf("%s/%s:%s-%s", r.Registry, name, r.Name, r.Distro), nil
}

// withRegistry moves an image reference to another registry: the registry host of ref (its
// first path element, when that looks like a host) is replaced by registry.
func withRegistry(ref, registry string) string {
	if registry == "" {
		return ref
	}
	first, rest, ok := strings.Cut(ref, "/")
	if !ok || !(strings.ContainsAny(first, ".:") || first == "localhost") {
		return registry + "/" + ref
	}
	return registry + "/" + rest
}
