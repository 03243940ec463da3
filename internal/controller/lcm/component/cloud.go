package component

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kupenstack/kupenstack/internal/lcm/credentials"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// annotationPublishedBy marks the credentials Secret KupenStack wrote itself: only such a Secret
// is ever updated, so one an admin created for an existing cloud is never overwritten.
const annotationPublishedBy = "kupenstack.io/published-by"

// CloudPublisher writes the admin clouds.yaml of the deployed cloud into the Secret the
// OpenStack-resources controllers read, closing the loop: a cloud KupenStack deployed needs no
// manual credential step.
type CloudPublisher struct {
	Client client.Client
	// Secret is the operator's credentials Secret (--cloud-secret) and CloudName the cloud in it
	// (--cloud).
	Secret    types.NamespacedName
	CloudName string
	// Region of the deployed cloud (OpenStack-Helm's default: RegionOne).
	Region string
}

// clouds.yaml of the deployed cloud: keystone's in-cluster endpoint, OpenStack-Helm's admin user.
func (c *CloudPublisher) cloudsYAML(namespace, password string) ([]byte, error) {
	region := c.Region
	if region == "" {
		region = "RegionOne"
	}
	doc := map[string]any{"clouds": map[string]any{c.CloudName: map[string]any{
		"auth": map[string]any{
			"auth_url":            fmt.Sprintf("http://keystone-api.%s.svc.cluster.local:5000/v3", namespace),
			"username":            "admin",
			"password":            password,
			"project_name":        "admin",
			"user_domain_name":    "Default",
			"project_domain_name": "Default",
		},
		"region_name":          region,
		"interface":            "internal",
		"identity_api_version": 3,
	}}}
	return yaml.Marshal(doc)
}

// Publish creates or refreshes the Secret, unless it exists and was not written by KupenStack.
func (c *CloudPublisher) Publish(ctx context.Context, namespace string) error {
	var creds corev1.Secret
	if err := c.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: credentials.SecretName}, &creds); err != nil {
		return err
	}
	doc, err := c.cloudsYAML(namespace, string(creds.Data[credentials.IdentityAdmin]))
	if err != nil {
		return err
	}
	return c.publishSecret(ctx, c.Secret, openstack.CloudsYAMLKey, doc)
}

// publishSecret creates the Secret key (and its namespace) holding value under dataKey, or
// refreshes that value, unless the Secret exists and was not written by KupenStack (an admin's
// own, e.g. the credentials of an existing cloud).
func (c *CloudPublisher) publishSecret(ctx context.Context, key types.NamespacedName, dataKey string, value []byte) error {
	var s corev1.Secret
	err := c.Client.Get(ctx, key, &s)
	if apierrors.IsNotFound(err) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: key.Namespace}}
		if err := c.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		s = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace,
			Annotations: map[string]string{annotationPublishedBy: "lcm"}},
			Data: map[string][]byte{dataKey: value}}
		return c.Client.Create(ctx, &s)
	}
	if err != nil {
		return err
	}
	if s.Annotations[annotationPublishedBy] != "lcm" || string(s.Data[dataKey]) == string(value) {
		return nil
	}
	before := s.DeepCopy()
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	s.Data[dataKey] = value
	return c.Client.Patch(ctx, &s, client.MergeFrom(before))
}
