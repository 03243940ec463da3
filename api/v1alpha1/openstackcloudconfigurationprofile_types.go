package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ComponentProfile configures one component (one OpenStack-Helm chart).
type ComponentProfile struct {
	// Replicas of the component's API pods (pod.replicas.api and the chart's other
	// control-plane replica keys); overrides the profile's replicas.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Debug turns the service's debug logging on or off (oslo.config's DEFAULT.debug; horizon's DEBUG);
	// overrides the profile's debug.
	// +optional
	Debug *bool `json:"debug,omitempty"`

	// Images overrides images.tags.<name> of this component (full image references).
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Images map[string]string `json:"images,omitempty"`

	// Values are free-form Helm values merged over everything above (maps merge key by key,
	// other values replace, null removes a key).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Values *runtime.RawExtension `json:"values,omitempty"`

	// Conf is the service configuration, merged into values.conf last: conf.<service>.<section>.<option>,
	// e.g. {nova: {DEFAULT: {cpu_allocation_ratio: 4}}}. In a node's profile, conf is what the
	// node gets as its per-node override (conf.overrides.<chart>_<daemonset>.hosts[]).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Conf *runtime.RawExtension `json:"conf,omitempty"`
}

// OpenstackCloudConfigurationProfileSpec holds the knobs of an OpenStack cloud. Merge order, from
// weakest to strongest: the release's defaults, then this profile's typed knobs (debug,
// replicas, imageRegistry, images, resources), then components.<name>.{replicas, debug, images},
// then components.<name>.values, then components.<name>.conf. A node's own profile then adds
// its per-node overrides (see docs/lcm.md).
type OpenstackCloudConfigurationProfileSpec struct {
	// Debug turns debug logging of every OpenStack service on or off.
	// +optional
	Debug *bool `json:"debug,omitempty"`

	// Replicas of every component's API pods.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// ImageRegistry replaces the registry host of the release's default images (e.g.
	// registry.local:5000 for a mirror of quay.io). Images given explicitly are left alone.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z0-9.-]+(:[0-9]+)?(/[a-z0-9._/-]+)?$')",message="imageRegistry must be a registry host[:port] with an optional path, without a scheme"
	// +optional
	ImageRegistry string `json:"imageRegistry,omitempty"`

	// Images overrides images.tags.<name> in every component whose chart has that image (e.g.
	// dep_check), as full image references.
	// +kubebuilder:validation:MaxProperties=256
	// +optional
	Images map[string]string `json:"images,omitempty"`

	// ImagePullPolicy of every container (each chart's images.pull_policy): Always, IfNotPresent
	// or Never; the charts' default is IfNotPresent.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// StorageClass of the persistent volumes: MariaDB's and RabbitMQ's data, Glance's images.
	// "default" means the cluster's default StorageClass. Unset, MariaDB, RabbitMQ and Glance
	// keep their data in a host path on the node their pod runs on, which suits one node (or
	// one replica of each) and needs no storage provisioner (see docs/lcm.md).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="storageClass must be a StorageClass name"
	// +optional
	StorageClass string `json:"storageClass,omitempty"`

	// Ceph, when set, keeps the cloud's volumes on this Ceph cluster: cinder's RBD backend
	// (rbd1, pool cinder.volumes, user cinder) replaces LVM, and libvirt gets the cinder user's
	// key, so that QEMU attaches volumes through librbd (no kernel module on the nodes). The Ceph
	// cluster is yours (Rook, cephadm, ...); KupenStack reads its client configuration from the
	// cloud's namespace and waits until both objects exist. Read from the default profile only.
	// Setting or removing it on a cloud with volumes leaves them behind (see docs/lcm.md).
	// +optional
	Ceph *CephClient `json:"ceph,omitempty"`

	// Resources turns pod resources on (pod.resources.enabled) and sets the requests and limits
	// of every long-running container (Deployments, StatefulSets, DaemonSets).
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// Components configure single components, by name.
	// +kubebuilder:validation:MaxProperties=12
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['mariadb', 'rabbitmq', 'memcached', 'keystone', 'glance', 'cinder', 'placement', 'nova', 'neutron', 'openvswitch', 'libvirt', 'horizon'])",message="components must be named mariadb, rabbitmq, memcached, keystone, glance, cinder, placement, nova, neutron, openvswitch, libvirt or horizon"
	// +optional
	Components map[string]ComponentProfile `json:"components,omitempty"`
}

// CephClient names the Ceph client configuration in the cloud's namespace, as the
// OpenStack-Helm charts read it (their ceph_client values).
type CephClient struct {
	// ConfigMap with the cluster's ceph.conf (its mon_host) under the key ceph.conf; default
	// ceph-etc.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="configMap must be a ConfigMap name"
	// +kubebuilder:default=ceph-etc
	// +optional
	ConfigMap string `json:"configMap,omitempty"`

	// Secret with client.admin's key under the key "key"; default pvc-ceph-client-key. Cinder's
	// storage-init Job creates the volume pool and the cinder user with it, and libvirt's init
	// containers read the cinder user's key with it on every compute node (the charts keep the
	// keyrings in a host path there, see docs/lcm.md).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="secret must be a Secret name"
	// +kubebuilder:default=pvc-ceph-client-key
	// +optional
	Secret string `json:"secret,omitempty"`

	// PoolReplicas is the size of the volume pool: how many OSDs keep each object; default 3
	// (1 for a cluster of one OSD, which must allow it with mon_allow_pool_size_one).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=3
	// +optional
	PoolReplicas int32 `json:"poolReplicas,omitempty"`
}

// OpenstackCloudConfigurationProfileStatus is what the operator observed of the profile.
type OpenstackCloudConfigurationProfileStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OpenstackCloudConfigurationProfile (OCCP) is a reusable set of OpenStack settings: the
// KupenstackConfiguration names one as its defaultProfile and nodes may name their own.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=openstack-admin,shortName=occp
// +kubebuilder:printcolumn:name="Debug",type=boolean,JSONPath=`.spec.debug`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Registry",type=string,JSONPath=`.spec.imageRegistry`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type OpenstackCloudConfigurationProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OpenstackCloudConfigurationProfileSpec   `json:"spec,omitempty"`
	Status OpenstackCloudConfigurationProfileStatus `json:"status,omitempty"`
}

// OpenstackCloudConfigurationProfileList is a list of OpenstackCloudConfigurationProfiles.
// +kubebuilder:object:root=true
type OpenstackCloudConfigurationProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenstackCloudConfigurationProfile `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OpenstackCloudConfigurationProfile{}, &OpenstackCloudConfigurationProfileList{})
}
