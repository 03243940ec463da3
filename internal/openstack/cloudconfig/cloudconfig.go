// Package cloudconfig reads a cloud's connection settings from a clouds.yaml document. It is
// kept apart (it needs nothing of Kubernetes) so that fuzzing it stays cheap to build.
package cloudconfig

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"regexp"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/config"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
)

// Cloud is one cloud entry of a clouds.yaml: how to authenticate and which endpoints to use.
type Cloud struct {
	Name     string
	Auth     gophercloud.AuthOptions
	Endpoint gophercloud.EndpointOpts
	TLS      *tls.Config
}

// ParseCloud reads the entry called name from a clouds.yaml document. Errors never include the
// document itself, since it holds passwords.
func Parse(cloudsYAML []byte, name string) (cloud *Cloud, err error) {
	if name == "" {
		return nil, fmt.Errorf("no cloud name given")
	}
	// gophercloud dereferences the auth section without checking it exists (found by
	// FuzzParseCloud); a bad Secret must give an error, not crash the operator.
	defer func() {
		if recover() != nil {
			cloud, err = nil, fmt.Errorf("reading cloud %q from clouds.yaml: the entry has no usable auth section", name)
		}
	}()
	auth, endpoint, tlsConfig, err := clouds.Parse(
		clouds.WithCloudsYAML(bytes.NewReader(cloudsYAML)),
		clouds.WithCloudName(name),
		clouds.WithLocations(), // never fall back to files on the operator's own disk
	)
	if err != nil {
		return nil, fmt.Errorf("reading cloud %q from clouds.yaml: %s", name, redactYAMLValues(err.Error()))
	}
	// Tokens expire; without re-authentication a long-running operator would fail after a few hours.
	auth.AllowReauth = true
	return &Cloud{Name: name, Auth: auth, Endpoint: endpoint, TLS: tlsConfig}, nil
}

// Connect authenticates against Keystone and returns a provider client that re-authenticates by itself.
func (c *Cloud) Connect(ctx context.Context) (*gophercloud.ProviderClient, error) {
	provider, err := config.NewProviderClient(ctx, c.Auth, config.WithTLSConfig(c.TLS))
	if err != nil {
		return nil, fmt.Errorf("authenticating to cloud %q at %s: %w", c.Name, c.Auth.IdentityEndpoint, err)
	}
	return provider, nil
}

// yamlValue matches the `value` quotes in YAML decoder errors, which may hold a password.
var yamlValue = regexp.MustCompile("`[^`]*`")

func redactYAMLValues(msg string) string { return yamlValue.ReplaceAllString(msg, "`<redacted>`") }
