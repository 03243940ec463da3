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
	// Infra images, by image name (the "@name" entries of Component.Images).
	Infra map[string]string
}

// Releases are the supported releases, oldest first.
var Releases = []Release{
	{
		Name: "2025.1", ChartVersion: "2025.1.0", Registry: "quay.io/airshipit", Distro: "ubuntu_noble",
		Infra: map[string]string{
			"kubernetes-entrypoint": "quay.io/airshipit/kubernetes-entrypoint:latest-ubuntu_noble",
			"rabbitmq":              "docker.io/library/rabbitmq:3.13-management",
			"mariadb":               "quay.io/airshipit/mariadb:latest-ubuntu_noble",
			"memcached":             "docker.io/library/memcached:1.6.32",
			"openvswitch":           "quay.io/airshipit/openvswitch:latest-ubuntu_noble",
			"libvirt":               "quay.io/airshipit/libvirt:2025.1-ubuntu_noble",
		},
	},
	{
		Name: "2025.2", ChartVersion: "2025.2.0", Registry: "quay.io/airshipit", Distro: "ubuntu_noble",
		Infra: map[string]string{
			"kubernetes-entrypoint": "quay.io/airshipit/kubernetes-entrypoint:latest-ubuntu_noble",
			"rabbitmq":              "docker.io/library/rabbitmq:3.13-management",
			"mariadb":               "quay.io/airshipit/mariadb:latest-ubuntu_noble",
			"memcached":             "docker.io/library/memcached:1.6.32",
			"openvswitch":           "quay.io/airshipit/openvswitch:latest-ubuntu_noble",
			"libvirt":               "quay.io/airshipit/libvirt:2025.2-ubuntu_noble",
		},
	},
	{
		Name: "2026.1", ChartVersion: "2026.1.0", Registry: "quay.io/airshipit", Distro: "ubuntu_noble",
		Infra: map[string]string{
			"kubernetes-entrypoint": "quay.io/airshipit/kubernetes-entrypoint:latest-ubuntu_noble",
			"rabbitmq":              "docker.io/library/rabbitmq:4.1-management",
			"mariadb":               "quay.io/airshipit/mariadb:latest-ubuntu_noble",
			"memcached":             "docker.io/library/memcached:1.6.38",
			"openvswitch":           "quay.io/airshipit/openvswitch:latest-ubuntu_noble",
			"libvirt":               "quay.io/airshipit/libvirt:2026.1-ubuntu_noble",
		},
	},
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
// image, anything else an OpenStack service image tagged with the release.
func (r Release) Image(name string) string {
	if infra, ok := strings.CutPrefix(name, "@"); ok {
		return r.Infra[infra]
	}
	return fmt.Sprintf("%s/%s:%s-%s", r.Registry, name, r.Name, r.Distro)
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
