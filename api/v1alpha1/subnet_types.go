package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SubnetSpec is the desired Neutron subnet.
// +kubebuilder:validation:XValidation:rule="!has(self.managementPolicy) || self.managementPolicy != 'unmanaged' || has(self.import)",message="an unmanaged Subnet must import an existing subnet",fieldPath=".import",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.networkRef)",message="networkRef is required unless the subnet is imported",fieldPath=".networkRef",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="has(oldSelf.networkRef) == has(self.networkRef)",message="networkRef is immutable",fieldPath=".networkRef"
type SubnetSpec struct {
	ManagedSpec `json:",inline"`

	// NetworkRef names the Network object (in the same namespace) the subnet belongs to. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="networkRef is immutable"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must name a Kubernetes object: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	NetworkRef string `json:"networkRef,omitempty"`

	SubnetParameters `json:",inline"`
}

// SubnetParameters are the fields of a Neutron subnet that a Subnet and a ProviderSubnet share:
// everything but the network it belongs to.
// +kubebuilder:validation:XValidation:rule="has(self.import) || has(self.cidr)",message="cidr is required unless the subnet is imported",fieldPath=".cidr",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!(has(self.gatewayIP) && has(self.disableGateway) && self.disableGateway)",message="gatewayIP and disableGateway are mutually exclusive",fieldPath=".gatewayIP"
// +kubebuilder:validation:XValidation:rule="!has(self.ipVersion) || !has(self.cidr) || !isCIDR(self.cidr) || cidr(self.cidr).ip().family() == self.ipVersion",message="ipVersion does not match the cidr",fieldPath=".ipVersion"
// +kubebuilder:validation:XValidation:rule="!has(self.gatewayIP) || !has(self.cidr) || !isCIDR(self.cidr) || !isIP(self.gatewayIP) || cidr(self.cidr).containsIP(self.gatewayIP)",message="gatewayIP must be inside the cidr",fieldPath=".gatewayIP"
// +kubebuilder:validation:XValidation:rule="!has(self.cidr) || !isCIDR(self.cidr) || !has(self.allocationPools) || self.allocationPools.all(p, !isIP(p.start) || !isIP(p.end) || ip(p.start).family() != ip(p.end).family() || (cidr(self.cidr).containsIP(p.start) && cidr(self.cidr).containsIP(p.end)))",message="allocation pools must be inside the cidr",fieldPath=".allocationPools"
// +kubebuilder:validation:XValidation:rule="!has(self.cidr) || !isCIDR(self.cidr) || !cidr(self.cidr.split('/')[0] + (cidr(self.cidr).ip().family() == 4 ? '/32' : '/128')).containsIP(cidr(self.cidr).masked().ip()) || !has(self.allocationPools) || self.allocationPools.all(p, !isIP(p.start) || !isIP(p.end) || ip(p.start).family() != ip(p.end).family() || !cidr(self.cidr).containsIP(p.start) || !cidr(self.cidr).containsIP(p.end) || !cidr(p.start + (ip(p.start).family() == 4 ? '/32' : '/128')).containsIP(self.cidr.split('/')[0]))",message="an allocation pool cannot start at the cidr's network address",fieldPath=".allocationPools"
// +kubebuilder:validation:XValidation:rule="!has(self.cidr) || !isCIDR(self.cidr) || !cidr(self.cidr.split('/')[0] + (cidr(self.cidr).ip().family() == 4 ? '/32' : '/128')).containsIP(cidr(self.cidr).masked().ip()) || !has(self.allocationPools) || self.allocationPools.all(p, !isIP(p.start) || !isIP(p.end) || ip(p.start).family() != ip(p.end).family() || !cidr(self.cidr).containsIP(p.start) || !cidr(self.cidr).containsIP(p.end) || ip(p.end).family() == 6 || (int(p.end.split('.')[0]) * 16777216 + int(p.end.split('.')[1]) * 65536 + int(p.end.split('.')[2]) * 256 + int(p.end.split('.')[3])) % [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304, 8388608, 16777216, 33554432, 67108864, 134217728, 268435456, 536870912, 1073741824, 2147483648, 4294967296][32 - cidr(self.cidr).prefixLength()] < [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304, 8388608, 16777216, 33554432, 67108864, 134217728, 268435456, 536870912, 1073741824, 2147483648, 4294967296][32 - cidr(self.cidr).prefixLength()] - 1)",message="an IPv4 allocation pool cannot include the broadcast address",fieldPath=".allocationPools"
// +kubebuilder:validation:XValidation:rule="!has(self.allocationPools) || self.allocationPools.all(p, !(isIP(p.start) && isIP(p.end) && ip(p.start).family() == 4 && ip(p.end).family() == 4) || (int(p.start.split('.')[0]) * 16777216 + int(p.start.split('.')[1]) * 65536 + int(p.start.split('.')[2]) * 256 + int(p.start.split('.')[3])) > (int(p.end.split('.')[0]) * 16777216 + int(p.end.split('.')[1]) * 65536 + int(p.end.split('.')[2]) * 256 + int(p.end.split('.')[3])) || self.allocationPools.filter(q, (isIP(q.start) && isIP(q.end) && ip(q.start).family() == 4 && ip(q.end).family() == 4) && (int(q.start.split('.')[0]) * 16777216 + int(q.start.split('.')[1]) * 65536 + int(q.start.split('.')[2]) * 256 + int(q.start.split('.')[3])) <= (int(p.end.split('.')[0]) * 16777216 + int(p.end.split('.')[1]) * 65536 + int(p.end.split('.')[2]) * 256 + int(p.end.split('.')[3])) && (int(p.start.split('.')[0]) * 16777216 + int(p.start.split('.')[1]) * 65536 + int(p.start.split('.')[2]) * 256 + int(p.start.split('.')[3])) <= (int(q.end.split('.')[0]) * 16777216 + int(q.end.split('.')[1]) * 65536 + int(q.end.split('.')[2]) * 256 + int(q.end.split('.')[3]))).size() == 1)",message="allocation pools must not overlap",fieldPath=".allocationPools"
// +kubebuilder:validation:XValidation:rule="!has(self.allocationPools) || self.allocationPools.all(p, !(isIP(p.start) && isIP(p.end) && ip(p.start).family() == 6 && ip(p.end).family() == 6) || ![[['/8', '/16', '/24', '/32', '/40', '/48', '/56', '/64', '/72', '/80', '/88', '/96', '/104', '/112', '/120', '/128'].filter(l, cidr(p.start + l).containsIP(p.end)).size()].map(k, 8 * k + [1, 2, 3, 4, 5, 6, 7].filter(j, 8 * k + j <= 128 && cidr(p.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][8 * k + j]).containsIP(p.end)).size())[0]].all(d, d == 128 || cidr(p.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d + 1]).masked().ip() == cidr(p.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d]).masked().ip()) || self.allocationPools.filter(q, (isIP(q.start) && isIP(q.end) && ip(q.start).family() == 6 && ip(q.end).family() == 6) && [[['/8', '/16', '/24', '/32', '/40', '/48', '/56', '/64', '/72', '/80', '/88', '/96', '/104', '/112', '/120', '/128'].filter(l, cidr(q.start + l).containsIP(p.end)).size()].map(k, 8 * k + [1, 2, 3, 4, 5, 6, 7].filter(j, 8 * k + j <= 128 && cidr(q.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][8 * k + j]).containsIP(p.end)).size())[0]].all(d, d == 128 || cidr(q.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d + 1]).masked().ip() == cidr(q.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d]).masked().ip()) && [[['/8', '/16', '/24', '/32', '/40', '/48', '/56', '/64', '/72', '/80', '/88', '/96', '/104', '/112', '/120', '/128'].filter(l, cidr(p.start + l).containsIP(q.end)).size()].map(k, 8 * k + [1, 2, 3, 4, 5, 6, 7].filter(j, 8 * k + j <= 128 && cidr(p.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][8 * k + j]).containsIP(q.end)).size())[0]].all(d, d == 128 || cidr(p.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d + 1]).masked().ip() == cidr(p.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d]).masked().ip()) && [[['/8', '/16', '/24', '/32', '/40', '/48', '/56', '/64', '/72', '/80', '/88', '/96', '/104', '/112', '/120', '/128'].filter(l, cidr(q.start + l).containsIP(q.end)).size()].map(k, 8 * k + [1, 2, 3, 4, 5, 6, 7].filter(j, 8 * k + j <= 128 && cidr(q.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][8 * k + j]).containsIP(q.end)).size())[0]].all(d, d == 128 || cidr(q.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d + 1]).masked().ip() == cidr(q.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d]).masked().ip())).size() == 1)",message="allocation pools must not overlap",fieldPath=".allocationPools"
// +kubebuilder:validation:XValidation:rule="!has(self.gatewayIP) || !isIP(self.gatewayIP) || !has(self.allocationPools) || self.allocationPools.all(p, !isIP(p.start) || !isIP(p.end) || (!cidr(self.gatewayIP + (ip(self.gatewayIP).family() == 4 ? '/32' : '/128')).containsIP(p.start) && !cidr(self.gatewayIP + (ip(self.gatewayIP).family() == 4 ? '/32' : '/128')).containsIP(p.end) && (!(isIP(p.start) && isIP(p.end) && ip(p.start).family() == 4 && ip(p.end).family() == 4) || ip(self.gatewayIP).family() != 4 || (int(self.gatewayIP.split('.')[0]) * 16777216 + int(self.gatewayIP.split('.')[1]) * 65536 + int(self.gatewayIP.split('.')[2]) * 256 + int(self.gatewayIP.split('.')[3])) < (int(p.start.split('.')[0]) * 16777216 + int(p.start.split('.')[1]) * 65536 + int(p.start.split('.')[2]) * 256 + int(p.start.split('.')[3])) || (int(self.gatewayIP.split('.')[0]) * 16777216 + int(self.gatewayIP.split('.')[1]) * 65536 + int(self.gatewayIP.split('.')[2]) * 256 + int(self.gatewayIP.split('.')[3])) > (int(p.end.split('.')[0]) * 16777216 + int(p.end.split('.')[1]) * 65536 + int(p.end.split('.')[2]) * 256 + int(p.end.split('.')[3])))))",message="gatewayIP must not be inside an allocation pool",fieldPath=".gatewayIP"
// +kubebuilder:validation:XValidation:rule="!has(self.gatewayIP) || !isIP(self.gatewayIP) || ip(self.gatewayIP).family() != 6 || !has(self.allocationPools) || self.allocationPools.all(p, !(isIP(p.start) && isIP(p.end) && ip(p.start).family() == 6 && ip(p.end).family() == 6) || [[['/8', '/16', '/24', '/32', '/40', '/48', '/56', '/64', '/72', '/80', '/88', '/96', '/104', '/112', '/120', '/128'].filter(l, cidr(self.gatewayIP + l).containsIP(p.start)).size()].map(k, 8 * k + [1, 2, 3, 4, 5, 6, 7].filter(j, 8 * k + j <= 128 && cidr(self.gatewayIP + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][8 * k + j]).containsIP(p.start)).size())[0]].all(d, d == 128 || cidr(self.gatewayIP + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d + 1]).masked().ip() == cidr(self.gatewayIP + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d]).masked().ip()) || [[['/8', '/16', '/24', '/32', '/40', '/48', '/56', '/64', '/72', '/80', '/88', '/96', '/104', '/112', '/120', '/128'].filter(l, cidr(p.end + l).containsIP(self.gatewayIP)).size()].map(k, 8 * k + [1, 2, 3, 4, 5, 6, 7].filter(j, 8 * k + j <= 128 && cidr(p.end + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][8 * k + j]).containsIP(self.gatewayIP)).size())[0]].all(d, d == 128 || cidr(p.end + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d + 1]).masked().ip() == cidr(p.end + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d]).masked().ip()))",message="gatewayIP must not be inside an allocation pool",fieldPath=".gatewayIP"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.cidr) == has(self.cidr)",message="cidr is immutable",fieldPath=".cidr"
// +kubebuilder:validation:XValidation:rule="has(oldSelf.ipVersion) == has(self.ipVersion)",message="ipVersion is immutable",fieldPath=".ipVersion"
type SubnetParameters struct {
	// Name in OpenStack; defaults to the object's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == self.trim() && !self.matches('[[:cntrl:]]')",message="name must not start or end with whitespace or contain control characters"
	// +optional
	Name string `json:"name,omitempty"`

	// Description of the subnet.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`

	// CIDR of the subnet, e.g. 10.0.0.0/24 or fd00::/64. Immutable.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="cidr must be an IPv4 or IPv6 CIDR"
	// +kubebuilder:validation:XValidation:rule="!isCIDR(self) || cidr(self) == cidr(self).masked()",message="cidr has host bits set: write the network address (10.0.0.0/24, not 10.0.0.1/24)"
	// +kubebuilder:validation:XValidation:rule="!isCIDR(self) || cidr(self).prefixLength() > 0",message="cidr prefix length 0 is not allowed (Neutron refuses it)"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="cidr is immutable"
	// +optional
	CIDR string `json:"cidr,omitempty"`

	// IPVersion: 4 or 6; taken from the cidr when unset. Immutable.
	// +kubebuilder:validation:Enum=4;6
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="ipVersion is immutable"
	// +optional
	IPVersion *int `json:"ipVersion,omitempty"`

	// GatewayIP; Neutron picks the first address when unset (unless disableGateway).
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="gatewayIP must be an IP address"
	// +optional
	GatewayIP string `json:"gatewayIP,omitempty"`

	// DisableGateway: the subnet has no gateway.
	// +optional
	DisableGateway bool `json:"disableGateway,omitempty"`

	// EnableDHCP on the subnet; default true.
	// +kubebuilder:default=true
	// +optional
	EnableDHCP *bool `json:"enableDHCP,omitempty"`

	// DNSNameservers handed out by DHCP, in order, each address once.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="self.all(ip, isIP(ip))",message="dnsNameservers must be IP addresses"
	// +kubebuilder:validation:XValidation:rule="self.all(a, !isIP(a) || self.filter(b, isIP(b) && ip(b) == ip(a)).size() == 1)",message="dnsNameservers must not list an address twice"
	// +listType=atomic
	// +optional
	DNSNameservers []string `json:"dnsNameservers,omitempty"`

	// AllocationPools are the ranges Neutron allocates port addresses from.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	AllocationPools []AllocationPool `json:"allocationPools,omitempty"`

	// Tags added to the subnet in OpenStack (KupenStack adds its own too).
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	Tags []NeutronTag `json:"tags,omitempty"`
}

// IPv6 allocation pools (reversed, overlapping, gateway inside; the rules on AllocationPool and SubnetSpec):
// the IPv4 rules compute each address as an int, which cannot hold 128 bits, and CEL has no let-binding or
// string ops on computed strings within the cost budget. So a <= b is decided with cidr containment only: d,
// the length of a and b's common prefix, is found a byte then a bit at a time (cidr(a + '/L').containsIP(b)),
// and a <= b when d is 128 (equal) or a's bit d is 0 (masking a to d+1 bits equals masking it to d bits).
// Prefix lengths come from list literals so the cost estimator knows their size. Generated by hand-expanding
// that comparison; the run-time check (internal/controller/subnet CheckAllocationPools) applies the same rules
// to objects stored before these rules existed.

// AllocationPool is an inclusive range of addresses.
// +kubebuilder:validation:XValidation:rule="!isIP(self.start) || !isIP(self.end) || ip(self.start).family() == ip(self.end).family()",message="start and end must be of the same IP version",fieldPath=".end"
// +kubebuilder:validation:XValidation:rule="!(isIP(self.start) && isIP(self.end) && ip(self.start).family() == 4 && ip(self.end).family() == 4) || (int(self.start.split('.')[0]) * 16777216 + int(self.start.split('.')[1]) * 65536 + int(self.start.split('.')[2]) * 256 + int(self.start.split('.')[3])) <= (int(self.end.split('.')[0]) * 16777216 + int(self.end.split('.')[1]) * 65536 + int(self.end.split('.')[2]) * 256 + int(self.end.split('.')[3]))",message="start must not be after end",fieldPath=".start"
// +kubebuilder:validation:XValidation:rule="!(isIP(self.start) && isIP(self.end) && ip(self.start).family() == 6 && ip(self.end).family() == 6) || [[['/8', '/16', '/24', '/32', '/40', '/48', '/56', '/64', '/72', '/80', '/88', '/96', '/104', '/112', '/120', '/128'].filter(l, cidr(self.start + l).containsIP(self.end)).size()].map(k, 8 * k + [1, 2, 3, 4, 5, 6, 7].filter(j, 8 * k + j <= 128 && cidr(self.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][8 * k + j]).containsIP(self.end)).size())[0]].all(d, d == 128 || cidr(self.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d + 1]).masked().ip() == cidr(self.start + ['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9', '/10', '/11', '/12', '/13', '/14', '/15', '/16', '/17', '/18', '/19', '/20', '/21', '/22', '/23', '/24', '/25', '/26', '/27', '/28', '/29', '/30', '/31', '/32', '/33', '/34', '/35', '/36', '/37', '/38', '/39', '/40', '/41', '/42', '/43', '/44', '/45', '/46', '/47', '/48', '/49', '/50', '/51', '/52', '/53', '/54', '/55', '/56', '/57', '/58', '/59', '/60', '/61', '/62', '/63', '/64', '/65', '/66', '/67', '/68', '/69', '/70', '/71', '/72', '/73', '/74', '/75', '/76', '/77', '/78', '/79', '/80', '/81', '/82', '/83', '/84', '/85', '/86', '/87', '/88', '/89', '/90', '/91', '/92', '/93', '/94', '/95', '/96', '/97', '/98', '/99', '/100', '/101', '/102', '/103', '/104', '/105', '/106', '/107', '/108', '/109', '/110', '/111', '/112', '/113', '/114', '/115', '/116', '/117', '/118', '/119', '/120', '/121', '/122', '/123', '/124', '/125', '/126', '/127', '/128'][d]).masked().ip())",message="start must not be after end",fieldPath=".start"
type AllocationPool struct {
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="start must be an IP address"
	// Start is the first address of the range, e.g. 10.0.0.10 or fd00::10.
	Start string `json:"start"`
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="end must be an IP address"
	// End is the last address of the range (inclusive), not before start.
	End string `json:"end"`
}

// SubnetResourceStatus is what Neutron reports for the subnet.
type SubnetResourceStatus struct {
	// Name of the subnet in Neutron.
	Name string `json:"name,omitempty"`
	// Description of the subnet in Neutron.
	Description string `json:"description,omitempty"`
	// NetworkID is the ID of the subnet's network.
	NetworkID string `json:"networkID,omitempty"`
	// CIDR of the subnet.
	CIDR string `json:"cidr,omitempty"`
	// IPVersion: 4 or 6.
	IPVersion int `json:"ipVersion,omitempty"`
	// GatewayIP is the subnet's gateway address (empty: none).
	GatewayIP string `json:"gatewayIP,omitempty"`
	// EnableDHCP: Neutron hands out the subnet's addresses by DHCP.
	EnableDHCP bool `json:"enableDHCP"`
	// DNSNameservers handed out by DHCP.
	DNSNameservers []string `json:"dnsNameservers,omitempty"`
	// AllocationPools are the ranges Neutron allocates port addresses from.
	AllocationPools []IPRange `json:"allocationPools,omitempty"`
	// Tags of the subnet in Neutron (KupenStack's own included).
	Tags []string `json:"tags,omitempty"`
}

// IPRange is an inclusive range of addresses as OpenStack reports it.
type IPRange struct {
	// Start is the first address of the range.
	Start string `json:"start"`
	// End is the last address of the range (inclusive).
	End string `json:"end"`
}

// SubnetStatus is the observed state of a Subnet.
type SubnetStatus struct {
	ManagedStatus `json:",inline"`
	// Resource is the subnet as Neutron last reported it.
	// +optional
	Resource *SubnetResourceStatus `json:"resource,omitempty"`
}

// Subnet is a Neutron subnet of a Network in the same namespace.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ossubnet,categories=openstack
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Network",type=string,JSONPath=`.spec.networkRef`
// +kubebuilder:printcolumn:name="CIDR",type=string,JSONPath=`.spec.cidr`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Subnet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SubnetSpec   `json:"spec"`
	Status SubnetStatus `json:"status,omitempty"`
}

// GetManagedSpec returns the management settings.
func (s *Subnet) GetManagedSpec() *ManagedSpec { return &s.Spec.ManagedSpec }

// GetManagedStatus returns the common status.
func (s *Subnet) GetManagedStatus() *ManagedStatus { return &s.Status.ManagedStatus }

// SubnetList is a list of Subnets.
// +kubebuilder:object:root=true
type SubnetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Subnet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Subnet{}, &SubnetList{})
}
