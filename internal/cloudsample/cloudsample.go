// Package cloudsample readies a whole cloud's sample (config/samples/lcm/one-node.yaml) for a node
// whose containerd holds the project's images: TestWholeCloud deploys it, and the real quickstart
// applies what hack/cloudsample prints. Outside internal/imagebuild, whose source keys the image
// cache.
package cloudsample

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/imagebuild"
)

// Sample is a whole cloud as config/samples/lcm/one-node.yaml declares it: one profile and
// one configuration on one node.
type Sample struct {
	Profile       *kupenstackv1.OpenstackCloudConfigurationProfile
	Configuration *kupenstackv1.KupenstackConfiguration
}

// Parse reads a profile and a configuration from YAML documents; any other kind, an
// unknown field or a missing half is an error.
func Parse(data []byte) (*Sample, error) {
	s := &Sample{}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, err
		}
		var err error
		switch meta.Kind {
		case "OpenstackCloudConfigurationProfile":
			s.Profile = &kupenstackv1.OpenstackCloudConfigurationProfile{}
			err = yaml.UnmarshalStrict(doc, s.Profile)
		case "KupenstackConfiguration":
			s.Configuration = &kupenstackv1.KupenstackConfiguration{}
			err = yaml.UnmarshalStrict(doc, s.Configuration)
		case "":
			// A document of comments only.
		default:
			err = fmt.Errorf("unexpected kind %q", meta.Kind)
		}
		if err != nil {
			return nil, err
		}
	}
	if s.Profile == nil || s.Configuration == nil {
		return nil, errors.New("want a profile and a configuration")
	}
	if len(s.Configuration.Spec.Nodes) != 1 {
		return nil, fmt.Errorf("want one node, have %d", len(s.Configuration.Spec.Nodes))
	}
	return s, nil
}

// UseImages points the sample at release rel's images, already imported into the node's
// containerd: every images.tags key the release maps, pull policy Never (a key it leaves out
// fails as ErrImageNeverPull instead of reaching a registry). The profile goes into namespace
// and the configuration onto node, with charts from source. The configuration must ask for the
// release the images are built for.
func (s *Sample) UseImages(rel *imagebuild.Release, namespace, node string, charts kupenstackv1.ChartSource) error {
	if got := strings.TrimSpace(s.Configuration.Spec.Release); got != rel.Release {
		return fmt.Errorf("the configuration asks for release %q, the images are %s's", got, rel.Release)
	}
	p := s.Profile
	p.Namespace = namespace
	p.Spec.ImagePullPolicy = corev1.PullNever
	if p.Spec.Components == nil {
		p.Spec.Components = map[string]kupenstackv1.ComponentProfile{}
	}
	for chart, images := range rel.Charts {
		cp := p.Spec.Components[chart]
		cp.Images = images
		p.Spec.Components[chart] = cp
	}
	cfg := s.Configuration
	cfg.Spec.DefaultProfile = kupenstackv1.ProfileReference{Name: p.Name, Namespace: namespace}
	cfg.Spec.Charts = charts
	cfg.Spec.Nodes[0].Name = node
	return nil
}

// UseCeph adds cinder to the cloud, its volumes on the Ceph cluster whose client configuration
// the cloud's namespace holds under the charts' names (spec.ceph's defaults), with poolReplicas
// copies of each object.
func (s *Sample) UseCeph(poolReplicas int32) {
	s.Profile.Spec.Ceph = &kupenstackv1.CephClient{PoolReplicas: poolReplicas}
	if cfg := &s.Configuration.Spec; !slices.Contains(cfg.OptionalComponents, "cinder") {
		cfg.OptionalComponents = append(cfg.OptionalComponents, "cinder")
	}
}

// YAML writes the sample as two documents, ready for kubectl apply.
func (s *Sample) YAML() ([]byte, error) {
	s.Profile.APIVersion, s.Profile.Kind = kupenstackv1.GroupVersion.String(), "OpenstackCloudConfigurationProfile"
	s.Configuration.APIVersion, s.Configuration.Kind = kupenstackv1.GroupVersion.String(), "KupenstackConfiguration"
	p, err := yaml.Marshal(s.Profile)
	if err != nil {
		return nil, err
	}
	c, err := yaml.Marshal(s.Configuration)
	if err != nil {
		return nil, err
	}
	return bytes.Join([][]byte{p, c}, []byte("---\n")), nil
}
