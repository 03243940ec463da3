package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ImageSpec is the desired Glance image. The operator downloads spec.source itself and uploads
// the data to Glance; the data and its formats are immutable (replace the object for a new
// version), the name, visibility, minimums, properties and tags are not.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged Image must import an existing image",fieldPath=".import",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.source)",message="source is required unless the image is imported",fieldPath=".source",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(oldSelf.source) == has(self.source)",message="source is immutable",fieldPath=".source"
type ImageSpec struct {
	ManagedSpec  `json:",inline"`
	ImageContent `json:",inline"`

	// Visibility: private (default: the namespace's project only), shared (projects it is
	// shared with) or community (every project, unlisted). Public images are the cloud admin's:
	// a PublicImage declares one (or import an existing one: managementPolicy unmanaged).
	// +kubebuilder:validation:Enum=private;shared;community
	// +kubebuilder:default=private
	// +optional
	Visibility string `json:"visibility,omitempty"`
}

// ImageContent is what an Image and a PublicImage declare alike: the Glance image's name, data
// and attributes (everything but the visibility).
type ImageContent struct {
	// Name in Glance; defaults to the object's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == self.trim() && !self.matches('[[:cntrl:]]')",message="name must not start or end with whitespace or contain control characters"
	// +optional
	Name string `json:"name,omitempty"`

	// Source of the image data. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="source is immutable"
	// +optional
	Source *ImageSource `json:"source,omitempty"`

	// DiskFormat of the data: raw, qcow2 (default), vmdk, vdi, iso, ami, ari, aki, vhd, vhdx or
	// ploop. Immutable.
	// +kubebuilder:validation:Enum=raw;qcow2;vmdk;vdi;iso;ami;ari;aki;vhd;vhdx;ploop
	// +kubebuilder:default=qcow2
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="diskFormat is immutable"
	// +optional
	DiskFormat string `json:"diskFormat,omitempty"`

	// ContainerFormat of the data: bare (default), ovf, ova, ami, ari, aki, docker or
	// compressed. Immutable.
	// +kubebuilder:validation:Enum=bare;ovf;ova;ami;ari;aki;docker;compressed
	// +kubebuilder:default=bare
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="containerFormat is immutable"
	// +optional
	ContainerFormat string `json:"containerFormat,omitempty"`

	// MinDiskGiB a server's root disk needs to boot the image.
	// +kubebuilder:validation:Minimum=0
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	MinDiskGiB int `json:"minDiskGiB,omitempty"`

	// MinRAMMiB a server needs to boot the image.
	// +kubebuilder:validation:Minimum=0
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	MinRAMMiB int `json:"minRamMiB,omitempty"`

	// Properties of the image in Glance (e.g. hw_disk_bus: scsi, os_distro: ubuntu); reconciled
	// as a whole: properties not listed here are removed.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) >= 1 && size(k) <= 255)",message="property names are 1 to 255 characters"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k in ['id', 'name', 'status', 'visibility', 'protected', 'checksum', 'owner', 'size', 'virtual_size', 'min_ram', 'min_disk', 'created_at', 'updated_at', 'tags', 'container_format', 'disk_format', 'locations', 'direct_url', 'self', 'file', 'schema', 'os_hidden', 'os_hash_algo', 'os_hash_value', 'stores']) && !k.startsWith('os_glance'))",message="properties must not set Glance's own image attributes (such as name, visibility, size, os_hash_value or os_glance_*)"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 255)",message="property values must be at most 255 characters"
	// +optional
	Properties map[string]string `json:"properties,omitempty"`

	// Tags added to the image in Glance (KupenStack adds its own too).
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	Tags []NeutronTag `json:"tags,omitempty"`
}

// ImageSource is where the operator downloads the image data from.
type ImageSource struct {
	// URL of the data (http or https). The operator fetches it itself, from its own network;
	// credentials in the URL are never shown in status or Events. It must be a public address:
	// a link-local address (cloud metadata) is refused here; loopback, link-local, private and
	// other internal addresses are refused at download time, for what the URL names, what a host
	// name resolves to and redirects, unless the admin allowed the range
	// (--image-source-allowed-cidrs: a mirror on the operator's own host or network).
	// +kubebuilder:validation:MinLength=8
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHost() != ''",message="url must be an http or https URL"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(?i)https?://([^/?#@]*@)?(169[.]254([.][0-9]+){2}|[[](::ffff:169[.]254[.][0-9.]+|fe[89ab][0-9a-f]:[0-9a-f:.%]*)[^0-9a-f:.%])(:[0-9]*)?([/?#]|$)')",message="url must not name a link-local address such as the cloud's metadata service"
	URL string `json:"url"`

	// SHA256 of the data, hex. When set, data whose checksum differs is never activated.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9a-fA-F]{64}$')",message="sha256 must be 64 hexadecimal digits"
	// +optional
	SHA256 string `json:"sha256,omitempty"`
}

// ImageResourceStatus is what Glance reports for the image.
type ImageResourceStatus struct {
	// Name of the image in Glance.
	Name string `json:"name,omitempty"`
	// Status in Glance: queued (no data yet), saving, active, killed, deactivated, ...
	Status string `json:"status,omitempty"`
	// Visibility in Glance: private, shared, community or public.
	Visibility string `json:"visibility,omitempty"`
	// DiskFormat of the image data, e.g. qcow2 or raw.
	DiskFormat string `json:"diskFormat,omitempty"`
	// ContainerFormat of the image data, e.g. bare.
	ContainerFormat string `json:"containerFormat,omitempty"`
	// Size of the data in bytes.
	Size int64 `json:"size,omitempty"`
	// Checksum is Glance's MD5 of the data.
	Checksum string `json:"checksum,omitempty"`
	// HashAlgo and HashValue are Glance's secure hash of the data (os_hash_algo, os_hash_value).
	HashAlgo string `json:"hashAlgo,omitempty"`
	// HashValue is Glance's secure hash (sha512) of the image data.
	HashValue string `json:"hashValue,omitempty"`
	// MinDiskGiB: the smallest root disk, in GiB, a server booted from the image needs.
	MinDiskGiB int `json:"minDiskGiB,omitempty"`
	// MinRAMMiB: the least memory, in MiB, a server booted from the image needs.
	MinRAMMiB int `json:"minRamMiB,omitempty"`
	// Owner is the ID of the project that owns the image.
	Owner string `json:"owner,omitempty"`
	// Properties are the image's custom properties (hw_disk_bus, os_distro, ...).
	Properties map[string]string `json:"properties,omitempty"`
	// Tags of the image in Glance (KupenStack's own included).
	Tags []string `json:"tags,omitempty"`
}

// ImageStatus is the observed state of an Image.
type ImageStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the image as Glance last reported it.
	// +optional
	Resource *ImageResourceStatus `json:"resource,omitempty"`
}

// Image is a Glance image in the namespace's project.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=osimg,categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.resource.status`
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.status.resource.size`
// +kubebuilder:printcolumn:name="Visibility",type=string,JSONPath=`.status.resource.visibility`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Image struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ImageSpec   `json:"spec"`
	Status ImageStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (i *Image) GetManagedSpec() *ManagedSpec { return &i.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (i *Image) GetManagedStatus() *ManagedStatus { return &i.Status.ManagedStatus }

// GetImageContent returns the image's name, data and attributes.
func (i *Image) GetImageContent() *ImageContent { return &i.Spec.ImageContent }

// GetImageStatus returns the observed state.
func (i *Image) GetImageStatus() *ImageStatus { return &i.Status }

// ImageList is a list of Images.
// +kubebuilder:object:root=true
type ImageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Image `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Image{}, &ImageList{})
}
