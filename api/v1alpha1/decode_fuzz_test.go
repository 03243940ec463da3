package v1alpha1_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/yaml"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/scheme"
)

// kupenstackKinds are the kinds of the operator's scheme in the KupenStack group that this
// package defines (lists included, the meta kinds every group gets left out), sorted: a new kind
// is fuzzed as soon as it is registered.
func kupenstackKinds(s *runtime.Scheme) []string {
	pkg := reflect.TypeFor[kupenstackv1.Network]().PkgPath()
	var kinds []string
	for kind, t := range s.KnownTypes(kupenstackv1.GroupVersion) {
		if t.PkgPath() == pkg {
			kinds = append(kinds, kind)
		}
	}
	slices.Sort(kinds)
	return kinds
}

// informerCodec is the decoder the operator's typed clients and informers use (controller-runtime's
// REST client for a structured kind: the scheme's CodecFactory, JSON, without conversion) and the
// JSON serializer that encodes back.
func informerCodec(s *runtime.Scheme) (runtime.Decoder, runtime.Encoder) {
	codecs := serializer.NewCodecFactory(s)
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		panic("no JSON serializer")
	}
	dec := serializer.WithoutConversionCodecFactory{CodecFactory: codecs}.DecoderToVersion(info.Serializer, kupenstackv1.GroupVersion)
	return dec, info.Serializer
}

// sameJSON: a and b are the same JSON document (or both absent / null).
func sameJSON(a, b []byte) bool {
	if len(a) == 0 {
		a = []byte("null")
	}
	if len(b) == 0 {
		b = []byte("null")
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

// roundTripEqual is apimachinery's semantic equality (with the functions the project registers,
// Duration's), with what JSON cannot keep allowed for: metav1.Time is written to the second,
// MicroTime to the microsecond, and embedded JSON (RawExtension, FieldsV1) is written compact.
// Everything else, a Duration's stored invalid value included, must come back exactly.
var roundTripEqual = func() conversion.Equalities {
	e := equality.Semantic.Copy()
	if err := e.AddFuncs(
		func(a, b metav1.Time) bool { return a.Truncate(time.Second).Equal(b.Truncate(time.Second)) },
		func(a, b metav1.MicroTime) bool {
			return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond))
		},
		func(a, b metav1.FieldsV1) bool { return sameJSON(a.Raw, b.Raw) },
		func(a, b runtime.RawExtension) bool { return sameJSON(a.Raw, b.Raw) },
	); err != nil {
		panic(err)
	}
	return e
}()

// useAccessors calls what the operator calls on a decoded object: the engine's ManagedSpec and
// ManagedStatus, every Duration's Err (and its value), the conditions, node roles, label sets,
// and the object's metadata accessors. None of it may panic, whatever was stored.
func useAccessors(t *testing.T, obj runtime.Object) {
	if m, ok := obj.(kupenstackv1.ManagedObject); ok {
		spec := m.GetManagedSpec()
		if err := spec.ResyncPeriod.Err(); err == nil && spec.ResyncPeriod != nil {
			_ = spec.ResyncPeriod.Duration.String()
		}
		st := m.GetManagedStatus()
		_ = meta.FindStatusCondition(st.Conditions, kupenstackv1.ConditionReady)
		_ = meta.IsStatusConditionTrue(st.Conditions, kupenstackv1.ConditionDegraded)
		_ = m.GetName() + m.GetNamespace() + string(m.GetUID())
		_, _ = m.GetLabels(), m.GetOwnerReferences()
		_ = m.GetDeletionTimestamp() != nil && len(m.GetFinalizers()) > 0
	}
	if o, err := meta.Accessor(obj); err == nil {
		_ = o.GetGeneration()
		_ = o.GetResourceVersion()
	}
	walk(t, reflect.ValueOf(obj))
}

var (
	durationType   = reflect.TypeFor[kupenstackv1.Duration]()
	nodeType       = reflect.TypeFor[kupenstackv1.ConfiguredNode]()
	labelMapType   = reflect.TypeFor[map[string]kupenstackv1.LabelValue]()
	conditionsType = reflect.TypeFor[[]metav1.Condition]()
)

// walk visits every value reachable from v and uses the project's types it finds.
func walk(t *testing.T, v reflect.Value) {
	switch v.Type() {
	case durationType:
		d := v.Interface().(kupenstackv1.Duration)
		if err := d.Err(); err != nil {
			if d.Duration != 0 {
				t.Fatalf("an invalid duration has a value: %v", d.Duration)
			}
			_ = err.Error()
		}
		b, err := json.Marshal(d)
		if err != nil || !json.Valid(b) {
			t.Fatalf("duration %+v written as %q: %v", d, b, err)
		}
		_ = d.ToUnstructured()
		return
	case nodeType:
		_ = v.Interface().(kupenstackv1.ConfiguredNode).NodeRoles()
	case labelMapType:
		m := v.Interface().(map[string]kupenstackv1.LabelValue)
		if got := kupenstackv1.LabelSet(m); len(got) != len(m) {
			t.Fatalf("LabelSet(%v) = %v", m, got)
		}
	case conditionsType:
		c := v.Interface().([]metav1.Condition)
		for _, typ := range []string{kupenstackv1.ConditionReady, kupenstackv1.ConditionProgressing, kupenstackv1.ConditionDegraded} {
			_ = meta.FindStatusCondition(c, typ)
		}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(t, v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walk(t, v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walk(t, v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			walk(t, it.Value())
		}
	}
}

// seeds: one valid object of every kind (the samples, and the smallest admitted spec of each kind
// the samples leave out, with a status), then hostile ones: wrong types, huge numbers, bad
// durations, nulls, and objects of one kind fed to another.
func seeds(t testing.TB) [][]byte {
	var out [][]byte
	files, _ := filepath.Glob("../../config/samples/*.yaml")
	more, _ := filepath.Glob("../../config/samples/*/*.yaml")
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for doc := range strings.SplitSeq(string(b), "\n---") {
			j, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if bytes.Contains(j, []byte(`"kupenstack.io/v1alpha1"`)) {
				out = append(out, j)
			}
		}
	}
	const status = `"status":{"id":"3f2a0c4e","observedGeneration":2,"lastSyncTime":"2026-01-02T03:04:05Z",` +
		`"conditions":[{"type":"Ready","status":"True","reason":"Success","message":"","lastTransitionTime":"2026-01-02T03:04:05Z","observedGeneration":2}]}`
	for _, s := range []string{
		`{"kind":"Subnet","metadata":{"name":"s","namespace":"a"},"spec":{"networkRef":"net","cidr":"10.0.0.0/24","gatewayIP":"10.0.0.1","allocationPools":[{"start":"10.0.0.10","end":"10.0.0.20"}],"dnsNameservers":["10.0.0.2"],"resyncPeriod":"1h30m"},` + status + `}`,
		`{"kind":"SecurityGroup","metadata":{"name":"g","namespace":"a"},"spec":{"rules":[{"direction":"ingress","protocol":"tcp","portRangeMin":22,"portRangeMax":22,"remoteIPPrefix":"0.0.0.0/0"},{"direction":"ingress","protocol":"icmp","portRangeMin":8}]}}`,
		`{"kind":"Port","metadata":{"name":"p","namespace":"a"},"spec":{"networkRef":"net","fixedIPs":[{"subnetRef":"s","ipAddress":"10.0.0.5"}],"securityGroupRefs":["web"]}}`,
		`{"kind":"FloatingIP","metadata":{"name":"f","namespace":"a"},"spec":{"floatingNetworkRef":"public","portRef":"p"}}`,
		`{"kind":"Flavor","metadata":{"name":"f"},"spec":{"vcpus":2,"ramMiB":512,"diskGiB":10,"extraSpecs":{"hw:cpu_policy":"dedicated"}}}`,
		`{"kind":"Router","metadata":{"name":"r","namespace":"a"},"spec":{"externalGateway":{"networkRef":"public"},"interfaces":[{"subnetRef":"a"}]}}`,
		`{"kind":"ServerGroup","metadata":{"name":"g","namespace":"a"},"spec":{"policy":"anti-affinity","maxServersPerHost":2}}`,
		`{"kind":"HostAggregate","metadata":{"name":"h"},"spec":{"nodeSelector":{"disk":"ssd"},"availabilityZone":"ssd"}}`,
		`{"kind":"Project","metadata":{"name":"a"},"spec":{"namespace":"a"},"status":{"id":"abc","projectName":"kupenstack-a","createdByKupenstack":true}}`,
		`{"kind":"ProjectQuota","metadata":{"name":"a"},"spec":{"namespace":"a","compute":{"instances":10,"ramMiB":4096},"network":{"floatingIPs":-1},"volume":{},"resyncPeriod":"10m"},"status":{"projectID":"abc","lastSyncTime":"2026-01-02T03:04:05Z","compute":{"instances":{"limit":10,"inUse":2}},"network":{"ports":{"limit":-1,"inUse":0}}}}`,
		`{"kind":"OpenstackNode","metadata":{"name":"node-1"},"spec":{"roles":["control","compute"],"profile":{"name":"p","namespace":"ns1"},"conf":{"nova":{"DEFAULT":{"x":1}}}}}`,
		`{"kind":"OpenstackComponent","metadata":{"name":"nova"},"spec":{"chart":"nova","chartVersion":"2026.1.0","release":"2026.1","namespace":"openstack","dependsOn":["keystone","placement"],"upgradePhase":4,"valuesHash":"0123456789abcdef"}}`,
		`{"kind":"KupenstackConfiguration","metadata":{"name":"kupenstack"},"spec":{"release":"2026.1","charts":{"localPath":"/charts"},"defaultProfile":{"name":"default","namespace":"openstack"},"progressDeadline":"20m","nodes":[{"name":"a","type":"control,compute"},{"name":"b","roles":["compute"]}]}}`,
		// Hostile.
		`{"spec":{"resyncPeriod":"every hour"}}`,
		`{"spec":{"resyncPeriod":42,"progressDeadline":{"a": [1, "<b>"]}}}`,
		`{"spec":{"resyncPeriod":"9999999999999999999h","progressDeadline":"-5m"}}`,
		`{"spec":{"resyncPeriod":null,"progressDeadline":null,"conf":null,"nodes":null},"status":null}`,
		`{"spec":{"resyncPeriod":"\u003c\u2028\u00e9\ud800","progressDeadline":" \"x\" "}}`,
		`{"spec":{"mtu":99999999999999999999,"vcpus":-1,"ramMiB":1e300,"replicas":"2","sizeGiB":1.5}}`,
		`{"spec":{"nodes":[{"name":"a","type":",,control, compute ,"},{"roles":null},{}],"nodeSelector":{"a":""},"tags":[null]}}`,
		`{"metadata":{"name":7,"labels":[]},"spec":[],"status":"x"}`,
		`{"metadata":{"creationTimestamp":"2026-01-02T03:04:05.123456789+01:00","managedFields":[{"fieldsType":"FieldsV1","fieldsV1":{"f:spec": {}}}]},"status":{"lastSyncTime":"not a time","conditions":[{"type":"Ready","lastTransitionTime":"2026-01-02T03:04:05.5Z"}]}}`,
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}`,
		`{"apiVersion":"kupenstack.io/v1alpha1","kind":"NoSuchKind"}`,
		`{"kind":"NetworkList","items":[{"spec":{"resyncPeriod":"soon"}},null,{}]}`,
		`null`, `[]`, `{}`, `"x"`, `{"spec":{"resyncPeriod":"10m"`,
	} {
		out = append(out, []byte(s))
	}
	return out
}

// FuzzDecodeEveryKind: whatever bytes the API server hands the operator, decoding them as any
// KupenStack kind, the way its informers do, never panics, and a decoded object round-trips
// (encode, decode: the same object, then the same bytes), deep-copies to an equal object,
// converts to and from unstructured unchanged, and its accessors (Duration.Err, ManagedSpec,
// ManagedStatus, conditions, node roles) do not panic either.
func FuzzDecodeEveryKind(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	s := scheme.New()
	kinds := kupenstackKinds(s)
	for _, want := range []string{"Network", "VirtualMachineSet", "Project", "KupenstackConfiguration",
		"OpenstackCloudConfigurationProfile", "OpenstackComponent", "OpenstackNode", "ProjectList"} {
		if !slices.Contains(kinds, want) {
			f.Fatalf("kind %s not found in the scheme (found %v)", want, kinds)
		}
	}
	dec, enc := informerCodec(s)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, kind := range kinds {
			gvk := kupenstackv1.GroupVersion.WithKind(kind)
			checkDecode(t, s, dec, enc, gvk, data)
		}
	})
}

func checkDecode(t *testing.T, s *runtime.Scheme, dec runtime.Decoder, enc runtime.Encoder, gvk schema.GroupVersionKind, data []byte) {
	into, err := s.New(gvk)
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := dec.Decode(data, &gvk, into)
	if err != nil {
		return // refused: fine, as long as nothing panicked
	}
	if obj != into {
		// Another kind named in the data: decoded as that kind, which the loop covers too.
		return
	}
	useAccessors(t, obj)

	cp := obj.DeepCopyObject()
	if !reflect.DeepEqual(cp, obj) {
		t.Fatalf("%s: DeepCopy differs:\n%#v\n%#v", gvk.Kind, obj, cp)
	}

	var first bytes.Buffer
	if err := enc.Encode(obj, &first); err != nil {
		t.Fatalf("%s: decoded, but cannot be encoded: %v\ninput %q", gvk.Kind, err, data)
	}
	again, err := s.New(gvk)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dec.Decode(first.Bytes(), &gvk, again); err != nil {
		t.Fatalf("%s: its own encoding %s does not decode: %v\ninput %q", gvk.Kind, first.Bytes(), err, data)
	}
	if !roundTripEqual.DeepEqual(obj, again) {
		t.Fatalf("%s: round trip changed the object\ninput %q\nencoded %s\nbefore %#v\nafter  %#v", gvk.Kind, data, first.Bytes(), obj, again)
	}
	var second bytes.Buffer
	if err := enc.Encode(again, &second); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatalf("%s: encoding is not stable\ninput %q\nfirst  %s\nsecond %s", gvk.Kind, data, first.Bytes(), second.Bytes())
	}

	// The unstructured converter (controller-runtime's unstructured and apply paths) writes
	// what JSON writes, and reads it back to the same object.
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatalf("%s: to unstructured: %v\ninput %q", gvk.Kind, err, data)
	}
	ub, err := json.Marshal(u)
	if err != nil {
		t.Fatalf("%s: unstructured form cannot be written: %v", gvk.Kind, err)
	}
	if !sameJSON(ub, first.Bytes()) {
		t.Fatalf("%s: unstructured form differs from JSON\ninput %q\nunstructured %s\njson         %s", gvk.Kind, data, ub, first.Bytes())
	}
	back, err := s.New(gvk)
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, back); err != nil {
		t.Fatalf("%s: from unstructured: %v\ninput %q", gvk.Kind, err, data)
	}
	if !roundTripEqual.DeepEqual(obj, back) {
		t.Fatalf("%s: unstructured round trip changed the object\ninput %q\nbefore %#v\nafter  %#v", gvk.Kind, data, obj, back)
	}
}
