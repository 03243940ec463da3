package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// VirtualMachineSetStrategyType is how a changed template replaces the set's VMs.
// +kubebuilder:validation:Enum=RollingUpdate;Recreate
type VirtualMachineSetStrategyType string

const (
	// RollingUpdateStrategy replaces VMs a few at a time, within maxSurge and maxUnavailable.
	RollingUpdateStrategy VirtualMachineSetStrategyType = "RollingUpdate"
	// RecreateStrategy deletes every old VM before creating new ones.
	RecreateStrategy VirtualMachineSetStrategyType = "Recreate"
)

// VirtualMachineSetStrategy says how VMs of an old template are replaced.
// +kubebuilder:validation:XValidation:rule="!has(self.rollingUpdate) || self.type == 'RollingUpdate'",message="rollingUpdate applies to the RollingUpdate strategy only",fieldPath=".rollingUpdate"
type VirtualMachineSetStrategy struct {
	// Type: RollingUpdate (default) or Recreate.
	// +kubebuilder:default=RollingUpdate
	// +optional
	Type VirtualMachineSetStrategyType `json:"type,omitempty"`
	// RollingUpdate bounds a rolling update.
	// +optional
	RollingUpdate *RollingUpdateVirtualMachineSet `json:"rollingUpdate,omitempty"`
}

// RollingUpdateVirtualMachineSet bounds a rolling update, as for a Deployment: a number or a
// percentage of replicas (surge rounds up, unavailable rounds down).
// +kubebuilder:validation:XValidation:rule="!has(self.maxSurge) || !has(self.maxUnavailable) || !(type(self.maxSurge) == int ? self.maxSurge == 0 : self.maxSurge.matches('^0+%$')) || !(type(self.maxUnavailable) == int ? self.maxUnavailable == 0 : self.maxUnavailable.matches('^0+%$'))",message="maxSurge and maxUnavailable cannot both be 0 (or 0%)",fieldPath=".maxUnavailable"
type RollingUpdateVirtualMachineSet struct {
	// MaxSurge: how many VMs above replicas may exist during an update (default 25%): a number
	// (0-1000) or a percentage of replicas (0%-1000%).
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 && self <= 1000 : self.matches('^[0-9]{1,4}%$') && int(self.replace('%', '')) <= 1000",message="maxSurge must be a number from 0 to 1000 or a percentage from 0% to 1000%"
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
	// MaxUnavailable: how many VMs below replicas may be unavailable during an update (default
	// 25%): a number (0-1000) or a percentage of replicas (0%-100%).
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 && self <= 1000 : self.matches('^[0-9]{1,3}%$') && int(self.replace('%', '')) <= 100",message="maxUnavailable must be a number from 0 to 1000 or a percentage from 0% to 100%"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// LabelSelector picks a set's VMs by label: the fields of a Deployment's selector, with the
// bounds and rules Kubernetes applies to them checked at admission.
type LabelSelector struct {
	// MatchLabels: the VMs carry all these labels (key: value).
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
	// MatchExpressions: requirements on the VMs' labels, all of which must hold.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is one requirement on a label, as in a Deployment's selector.
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",message="values must not be empty for operator In or NotIn",fieldPath=".values",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",message="values must be empty for operator Exists or DoesNotExist",fieldPath=".values",reason=FieldValueForbidden
type LabelSelectorRequirement struct {
	// Key is the label's key: an optional DNS prefix and '/', then a name of at most 63
	// characters.
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!self.contains('/') || self.split('/')[0].size() <= 253)",message="key must be a label key: an optional DNS prefix and '/', then a name of at most 63 letters, digits, '-', '_' or '.'"
	Key string `json:"key"`
	// Operator: In (the label has one of values), NotIn (it has none of them, or no such
	// label), Exists (the label is there) or DoesNotExist.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist
	Operator metav1.LabelSelectorOperator `json:"operator"`
	// Values: label values, at least one for In and NotIn, none for Exists and DoesNotExist.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Values []LabelValue `json:"values,omitempty"`
}

// AsSelector is the selector in the form Kubernetes' label machinery takes (a selector with
// neither field selects everything).
func (s *LabelSelector) AsSelector() (labels.Selector, error) {
	m := &metav1.LabelSelector{MatchLabels: s.MatchLabels}
	for _, e := range s.MatchExpressions {
		r := metav1.LabelSelectorRequirement{Key: e.Key, Operator: e.Operator}
		for _, v := range e.Values {
			r.Values = append(r.Values, string(v))
		}
		m.MatchExpressions = append(m.MatchExpressions, r)
	}
	return metav1.LabelSelectorAsSelector(m)
}

// VirtualMachineTemplate is what every VM of a set is made from.
type VirtualMachineTemplate struct {
	// Labels and annotations of the VMs; the labels must match the set's selector.
	// +kubebuilder:validation:XValidation:rule="!has(self.labels) || !('kupenstack.io/template-hash' in self.labels)",message="template labels must not set kupenstack.io/template-hash: the set labels its VMs with it",fieldPath=.labels
	// +optional
	Metadata VirtualMachineTemplateMeta `json:"metadata,omitempty"`
	// Spec of every VM. Its references name objects shared by all VMs of the set (a Port
	// cannot be shared, so networks use networkRef).
	// +kubebuilder:validation:XValidation:rule="!has(self.networks) || self.networks.all(n, !has(n.portRef))",message="a set's VMs cannot share a Port: use networkRef",fieldPath=".networks"
	// +kubebuilder:validation:XValidation:rule="!has(self.volumes)",message="a set's VMs cannot share volumes",fieldPath=".volumes",reason=FieldValueForbidden
	// +kubebuilder:validation:XValidation:rule="!has(self.bootVolumeRef)",message="a set's VMs cannot share volumes",fieldPath=".bootVolumeRef",reason=FieldValueForbidden
	// +kubebuilder:validation:XValidation:rule="!has(self.import)",message="a set's VMs cannot import a server",fieldPath=".import",reason=FieldValueForbidden
	Spec VirtualMachineSpec `json:"spec"`
}

// VirtualMachineTemplateMeta are the labels and annotations of a set's VMs.
type VirtualMachineTemplateMeta struct {
	// Labels of each VirtualMachine made from the template; they must include the selector's
	// matchLabels. Kubernetes label keys and values (a value is at most 63 characters).
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!k.contains('/') || k.split('/')[0].size() <= 253))",message="template label keys must be label keys: an optional DNS prefix and '/', then a name of at most 63 letters, digits, '-', '_' or '.'"
	// +optional
	Labels map[string]LabelValue `json:"labels,omitempty"`
	// Annotations of each VirtualMachine made from the template (at most 64). Keys are
	// Kubernetes annotation keys: an optional DNS prefix (letters of either case) and '/', then
	// a name of at most 63 characters. Keys and values together are at most 256 KiB (UTF-8;
	// keys are ASCII by the rule above, so the sum counts their characters),
	// the limit Kubernetes sets on the annotations of the VirtualMachines made from them.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.map(k, k.size() + bytes(self[k]).size()).sum() <= 262144",message="template annotations must total at most 256 KiB (keys and values, in UTF-8 bytes): Kubernetes refuses larger annotations on the VirtualMachines made from them"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() <= 317 && k.matches('^([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?([.][A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!k.contains('/') || k.split('/')[0].size() <= 253))",message="template annotation keys must be annotation keys: an optional DNS prefix of at most 253 characters and '/', then a name of at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	// +optional
	Annotations map[string]AnnotationValue `json:"annotations,omitempty"`
}

// VirtualMachineSetSpec is the desired set of identical VMs.
// +kubebuilder:validation:XValidation:rule="(has(self.selector.matchLabels) && size(self.selector.matchLabels) > 0) || (has(self.selector.matchExpressions) && size(self.selector.matchExpressions) > 0)",message="selector must not be empty: it would select every VM of the namespace",fieldPath=.selector
// +kubebuilder:validation:XValidation:rule="!has(self.selector.matchLabels) || size(self.selector.matchLabels) == (has(self.template.metadata) && has(self.template.metadata.labels) ? size(self.template.metadata.labels.filter(k, k in self.selector.matchLabels && self.selector.matchLabels[k] == self.template.metadata.labels[k])) : 0)",message="selector.matchLabels must all be among the template's labels (template.metadata.labels), with the same values",fieldPath=.selector.matchLabels
// +kubebuilder:validation:XValidation:rule="!has(self.selector.matchExpressions) || self.selector.matchExpressions.all(e, !e.key.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') || (has(e.values) && !e.values.all(v, v.matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'))) || (e.operator in ['In', 'NotIn'] ? (!has(e.values) || size(e.values) == 0 || (e.operator == 'In') == ((has(self.template.metadata) && has(self.template.metadata.labels) && e.key in self.template.metadata.labels) && e.values.exists(v, v == self.template.metadata.labels[e.key]))) : e.operator in ['Exists', 'DoesNotExist'] ? (e.operator == 'Exists') == (has(self.template.metadata) && has(self.template.metadata.labels) && e.key in self.template.metadata.labels) : true))",message="the template's labels (template.metadata.labels) must meet every requirement of selector.matchExpressions",fieldPath=.selector.matchExpressions
type VirtualMachineSetSpec struct {
	// Replicas: how many VMs (default 1). Also set through the scale subresource
	// (kubectl scale vmset/NAME --replicas=N).
	// (Not negative: the API server's scale check says so, with one message.)
	// +kubebuilder:default=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Selector picks the set's VMs by label; it must match the template's labels. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="selector is immutable"
	Selector LabelSelector `json:"selector"`

	// Template of the VMs.
	Template VirtualMachineTemplate `json:"template"`

	// Strategy replaces VMs made from an older template.
	// +optional
	Strategy VirtualMachineSetStrategy `json:"strategy,omitempty"`

	// MinReadySeconds: how long a VM must be Ready to count as available (at most a day).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`
}

// VirtualMachineSetStatus is the observed state of a VirtualMachineSet.
type VirtualMachineSetStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Replicas: VMs that exist (not being deleted). Default 0, shown as 0 rather than blank.
	// +kubebuilder:default=0
	// +optional
	Replicas int32 `json:"replicas"`
	// ReadyReplicas: VMs that are Ready. Default 0, shown as 0 rather than blank.
	// +kubebuilder:default=0
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`
	// UpdatedReplicas: VMs made from the current template. Default 0, shown as 0 rather than blank.
	// +kubebuilder:default=0
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`
	// AvailableReplicas: VMs Ready for at least minReadySeconds. Default 0, shown as 0 rather than blank.
	// +kubebuilder:default=0
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`
	// TemplateHash labels the VMs of the current template.
	// +optional
	TemplateHash string `json:"templateHash,omitempty"`
	// Selector in string form, for the scale subresource (autoscalers).
	// +optional
	Selector string `json:"selector,omitempty"`
	// Conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// VirtualMachineSet keeps a number of identical VirtualMachines, rolls them to a changed template
// within its strategy's bounds, and scales with kubectl scale.
// Its VMs are named "<set>-<template hash>-<5 random characters>" (the hash is at most 10
// characters) and must be valid object names (at most 253): the set's name is at most 236.
// +kubebuilder:object:root=true
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 236",message="metadata.name of a VirtualMachineSet is at most 236 characters: its VMs are named <name>-<template hash>-<random>, at most 253",fieldPath=".metadata"
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=vmset,categories=openstack
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Up-to-date",type=integer,JSONPath=`.status.updatedReplicas`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VirtualMachineSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VirtualMachineSetSpec `json:"spec"`
	// Status is what the operator observed. It defaults to {} so that its counts read 0, not
	// a blank, before the operator first writes it.
	// +kubebuilder:default={}
	Status VirtualMachineSetStatus `json:"status,omitempty"`
}

// VirtualMachineSetList is a list of VirtualMachineSets.
// +kubebuilder:object:root=true
type VirtualMachineSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VirtualMachineSet{}, &VirtualMachineSetList{})
}
