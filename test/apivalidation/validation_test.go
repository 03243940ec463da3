// Package apivalidation checks the CRDs' admission rules (OpenAPI and CEL) against a real API
// server: every rule has a case it rejects, with its field-level message, and a case it accepts.
package apivalidation

import (
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kupenstack/kupenstack/internal/testutil/testenv"
)

var env = testenv.New(nil)

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

const ns = "validation"

// clusterScoped are the cloud admin's resource kinds, which have no namespace.
var clusterScoped = map[string]bool{"Flavor": true, "HostAggregate": true, "PublicImage": true, "ProviderNetwork": true, "ProviderSubnet": true}

func decode(t *testing.T, kind, spec string) *unstructured.Unstructured {
	t.Helper()
	doc := "apiVersion: kupenstack.io/v1alpha1\nkind: " + kind + "\nmetadata:\n  name: obj\n  namespace: " + ns + "\nspec:\n" + spec
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatalf("test case is not YAML: %v", err)
	}
	if clusterScoped[kind] {
		obj.SetNamespace("")
	}
	return obj
}

// expectAdmission checks the API server's answer: accepted when wantErr is "", otherwise
// rejected with a message that says wantErr.
func expectAdmission(t *testing.T, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("rejected a valid object: %v", err)
	case wantErr != "" && err == nil:
		t.Fatalf("accepted an invalid object, want %q", wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Fatalf("error %q does not say %q", err, wantErr)
	}
	expectNoInternals(t, err)
}

// expectNoInternals: a refusal says what is wrong in the user's terms, never what a CEL rule says
// when it was not guarded against a value of the wrong form.
func expectNoInternals(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, internal := range []string{"no such overload", "evaluation error", "type conversion", "failed to evaluate", "compilation", "no such key"} {
		if strings.Contains(err.Error(), internal) {
			t.Errorf("error %q shows the rule's internals (%s), not a message for the user", err, internal)
		}
	}
}

// expectOneMessage: the API server's answer names one mistake (no second rule tripping over it).
func expectOneMessage(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Count(err.Error(), "Invalid value") > 1 {
		t.Fatalf("one mistake, several messages: %v", err)
	}
}

func ensureNamespace(t *testing.T) {
	t.Helper()
	env.Require(t)
	err := env.Client.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
}

// TestCreateValidation: each case is a spec (indented YAML under `spec:`) and the message the API
// server must answer with; "" means it must be accepted.
func TestCreateValidation(t *testing.T) {
	ensureNamespace(t)
	for _, tt := range []struct {
		name, kind, spec, wantErr string
	}{
		// Common fields.
		{"network minimal", "Network", "  {}\n", ""},
		{"unknown managementPolicy", "Network", "  managementPolicy: observe\n", `Unsupported value: "observe"`},
		{"unknown onDelete", "Network", "  onDelete: orphan\n", `Unsupported value: "orphan"`},
		{"unmanaged without import", "Network", "  managementPolicy: unmanaged\n", "an unmanaged Network must import an existing network"},
		{"unmanaged with import", "Network", "  managementPolicy: unmanaged\n  import: {name: public}\n", ""},
		{"import with id and name", "Network", "  import: {id: abc, name: x}\n", "import needs exactly one of id or name"},
		{"import with neither", "Network", "  import: {}\n", "import needs exactly one of id or name"},
		{"import id not an ID", "Network", "  import: {id: 'not an id!'}\n", "spec.import.id"},
		{"import id uuid", "Network", "  import: {id: 3F2A0C4E-8d1b-4b5e-9a7c-2e6f1d0b9c8a}\n", ""},
		{"import id message", "Network", "  import: {id: 'not an id!'}\n", "spec.import.id: Invalid value: \"not an id!\": id must be an OpenStack ID: hexadecimal digits and '-'"},
		{"import id too long", "Network", "  import: {id: " + strings.Repeat("a", 65) + "}\n", "spec.import.id: Too long: may not be more than 64"},
		{"mtu too big", "Network", "  mtu: 9217\n", "spec.mtu: Invalid value: 9217: spec.mtu in body should be less than or equal to 9216"},
		{"mtu jumbo", "Network", "  mtu: 9216\n", ""},
		{"reserved tag", "Network", "  tags: [kupenstack-uid-x]\n", "tags starting with kupenstack- are reserved"},
		{"mtu too small", "Network", "  mtu: 10\n", "spec.mtu"},
		{"mtu ok", "Network", "  mtu: 1450\n", ""},
		{"name too long", "Network", "  name: " + strings.Repeat("n", 256) + "\n", "spec.name"},
		// Names, references, zones and node selectors.
		{"name with spaces inside", "Network", "  name: my net\n", ""},
		{"name with trailing space", "Network", "  name: 'net '\n", "name must not start or end with whitespace"},
		{"name with newline", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  name: \"a\\nb\"\n", "or contain control characters"},
		{"ref not a name", "Subnet", "  networkRef: My_Net\n  cidr: 10.0.0.0/24\n", "spec.networkRef: Invalid value: \"My_Net\": must name a Kubernetes object"},
		{"ref with slash", "VirtualMachine", "  flavorRef: f\n  imageRef: other/img\n", "spec.imageRef: Invalid value: \"other/img\": must name a Kubernetes object"},
		{"refs item empty", "Port", "  networkRef: net\n  securityGroupRefs: ['']\n", "each item must name a Kubernetes object"},
		{"refs item upper case", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  securityGroupRefs: [Web]\n", "each item must name a Kubernetes object"},
		{"ref with dots", "VirtualMachine", "  flavorRef: m1.small\n  imageRef: ubuntu-22.04\n", ""},
		{"vm forced host", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  availabilityZone: 'nova:compute-1'\n", "availabilityZone cannot contain ':' (Nova's zone:host form forces a host"},
		{"volume forced host", "Volume", "  sizeGiB: 1\n  availabilityZone: 'nova:host'\n", "availabilityZone cannot contain ':'"},
		{"vm node selector bad key", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  nodeSelector: {'disk type': ssd}\n", "nodeSelector keys must be label keys"},
		{"vm node selector prefixed key", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  nodeSelector: {'topology.kubernetes.io/zone': eu-1a, 'gpu': ''}\n", ""},
		// The longest label key: a 253-character prefix, '/', a 63-character name (316 was the bound).
		{"vm node selector longest key", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  nodeSelector: {'" + strings.Repeat("p", 253) + "/" + strings.Repeat("n", 63) + "': x}\n", ""},
		{"aggregate node selector longest key", "HostAggregate", "  nodeSelector: {'" + strings.Repeat("p", 253) + "/" + strings.Repeat("n", 63) + "': x}\n", ""},
		{"aggregate node selector prefix 254", "HostAggregate", "  nodeSelector: {'" + strings.Repeat("p", 254) + "/n': x}\n", "nodeSelector keys must be label keys"},
		{"aggregate node selector bad key", "HostAggregate", "  nodeSelector: {'-disk': ssd}\n", "nodeSelector keys must be label keys"},
		{"vm node selector bad value", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  nodeSelector: {disk: 'fast ssd'}\n", "spec.nodeSelector[disk]: Invalid value: \"fast ssd\": must be a label value"},
		{"vm node selector long value", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  nodeSelector: {disk: " + strings.Repeat("s", 64) + "}\n", "spec.nodeSelector.disk: Too long: may not be more than 63"},
		{"vm node selector value 63", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  nodeSelector: {disk: " + strings.Repeat("s", 63) + ", zone: eu-1.a_b}\n", ""},
		{"aggregate node selector bad value", "HostAggregate", "  nodeSelector: {disk: 'ssd/nvme'}\n", "spec.nodeSelector[disk]: Invalid value: \"ssd/nvme\": must be a label value"},
		{"aggregate node selector value ends with dash", "HostAggregate", "  nodeSelector: {disk: ssd-}\n", "must be a label value"},
		// Durations: parsed as Go parses them, within bounds, one message for one mistake.
		{"resyncPeriod ok", "Network", "  resyncPeriod: 10m\n", ""},
		{"resyncPeriod compound", "Network", "  resyncPeriod: 1h30m\n", ""},
		{"resyncPeriod off", "Network", "  resyncPeriod: '0'\n", ""},
		{"resyncPeriod zero seconds", "Network", "  resyncPeriod: 0s\n", ""},
		{"resyncPeriod not a duration", "Network", "  resyncPeriod: every hour\n", "spec.resyncPeriod: Invalid value: \"every hour\": must be a duration such as 30s, 10m or 1h30m"},
		{"resyncPeriod bare number", "Network", "  resyncPeriod: '600'\n", "must be a duration such as 30s"},
		{"resyncPeriod days", "Network", "  resyncPeriod: 1d\n", "must be a duration such as 30s"},
		{"resyncPeriod negative", "Network", "  resyncPeriod: -5m\n", "must be a duration such as 30s"},
		{"resyncPeriod overflow", "Network", "  resyncPeriod: 99999999999999999999h\n", "must be a duration such as 30s"},
		{"resyncPeriod hot loop", "Network", "  resyncPeriod: 100ms\n", "resyncPeriod must be 0 (off) or between 1s and 720h"},
		// Parts that each parse but add up past what Go's int64 nanoseconds hold: CEL's
		// duration() failed on it with its own text where the rule's message belongs.
		{"resyncPeriod sum overflows", "Network", "  resyncPeriod: 999999h999999h999999h\n", "spec.resyncPeriod: Invalid value: \"999999h999999h999999h\": must be a duration such as 30s"},
		{"resyncPeriod largest parts", "Network", "  resyncPeriod: 99999h99999h99999h99999h\n", "resyncPeriod must be 0 (off) or between 1s and 720h"},
		{"resyncPeriod too long", "Network", "  resyncPeriod: 8760h\n", "resyncPeriod must be 0 (off) or between 1s and 720h"},
		{"resyncPeriod on a VM", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  resyncPeriod: tomorrow\n", "must be a duration such as 30s"},
		{"resyncPeriod on a Flavor", "Flavor", "  vcpus: 1\n  ramMiB: 512\n  resyncPeriod: 1x\n", "must be a duration such as 30s"},
		// Subnet.
		{"subnet minimal", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n", ""},
		{"subnet without network", "Subnet", "  cidr: 10.0.0.0/24\n", "spec.networkRef: Required value: networkRef is required unless the subnet is imported"},
		{"subnet imported", "Subnet", "  managementPolicy: unmanaged\n  import: {name: x}\n", ""},
		{"bad cidr", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/33\n", "cidr must be an IPv4 or IPv6 CIDR"},
		{"not a cidr", "Subnet", "  networkRef: net\n  cidr: ten-dot-zero\n", "cidr must be an IPv4 or IPv6 CIDR"},
		{"ipVersion mismatch", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  ipVersion: 6\n", "ipVersion does not match the cidr"},
		{"ipVersion unknown", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  ipVersion: 5\n", "spec.ipVersion"},
		{"ipv6 subnet", "Subnet", "  networkRef: net\n  cidr: fd00::/64\n  ipVersion: 6\n", ""},
		{"gateway outside", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  gatewayIP: 10.0.1.1\n", "gatewayIP must be inside the cidr"},
		{"gateway not an IP", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  gatewayIP: router\n", "gatewayIP must be an IP address"},
		{"gateway and disableGateway", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  gatewayIP: 10.0.0.1\n  disableGateway: true\n", "gatewayIP and disableGateway are mutually exclusive"},
		{"bad dns", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  dnsNameservers: [dns.example]\n", "dnsNameservers must be IP addresses"},
		{"dns duplicate", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  dnsNameservers: [10.0.0.2, 8.8.8.8, 10.0.0.2]\n", "spec.dnsNameservers: Invalid value: dnsNameservers must not list an address twice"},
		{"dns duplicate ipv6 spelling", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  dnsNameservers: ['fd00::1', 'FD00:0::1']\n", "dnsNameservers must not list an address twice"},
		{"dns two", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  dnsNameservers: [10.0.0.2, 'fd00::2']\n", ""},
		{"dns bad and repeated", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  dnsNameservers: [x, x]\n", "dnsNameservers must be IP addresses"},
		{"pool outside", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  allocationPools: [{start: 10.0.0.10, end: 10.0.2.1}]\n", "allocation pools must be inside the cidr"},
		{"pool mixed versions", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  allocationPools: [{start: 10.0.0.10, end: 'fd00::1'}]\n", "start and end must be of the same IP version"},
		{"pool ok", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  allocationPools: [{start: 10.0.0.10, end: 10.0.0.20}]\n", ""},
		{"pools ok", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  gatewayIP: 10.0.0.1\n  allocationPools: [{start: 10.0.0.2, end: 10.0.0.99}, {start: 10.0.0.100, end: 10.0.0.254}]\n", ""},
		{"cidr host bits", "Subnet", "  networkRef: net\n  cidr: 10.0.0.7/24\n", "cidr has host bits set: write the network address"},
		{"cidr ipv6 host bits", "Subnet", "  networkRef: net\n  cidr: 'fd00::1/64'\n", "cidr has host bits set: write the network address"},
		{"cidr prefix 0", "Subnet", "  networkRef: net\n  cidr: 0.0.0.0/0\n", "cidr prefix length 0 is not allowed"},
		{"pool reversed", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  allocationPools: [{start: 10.0.0.20, end: 10.0.0.10}]\n", "start must not be after end"},
		{"pools overlap", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  allocationPools: [{start: 10.0.0.10, end: 10.0.0.20}, {start: 10.0.0.20, end: 10.0.0.30}]\n", "allocation pools must not overlap"},
		{"pools duplicate", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  allocationPools: [{start: 10.0.0.10, end: 10.0.0.20}, {start: 10.0.0.10, end: 10.0.0.20}]\n", "allocation pools must not overlap"},
		{"pool with network address", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  allocationPools: [{start: 10.0.0.0, end: 10.0.0.20}]\n", "an allocation pool cannot start at the cidr's network address"},
		{"pool with broadcast", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  allocationPools: [{start: 10.0.0.200, end: 10.0.0.255}]\n", "an IPv4 allocation pool cannot include the broadcast address"},
		{"pool outside and past broadcast", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  allocationPools: [{start: 10.0.0.200, end: 10.0.3.255}]\n", "allocation pools must be inside the cidr"},
		{"pool in a /30", "Subnet", "  networkRef: net\n  cidr: 10.0.0.4/30\n  gatewayIP: 10.0.0.5\n  allocationPools: [{start: 10.0.0.6, end: 10.0.0.6}]\n", ""},
		{"pool ipv6 network address", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  allocationPools: [{start: 'fd00::', end: 'fd00::20'}]\n", "an allocation pool cannot start at the cidr's network address"},
		{"pool to the last ipv6 address", "Subnet", "  networkRef: net\n  cidr: 'fd00::/120'\n  allocationPools: [{start: 'fd00::2', end: 'fd00::ff'}]\n", ""},
		{"gateway in pool", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n  gatewayIP: 10.0.0.15\n  allocationPools: [{start: 10.0.0.10, end: 10.0.0.20}]\n", "gatewayIP must not be inside an allocation pool"},
		{"gateway ipv6 pool start", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  gatewayIP: 'fd00::2'\n  allocationPools: [{start: 'fd00::2', end: 'fd00::20'}]\n", "gatewayIP must not be inside an allocation pool"},
		{"ipv6 pool reversed", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  allocationPools: [{start: 'fd00::20', end: 'fd00::10'}]\n", "spec.allocationPools[0].start: Invalid value: start must not be after end"},
		{"ipv6 pool reversed across groups", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  allocationPools: [{start: 'fd00::1:0', end: 'fd00::ffff'}]\n", "start must not be after end"},
		{"ipv6 pool reversed, other spelling", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  allocationPools: [{start: 'FD00:0:0:0:0:0:0:20', end: 'fd00::001f'}]\n", "start must not be after end"},
		{"ipv6 pool single address", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  allocationPools: [{start: 'fd00::10', end: 'FD00:0::0010'}]\n", ""},
		{"ipv6 pools overlap", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  allocationPools: [{start: 'fd00::10', end: 'fd00::20'}, {start: 'fd00::20', end: 'fd00::30'}]\n", "spec.allocationPools: Invalid value: allocation pools must not overlap"},
		{"ipv6 pools nested", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  allocationPools: [{start: 'fd00::10', end: 'fd00::90'}, {start: 'fd00:0:0:0::20', end: 'fd00::30'}]\n", "allocation pools must not overlap"},
		{"ipv6 pools duplicate", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  allocationPools: [{start: 'fd00::10', end: 'fd00::20'}, {start: 'fd00::10', end: 'fd00::20'}]\n", "allocation pools must not overlap"},
		{"ipv6 pools adjacent", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  allocationPools: [{start: 'fd00::10', end: 'fd00::1f'}, {start: 'fd00::20', end: 'fd00::30'}]\n", ""},
		{"ipv6 pools ok", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  gatewayIP: 'fd00::1'\n  allocationPools: [{start: 'fd00::2', end: 'fd00::ff'}, {start: 'fd00::100', end: 'fd00::ffff:ffff:ffff:ffff'}]\n", ""},
		{"ipv6 pool outside", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  allocationPools: [{start: 'fd00::10', end: 'fd00:0:0:1::1'}]\n", "allocation pools must be inside the cidr"},
		{"ipv6 pool before the cidr", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  allocationPools: [{start: 'fc00::10', end: 'fd00::1'}]\n", "allocation pools must be inside the cidr"},
		{"ipv6 gateway inside pool", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  gatewayIP: 'fd00::15'\n  allocationPools: [{start: 'fd00::10', end: 'fd00::20'}]\n", "spec.gatewayIP: Invalid value: gatewayIP must not be inside an allocation pool"},
		{"ipv6 gateway inside second pool", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  gatewayIP: 'fd00::1:5'\n  allocationPools: [{start: 'fd00::10', end: 'fd00::20'}, {start: 'fd00::1:0', end: 'fd00::1:ff'}]\n", "gatewayIP must not be inside an allocation pool"},
		{"ipv6 gateway pool end", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  gatewayIP: 'fd00::20'\n  allocationPools: [{start: 'fd00::10', end: 'fd00::20'}]\n", "gatewayIP must not be inside an allocation pool"},
		{"ipv6 gateway before pool", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  gatewayIP: 'fd00::1'\n  allocationPools: [{start: 'fd00::10', end: 'fd00::20'}]\n", ""},
		{"ipv6 gateway after pool", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  gatewayIP: 'fd00::21'\n  allocationPools: [{start: 'fd00::10', end: 'fd00::20'}]\n", ""},
		{"ipv6 dotted quad pool reversed", "Subnet", "  networkRef: net\n  cidr: '64:ff9b::/96'\n  allocationPools: [{start: '64:ff9b::10.0.0.20', end: '64:ff9b::10.0.0.10'}]\n", "start must not be after end"},
		{"ipv6 dotted quad pools overlap", "Subnet", "  networkRef: net\n  cidr: '64:ff9b::/96'\n  allocationPools: [{start: '64:ff9b::10.0.0.10', end: '64:ff9b::a00:14'}, {start: '64:ff9b::10.0.0.20', end: '64:ff9b::10.0.0.30'}]\n", "allocation pools must not overlap"},
		// The most pools admission allows, each spelled long: the rules stay within the API server's run-time cost budget.
		{"ipv6 sixteen pools", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  gatewayIP: 'fd00::1'\n  allocationPools: [" + ipv6Pools(16, false) + "]\n", ""},
		{"ipv6 sixteen pools, last overlapping", "Subnet", "  networkRef: net\n  cidr: 'fd00::/64'\n  allocationPools: [" + ipv6Pools(16, true) + "]\n", "allocation pools must not overlap"},
		{"ipv6 dotted quad pool ok", "Subnet", "  networkRef: net\n  cidr: '64:ff9b::/96'\n  gatewayIP: '64:ff9b::1'\n  allocationPools: [{start: '64:ff9b::10.0.0.10', end: '64:ff9b::10.0.0.20'}]\n", ""},
		// SecurityGroup.
		{"sg rules ok", "SecurityGroup", "  rules:\n  - {direction: ingress, protocol: tcp, portRangeMin: 22, portRangeMax: 22, remoteIPPrefix: 0.0.0.0/0}\n  - {direction: egress, ethertype: IPv6, remoteIPPrefix: '::/0'}\n", ""},
		{"sg bad direction", "SecurityGroup", "  rules: [{direction: inbound}]\n", `Unsupported value: "inbound"`},
		{"sg bad protocol", "SecurityGroup", "  rules: [{direction: ingress, protocol: http}]\n", `Unsupported value: "http"`},
		{"sg ports without protocol", "SecurityGroup", "  rules: [{direction: ingress, portRangeMin: 1, portRangeMax: 2}]\n", "port ranges need a protocol with ports"},
		{"sg ports on gre", "SecurityGroup", "  rules: [{direction: ingress, protocol: gre, portRangeMin: 1, portRangeMax: 2}]\n", "port ranges need a protocol with ports"},
		{"sg icmp type and code", "SecurityGroup", "  rules: [{direction: ingress, protocol: icmp, portRangeMin: 8, portRangeMax: 0}]\n", ""},
		{"sg icmp type only", "SecurityGroup", "  rules: [{direction: ingress, protocol: icmp, portRangeMin: 0}]\n", ""},
		{"sg icmp code without type", "SecurityGroup", "  rules: [{direction: ingress, protocol: icmp, portRangeMax: 0}]\n", "an ICMP code (portRangeMax) needs a type (portRangeMin)"},
		{"sg icmp type too big", "SecurityGroup", "  rules: [{direction: ingress, protocol: icmp, portRangeMin: 256}]\n", "an ICMP type (portRangeMin) and code (portRangeMax) are 0 to 255"},
		{"sg icmpv6 on IPv6", "SecurityGroup", "  rules: [{direction: ingress, ethertype: IPv6, protocol: ipv6-icmp, portRangeMin: 128}]\n", ""},
		{"sg icmpv6 on IPv4", "SecurityGroup", "  rules: [{direction: ingress, protocol: ipv6-icmp}]\n", "protocol ipv6-icmp needs ethertype IPv6"},
		{"sg port 0", "SecurityGroup", "  rules: [{direction: ingress, protocol: udp, portRangeMin: 0, portRangeMax: 53}]\n", "ports are 1 to 65535 (0 is not a port)"},
		{"sg prefix with host bits", "SecurityGroup", "  rules: [{direction: ingress, remoteIPPrefix: 10.1.2.3/8}]\n", ""},
		{"sg half range", "SecurityGroup", "  rules: [{direction: ingress, protocol: tcp, portRangeMin: 1}]\n", "portRangeMin and portRangeMax go together"},
		{"sg reversed range", "SecurityGroup", "  rules: [{direction: ingress, protocol: tcp, portRangeMin: 100, portRangeMax: 10}]\n", "portRangeMin must not exceed portRangeMax"},
		{"sg port out of range", "SecurityGroup", "  rules: [{direction: ingress, protocol: tcp, portRangeMin: 1, portRangeMax: 70000}]\n", "spec.rules[0].portRangeMax"},
		{"sg prefix and group", "SecurityGroup", "  rules: [{direction: ingress, remoteIPPrefix: 10.0.0.0/8, remoteGroupRef: other}]\n", "remoteIPPrefix and remoteGroupRef are mutually exclusive"},
		{"sg prefix family", "SecurityGroup", "  rules: [{direction: ingress, ethertype: IPv6, remoteIPPrefix: 10.0.0.0/8}]\n", "remoteIPPrefix does not match the ethertype"},
		{"sg prefix not cidr", "SecurityGroup", "  rules: [{direction: ingress, remoteIPPrefix: everywhere}]\n", "remoteIPPrefix must be a CIDR"},
		// KeyPair.
		{"keypair ok", "KeyPair", "  publicKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKl1TxPap+mh4hQxL9QXanMWwZu7OnQ05dcpmltQzOt1 a@b\n", ""},
		{"keypair not a key", "KeyPair", "  publicKey: hello-this-is-not-a-key\n", "publicKey must be an OpenSSH public key or a PEM certificate"},
		{"keypair type mismatch", "KeyPair", "  publicKey: ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIKl1TxPap+mh4hQxL9QXanMWwZu7OnQ05dcpmltQzOt1 a@b\n", "publicKey must be an OpenSSH public key or a PEM certificate"},
		{"keypair two lines", "KeyPair", "  publicKey: \"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKl1TxPap+mh4hQxL9QXanMWwZu7OnQ05dcpmltQzOt1 a\\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKl1TxPap+mh4hQxL9QXanMWwZu7OnQ05dcpmltQzOt1 b\"\n", "publicKey must be an OpenSSH public key"},
		{"keypair not base64", "KeyPair", "  publicKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5!!!!\n", "publicKey must be an OpenSSH public key"},
		{"keypair trailing newline", "KeyPair", "  publicKey: \"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKl1TxPap+mh4hQxL9QXanMWwZu7OnQ05dcpmltQzOt1 a@b\\n\"\n", ""},
		{"keypair ecdsa", "KeyPair", "  publicKey: ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEmKSENjQEezOmxkZMy7opKgwFB9nkt5YRrYMjNuG5N87uRgg6CLrbo5wAdT/y6v0mKV0U2w0WZ2YB/++Tpockg= x\n", ""},
		{"keypair without key", "KeyPair", "  type: ssh\n", "publicKey is required unless the key pair is imported"},
		{"keypair bad type", "KeyPair", "  publicKey: ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ x\n  type: pgp\n", `Unsupported value: "pgp"`},
		// Port and FloatingIP.
		{"port ok", "Port", "  networkRef: net\n  fixedIPs: [{subnetRef: s, ipAddress: 10.0.0.5}]\n  securityGroupRefs: [web]\n  allowedAddressPairs: [{ipAddress: 10.0.0.0/24, macAddress: 'fa:16:3e:00:00:01'}]\n", ""},
		{"port without network", "Port", "  fixedIPs: [{subnetRef: s}]\n", "networkRef is required unless the port is imported"},
		{"port bad fixed ip", "Port", "  networkRef: net\n  fixedIPs: [{subnetRef: s, ipAddress: ten}]\n", "ipAddress must be an IP address"},
		{"port bad mac", "Port", "  networkRef: net\n  allowedAddressPairs: [{ipAddress: 10.0.0.1, macAddress: 'zz'}]\n", "spec.allowedAddressPairs[0].macAddress"},
		{"port bad mac message", "Port", "  networkRef: net\n  allowedAddressPairs: [{ipAddress: 10.0.0.1, macAddress: 'fa-16-3e-00-00-01'}]\n", "spec.allowedAddressPairs[0].macAddress: Invalid value: \"fa-16-3e-00-00-01\": macAddress must be a MAC address"},
		{"port mac too long", "Port", "  networkRef: net\n  allowedAddressPairs: [{ipAddress: 10.0.0.1, macAddress: 'fa:16:3e:00:00:01:02'}]\n", "spec.allowedAddressPairs[0].macAddress: Too long: may not be more than 17"},
		{"port mac upper case", "Port", "  networkRef: net\n  allowedAddressPairs: [{ipAddress: 10.0.0.1, macAddress: 'FA:16:3E:00:00:0A'}]\n", ""},
		{"port groups without port security", "Port", "  networkRef: net\n  portSecurityEnabled: false\n  securityGroupRefs: [web]\n", "security groups need port security"},
		{"fip ok", "FloatingIP", "  floatingNetworkRef: public\n  portRef: p\n", ""},
		{"fip without network", "FloatingIP", "  portRef: p\n", "one of floatingNetworkRef or providerNetworkRef is required unless the floating IP is imported"},
		{"fip from a provider network", "FloatingIP", "  providerNetworkRef: public\n", ""},
		{"fip from both networks", "FloatingIP", "  providerNetworkRef: public\n  floatingNetworkRef: public\n", "floatingNetworkRef and providerNetworkRef are mutually exclusive"},
		{"router gateway on a provider network", "Router", "  externalGateway: {providerNetworkRef: public}\n", ""},
		{"router gateway on both", "Router", "  externalGateway: {providerNetworkRef: public, networkRef: public}\n", "exactly one of networkRef or providerNetworkRef is required"},

		// ProviderNetwork and ProviderSubnet.
		{"provider flat ok", "ProviderNetwork", "  networkType: flat\n  physicalNetwork: external\n  external: true\n", ""},
		{"provider vlan ok", "ProviderNetwork", "  networkType: vlan\n  physicalNetwork: datacentre\n  segmentationID: 4094\n  shared: true\n  mtu: 1500\n", ""},
		{"provider vxlan ok", "ProviderNetwork", "  networkType: vxlan\n  segmentationID: 16777215\n", ""},
		{"provider without type", "ProviderNetwork", "  external: true\n", "networkType is required unless the network is imported"},
		{"provider flat without physical", "ProviderNetwork", "  networkType: flat\n", "flat and vlan networks need a physicalNetwork"},
		{"provider vxlan with physical", "ProviderNetwork", "  networkType: vxlan\n  physicalNetwork: x\n", "physicalNetwork applies to flat and vlan networks only"},
		{"provider flat with segment", "ProviderNetwork", "  networkType: flat\n  physicalNetwork: x\n  segmentationID: 5\n", "segmentationID applies to vlan, vxlan, geneve and gre networks only"},
		{"provider vlan 4095", "ProviderNetwork", "  networkType: vlan\n  physicalNetwork: x\n  segmentationID: 4095\n", "a VLAN ID is 1 to 4094"},
		{"provider bad type", "ProviderNetwork", "  networkType: ovn\n", "spec.networkType"},
		{"provider imported", "ProviderNetwork", "  managementPolicy: unmanaged\n  import: {name: public}\n", ""},
		{"provider subnet ok", "ProviderSubnet", "  providerNetworkRef: public\n  cidr: 198.51.100.0/24\n  gatewayIP: 198.51.100.1\n  enableDHCP: false\n  allocationPools: [{start: 198.51.100.10, end: 198.51.100.250}]\n", ""},
		{"provider subnet without network", "ProviderSubnet", "  cidr: 198.51.100.0/24\n", "providerNetworkRef is required unless the subnet is imported"},
		{"provider subnet without cidr", "ProviderSubnet", "  providerNetworkRef: public\n", "cidr is required unless the subnet is imported"},
		{"provider subnet gateway outside", "ProviderSubnet", "  providerNetworkRef: public\n  cidr: 198.51.100.0/24\n  gatewayIP: 203.0.113.1\n", "gatewayIP must be inside the cidr"},
		{"fip fixed ip without port", "FloatingIP", "  floatingNetworkRef: public\n  fixedIPAddress: 10.0.0.5\n", "fixedIPAddress needs portRef"},
		{"fip bad address", "FloatingIP", "  floatingNetworkRef: public\n  floatingIPAddress: somewhere\n", "floatingIPAddress must be an IP address"},
		// Flavor.
		{"flavor ok", "Flavor", "  vcpus: 2\n  ramMiB: 512\n  diskGiB: 10\n  extraSpecs: {'hw:cpu_policy': dedicated}\n", ""},
		{"flavor without sizes", "Flavor", "  diskGiB: 10\n", "spec.vcpus: Required value: vcpus is required unless the flavor is imported"},
		{"flavor zero vcpus", "Flavor", "  vcpus: 0\n  ramMiB: 512\n", "spec.vcpus"},
		{"flavor reserved extra spec", "Flavor", "  vcpus: 1\n  ramMiB: 512\n  extraSpecs: {'kupenstack:owner-uid': x}\n", "extra specs starting with kupenstack: are reserved"},
		{"flavor extra spec empty key", "Flavor", "  vcpus: 1\n  ramMiB: 512\n  extraSpecs: {'': x}\n", "spec.extraSpecs: Invalid value: extra spec keys are 1 to 255 letters, digits, spaces, '-', '_', ':' or '.'"},
		{"flavor extra spec key with slash", "Flavor", "  vcpus: 1\n  ramMiB: 512\n  extraSpecs: {'hw/cpu': x}\n", "extra spec keys are 1 to 255 letters"},
		{"flavor extra spec long key", "Flavor", "  vcpus: 1\n  ramMiB: 512\n  extraSpecs: {" + strings.Repeat("k", 256) + ": x}\n", "extra spec keys are 1 to 255 letters"},
		{"flavor extra spec long value", "Flavor", "  vcpus: 1\n  ramMiB: 512\n  extraSpecs: {'hw:x': " + strings.Repeat("v", 256) + "}\n", "spec.extraSpecs: Invalid value: extra spec values are at most 255 characters"},
		{"flavor extra spec at the limits", "Flavor", "  vcpus: 1\n  ramMiB: 512\n  extraSpecs: {'" + strings.Repeat("k", 250) + ":a b': " + strings.Repeat("v", 255) + "}\n", ""},
		{"flavor vcpus max", "Flavor", "  vcpus: 4096\n  ramMiB: 2147483647\n  diskGiB: 2147483647\n", ""},
		{"flavor vcpus too many", "Flavor", "  vcpus: 4097\n  ramMiB: 512\n", "spec.vcpus: Invalid value: 4097: spec.vcpus in body should be less than or equal to 4096"},
		{"flavor ram too big", "Flavor", "  vcpus: 1\n  ramMiB: 2147483648\n", "spec.ramMiB: Invalid value: 2147483648: spec.ramMiB in body should be less than or equal to 2147483647"},
		{"flavor disk too big", "Flavor", "  vcpus: 1\n  ramMiB: 512\n  diskGiB: 2147483648\n", "spec.diskGiB: Invalid value: 2147483648: spec.diskGiB in body should be less than or equal to 2147483647"},
		// Router.
		{"router ok", "Router", "  externalGateway: {networkRef: public}\n  interfaces: [{subnetRef: a}, {subnetRef: b}]\n", ""},
		{"router duplicate interface", "Router", "  interfaces: [{subnetRef: a}, {subnetRef: a}]\n", "Duplicate value"},
		{"router gateway without network", "Router", "  externalGateway: {}\n", "spec.externalGateway: Invalid value: exactly one of networkRef or providerNetworkRef is required"},
		// Image.
		{"image ok", "Image", "  source: {url: 'https://images.example/jammy.img', sha256: " + strings.Repeat("aB", 32) + "}\n  diskFormat: raw\n  visibility: community\n  properties: {hw_disk_bus: scsi, os_distro: ubuntu}\n", ""},
		{"image without source", "Image", "  diskFormat: raw\n", "source is required unless the image is imported"},
		{"image imported", "Image", "  managementPolicy: unmanaged\n  import: {name: aio-tiny}\n", ""},
		{"image unmanaged without import", "Image", "  managementPolicy: unmanaged\n  source: {url: 'http://h/a'}\n", "an unmanaged Image must import an existing image"},
		{"image ftp url", "Image", "  source: {url: 'ftp://images.example/a.img'}\n", "url must be an http or https URL"},
		{"image url metadata", "Image", "  source: {url: 'http://169.254.169.254/latest/meta-data/'}\n", "a link-local address such as the cloud's metadata service"},
		{"image url mapped metadata", "Image", "  source: {url: 'http://[::ffff:169.254.169.254]/'}\n", "a link-local address such as the cloud's metadata service"},
		{"image url ipv6 link-local", "Image", "  source: {url: 'http://[fe80::1]:8080/a'}\n", "a link-local address such as the cloud's metadata service"},
		{"image url localhost-like name", "Image", "  source: {url: 'https://localhost.example.com/a.img'}\n", ""},
		{"image url 127 in path", "Image", "  source: {url: 'https://images.example/127.0.0.1/a.img'}\n", ""},
		{"image url public ip", "Image", "  source: {url: 'http://203.0.113.9/a.img'}\n", ""},
		// Loopback is refused at download time unless the admin allows it (a local mirror; the
		// end-to-end tests serve their images on 127.0.0.1): admission cannot know the policy.
		{"image url loopback", "Image", "  source: {url: 'http://127.0.0.1:8081/a.img'}\n", ""},
		{"image url not a url", "Image", "  source: {url: 'images.example/a.img'}\n", "url must be an http or https URL"},
		{"image bad sha256", "Image", "  source: {url: 'http://h/a.img', sha256: abc}\n", "spec.source.sha256"},
		{"image sha256 message", "Image", "  source: {url: 'http://h/a.img', sha256: " + strings.Repeat("g", 64) + "}\n", "spec.source.sha256: Invalid value: \"" + strings.Repeat("g", 64) + "\": sha256 must be 64 hexadecimal digits"},
		{"image sha256 too long", "Image", "  source: {url: 'http://h/a.img', sha256: " + strings.Repeat("a", 65) + "}\n", "spec.source.sha256: Too long: may not be more than 64"},
		{"image empty property name", "Image", "  source: {url: 'http://h/a.img'}\n  properties: {'': x}\n", "spec.properties: Invalid value: property names are 1 to 255 characters"},
		{"image long property name", "Image", "  source: {url: 'http://h/a.img'}\n  properties: {" + strings.Repeat("p", 256) + ": x}\n", "property names are 1 to 255 characters"},
		{"image public", "Image", "  source: {url: 'http://h/a.img'}\n  visibility: public\n", `Unsupported value: "public"`},
		{"image bad disk format", "Image", "  source: {url: 'http://h/a.img'}\n  diskFormat: zip\n", `Unsupported value: "zip"`},
		{"image reserved property", "Image", "  source: {url: 'http://h/a.img'}\n  properties: {visibility: public}\n", "properties must not set Glance's own image attributes"},
		{"image os_glance property", "Image", "  source: {url: 'http://h/a.img'}\n  properties: {os_glance_import_task: x}\n", "properties must not set Glance's own image attributes"},
		// PublicImage: an Image's fields but visibility (always public); the same rules.
		{"public image ok", "PublicImage", "  source: {url: 'https://images.example/jammy.img', sha256: " + strings.Repeat("aB", 32) + "}\n  diskFormat: raw\n  minDiskGiB: 1\n  properties: {os_distro: ubuntu}\n  tags: [base]\n", ""},
		{"public image without source", "PublicImage", "  diskFormat: raw\n", "source is required unless the image is imported"},
		{"public image imported", "PublicImage", "  managementPolicy: unmanaged\n  import: {name: cirros}\n", ""},
		{"public image unmanaged without import", "PublicImage", "  managementPolicy: unmanaged\n  source: {url: 'http://h/a'}\n", "an unmanaged PublicImage must import an existing image"},
		{"public image url metadata", "PublicImage", "  source: {url: 'http://169.254.169.254/latest/meta-data/'}\n", "a link-local address such as the cloud's metadata service"},
		{"public image reserved property", "PublicImage", "  source: {url: 'http://h/a.img'}\n  properties: {visibility: private}\n", "properties must not set Glance's own image attributes"},
		// The boot source of a VM: exactly one of an Image, a PublicImage or a Volume.
		{"vm public image", "VirtualMachine", "  flavorRef: f\n  publicImageRef: cirros-0.6\n", ""},
		{"vm image and public image", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  publicImageRef: p\n", "exactly one of imageRef, publicImageRef or bootVolumeRef is required"},
		{"vm public image and boot volume", "VirtualMachine", "  flavorRef: f\n  publicImageRef: p\n  bootVolumeRef: v\n", "exactly one of imageRef, publicImageRef or bootVolumeRef is required"},
		{"vm all three boot sources", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  publicImageRef: p\n  bootVolumeRef: v\n", "exactly one of imageRef, publicImageRef or bootVolumeRef is required"},
		{"vm imported without boot source", "VirtualMachine", "  import: {name: web}\n", ""},
		{"vm public image ref with slash", "VirtualMachine", "  flavorRef: f\n  publicImageRef: a/b\n", "spec.publicImageRef: Invalid value: \"a/b\": must name a Kubernetes object"},
		{"vmset public image", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, publicImageRef: p}\n", ""},
		{"vmset two images", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i, publicImageRef: p}\n", "exactly one of imageRef, publicImageRef or bootVolumeRef is required"},
		{"volume public image", "Volume", "  sizeGiB: 1\n  publicImageRef: cirros\n", ""},
		{"volume image and public image", "Volume", "  sizeGiB: 1\n  imageRef: i\n  publicImageRef: p\n", "imageRef and publicImageRef are mutually exclusive"},
		{"image long property value", "Image", "  source: {url: 'http://h/a.img'}\n  properties: {a: " + strings.Repeat("v", 256) + "}\n", "property values must be at most 255 characters"},
		// Volume.
		{"volume ok", "Volume", "  sizeGiB: 10\n  volumeType: fast\n  imageRef: jammy\n  availabilityZone: nova\n  metadata: {team: a}\n", ""},
		{"volume without size", "Volume", "  volumeType: fast\n", "sizeGiB is required unless the volume is imported"},
		{"volume imported", "Volume", "  managementPolicy: unmanaged\n  import: {name: data}\n", ""},
		{"volume unmanaged without import", "Volume", "  managementPolicy: unmanaged\n  sizeGiB: 1\n", "an unmanaged Volume must import an existing volume"},
		{"volume zero size", "Volume", "  sizeGiB: 0\n", "spec.sizeGiB"},
		{"volume reserved metadata", "Volume", "  sizeGiB: 1\n  metadata: {kupenstack-owner-uid: x}\n", "metadata keys starting with kupenstack- are reserved"},
		{"volume long metadata value", "Volume", "  sizeGiB: 1\n  metadata: {a: " + strings.Repeat("v", 256) + "}\n", "metadata values must be at most 255 characters"},
		{"volume empty metadata key", "Volume", "  sizeGiB: 1\n  metadata: {'': x}\n", "spec.metadata: Invalid value: metadata keys are 1 to 255 characters"},
		{"volume long metadata key", "Volume", "  sizeGiB: 1\n  metadata: {" + strings.Repeat("k", 256) + ": x}\n", "metadata keys are 1 to 255 characters"},
		{"volume metadata key with slash", "Volume", "  sizeGiB: 1\n  metadata: {'team/a': x}\n", ""},
		{"volume size max", "Volume", "  sizeGiB: 2147483647\n", ""},
		{"volume size too big", "Volume", "  sizeGiB: 2147483648\n", "spec.sizeGiB: Invalid value: 2147483648: spec.sizeGiB in body should be less than or equal to 2147483647"},
		// VirtualMachine.
		{"vm ok", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  keyPairRef: k\n  networks: [{networkRef: net, fixedIP: 10.0.0.5}, {portRef: p}]\n  securityGroupRefs: [web]\n  volumes: [{volumeRef: a}, {volumeRef: b}]\n  userData: {name: s, key: k}\n  metadata: {role: web}\n  tags: [web]\n  serverGroupRef: g\n  hostAggregateRef: ssd\n  powerState: stopped\n  restartPolicy: Always\n", ""},
		{"vm boot from volume", "VirtualMachine", "  flavorRef: f\n  bootVolumeRef: root\n  availabilityZone: nova\n", ""},
		{"vm imported", "VirtualMachine", "  managementPolicy: unmanaged\n  import: {name: legacy}\n", ""},
		{"vm unmanaged without import", "VirtualMachine", "  managementPolicy: unmanaged\n  flavorRef: f\n  imageRef: i\n", "an unmanaged VirtualMachine must import an existing server"},
		{"vm without flavor", "VirtualMachine", "  imageRef: i\n", "flavorRef is required unless the server is imported"},
		{"vm without boot source", "VirtualMachine", "  flavorRef: f\n", "exactly one of imageRef, publicImageRef or bootVolumeRef is required"},
		{"vm with two boot sources", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  bootVolumeRef: v\n", "exactly one of imageRef, publicImageRef or bootVolumeRef is required"},
		{"vm boot volume also attached", "VirtualMachine", "  flavorRef: f\n  bootVolumeRef: v\n  volumes: [{volumeRef: v}]\n", "the boot volume cannot also be in volumes"},
		{"vm zone and aggregate", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n" + "  availabilityZone: nova\n  hostAggregateRef: ssd\n", "availabilityZone, hostAggregateRef and nodeSelector are mutually exclusive"},
		{"vm node selector", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  nodeSelector: {disk: ssd}\n", ""},
		{"vm node selector and aggregate", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  nodeSelector: {disk: ssd}\n  hostAggregateRef: ssd\n", "availabilityZone, hostAggregateRef and nodeSelector are mutually exclusive"},
		{"vm nic with network and port", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n" + "  networks: [{networkRef: net, portRef: p}]\n", "a NIC needs exactly one of networkRef or portRef"},
		{"vm empty nic", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n" + "  networks: [{}]\n", "a NIC needs exactly one of networkRef or portRef"},
		{"vm fixed IP on a port", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n" + "  networks: [{portRef: p, fixedIP: 10.0.0.5}]\n", "fixedIP applies to networkRef only"},
		{"vm bad fixed IP", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n" + "  networks: [{networkRef: net, fixedIP: 10.0.0}]\n", "fixedIP must be an IP address"},
		{"vm reserved tag", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n" + "  tags: [kupenstack-uid-x]\n", "tags starting with kupenstack- are reserved"},
		{"vm tag with comma", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n" + "  tags: ['a,b']\n", "Nova tags cannot contain ',' or '/'"},
		{"vm duplicate volume", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n" + "  volumes: [{volumeRef: a}, {volumeRef: a}]\n", "Duplicate value"},
		{"vm unknown power state", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n" + "  powerState: paused\n", `Unsupported value: "paused"`},
		{"vm unknown restart policy", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n" + "  restartPolicy: Sometimes\n", `Unsupported value: "Sometimes"`},
		{"vm long metadata value", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n" + "  metadata: {a: " + strings.Repeat("v", 256) + "}\n", "spec.metadata: Invalid value: metadata values are at most 255 characters"},
		{"vm empty metadata key", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  metadata: {'': x}\n", "spec.metadata: Invalid value: metadata keys are 1 to 255 letters, digits, spaces, '-', '_', ':' or '.'"},
		{"vm long metadata key", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  metadata: {" + strings.Repeat("k", 256) + ": x}\n", "metadata keys are 1 to 255 letters"},
		{"vm metadata key with slash", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  metadata: {'app/role': x}\n", "metadata keys are 1 to 255 letters"},
		{"vm metadata at the limits", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n  metadata: {'" + strings.Repeat("k", 250) + ":a b': " + strings.Repeat("v", 255) + "}\n", ""},
		{"vm user data without key", "VirtualMachine", "  flavorRef: f\n  imageRef: i\n" + "  userData: {name: s}\n", "spec.userData.key"},
		// ServerGroup.
		{"server group ok", "ServerGroup", "  policy: anti-affinity\n  maxServersPerHost: 2\n", ""},
		{"server group soft", "ServerGroup", "  policy: soft-affinity\n", ""},
		{"server group without policy", "ServerGroup", "  {}\n", "policy is required unless the server group is imported"},
		{"server group unknown policy", "ServerGroup", "  policy: spread\n", `Unsupported value: "spread"`},
		{"server group max with affinity", "ServerGroup", "  policy: affinity\n  maxServersPerHost: 2\n", "maxServersPerHost applies to the anti-affinity policy only"},
		{"server group max 1000", "ServerGroup", "  policy: anti-affinity\n  maxServersPerHost: 1000\n", ""},
		{"server group max too big", "ServerGroup", "  policy: anti-affinity\n  maxServersPerHost: 1001\n", "spec.maxServersPerHost: Invalid value: 1001: spec.maxServersPerHost in body should be less than or equal to 1000"},
		{"server group unmanaged without import", "ServerGroup", "  managementPolicy: unmanaged\n  policy: affinity\n", "an unmanaged ServerGroup must import an existing server group"},
		// HostAggregate.
		{"aggregate ok", "HostAggregate", "  nodeSelector: {disk: ssd}\n  availabilityZone: ssd\n  metadata: {disk: ssd}\n", ""},
		{"aggregate without selector", "HostAggregate", "  availabilityZone: ssd\n", "nodeSelector is required unless the aggregate is imported"},
		{"aggregate empty selector", "HostAggregate", "  nodeSelector: {}\n", "spec.nodeSelector"},
		{"aggregate zone with colon", "HostAggregate", "  nodeSelector: {disk: ssd}\n  availabilityZone: 'a:b'\n", "availabilityZone cannot contain ':'"},
		{"aggregate reserved metadata", "HostAggregate", "  nodeSelector: {disk: ssd}\n  metadata: {availability_zone: x}\n", "metadata keys kupenstack:* and availability_zone are reserved"},
		{"aggregate empty metadata key", "HostAggregate", "  nodeSelector: {disk: ssd}\n  metadata: {'': x}\n", "spec.metadata: Invalid value: metadata keys are 1 to 255 letters, digits, spaces, '-', '_', ':' or '.'"},
		{"aggregate metadata key with slash", "HostAggregate", "  nodeSelector: {disk: ssd}\n  metadata: {'a/b': x}\n", "metadata keys are 1 to 255 letters"},
		{"aggregate long metadata value", "HostAggregate", "  nodeSelector: {disk: ssd}\n  metadata: {disk: " + strings.Repeat("v", 256) + "}\n", "spec.metadata: Invalid value: metadata values are at most 255 characters"},
		{"aggregate metadata ok", "HostAggregate", "  nodeSelector: {disk: ssd}\n  metadata: {'ssd:x y.z-1': 'true'}\n", ""},
		{"aggregate unmanaged without import", "HostAggregate", "  managementPolicy: unmanaged\n  nodeSelector: {disk: ssd}\n", "an unmanaged HostAggregate must import an existing aggregate"},
		// VirtualMachineSet.
		{"vmset ok", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i" + ", networks: [{networkRef: net}]}\n  replicas: 3\n  minReadySeconds: 10\n  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: '25%'}}\n", ""},
		{"vmset recreate", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i" + "}\n  strategy: {type: Recreate}\n", ""},
		{"vmset shared port", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i" + ", networks: [{portRef: p}]}\n", "a set's VMs cannot share a Port: use networkRef"},
		{"vmset shared volume", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i" + ", volumes: [{volumeRef: v}]}\n", "a set's VMs cannot share volumes"},
		{"vmset import", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i" + ", import: {name: x}}\n", "a set's VMs cannot import a server"},
		{"vmset negative replicas", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i" + "}\n  replicas: -1\n", "spec.replicas"},
		{"vmset rollingUpdate with Recreate", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i" + "}\n  strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}\n", "rollingUpdate applies to the RollingUpdate strategy only"},
		{"vmset both bounds 0", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i" + "}\n  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}\n", "maxSurge and maxUnavailable cannot both be 0"},
		{"vmset bad percentage", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i" + "}\n  strategy: {rollingUpdate: {maxSurge: 'ten'}}\n", "maxSurge must be a number from 0 to 1000 or a percentage from 0% to 1000%"},
		{"vmset both bounds 0%", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i" + "}\n  strategy: {rollingUpdate: {maxSurge: '0%', maxUnavailable: 0}}\n", "maxSurge and maxUnavailable cannot both be 0"},
		{"vmset unavailable over 100%", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i" + "}\n  strategy: {rollingUpdate: {maxUnavailable: '150%'}}\n", "maxUnavailable must be a number from 0 to 1000 or a percentage from 0% to 100%"},
		{"vmset huge percentage", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i" + "}\n  strategy: {rollingUpdate: {maxSurge: '99999999999999999999%'}}\n", "maxSurge must be a number from 0 to 1000"},
		{"vmset surge 200%", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i" + "}\n  strategy: {rollingUpdate: {maxSurge: '200%', maxUnavailable: '0%'}}\n", ""},
		{"vmset template without boot source", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f}\n", "exactly one of imageRef, publicImageRef or bootVolumeRef is required"},
		// A set's selector: not empty, its matchLabels among the template's labels, valid labels,
		// and the template hash label is the operator's.
		{"vmset empty selector", "VirtualMachineSet", "  selector: {}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.selector: Invalid value: selector must not be empty"},
		{"vmset empty matchLabels", "VirtualMachineSet", "  selector: {matchLabels: {}}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "selector must not be empty"},
		{"vmset selector subset of labels", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", ""},
		{"vmset selector expressions only", "VirtualMachineSet", "  selector: {matchExpressions: [{key: app, operator: In, values: [web]}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", ""},
		{"vmset selector value differs", "VirtualMachineSet", "  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.selector.matchLabels: Invalid value: selector.matchLabels must all be among the template's labels"},
		{"vmset selector key missing", "VirtualMachineSet", "  selector: {matchLabels: {app: web, role: x}}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "selector.matchLabels must all be among the template's labels"},
		{"vmset selector without template labels", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    spec: {flavorRef: f, imageRef: i}\n", "selector.matchLabels must all be among the template's labels"},
		{"vmset template bad label key", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web, 'my tier': a}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.labels: Invalid value: template label keys must be label keys"},
		{"vmset template bad label value", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web, tier: '-front'}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.labels[tier]: Invalid value: \"-front\": must be a label value"},
		{"vmset bad label in selector and template", "VirtualMachineSet", "  selector: {matchLabels: {app: " + strings.Repeat("w", 64) + "}}\n  template:\n    metadata: {labels: {app: " + strings.Repeat("w", 64) + "}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.labels.app: Too long: may not be more than 63"},
		// matchExpressions: checked as Kubernetes checks a selector, and the template must meet them.
		{"vmset expression In", "VirtualMachineSet", "  selector: {matchExpressions: [{key: app, operator: In, values: [db, web]}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", ""},
		{"vmset expression NotIn", "VirtualMachineSet", "  selector: {matchExpressions: [{key: app, operator: NotIn, values: [db]}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", ""},
		{"vmset expression NotIn absent key", "VirtualMachineSet", "  selector: {matchExpressions: [{key: role, operator: NotIn, values: [db]}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", ""},
		{"vmset expression Exists", "VirtualMachineSet", "  selector: {matchExpressions: [{key: tier, operator: Exists}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", ""},
		{"vmset expression DoesNotExist", "VirtualMachineSet", "  selector: {matchExpressions: [{key: role, operator: DoesNotExist}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", ""},
		{"vmset expression prefixed key", "VirtualMachineSet", "  selector: {matchExpressions: [{key: example.com/tier, operator: DoesNotExist}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", ""},
		{"vmset expression unknown operator", "VirtualMachineSet", "  selector: {matchExpressions: [{key: app, operator: Gt, values: ['1']}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", `spec.selector.matchExpressions[0].operator: Unsupported value: "Gt": supported values: "In", "NotIn", "Exists", "DoesNotExist"`},
		{"vmset expression lower-case operator", "VirtualMachineSet", "  selector: {matchExpressions: [{key: app, operator: in, values: [web]}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", `spec.selector.matchExpressions[0].operator: Unsupported value: "in"`},
		{"vmset expression In without values", "VirtualMachineSet", "  selector: {matchExpressions: [{key: app, operator: In}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.selector.matchExpressions[0].values: Required value: values must not be empty for operator In or NotIn"},
		{"vmset expression NotIn empty values", "VirtualMachineSet", "  selector: {matchExpressions: [{key: app, operator: NotIn, values: []}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.selector.matchExpressions[0].values: Required value: values must not be empty for operator In or NotIn"},
		{"vmset expression Exists with values", "VirtualMachineSet", "  selector: {matchExpressions: [{key: app, operator: Exists, values: [web]}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.selector.matchExpressions[0].values: Forbidden: values must be empty for operator Exists or DoesNotExist"},
		{"vmset expression bad key", "VirtualMachineSet", "  selector: {matchExpressions: [{key: 'my app', operator: Exists}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", `spec.selector.matchExpressions[0].key: Invalid value: "my app": key must be a label key`},
		{"vmset expression key with two slashes", "VirtualMachineSet", "  selector: {matchExpressions: [{key: a/b/c, operator: Exists}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.selector.matchExpressions[0].key: Invalid value: \"a/b/c\": key must be a label key"},
		{"vmset expression key name too long", "VirtualMachineSet", "  selector: {matchExpressions: [{key: 'example.com/" + strings.Repeat("n", 64) + "', operator: Exists}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "key must be a label key"},
		{"vmset expression bad value", "VirtualMachineSet", "  selector: {matchExpressions: [{key: app, operator: NotIn, values: [db, '-x']}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", `spec.selector.matchExpressions[0].values[1]: Invalid value: "-x": must be a label value`},
		{"vmset expression too many", "VirtualMachineSet", "  selector: {matchExpressions: [" + strings.Repeat("{key: role, operator: DoesNotExist}, ", 65) + "{key: app, operator: Exists}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.selector.matchExpressions: Too many: 66: must have at most 64 items"},
		{"vmset template misses In", "VirtualMachineSet", "  selector: {matchExpressions: [{key: app, operator: In, values: [db]}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.selector.matchExpressions: Invalid value: the template's labels (template.metadata.labels) must meet every requirement of selector.matchExpressions"},
		{"vmset template hits NotIn", "VirtualMachineSet", "  selector: {matchExpressions: [{key: app, operator: NotIn, values: [web]}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "must meet every requirement of selector.matchExpressions"},
		{"vmset template misses Exists", "VirtualMachineSet", "  selector: {matchExpressions: [{key: role, operator: Exists}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "must meet every requirement of selector.matchExpressions"},
		{"vmset template hits DoesNotExist", "VirtualMachineSet", "  selector: {matchExpressions: [{key: tier, operator: DoesNotExist}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "must meet every requirement of selector.matchExpressions"},
		{"vmset one expression of two missed", "VirtualMachineSet", "  selector: {matchExpressions: [{key: app, operator: In, values: [web]}, {key: tier, operator: In, values: [back]}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", "must meet every requirement of selector.matchExpressions"},
		{"vmset expressions without template labels", "VirtualMachineSet", "  selector: {matchExpressions: [{key: app, operator: Exists}]}\n  template:\n    spec: {flavorRef: f, imageRef: i}\n", "must meet every requirement of selector.matchExpressions"},
		{"vmset expressions and labels", "VirtualMachineSet", "  selector: {matchLabels: {app: web}, matchExpressions: [{key: tier, operator: In, values: [front]}]}\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec: {flavorRef: f, imageRef: i}\n", ""},
		// Template annotations: keys as the API server checks them on the VMs (the prefix is not
		// case-sensitive there), refused here rather than when a VM is created.
		{"vmset annotations", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {note: 'any value: even spaces', example.com/owner: team-a, Example.COM/Owner: b, a.b_c-d: ''}}\n    spec: {flavorRef: f, imageRef: i}\n", ""},
		{"vmset annotation key with space", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {'my note': x}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.annotations: Invalid value: template annotation keys must be annotation keys"},
		{"vmset annotation key empty prefix", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {'/note': x}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.annotations: Invalid value: template annotation keys must be annotation keys"},
		{"vmset annotation key two slashes", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {'a/b/c': x}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.annotations: Invalid value: template annotation keys must be annotation keys"},
		{"vmset annotation key ends with dash", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {'note-': x}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.annotations: Invalid value: template annotation keys must be annotation keys"},
		{"vmset annotation key underscore in prefix", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {'my_org.io/note': x}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.annotations: Invalid value: template annotation keys must be annotation keys"},
		{"vmset annotation key name 64", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {'example.com/" + strings.Repeat("n", 64) + "': x}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.annotations: Invalid value: template annotation keys must be annotation keys"},
		{"vmset annotation key name 63", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {'example.com/" + strings.Repeat("n", 63) + "': x}}\n    spec: {flavorRef: f, imageRef: i}\n", ""},
		{"vmset annotation key longest", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {'" + strings.Repeat("p", 253) + "/" + strings.Repeat("n", 63) + "': x}}\n    spec: {flavorRef: f, imageRef: i}\n", ""},
		{"vmset annotation key prefix 254", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {'" + strings.Repeat("p", 254) + "/n': x}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.annotations: Invalid value: template annotation keys must be annotation keys"},
		{"vmset too many annotations", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {" + manyKeys(65) + "}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.annotations: Too many: 65: must have at most 64 items"},
		// The total Kubernetes allows on the VMs' annotations (256 KiB of keys and values, in
		// bytes), refused at admission rather than when each VM's create fails.
		{"vmset annotations total 256 KiB", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {a: '" + strings.Repeat("x", 131071) + "', b: '" + strings.Repeat("y", 131071) + "'}}\n    spec: {flavorRef: f, imageRef: i}\n", ""},
		{"vmset annotations total one byte over", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {a: '" + strings.Repeat("x", 131071) + "', bb: '" + strings.Repeat("y", 131071) + "'}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.annotations: Invalid value: template annotations must total at most 256 KiB"},
		// Counted in UTF-8 bytes as Kubernetes counts them: 131,072 characters of two bytes each.
		{"vmset annotation of multibyte characters over", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}, annotations: {a: '" + strings.Repeat("é", 131072) + "'}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.annotations: Invalid value: template annotations must total at most 256 KiB"},
		{"vmset template sets hash label", "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web, kupenstack.io/template-hash: abc}}\n    spec: {flavorRef: f, imageRef: i}\n", "spec.template.metadata.labels: Invalid value: template labels must not set kupenstack.io/template-hash"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := env.Client.Create(env.Ctx, decode(t, tt.kind, tt.spec), client.DryRunAll)
			expectAdmission(t, err, tt.wantErr)
			expectOneMessage(t, err)
		})
	}
}

// TestVirtualMachineFlavorMutable: a VM's flavorRef changes in place (a resize), but a VM that
// does not import its server cannot drop it; the fields that define the server stay immutable.
func TestVirtualMachineFlavorMutable(t *testing.T) {
	ensureNamespace(t)
	const vm = "  flavorRef: f\n  imageRef: i\n"
	for _, tt := range []struct {
		name    string
		path    []string
		value   any // nil removes the field
		wantErr string
	}{
		{"flavor changed", []string{"flavorRef"}, "g", ""},
		{"flavor removed", []string{"flavorRef"}, nil, "flavorRef is required unless the server is imported"},
		{"image still immutable", []string{"imageRef"}, "j", "imageRef is immutable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := updateSpec(t, "VirtualMachine", vm, "flavor-"+strings.ReplaceAll(tt.name, " ", "-"), tt.path, tt.value)
			expectAdmission(t, err, tt.wantErr)
		})
	}
}

// TestImmutableFields: fields that OpenStack cannot change are rejected on update.
func TestImmutableFields(t *testing.T) {
	ensureNamespace(t)
	for _, tt := range []struct {
		name, kind, spec, change, value, wantErr string
	}{
		{"subnet cidr", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n", "cidr", "10.1.0.0/24", "cidr is immutable"},
		{"subnet network", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n", "networkRef", "other", "networkRef is immutable"},
		{"network import", "Network", "  import: {name: a}\n", "import", "", "import is immutable"},
		{"flavor vcpus", "Flavor", "  vcpus: 1\n  ramMiB: 512\n", "vcpus", "", "vcpus is immutable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := decode(t, tt.kind, tt.spec)
			obj.SetName(strings.ReplaceAll(tt.name, " ", "-"))
			if err := env.Client.Create(env.Ctx, obj); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, obj) })
			switch tt.change {
			case "import":
				_ = unstructured.SetNestedField(obj.Object, "b", "spec", "import", "name")
			case "vcpus":
				_ = unstructured.SetNestedField(obj.Object, int64(4), "spec", "vcpus")
			default:
				_ = unstructured.SetNestedField(obj.Object, tt.value, "spec", tt.change)
			}
			err := env.Client.Update(env.Ctx, obj)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("update error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestKeyPairNameWithoutDots(t *testing.T) {
	ensureNamespace(t)
	obj := decode(t, "KeyPair", "  publicKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKl1TxPap+mh4hQxL9QXanMWwZu7OnQ05dcpmltQzOt1 a@b\n")
	obj.SetName("my.key")
	err := env.Client.Create(env.Ctx, obj, client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), "Nova key pair names cannot contain dots") {
		t.Fatalf("error = %v", err)
	}
}

// TestNameLengths: names that the operator prefixes or suffixes leave room for what it adds.
func TestNameLengths(t *testing.T) {
	ensureNamespace(t)
	const key = "  publicKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKl1TxPap+mh4hQxL9QXanMWwZu7OnQ05dcpmltQzOt1 a@b\n"
	const set = "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i}\n"
	long := func(n int) string { return strings.Repeat("a", n-2) + "-b" }
	for _, tt := range []struct {
		name, kind, spec, objName, wantErr string
	}{
		{"keypair 191", "KeyPair", key, long(191), ""},
		{"keypair 192", "KeyPair", key, long(192), "metadata.name of a KeyPair is at most 191 characters: its Nova name is <namespace>_<name>, at most 255"},
		{"keypair 253", "KeyPair", key, long(253), "metadata.name of a KeyPair is at most 191 characters"},
		{"vmset 236", "VirtualMachineSet", set, long(236), ""},
		{"vmset 237", "VirtualMachineSet", set, long(237), "metadata.name of a VirtualMachineSet is at most 236 characters: its VMs are named <name>-<template hash>-<random>, at most 253"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := decode(t, tt.kind, tt.spec)
			obj.SetName(tt.objName)
			err := env.Client.Create(env.Ctx, obj, client.DryRunAll)
			expectAdmission(t, err, tt.wantErr)
			expectOneMessage(t, err)
		})
	}
}

// TestUpdateRules: the update rules of each kind, each rejected with its message
// and accepted when the change is allowed.
func TestUpdateRules(t *testing.T) {
	ensureNamespace(t)
	const img = "  source: {url: 'http://h/a.img'}\n  diskFormat: raw\n"
	const vol = "  sizeGiB: 2\n  volumeType: fast\n  imageRef: jammy\n  availabilityZone: nova\n"
	const vm = "  flavorRef: f\n  imageRef: i\n  networks: [{networkRef: net}]\n  userData: {name: s, key: k}\n"
	const sg = "  policy: anti-affinity\n"
	const set = "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i}\n"
	for _, tt := range []struct {
		name, kind, spec string
		path             []string
		value            any // nil removes the field
		wantErr          string
	}{
		{"image source url", "Image", img, []string{"source", "url"}, "http://h/b.img", "source is immutable"},
		{"image source removed", "Image", img, []string{"source"}, nil, "source is immutable"},
		{"image disk format", "Image", img, []string{"diskFormat"}, "qcow2", "diskFormat is immutable"},
		{"image container format", "Image", img, []string{"containerFormat"}, "ovf", "containerFormat is immutable"},
		{"image properties change", "Image", img, []string{"properties"}, map[string]any{"hw_disk_bus": "scsi"}, ""},
		{"image visibility change", "Image", img, []string{"visibility"}, "shared", ""},
		{"volume shrinks", "Volume", vol, []string{"sizeGiB"}, int64(1), "sizeGiB can grow but never shrink"},
		{"volume grows", "Volume", vol, []string{"sizeGiB"}, int64(3), ""},
		{"volume size removed", "Volume", vol, []string{"sizeGiB"}, nil, "sizeGiB cannot be removed"},
		{"volume type", "Volume", vol, []string{"volumeType"}, "slow", "volumeType is immutable"},
		{"volume type removed", "Volume", vol, []string{"volumeType"}, nil, "volumeType is immutable"},
		{"volume image", "Volume", vol, []string{"imageRef"}, "focal", "imageRef is immutable"},
		{"volume image removed", "Volume", vol, []string{"imageRef"}, nil, "imageRef is immutable"},
		{"volume public image added", "Volume", "  sizeGiB: 2\n", []string{"publicImageRef"}, "cirros", "publicImageRef is immutable"},
		{"volume public image", "Volume", "  sizeGiB: 2\n  publicImageRef: cirros\n", []string{"publicImageRef"}, "focal", "publicImageRef is immutable"},
		{"vm public image", "VirtualMachine", "  flavorRef: f\n  publicImageRef: p\n", []string{"publicImageRef"}, "q", "publicImageRef is immutable"},
		{"public image source url", "PublicImage", img, []string{"source", "url"}, "http://h/b.img", "source is immutable"},
		{"public image disk format", "PublicImage", img, []string{"diskFormat"}, "qcow2", "diskFormat is immutable"},
		{"public image properties change", "PublicImage", img, []string{"properties"}, map[string]any{"hw_disk_bus": "scsi"}, ""},
		{"vmset template public image", "VirtualMachineSet", set, []string{"template", "spec", "publicImageRef"}, "p", "exactly one of imageRef, publicImageRef or bootVolumeRef"},
		{"volume zone", "Volume", vol, []string{"availabilityZone"}, "az2", "availabilityZone is immutable"},
		{"volume zone removed", "Volume", vol, []string{"availabilityZone"}, nil, "availabilityZone is immutable"},
		{"volume description and metadata", "Volume", vol, []string{"metadata"}, map[string]any{"team": "b"}, ""},
		{"vm flavor resized", "VirtualMachine", vm, []string{"flavorRef"}, "g", ""},
		{"vm flavor removed", "VirtualMachine", vm, []string{"flavorRef"}, nil, "flavorRef is required unless the server is imported"},
		{"vm image", "VirtualMachine", vm, []string{"imageRef"}, "j", "imageRef is immutable"},
		{"vm networks", "VirtualMachine", vm, []string{"networks"}, []any{map[string]any{"networkRef": "m"}}, "networks are immutable"},
		{"vm user data", "VirtualMachine", vm, []string{"userData", "key"}, "other", "userData is immutable"},
		{"vm zone added", "VirtualMachine", vm, []string{"availabilityZone"}, "nova", "availabilityZone is immutable"},
		{"vm node selector added", "VirtualMachine", vm, []string{"nodeSelector"}, map[string]any{"disk": "ssd"}, "nodeSelector is immutable"},
		{"vm power state", "VirtualMachine", vm, []string{"powerState"}, "stopped", ""},
		{"vm volumes", "VirtualMachine", vm, []string{"volumes"}, []any{map[string]any{"volumeRef": "data"}}, ""},
		{"vm security groups", "VirtualMachine", vm, []string{"securityGroupRefs"}, []any{"web"}, ""},
		{"vm name and metadata", "VirtualMachine", vm, []string{"metadata"}, map[string]any{"role": "db"}, ""},
		{"server group policy", "ServerGroup", sg, []string{"policy"}, "affinity", "policy is immutable"},
		{"server group rule added", "ServerGroup", sg, []string{"maxServersPerHost"}, int64(3), "a server group cannot change"},
		{"network import added", "Network", "  description: a\n", []string{"import"}, map[string]any{"name": "public"}, "import is immutable"},
		{"network import removed", "Network", "  import: {name: public}\n", []string{"import"}, nil, "import is immutable"},
		{"subnet ip version added", "Subnet", "  networkRef: net\n  cidr: 10.0.0.0/24\n", []string{"ipVersion"}, int64(4), "ipVersion is immutable"},
		{"flavor swap added", "Flavor", "  vcpus: 1\n  ramMiB: 512\n", []string{"swapMiB"}, int64(512), "flavor sizes are immutable"},
		{"flavor name removed", "Flavor", "  vcpus: 1\n  ramMiB: 512\n  name: small\n", []string{"name"}, nil, "name is immutable"},
		{"fip address added", "FloatingIP", "  floatingNetworkRef: public\n", []string{"floatingIPAddress"}, "203.0.113.5", "floatingIPAddress is immutable"},
		{"flavor description", "Flavor", "  vcpus: 1\n  ramMiB: 512\n", []string{"description"}, "d", ""},
		{"vmset template image", "VirtualMachineSet", set, []string{"template", "spec", "imageRef"}, "j", ""},
		{"vmset template flavor", "VirtualMachineSet", set, []string{"template", "spec", "flavorRef"}, "g", ""},
		{"vmset selector", "VirtualMachineSet", set, []string{"selector", "matchLabels"}, map[string]any{"app": "db"}, "selector is immutable"},
		{"aggregate selector", "HostAggregate", "  nodeSelector: {disk: ssd}\n", []string{"nodeSelector"}, map[string]any{"disk": "nvme"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := updateSpec(t, tt.kind, tt.spec, strings.ReplaceAll(tt.name, " ", "-"), tt.path, tt.value)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("rejected an allowed change: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("update error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// updateSpec creates an object of kind with spec called name (deleted after the test), then
// sets spec.<path> to value (removes it when value is nil) and returns the update's error.
func updateSpec(t *testing.T, kind, spec, name string, path []string, value any) error {
	t.Helper()
	obj := decode(t, kind, spec)
	obj.SetName(name)
	if err := env.Client.Create(env.Ctx, obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(env.Ctx, obj) })
	path = append([]string{"spec"}, path...)
	if value == nil {
		unstructured.RemoveNestedField(obj.Object, path...)
	} else if err := unstructured.SetNestedField(obj.Object, value, path...); err != nil {
		t.Fatal(err)
	}
	return env.Client.Update(env.Ctx, obj)
}

// ipv6Pools is n adjacent IPv6 allocation pools, written uncompressed; with overlap the last one
// starts inside the one before it.
func ipv6Pools(n int, overlap bool) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		start := fmt.Sprintf("fd00:0000:0000:0000:0000:0000:%04x:0000", i)
		if overlap && i == n {
			start = fmt.Sprintf("fd00:0000:0000:0000:0000:0000:%04x:ffff", i-1)
		}
		if i > 1 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "{start: '%s', end: 'fd00:0000:0000:0000:0000:0000:%04x:ffff'}", start, i)
	}
	return b.String()
}

// manyKeys is n YAML flow-map entries k0: v, k1: v, ...
func manyKeys(n int) string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d: v", i)
	}
	return strings.Join(keys, ", ")
}

// TestTemplateKeysAsKubernetes: a set's template labels and annotations are refused exactly when
// the API server would refuse them on the VMs' own metadata (checked here on a ConfigMap's), so
// a set cannot be accepted and then fail to create its VMs.
func TestTemplateKeysAsKubernetes(t *testing.T) {
	ensureNamespace(t)
	for _, key := range []string{"a", "A", "a.b_c-d", "-a", "a-", "_a", "a b", "a/b/c", "/a", "a/", "example.com/x",
		"Example.COM/x", "EXAMPLE.com/X", "ex_ample.com/x", "-example.com/x", "example-.com/x", "example..com/x", ".example.com/x",
		"example.com./x", "1.2.3.4/x", "ex:ample/x", "exämple.com/x", "x/é", strings.Repeat("n", 63), strings.Repeat("n", 64),
		strings.Repeat("p", 253) + "/" + strings.Repeat("n", 63), strings.Repeat("p", 254) + "/n",
		strings.Repeat("p.", 126) + "p/n", "p/" + strings.Repeat("n", 64)} {
		for _, field := range []string{"labels", "annotations"} {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keys", Namespace: ns}}
			if field == "labels" {
				cm.Labels = map[string]string{key: "v"}
			} else {
				cm.Annotations = map[string]string{key: "v"}
			}
			kubeErr := env.Client.Create(env.Ctx, cm, client.DryRunAll)
			set := decode(t, "VirtualMachineSet", "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i}\n")
			if err := unstructured.SetNestedField(set.Object, "v", "spec", "template", "metadata", field, key); err != nil {
				t.Fatal(err)
			}
			setErr := env.Client.Create(env.Ctx, set, client.DryRunAll)
			if (kubeErr == nil) != (setErr == nil) {
				t.Errorf("template %s key %q: the API server says %v on a ConfigMap, the set's admission %v", field, key, kubeErr, setErr)
			}
		}
	}
}
