// Package openstack connects the operator to the OpenStack cloud it manages: it reads the admin
// credentials (a clouds.yaml kept in a Secret) and builds authenticated gophercloud clients.
package openstack

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CloudsYAMLKey is the key of the credentials Secret that holds the clouds.yaml document.
const CloudsYAMLKey = "clouds.yaml"

// readSecret returns the clouds.yaml kept in the Secret at key.
func readSecret(ctx context.Context, c client.Reader, key types.NamespacedName) ([]byte, error) {
	var secret corev1.Secret
	if err := c.Get(ctx, key, &secret); err != nil {
		return nil, fmt.Errorf("reading credentials Secret %s: %w", key, err)
	}
	data, ok := secret.Data[CloudsYAMLKey]
	if !ok {
		return nil, fmt.Errorf("credentials Secret %s has no %q key", key, CloudsYAMLKey)
	}
	return data, nil
}
