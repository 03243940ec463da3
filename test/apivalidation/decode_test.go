package apivalidation

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// validSpecs are accepted objects of every kind, the seeds that TestAdmittedObjectsDecode mutates:
// the kinds users write, and the life-cycle kinds the admin or the operator writes (each the
// smallest admitted object of config/samples/lcm and TestLCMCreateValidation, with a value of
// every type where the kind has one: a duration, a list, a map, a number).
var validSpecs = map[string]string{
	"Network":           "  mtu: 1450\n  tags: [a]\n  resyncPeriod: 10m\n",
	"Subnet":            "  networkRef: net\n  cidr: 10.0.0.0/24\n  gatewayIP: 10.0.0.1\n  allocationPools: [{start: 10.0.0.10, end: 10.0.0.20}]\n  dnsNameservers: [10.0.0.2]\n",
	"SecurityGroup":     "  rules:\n  - {direction: ingress, protocol: tcp, portRangeMin: 22, portRangeMax: 22, remoteIPPrefix: 0.0.0.0/0}\n  - {direction: ingress, protocol: icmp, portRangeMin: 8}\n",
	"KeyPair":           "  publicKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKl1TxPap+mh4hQxL9QXanMWwZu7OnQ05dcpmltQzOt1 a@b\n",
	"Port":              "  networkRef: net\n  fixedIPs: [{subnetRef: s, ipAddress: 10.0.0.5}]\n  securityGroupRefs: [web]\n",
	"FloatingIP":        "  floatingNetworkRef: public\n  portRef: p\n",
	"Flavor":            "  vcpus: 2\n  ramMiB: 512\n  diskGiB: 10\n  extraSpecs: {'hw:cpu_policy': dedicated}\n",
	"Router":            "  externalGateway: {networkRef: public}\n  interfaces: [{subnetRef: a}]\n",
	"Image":             "  source: {url: 'https://images.example/a.img', sha256: '" + fmt.Sprintf("%064x", 7) + "'}\n  diskFormat: raw\n  properties: {os_distro: ubuntu}\n",
	"PublicImage":       "  source: {url: 'https://images.example/a.img', sha256: '" + fmt.Sprintf("%064x", 7) + "'}\n  diskFormat: raw\n  minRamMiB: 64\n  properties: {os_distro: ubuntu}\n  tags: [base]\n",
	"Volume":            "  sizeGiB: 10\n  volumeType: fast\n  availabilityZone: nova\n  metadata: {team: a}\n",
	"VirtualMachine":    "  flavorRef: f\n  imageRef: i\n  networks: [{networkRef: net, fixedIP: 10.0.0.5}]\n  nodeSelector: {disk: ssd}\n  userData: {name: s, key: k}\n  powerState: running\n",
	"ServerGroup":       "  policy: anti-affinity\n  maxServersPerHost: 2\n",
	"HostAggregate":     "  nodeSelector: {disk: ssd}\n  availabilityZone: ssd\n",
	"ProviderNetwork":   "  networkType: vlan\n  physicalNetwork: datacentre\n  segmentationID: 100\n  external: true\n  shared: true\n",
	"ProviderSubnet":    "  providerNetworkRef: public\n  cidr: 198.51.100.0/24\n  enableDHCP: false\n",
	"VirtualMachineSet": "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {flavorRef: f, imageRef: i}\n  replicas: 2\n  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: '25%'}}\n",
	"Project":           "  namespace: " + ns + "\n",
	"ProjectQuota":      "  namespace: " + ns + "\n  compute: {instances: 10, ramMiB: 4096}\n  network: {floatingIPs: -1}\n  volume: {gigabytes: 100}\n  resyncPeriod: 10m\n",
	"KupenstackConfiguration": "  release: '2026.1'\n  charts: {localPath: /charts}\n  defaultProfile: {name: default, namespace: openstack}\n" +
		"  progressDeadline: 20m\n  nodes: [{name: node-1, type: 'control,compute'}]\n",
	"OpenstackCloudConfigurationProfile": "  replicas: 1\n  components: {nova: {conf: {nova: {DEFAULT: {cpu_allocation_ratio: 4}}}}}\n",
	"OpenstackComponent":                 "  chart: nova\n  release: '2026.1'\n  namespace: openstack\n  dependsOn: [keystone]\n  upgradePhase: 4\n  valuesHash: 0123456789abcdef\n",
	"OpenstackNode":                      "  roles: [compute]\n",
	"ApplicationCredential":              "  roles: [reader]\n  expiresAfter: 24h\n  rotateEvery: 12h\n  rotation: '1'\n  revokeGracePeriod: 1m\n",
}

// admissionSeed is kind's valid object, named and scoped as admission requires: a Project and a
// ProjectQuota after their namespace, the KupenstackConfiguration kupenstack, an OpenstackComponent
// after its chart; these and the other life-cycle kinds but the profile are cluster-scoped.
func admissionSeed(t *testing.T, kind string) *unstructured.Unstructured {
	t.Helper()
	obj := decode(t, kind, validSpecs[kind])
	switch kind {
	case "Project", "ProjectQuota":
		obj.SetName(ns)
	case "KupenstackConfiguration":
		obj.SetName("kupenstack")
	case "OpenstackComponent":
		obj.SetName("nova")
	case "OpenstackNode":
		obj.SetName("node-1")
	}
	switch kind {
	case "Project", "ProjectQuota", "KupenstackConfiguration", "OpenstackComponent", "OpenstackNode":
		obj.SetNamespace("")
	}
	return obj
}

// oddValues are what a careless or hostile user writes where something else is expected.
var oddValues = []any{
	"", " ", "x", "every hour", "-5m", "1d", "99999999999999999999h", "0", "10.0.0.7/24", "::", "127.0.0.1",
	"http://169.254.169.254/", "25%", "-1%", "99999999999999999999%", "a\nb", "ÄÖÜ", "a,b", "kupenstack-x",
	int64(-1), int64(0), int64(1), int64(65536), int64(1) << 40, int64(9223372036854775807), 1.5, 1e300, true,
	map[string]any{}, map[string]any{"a": "b"}, []any{}, []any{""}, []any{"a", "a"}, nil,
}

// leaves lists the paths of every value in v (maps and lists walked, the root excluded).
func leaves(v any, path []string, out *[][]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := append(append([]string{}, path...), k)
			*out = append(*out, p)
			leaves(e, p, out)
		}
	case []any:
		for i, e := range x {
			p := append(append([]string{}, path...), strconv.Itoa(i))
			*out = append(*out, p)
			leaves(e, p, out)
		}
	}
}

// set replaces the value at path in root.
func set(root any, path []string, val any) {
	for i, k := range path {
		last := i == len(path)-1
		switch x := root.(type) {
		case map[string]any:
			if last {
				x[k] = val
				return
			}
			root = x[k]
		case []any:
			n, _ := strconv.Atoi(k)
			if last {
				x[n] = val
				return
			}
			root = x[n]
		}
	}
}

// TestAdmittedObjectsDecode: whatever the API server admits, the operator decodes. Objects of every
// kind, each with one value replaced by an odd one (a random field, a random value), go through
// admission (dry run); every accepted object must decode into its Go type as the operator's
// informers decode it, so that no accepted object can stop a kind's informer. The seed varies
// per run (APIVALIDATION_SEED repeats one) and is logged.
func TestAdmittedObjectsDecode(t *testing.T) {
	ensureNamespace(t)
	seed := rand.Uint64()
	if s, err := strconv.ParseUint(os.Getenv("APIVALIDATION_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (APIVALIDATION_SEED=%d repeats this run)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	decoder := serializer.NewCodecFactory(env.Client.Scheme()).UniversalDeserializer()
	const perKind = 40
	accepted := 0
	for kind := range validSpecs {
		obj := admissionSeed(t, kind)
		if err := env.Client.Create(env.Ctx, obj, client.DryRunAll); err != nil {
			t.Fatalf("%s: the valid object is refused: %v", kind, err)
		}
		for range perKind {
			obj := admissionSeed(t, kind)
			var paths [][]string
			leaves(obj.Object["spec"], []string{"spec"}, &paths)
			path := paths[rng.IntN(len(paths))]
			val := oddValues[rng.IntN(len(oddValues))]
			if val != nil {
				b, _ := json.Marshal(val) // a fresh copy: maps and lists are shared otherwise
				_ = json.Unmarshal(b, &val)
			}
			set(obj.Object, path, val)
			err := env.Client.Create(env.Ctx, obj, client.DryRunAll)
			if err != nil {
				expectNoInternals(t, err) // any refusal is fine, in the user's terms
				continue
			}
			accepted++
			data, err := json.Marshal(obj.Object)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := decoder.Decode(data, nil, nil); err != nil {
				t.Errorf("%s with %v = %#v: admitted but the operator cannot decode it: %v", kind, path, val, err)
			}
		}
	}
	t.Logf("%d of %d mutated objects admitted, all decoded", accepted, perKind*len(validSpecs))
}
