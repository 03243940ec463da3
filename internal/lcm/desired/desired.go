// Package desired computes what the cloud should look like from the KupenstackConfiguration and
// the profiles it names: the input of values rendering, read from the API server.
package desired

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/lcm/credentials"
	"github.com/kupenstack/kupenstack/internal/lcm/values"
)

// Render renders the cloud's values from the configuration and its profiles.
func Render(ctx context.Context, c client.Reader, cfg *kupenstackv1.KupenstackConfiguration) (*values.Output, error) {
	in, err := GatherInput(ctx, c, cfg)
	if err != nil {
		return nil, err
	}
	return values.Render(*in)
}

// ProfileLookup returns the spec of the profile at key, or an error (NotFound when missing).
type ProfileLookup func(key types.NamespacedName) (*kupenstackv1.OpenstackCloudConfigurationProfileSpec, error)

// GatherInput reads the profiles a configuration names from the API server into a rendering
// input. A missing profile is an error that names it.
func GatherInput(ctx context.Context, c client.Reader, cfg *kupenstackv1.KupenstackConfiguration) (*values.Input, error) {
	return Input(cfg, func(key types.NamespacedName) (*kupenstackv1.OpenstackCloudConfigurationProfileSpec, error) {
		var p kupenstackv1.OpenstackCloudConfigurationProfile
		if err := c.Get(ctx, key, &p); err != nil {
			return nil, err
		}
		return &p.Spec, nil
	})
}

// Input builds the rendering input of a configuration, looking each profile up once.
func Input(cfg *kupenstackv1.KupenstackConfiguration, lookup ProfileLookup) (*values.Input, error) {
	profiles := map[types.NamespacedName]*kupenstackv1.OpenstackCloudConfigurationProfileSpec{}
	get := func(ref kupenstackv1.ProfileReference) (*kupenstackv1.OpenstackCloudConfigurationProfileSpec, error) {
		key := types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
		if key.Namespace == "" {
			key.Namespace = cfg.Spec.DefaultProfile.Namespace
		}
		if p, ok := profiles[key]; ok {
			return p, nil
		}
		p, err := lookup(key)
		if err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("profile %s not found", key)
			}
			return nil, err
		}
		profiles[key] = p
		return p, nil
	}
	def, err := get(cfg.Spec.DefaultProfile)
	if err != nil {
		return nil, err
	}
	in := &values.Input{Release: cfg.Spec.Release, Components: cfg.Spec.Components, OptionalComponents: cfg.Spec.OptionalComponents, Profile: def}
	for _, n := range cfg.Spec.Nodes {
		node := values.Node{Name: n.Name, Roles: n.NodeRoles(), Disabled: n.Disabled}
		if n.Profile != nil {
			if node.Profile, err = get(*n.Profile); err != nil {
				return nil, fmt.Errorf("node %s: %w", n.Name, err)
			}
		}
		in.Nodes = append(in.Nodes, node)
	}
	return in, nil
}

// The values of a component's Helm release are completed here, in one place for the component
// loops and `kupenstack render`: the rendered values, the secrets the chart declares underneath
// them, then what only the chart tells (every image key it has, ingresses off).

// SecretKeys are the keys of the generated secrets the component's chart declares.
func SecretKeys(cv *values.ComponentValues, chartValues map[string]any) []string {
	return credentials.Keys(credentials.Entries(cv.Component.Chart, chartValues, cv.Values))
}

// ChartValues are the values Helm gets for the component's chart, given the secrets of SecretKeys.
func ChartValues(cv *values.ComponentValues, chartValues map[string]any, secrets map[string]string) (map[string]any, error) {
	vals, err := credentials.WithValues(credentials.Entries(cv.Component.Chart, chartValues, cv.Values), secrets, cv.Values)
	if err != nil {
		return nil, err
	}
	return cv.ForChart(chartValues, vals)
}
