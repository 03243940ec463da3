package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PowerState is the power state a VirtualMachine should be in.
// +kubebuilder:validation:Enum=running;stopped
type PowerState string

const (
	PowerStateRunning PowerState = "running"
	PowerStateStopped PowerState = "stopped"
)

// RestartPolicy says when a failed server is replaced, as for a Pod's containers.
// +kubebuilder:validation:Enum=Always;OnFailure;Never
type RestartPolicy string

const (
	// RestartPolicyAlways replaces a server that failed or vanished, and starts again one that
	// stopped while powerState says running.
	RestartPolicyAlways RestartPolicy = "Always"
	// RestartPolicyOnFailure replaces a server that went to ERROR or vanished; a server that shut
	// down (from inside the guest or through the Nova API) stays stopped.
	RestartPolicyOnFailure RestartPolicy = "OnFailure"
	// RestartPolicyNever leaves a failed server as it is and reports it Degraded.
	RestartPolicyNever RestartPolicy = "Never"
)

// VirtualMachineSpec is the desired Nova server. References name objects of the same namespace
// (the flavor and host aggregate are cluster-scoped). The fields that define the server (boot
// source, key pair, NICs, user data, placement) are immutable: recreate the object to change
// them. Name, metadata, tags, security groups, attached volumes and power state change in place;
// a new flavor resizes the server in place (same server ID, ports and volumes).
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged VirtualMachine must import an existing server",fieldPath=".import",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.flavorRef)",message="flavorRef is required unless the server is imported",fieldPath=".flavorRef",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || [has(self.imageRef), has(self.publicImageRef), has(self.bootVolumeRef)].filter(x, x).size() == 1",message="exactly one of imageRef, publicImageRef or bootVolumeRef is required",fieldPath=".imageRef"
// +kubebuilder:validation:XValidation:rule="!has(self.bootVolumeRef) || !has(self.volumes) || self.volumes.all(v, v.volumeRef != self.bootVolumeRef)",message="the boot volume cannot also be in volumes",fieldPath=".bootVolumeRef"
// +kubebuilder:validation:XValidation:rule="[has(self.availabilityZone), has(self.hostAggregateRef), has(self.nodeSelector)].filter(x, x).size() <= 1",message="availabilityZone, hostAggregateRef and nodeSelector are mutually exclusive",fieldPath=".availabilityZone"
type VirtualMachineSpec struct {
	ManagedSpec `json:",inline"`

	// Name of the server in Nova; defaults to the object's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == self.trim() && !self.matches('[[:cntrl:]]')",message="name must not start or end with whitespace or contain control characters"
	// +optional
	Name string `json:"name,omitempty"`

	// FlavorRef names a (cluster-scoped) Flavor object. Changing it resizes the server in place
	// (Nova resize, then confirm): it keeps its ID, ports and volumes. A resize Nova refuses or
	// that fails is reverted where Nova allows, leaves the server on its old flavor and marks the
	// VM Degraded (ResizeFailed); it is not tried again until the spec changes.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	FlavorRef string `json:"flavorRef,omitempty"`

	// ImageRef names the Image object to boot from. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	ImageRef string `json:"imageRef,omitempty"`

	// PublicImageRef names the (cluster-scoped) PublicImage to boot from: a public image the cloud
	// admin declared. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	PublicImageRef string `json:"publicImageRef,omitempty"`

	// BootVolumeRef names a bootable Volume object to boot from instead of an image. The volume
	// outlives the server (and survives its replacement). Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	BootVolumeRef string `json:"bootVolumeRef,omitempty"`

	// KeyPairRef names the KeyPair object whose public key the server gets. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	KeyPairRef string `json:"keyPairRef,omitempty"`

	// Networks are the server's NICs, in order: each on a Network object (Nova makes the port) or
	// on a Port object (which survives the server and its replacement). None: no NIC. Immutable.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Networks []VirtualMachineNIC `json:"networks,omitempty"`

	// SecurityGroupRefs name SecurityGroup objects for the NICs Nova makes (a Port object's own
	// security groups apply to it). The project's default group applies when unset.
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.all(r, r.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'))",message="each item must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	SecurityGroupRefs []string `json:"securityGroupRefs,omitempty"`

	// UserData for cloud-init, read from a key of a Secret in the namespace when the server is
	// created (and when it is replaced). Immutable reference; a change of the Secret's content
	// applies to replacements only.
	// +optional
	UserData *SecretKeyRef `json:"userData,omitempty"`

	// Metadata is the server's Nova metadata (key/value pairs visible to the guest). Keys are 1 to
	// 255 letters, digits, spaces, '-', '_', ':' or '.'; values at most 255 characters.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[-a-zA-Z0-9_:. ]{1,255}$'))",message="metadata keys are 1 to 255 letters, digits, spaces, '-', '_', ':' or '.'"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 255)",message="metadata values are at most 255 characters"
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`

	// Tags of the server in Nova (KupenStack adds its own too).
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	Tags []NovaTag `json:"tags,omitempty"`

	// AvailabilityZone to place the server in. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="!self.contains(':')",message="availabilityZone cannot contain ':' (Nova's zone:host form forces a host, which only admins may do)"
	// +optional
	AvailabilityZone string `json:"availabilityZone,omitempty"`

	// HostAggregateRef names a HostAggregate object: the server is placed on the Kubernetes nodes
	// that aggregate selects (through its availability zone). Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	HostAggregateRef string `json:"hostAggregateRef,omitempty"`

	// NodeSelector places the server on Kubernetes nodes with these labels: through the one
	// HostAggregate whose nodeSelector includes all of them (its availability zone). Immutable.
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!k.contains('/') || k.split('/')[0].size() <= 253))",message="nodeSelector keys must be label keys: an optional DNS prefix and '/', then a name of at most 63 letters, digits, '-', '_' or '.'"
	// +optional
	NodeSelector map[string]LabelValue `json:"nodeSelector,omitempty"`

	// ServerGroupRef names a ServerGroup object whose policy places this server. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	ServerGroupRef string `json:"serverGroupRef,omitempty"`

	// Volumes are Volume objects attached to the server, attached and detached in place.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=volumeRef
	// +optional
	Volumes []VirtualMachineVolume `json:"volumes,omitempty"`

	// PowerState: running (default) or stopped.
	// +kubebuilder:default=running
	// +optional
	PowerState PowerState `json:"powerState,omitempty"`

	// RestartPolicy: when a failed server is replaced. OnFailure (default): when it goes to ERROR
	// or is deleted outside KupenStack. Always: also when it stops while powerState is running.
	// Never: a failed server is left as it is, Degraded.
	// +kubebuilder:default=OnFailure
	// +optional
	RestartPolicy RestartPolicy `json:"restartPolicy,omitempty"`
}

// VirtualMachineNIC is one network interface: on a Network (Nova makes the port) or a Port.
// +kubebuilder:validation:XValidation:rule="has(self.networkRef) != has(self.portRef)",message="a NIC needs exactly one of networkRef or portRef"
// +kubebuilder:validation:XValidation:rule="!has(self.fixedIP) || has(self.networkRef)",message="fixedIP applies to networkRef only; set the address on the Port",fieldPath=".fixedIP"
type VirtualMachineNIC struct {
	// NetworkRef names a Network object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	NetworkRef string `json:"networkRef,omitempty"`
	// PortRef names a Port object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	PortRef string `json:"portRef,omitempty"`
	// FixedIP asks for this address on the network.
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="fixedIP must be an IP address"
	// +optional
	FixedIP string `json:"fixedIP,omitempty"`
}

// VirtualMachineVolume is a Volume attached to the server.
type VirtualMachineVolume struct {
	// VolumeRef names a Volume object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	VolumeRef string `json:"volumeRef"`
}

// SecretKeyRef is a key of a Secret in the object's namespace.
type SecretKeyRef struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// Name of the Secret, in the object's namespace.
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// Key of the Secret's data that holds the value.
	Key string `json:"key"`
}

// NovaTag is a tag of a Nova server. Tags starting with "kupenstack-" are KupenStack's own.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=60
// +kubebuilder:validation:XValidation:rule="!self.startsWith('kupenstack-')",message="tags starting with kupenstack- are reserved"
// +kubebuilder:validation:XValidation:rule="!self.contains(',') && !self.contains('/')",message="Nova tags cannot contain ',' or '/'"
type NovaTag string

// VirtualMachineAddress is an address of the server on one network.
type VirtualMachineAddress struct {
	// Network is the name of the network the address is on.
	Network string `json:"network"`
	// Address is the IP address.
	Address string `json:"address"`
	// Type: fixed or floating.
	Type string `json:"type,omitempty"`
	// MAC address of the server's interface.
	MAC string `json:"mac,omitempty"`
}

// VirtualMachineResourceStatus is what Nova reports for the server.
type VirtualMachineResourceStatus struct {
	// Name of the server in Nova.
	Name string `json:"name,omitempty"`
	// Status is Nova's server status: BUILD, ACTIVE, SHUTOFF, ERROR, ...
	Status string `json:"status,omitempty"`
	// TaskState is what Nova is doing to the server (spawning, powering-off, ...), if anything.
	TaskState string `json:"taskState,omitempty"`
	// PowerState as the hypervisor reports it: Running, Shutdown, ...
	PowerState string `json:"powerState,omitempty"`
	// Host is the compute host (the Kubernetes node) running the server.
	Host string `json:"host,omitempty"`
	// AvailabilityZone the server runs in.
	AvailabilityZone string `json:"availabilityZone,omitempty"`
	// Addresses are the server's IP addresses, per network.
	Addresses []VirtualMachineAddress `json:"addresses,omitempty"`
	// FlavorName is the name of the server's flavor.
	FlavorName string `json:"flavorName,omitempty"`
	// ImageID is the ID of the image the server was booted from (empty: booted from a volume).
	ImageID string `json:"imageID,omitempty"`
	// VolumeIDs are the volumes attached to the server.
	VolumeIDs []string `json:"volumeIDs,omitempty"`
	// Metadata of the server in Nova.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Tags of the server in Nova (KupenStack's own included).
	Tags []string `json:"tags,omitempty"`
	// Fault is Nova's message for a server in ERROR.
	Fault string `json:"fault,omitempty"`
}

// VirtualMachineStatus is the observed state of a VirtualMachine.
type VirtualMachineStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the server as Nova last reported it.
	// +optional
	Resource *VirtualMachineResourceStatus `json:"resource,omitempty"`
	// RestartCount is how many times the server was replaced or restarted by its restartPolicy
	// (default 0, shown as 0 rather than blank).
	// +kubebuilder:default=0
	// +optional
	RestartCount int32 `json:"restartCount"`
	// ConsecutiveFailures counts failures since the server was last healthy for a while; the
	// delay before the next replacement grows with it.
	// +optional
	ConsecutiveFailures int32 `json:"consecutiveFailures,omitempty"`
	// LastRestartTime is when the server was last replaced or restarted.
	// +optional
	LastRestartTime *metav1.Time `json:"lastRestartTime,omitempty"`
	// LastFailureReason says why the server was last replaced or restarted.
	// +optional
	LastFailureReason string `json:"lastFailureReason,omitempty"`
	// AppliedPowerState is the powerState the operator last acted on: running or stopped.
	// +optional
	AppliedPowerState PowerState `json:"appliedPowerState,omitempty"`
	// Resize is the flavor change the operator last started: kept while it runs and, when it
	// failed, until the spec changes (so a failed flavor is not tried again and again).
	// +optional
	Resize *VirtualMachineResize `json:"resize,omitempty"`
}

// ResizePhase is where a resize stands.
// +kubebuilder:validation:Enum=Resizing;Confirming;Failed
type ResizePhase string

const (
	// ResizePhaseResizing: Nova is resizing the server.
	ResizePhaseResizing ResizePhase = "Resizing"
	// ResizePhaseConfirming: the operator confirmed the resize; Nova is finishing it.
	ResizePhaseConfirming ResizePhase = "Confirming"
	// ResizePhaseFailed: Nova refused or failed the resize; the server stays on its old flavor.
	ResizePhaseFailed ResizePhase = "Failed"
)

// VirtualMachineResize is a flavor change of the server.
type VirtualMachineResize struct {
	// FlavorRef is the Flavor object the server is resized to.
	FlavorRef string `json:"flavorRef"`
	// FlavorName is that flavor's name in Nova.
	// +optional
	FlavorName string `json:"flavorName,omitempty"`
	// FromFlavorName is the Nova flavor the server had before.
	// +optional
	FromFlavorName string `json:"fromFlavorName,omitempty"`
	// Phase: Resizing, Confirming or Failed.
	Phase ResizePhase `json:"phase"`
	// Message says why the resize failed (Nova's message).
	// +optional
	Message string `json:"message,omitempty"`
	// Generation of the VM whose spec asked for the resize; a failed one is tried again only
	// for a newer generation.
	// +optional
	Generation int64 `json:"generation,omitempty"`
	// StartTime is when the operator asked Nova for the resize.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
}

// VirtualMachine is a Nova server in the namespace's project, replaced when it fails according to
// its restartPolicy.
// The immutable fields are checked here, not on VirtualMachineSpec, so that a VirtualMachineSet's
// template (the same spec) can change.
// +kubebuilder:validation:XValidation:rule="has(self.spec.imageRef) == has(oldSelf.spec.imageRef) && (!has(self.spec.imageRef) || self.spec.imageRef == oldSelf.spec.imageRef)",message="imageRef is immutable",fieldPath=".spec.imageRef"
// +kubebuilder:validation:XValidation:rule="has(self.spec.publicImageRef) == has(oldSelf.spec.publicImageRef) && (!has(self.spec.publicImageRef) || self.spec.publicImageRef == oldSelf.spec.publicImageRef)",message="publicImageRef is immutable",fieldPath=".spec.publicImageRef"
// +kubebuilder:validation:XValidation:rule="has(self.spec.bootVolumeRef) == has(oldSelf.spec.bootVolumeRef) && (!has(self.spec.bootVolumeRef) || self.spec.bootVolumeRef == oldSelf.spec.bootVolumeRef)",message="bootVolumeRef is immutable",fieldPath=".spec.bootVolumeRef"
// +kubebuilder:validation:XValidation:rule="has(self.spec.keyPairRef) == has(oldSelf.spec.keyPairRef) && (!has(self.spec.keyPairRef) || self.spec.keyPairRef == oldSelf.spec.keyPairRef)",message="keyPairRef is immutable",fieldPath=".spec.keyPairRef"
// +kubebuilder:validation:XValidation:rule="has(self.spec.networks) == has(oldSelf.spec.networks) && (!has(self.spec.networks) || self.spec.networks == oldSelf.spec.networks)",message="networks are immutable",fieldPath=".spec.networks"
// +kubebuilder:validation:XValidation:rule="has(self.spec.userData) == has(oldSelf.spec.userData) && (!has(self.spec.userData) || self.spec.userData == oldSelf.spec.userData)",message="userData is immutable",fieldPath=".spec.userData"
// +kubebuilder:validation:XValidation:rule="has(self.spec.availabilityZone) == has(oldSelf.spec.availabilityZone) && (!has(self.spec.availabilityZone) || self.spec.availabilityZone == oldSelf.spec.availabilityZone)",message="availabilityZone is immutable",fieldPath=".spec.availabilityZone"
// +kubebuilder:validation:XValidation:rule="has(self.spec.hostAggregateRef) == has(oldSelf.spec.hostAggregateRef) && (!has(self.spec.hostAggregateRef) || self.spec.hostAggregateRef == oldSelf.spec.hostAggregateRef)",message="hostAggregateRef is immutable",fieldPath=".spec.hostAggregateRef"
// +kubebuilder:validation:XValidation:rule="has(self.spec.nodeSelector) == has(oldSelf.spec.nodeSelector) && (!has(self.spec.nodeSelector) || self.spec.nodeSelector == oldSelf.spec.nodeSelector)",message="nodeSelector is immutable",fieldPath=".spec.nodeSelector"
// +kubebuilder:validation:XValidation:rule="has(self.spec.serverGroupRef) == has(oldSelf.spec.serverGroupRef) && (!has(self.spec.serverGroupRef) || self.spec.serverGroupRef == oldSelf.spec.serverGroupRef)",message="serverGroupRef is immutable",fieldPath=".spec.serverGroupRef"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vm;osvm,categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.resource.status`
// +kubebuilder:printcolumn:name="Address",type=string,JSONPath=`.status.resource.addresses[0].address`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.restartCount`
// +kubebuilder:printcolumn:name="Flavor",type=string,JSONPath=`.spec.flavorRef`,priority=1
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.imageRef`,priority=1
// +kubebuilder:printcolumn:name="Public Image",type=string,JSONPath=`.spec.publicImageRef`,priority=1
// +kubebuilder:printcolumn:name="Host",type=string,JSONPath=`.status.resource.host`,priority=1
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VirtualMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VirtualMachineSpec `json:"spec"`
	// Status is what the operator observed. It defaults to {} so that its counts read 0, not
	// a blank, before the operator first writes it.
	// +kubebuilder:default={}
	Status VirtualMachineStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (v *VirtualMachine) GetManagedSpec() *ManagedSpec { return &v.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (v *VirtualMachine) GetManagedStatus() *ManagedStatus { return &v.Status.ManagedStatus }

// VirtualMachineList is a list of VirtualMachines.
// +kubebuilder:object:root=true
type VirtualMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachine `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VirtualMachine{}, &VirtualMachineList{})
}
