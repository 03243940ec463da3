package apivalidation

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// expectField: the API server's refusal names the offending field (its path, then ": "), not
// only the object that holds it ("spec: Invalid value: \"object\"", "<nil>: ...").
func expectField(t *testing.T, err error, path string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted an invalid object, want an error on %s", path)
	}
	msg := err.Error()
	if !strings.Contains(msg, " "+path+": ") && !strings.Contains(msg, "["+path+": ") {
		t.Fatalf("error %q does not name the field %s", msg, path)
	}
	for _, whole := range []string{" spec: ", "[spec: ", "<nil>: "} {
		if strings.Contains(msg, whole) {
			t.Errorf("error %q blames the whole object (%q), not a field", msg, strings.TrimSpace(whole))
		}
	}
}

// TestFieldPaths: rules that look at several fields of an object (the spec, a list item, the
// template, the object's name) still name the one field at fault, one case for each kind of rule.
func TestFieldPaths(t *testing.T) {
	ensureNamespace(t)
	const set = "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
	for _, tt := range []struct {
		name, kind, spec, field, wantErr string
	}{
		// Required unless imported: a Required value on the missing field.
		{"subnet without network", "Subnet", "  cidr: 10.0.0.0/24\n", "spec.networkRef", "Required value: networkRef is required unless the subnet is imported"},
		{"subnet without cidr", "Subnet", "  networkRef: net\n", "spec.cidr", "Required value: cidr is required unless the subnet is imported"},
		{"flavor without ram", "Flavor", "  vcpus: 1\n", "spec.ramMiB", "Required value: ramMiB is required unless the flavor is imported"},
		{"volume without size", "Volume", "  description: d\n", "spec.sizeGiB", "sizeGiB is required"},
		{"image without source", "Image", "  diskFormat: raw\n", "spec.source", "source is required"},
		{"keypair without key", "KeyPair", "  type: ssh\n", "spec.publicKey", "publicKey is required"},
		{"fip without network", "FloatingIP", "  description: d\n", "spec.floatingNetworkRef", "one of floatingNetworkRef or providerNetworkRef is required"},
		{"port without network", "Port", "  description: d\n", "spec.networkRef", "networkRef is required"},
		{"aggregate without selector", "HostAggregate", "  availabilityZone: az1\n", "spec.nodeSelector", "nodeSelector is required"},
		{"server group without policy", "ServerGroup", "  name: g\n", "spec.policy", "policy is required"},
		{"vm without flavor", "VirtualMachine", "  imageRef: i\n", "spec.flavorRef", "flavorRef is required"},
		{"unmanaged without import", "Router", "  managementPolicy: unmanaged\n", "spec.import", "Required value: an unmanaged Router must import an existing router"},
		// Two fields of the spec: the one the message is about.
		{"subnet gateway outside", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  gatewayIP: 10.0.1.1\n", "spec.gatewayIP", "gatewayIP must be inside the cidr"},
		{"subnet gateway in pool", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  gatewayIP: 10.0.0.5\n  allocationPools: [{start: 10.0.0.2, end: 10.0.0.9}]\n", "spec.gatewayIP", "gatewayIP must not be inside an allocation pool"},
		{"subnet ip version", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  ipVersion: 6\n", "spec.ipVersion", "ipVersion does not match the cidr"},
		{"subnet pools overlap", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  allocationPools: [{start: 10.0.0.2, end: 10.0.0.9}, {start: 10.0.0.5, end: 10.0.0.20}]\n", "spec.allocationPools", "allocation pools must not overlap"},
		{"subnet pool outside", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  allocationPools: [{start: 10.0.1.2, end: 10.0.1.9}]\n", "spec.allocationPools", "allocation pools must be inside the cidr"},
		{"fip fixed address without port", "FloatingIP", "  floatingNetworkRef: public\n  fixedIPAddress: 10.0.0.5\n", "spec.fixedIPAddress", "fixedIPAddress needs portRef"},
		{"port groups without port security", "Port", "  networkRef: net\n  portSecurityEnabled: false\n  securityGroupRefs: [web]\n", "spec.securityGroupRefs", "security groups need port security"},
		{"server group rule on affinity", "ServerGroup", "  policy: affinity\n  maxServersPerHost: 2\n", "spec.maxServersPerHost", "maxServersPerHost applies to the anti-affinity policy only"},
		{"vm boot volume twice", "VirtualMachine", "  flavorRef: f\n  bootVolumeRef: v\n  volumes: [{volumeRef: v}]\n", "spec.bootVolumeRef", "the boot volume cannot also be in volumes"},
		{"vm two boot sources", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  bootVolumeRef: v\n", "spec.imageRef", "exactly one of imageRef, publicImageRef or bootVolumeRef is required"},
		// A list item: the field inside the item, with its index.
		{"pool reversed", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  allocationPools: [{start: 10.0.0.20, end: 10.0.0.10}]\n", "spec.allocationPools[0].start", "start must not be after end"},
		{"pool mixed versions", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  allocationPools: [{start: 10.0.0.2, end: '::5'}]\n", "spec.allocationPools[0].end", "start and end must be of the same IP version"},
		{"sg half range", "SecurityGroup", "  rules: [{direction: ingress, protocol: tcp, portRangeMin: 1}]\n", "spec.rules[0].portRangeMax", "Required value: portRangeMin and portRangeMax go together"},
		{"sg half range max", "SecurityGroup", "  rules: [{direction: ingress, protocol: tcp, portRangeMax: 80}]\n", "spec.rules[0].portRangeMin", "portRangeMin and portRangeMax go together"},
		{"sg reversed range", "SecurityGroup", "  rules: [{direction: ingress, protocol: tcp, portRangeMin: 90, portRangeMax: 80}]\n", "spec.rules[0].portRangeMin", "portRangeMin must not exceed portRangeMax"},
		{"sg port 0", "SecurityGroup", "  rules: [{direction: ingress, protocol: tcp, portRangeMin: 0, portRangeMax: 0}]\n", "spec.rules[0].portRangeMin", "ports are 1 to 65535"},
		{"sg icmp code", "SecurityGroup", "  rules: [{direction: ingress, protocol: icmp, portRangeMin: 8, portRangeMax: 256}]\n", "spec.rules[0].portRangeMax", "are 0 to 255"},
		{"sg icmp code without type", "SecurityGroup", "  rules: [{direction: ingress, protocol: icmp, portRangeMax: 0}]\n", "spec.rules[0].portRangeMax", "an ICMP code (portRangeMax) needs a type (portRangeMin)"},
		{"sg ipv6-icmp on IPv4", "SecurityGroup", "  rules: [{direction: ingress, protocol: ipv6-icmp}]\n", "spec.rules[0].protocol", "protocol ipv6-icmp needs ethertype IPv6"},
		{"sg prefix family", "SecurityGroup", "  rules: [{direction: ingress, remoteIPPrefix: '::/0'}]\n", "spec.rules[0].remoteIPPrefix", "remoteIPPrefix does not match the ethertype"},
		{"sg no ports for protocol", "SecurityGroup", "  rules: [{direction: ingress, protocol: gre, portRangeMin: 1, portRangeMax: 2}]\n", "spec.rules[0].protocol", "port ranges need a protocol with ports"},
		{"nic fixed IP on port", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  networks: [{portRef: p, fixedIP: 10.0.0.5}]\n", "spec.networks[0].fixedIP", "fixedIP applies to networkRef only"},
		// The template of a set.
		{"vmset shared volume", "VirtualMachineSet", set + "    spec: {flavorRef: f, imageRef: i, volumes: [{volumeRef: v}]}\n", "spec.template.spec.volumes", "Forbidden: a set's VMs cannot share volumes"},
		{"vmset shared boot volume", "VirtualMachineSet", set + "    spec: {flavorRef: f, bootVolumeRef: v}\n", "spec.template.spec.bootVolumeRef", "a set's VMs cannot share volumes"},
		{"vmset shared port", "VirtualMachineSet", set + "    spec: {flavorRef: f, imageRef: i, networks: [{portRef: p}]}\n", "spec.template.spec.networks", "a set's VMs cannot share a Port"},
		{"vmset import", "VirtualMachineSet", set + "    spec: {flavorRef: f, imageRef: i, import: {name: x}}\n", "spec.template.spec.import", "a set's VMs cannot import a server"},
		{"vmset no progress", "VirtualMachineSet", set + "    spec: {flavorRef: f, imageRef: i}\n  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: '0%'}}\n", "spec.strategy.rollingUpdate.maxUnavailable", "maxSurge and maxUnavailable cannot both be 0"},
		{"vmset rolling update on recreate", "VirtualMachineSet", set + "    spec: {flavorRef: f, imageRef: i}\n  strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}\n", "spec.strategy.rollingUpdate", "rollingUpdate applies to the RollingUpdate strategy only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := env.Client.Create(env.Ctx, decode(t, tt.kind, tt.spec), client.DryRunAll)
			expectAdmission(t, err, tt.wantErr)
			expectField(t, err, tt.field)
			expectOneMessage(t, err)
		})
	}
	t.Run("keypair name", func(t *testing.T) {
		obj := decode(t, "KeyPair", "  publicKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKl1TxPap+mh4hQxL9QXanMWwZu7OnQ05dcpmltQzOt1 a@b\n")
		obj.SetName("my.key")
		err := env.Client.Create(env.Ctx, obj, client.DryRunAll)
		expectAdmission(t, err, "Nova key pair names cannot contain dots")
		expectField(t, err, "metadata")
	})
}

// TestUpdateFieldPaths: a field added or removed after creation is named, whether the rule sits
// on the spec or on the whole object.
func TestUpdateFieldPaths(t *testing.T) {
	ensureNamespace(t)
	const vm = "  flavorRef: f\n  imageRef: i\n"
	for _, tt := range []struct {
		name, kind, spec string
		path             []string
		value            any // nil removes the field
		field, wantErr   string
	}{
		{"flavor swap added", "Flavor", "  vcpus: 1\n  ramMiB: 512\n", []string{"swapMiB"}, int64(512), "spec.swapMiB", "flavor sizes are immutable"},
		{"subnet cidr removed", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n", []string{"cidr"}, nil, "spec.cidr", "cidr is immutable"},
		{"server group rule added", "ServerGroup", "  policy: anti-affinity\n", []string{"maxServersPerHost"}, int64(3), "spec.maxServersPerHost", "a server group cannot change"},
		{"volume type removed", "Volume", "  sizeGiB: 1\n  volumeType: fast\n", []string{"volumeType"}, nil, "spec.volumeType", "volumeType is immutable"},
		{"vm key pair added", "VirtualMachine", vm, []string{"keyPairRef"}, "k", "spec.keyPairRef", "keyPairRef is immutable"},
		{"vm image removed", "VirtualMachine", vm, []string{"imageRef"}, nil, "spec.imageRef", "imageRef is immutable"},
		{"network import added", "Network", "  description: a\n", []string{"import"}, map[string]any{"name": "public"}, "spec.import", "import is immutable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := updateSpec(t, tt.kind, tt.spec, "fp-"+strings.ReplaceAll(tt.name, " ", "-"), tt.path, tt.value)
			expectAdmission(t, err, tt.wantErr)
			expectField(t, err, tt.field)
		})
	}
}

// TestRulesOnObjectsNameAField: a CEL rule on the whole object or on its spec sees several
// fields; each says which one is at fault (fieldPath), so no refusal reads "spec: Invalid value:
// \"object\"". Rules on a nested object (spec.import, spec.charts, a list item) are named by that
// object's own path and may stay without one.
func TestRulesOnObjectsNameAField(t *testing.T) {
	for _, crd := range generatedCRDs(t) {
		for _, v := range crd.Spec.Versions {
			root := v.Schema.OpenAPIV3Schema
			check := func(where string, rules apiextensionsv1.ValidationRules) {
				for _, r := range rules {
					if r.FieldPath == "" {
						t.Errorf("%s: rule on %s has no fieldPath: %s", crd.Spec.Names.Kind, where, r.Message)
					}
				}
			}
			check("the object", root.XValidations)
			if spec, ok := root.Properties["spec"]; ok {
				check("spec", spec.XValidations)
			}
		}
	}
}
