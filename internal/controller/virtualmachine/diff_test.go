package virtualmachine

import (
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// diffFixture is a VM in sync with its server, the Flavor and SecurityGroup objects it names (in
// a fake cache) and the IDs its references resolve to.
type diffFixture struct {
	vm  *kupenstackv1.VirtualMachine
	srv *servers.Server
	ids map[string]string
}

func newDiffFixture() diffFixture {
	vm := &kupenstackv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1", Generation: 2},
		Spec: kupenstackv1.VirtualMachineSpec{
			FlavorRef: "small", ImageRef: "img",
			Networks:          []kupenstackv1.VirtualMachineNIC{{NetworkRef: "net"}},
			SecurityGroupRefs: []string{"web", "ssh"},
			Metadata:          map[string]string{"role": "web"},
			Tags:              []kupenstackv1.NovaTag{"blue", "prod"},
			Volumes:           []kupenstackv1.VirtualMachineVolume{{VolumeRef: "data"}, {VolumeRef: "logs"}},
		},
		Status: kupenstackv1.VirtualMachineStatus{AppliedPowerState: kupenstackv1.PowerStateRunning,
			Resource: &kupenstackv1.VirtualMachineResourceStatus{Status: "ACTIVE"}}}
	tags := []string{"prod", generic.OwnerTag(vm), "blue"}
	srv := &servers.Server{ID: "srv-1", Name: "web", Status: "ACTIVE",
		Flavor:          map[string]any{"original_name": "m1.small"},
		Metadata:        map[string]string{"role": "web"},
		Tags:            &tags,
		SecurityGroups:  []map[string]any{{"name": "ssh"}, {"name": "web-sg"}},
		AttachedVolumes: []servers.AttachedVolume{{ID: "vol-logs"}, {ID: "vol-data"}},
	}
	return diffFixture{vm: vm, srv: srv, ids: map[string]string{
		"Flavor/small": "fl-small", "Flavor/large": "fl-large", "SecurityGroup/web": "sg-web", "SecurityGroup/ssh": "sg-ssh",
		"Volume/data": "vol-data", "Volume/logs": "vol-logs", "Volume/boot": "vol-boot", "Volume/extra": "vol-extra",
	}}
}

// testActuator reads the Flavor and SecurityGroup objects the fixture's VM names from a fake cache.
func testActuator(t *testing.T) actuator {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := kupenstackv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	objs := []*kupenstackv1.Flavor{
		{ObjectMeta: metav1.ObjectMeta{Name: "small"}, Status: kupenstackv1.FlavorStatus{Resource: &kupenstackv1.FlavorResourceStatus{Name: "m1.small"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "large"}, Spec: kupenstackv1.FlavorSpec{Name: "m1.large"}},
	}
	sgs := []*kupenstackv1.SecurityGroup{
		// The Neutron name as observed, and one only the spec names (not observed yet).
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}, Status: kupenstackv1.SecurityGroupStatus{Resource: &kupenstackv1.SecurityGroupResourceStatus{Name: "web-sg"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ssh"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"}, Spec: kupenstackv1.SecurityGroupSpec{Name: "db-sg"}},
	}
	b := fake.NewClientBuilder().WithScheme(scheme)
	for _, f := range objs {
		b = b.WithObjects(f)
	}
	for _, sg := range sgs {
		b = b.WithObjects(sg)
	}
	return actuator{kube: b.Build()}
}

func TestDiff(t *testing.T) {
	a := testActuator(t)
	tags := func(srv *servers.Server, tags ...string) { srv.Tags = &tags }
	for _, tc := range []struct {
		name   string
		change func(f *diffFixture)
		want   []string
	}{
		{"unchanged", func(*diffFixture) {}, nil},
		{"tags, groups and volumes in another order", func(f *diffFixture) {
			tags(f.srv, "blue", "prod", generic.OwnerTag(f.vm))
			f.srv.SecurityGroups = []map[string]any{{"name": "web-sg"}, {"name": "ssh"}}
			f.srv.AttachedVolumes = []servers.AttachedVolume{{ID: "vol-data"}, {ID: "vol-logs"}}
		}, nil},

		{"name changed", func(f *diffFixture) { f.srv.Name = "hacked" }, []string{fieldName}},
		{"spec.name set", func(f *diffFixture) { f.vm.Spec.Name = "frontend" }, []string{fieldName}},

		{"metadata key added", func(f *diffFixture) { f.srv.Metadata = map[string]string{"role": "web", "x": "1"} }, []string{fieldMetadata}},
		{"metadata key removed", func(f *diffFixture) { f.srv.Metadata = map[string]string{} }, []string{fieldMetadata}},
		{"metadata value changed", func(f *diffFixture) { f.srv.Metadata = map[string]string{"role": "db"} }, []string{fieldMetadata}},
		{"metadata added where the spec has none", func(f *diffFixture) {
			f.vm.Spec.Metadata = nil
			f.srv.Metadata = map[string]string{"x": "1"}
		}, []string{fieldMetadata}},
		{"no metadata in the spec, none on the server", func(f *diffFixture) {
			f.vm.Spec.Metadata = nil
			f.srv.Metadata = map[string]string{}
		}, nil},

		{"tag added", func(f *diffFixture) { tags(f.srv, "prod", "blue", "red", generic.OwnerTag(f.vm)) }, []string{fieldTags}},
		{"tag removed", func(f *diffFixture) { tags(f.srv, "prod", generic.OwnerTag(f.vm)) }, []string{fieldTags}},
		{"tag changed", func(f *diffFixture) { tags(f.srv, "prod", "green", generic.OwnerTag(f.vm)) }, []string{fieldTags}},
		{"owner tag removed", func(f *diffFixture) { tags(f.srv, "prod", "blue") }, []string{fieldTags}},

		{"security group removed", func(f *diffFixture) { f.srv.SecurityGroups = []map[string]any{{"name": "ssh"}} }, []string{fieldSecurityGroups}},
		{"security group added", func(f *diffFixture) {
			f.srv.SecurityGroups = append(f.srv.SecurityGroups, map[string]any{"name": "default"})
		}, []string{fieldSecurityGroups}},
		{"security group changed", func(f *diffFixture) {
			f.srv.SecurityGroups = []map[string]any{{"name": "ssh"}, {"name": "default"}}
		}, []string{fieldSecurityGroups}},
		{"spec names another group", func(f *diffFixture) { f.vm.Spec.SecurityGroupRefs = []string{"ssh", "db"} }, []string{fieldSecurityGroups}},
		{"spec names a group not in the cache", func(f *diffFixture) { f.vm.Spec.SecurityGroupRefs = []string{"ssh", "gone"} }, []string{fieldSecurityGroups}},
		// Without refs the server keeps the project's default group; a portRef NIC's port has its
		// Port object's groups.
		{"no refs: groups not managed", func(f *diffFixture) {
			f.vm.Spec.SecurityGroupRefs = nil
			f.srv.SecurityGroups = []map[string]any{{"name": "default"}}
		}, nil},
		{"only portRef NICs: groups not managed", func(f *diffFixture) {
			f.vm.Spec.Networks = []kupenstackv1.VirtualMachineNIC{{PortRef: "p"}}
			f.srv.SecurityGroups = []map[string]any{{"name": "default"}}
		}, nil},

		{"volume detached", func(f *diffFixture) { f.srv.AttachedVolumes = f.srv.AttachedVolumes[:1] }, []string{fieldVolumes}},
		{"volume attached", func(f *diffFixture) {
			f.srv.AttachedVolumes = append(f.srv.AttachedVolumes, servers.AttachedVolume{ID: "vol-other"})
		}, []string{fieldVolumes}},
		{"volume swapped", func(f *diffFixture) {
			f.srv.AttachedVolumes = []servers.AttachedVolume{{ID: "vol-data"}, {ID: "vol-other"}}
		}, []string{fieldVolumes}},
		{"Volume re-created with a new ID", func(f *diffFixture) { f.ids["Volume/data"] = "vol-data-2" }, []string{fieldVolumes}},
		{"volume added to the spec", func(f *diffFixture) {
			f.vm.Spec.Volumes = append(f.vm.Spec.Volumes, kupenstackv1.VirtualMachineVolume{VolumeRef: "extra"})
		}, []string{fieldVolumes}},
		{"the boot volume is no attached volume", func(f *diffFixture) {
			f.vm.Spec.ImageRef, f.vm.Spec.BootVolumeRef = "", "boot"
			f.srv.AttachedVolumes = append(f.srv.AttachedVolumes, servers.AttachedVolume{ID: "vol-boot"})
		}, nil},

		{"resized out of band", func(f *diffFixture) { f.srv.Flavor["original_name"] = "m1.large" }, []string{fieldFlavor}},
		{"flavorRef changed", func(f *diffFixture) { f.vm.Spec.FlavorRef = "large" }, []string{fieldFlavor}},
		{"flavorRef names a Flavor not in the cache", func(f *diffFixture) { f.vm.Spec.FlavorRef = "gone" }, []string{fieldFlavor}},
		{"imported without flavorRef: flavor not managed", func(f *diffFixture) {
			f.vm.Spec.FlavorRef = ""
			f.srv.Flavor["original_name"] = "m1.large"
		}, nil},
		{"resize waiting for confirmation", func(f *diffFixture) { f.srv.Status = "VERIFY_RESIZE" }, []string{fieldFlavor}},
		// Nova is busy: only the resize's next step is compared.
		{"resizing", func(f *diffFixture) {
			f.vm.Spec.FlavorRef = "large"
			f.srv.Status, f.srv.TaskState, f.srv.Name = "RESIZE", "resize_migrating", "hacked"
		}, []string{fieldFlavor}},
		{"resize done: its record is cleared", func(f *diffFixture) {
			f.vm.Status.Resize = &kupenstackv1.VirtualMachineResize{FlavorRef: "small", FlavorName: "m1.small",
				Phase: kupenstackv1.ResizePhaseConfirming, Generation: 2}
		}, []string{fieldFlavor}},
		{"this generation's resize failed: reported again", func(f *diffFixture) {
			f.vm.Spec.FlavorRef = "large"
			f.vm.Status.Resize = &kupenstackv1.VirtualMachineResize{FlavorRef: "large", FlavorName: "m1.large",
				FromFlavorName: "m1.small", Phase: kupenstackv1.ResizePhaseFailed, Generation: 2}
		}, []string{fieldFlavor}},

		{"stopped out of band, restartPolicy Always", func(f *diffFixture) {
			f.vm.Spec.RestartPolicy = kupenstackv1.RestartPolicyAlways
			f.srv.Status = "SHUTOFF"
		}, []string{fieldPowerState}},
		{"stopped out of band, restartPolicy OnFailure: left stopped", func(f *diffFixture) { f.srv.Status = "SHUTOFF" }, nil},
		{"started out of band while the spec says stopped", func(f *diffFixture) {
			f.vm.Spec.PowerState = kupenstackv1.PowerStateStopped
			f.vm.Status.AppliedPowerState = kupenstackv1.PowerStateStopped
		}, []string{fieldPowerState}},
		{"powerState changed to running", func(f *diffFixture) {
			f.vm.Status.AppliedPowerState = kupenstackv1.PowerStateStopped
			f.srv.Status = "SHUTOFF"
		}, []string{fieldPowerState}},
		{"powerState changed to what the server is: recorded as applied", func(f *diffFixture) {
			f.vm.Spec.PowerState = kupenstackv1.PowerStateStopped
			f.srv.Status = "SHUTOFF"
		}, []string{fieldPowerState}},

		{"building: nothing compared yet", func(f *diffFixture) {
			f.srv.Status, f.srv.Tags, f.srv.Name = "BUILD", nil, "other"
		}, nil},
		{"several fields", func(f *diffFixture) {
			f.srv.Name = "hacked"
			f.srv.Metadata = nil
			f.srv.SecurityGroups = nil
		}, []string{fieldName, fieldMetadata, fieldSecurityGroups}},

		{"deleted (a changes list)", func(f *diffFixture) { f.srv.Status = "DELETED" }, []string{generic.FieldResource}},
		{"failed since the last observation", func(f *diffFixture) { f.srv.Status = "ERROR" }, []string{generic.FieldResource}},
		{"failed, as observed already", func(f *diffFixture) {
			f.srv.Status = "ERROR"
			f.vm.Status.Resource.Status = "ERROR"
		}, nil},
		{"imported and failed: not replaced", func(f *diffFixture) {
			f.srv.Status = "ERROR"
			f.vm.Spec.Import = &kupenstackv1.ImportSpec{ID: "srv-1"}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newDiffFixture()
			tc.change(&f)
			got := a.Diff(generic.TestScope(f.ids), f.vm, f.srv)
			if !slices.Equal(got.Fields(), tc.want) {
				t.Errorf("Diff = %+v, want the fields %v", got, tc.want)
			}
		})
	}
}
