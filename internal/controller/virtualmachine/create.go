package virtualmachine

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/nova"
)

// maxUserData is Nova's limit for user data: the base64 text it receives is at most 65535
// characters (the server create schema's maxLength), so at most 49149 bytes of data.
const maxUserData = 65535

// userDataSize is how many characters of user data Nova receives for data: gophercloud sends data
// that already is base64 as it is, and encodes anything else.
func userDataSize(data []byte) int {
	if _, err := base64.StdEncoding.DecodeString(string(data)); err == nil {
		return len(data)
	}
	return base64.StdEncoding.EncodedLen(len(data))
}

func serverName(vm *kupenstackv1.VirtualMachine) string { return generic.Name(vm, vm.Spec.Name) }

// wantTags are the server's tags: the spec's and the owner tag.
func wantTags(vm *kupenstackv1.VirtualMachine) []string {
	out := []string{generic.OwnerTag(vm)}
	for _, t := range vm.Spec.Tags {
		out = append(out, string(t))
	}
	sort.Strings(out)
	return out
}

func (a actuator) userData(ctx context.Context, vm *kupenstackv1.VirtualMachine) ([]byte, error) {
	ref := vm.Spec.UserData
	if ref == nil {
		return nil, nil
	}
	var secret corev1.Secret
	if err := a.secrets.Get(ctx, client.ObjectKey{Namespace: vm.Namespace, Name: ref.Name}, &secret); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, generic.WaitFor(fmt.Sprintf("waiting for Secret %s with the user data", ref.Name), 10*time.Second)
		}
		return nil, err
	}
	data, ok := secret.Data[ref.Key]
	switch {
	case !ok:
		return nil, generic.InvalidConfig(fmt.Sprintf("Secret %s has no key %s for the user data", ref.Name, ref.Key))
	case userDataSize(data) > maxUserData:
		return nil, generic.InvalidConfig(fmt.Sprintf("user data in Secret %s (key %s) is %d bytes, %d in base64; Nova takes at most %d characters of base64 (%d bytes)",
			ref.Name, ref.Key, len(data), userDataSize(data), maxUserData, maxUserData/4*3))
	}
	return data, nil
}

// imageID is the Glance image the server boots from: its Image's or its PublicImage's ("" when
// it boots from a volume).
func imageID(s generic.Scope, vm *kupenstackv1.VirtualMachine) string {
	if vm.Spec.PublicImageRef != "" {
		return s.DependencyID("PublicImage", vm.Spec.PublicImageRef)
	}
	return s.DependencyID("Image", vm.Spec.ImageRef)
}

func (a actuator) Create(ctx context.Context, s generic.Scope, vm *kupenstackv1.VirtualMachine) (*servers.Server, error) {
	userData, err := a.userData(ctx, vm)
	if err != nil {
		return nil, err
	}
	zone, err := a.availabilityZone(ctx, vm)
	if err != nil {
		return nil, err
	}
	opts := servers.CreateOpts{
		Name:             serverName(vm),
		FlavorRef:        s.DependencyID("Flavor", vm.Spec.FlavorRef),
		ImageRef:         imageID(s, vm),
		UserData:         userData,
		AvailabilityZone: zone,
		Metadata:         vm.Spec.Metadata,
		Tags:             wantTags(vm),
		Networks:         "none",
	}
	if vol := vm.Spec.BootVolumeRef; vol != "" {
		opts.BlockDevice = []servers.BlockDevice{{SourceType: servers.SourceVolume, DestinationType: servers.DestinationVolume,
			UUID: s.DependencyID("Volume", vol), BootIndex: 0}}
	}
	for _, sg := range vm.Spec.SecurityGroupRefs {
		opts.SecurityGroups = append(opts.SecurityGroups, s.DependencyID("SecurityGroup", sg))
	}
	if len(vm.Spec.Networks) > 0 {
		var nics []servers.Network
		for _, n := range vm.Spec.Networks {
			if n.PortRef != "" {
				nics = append(nics, servers.Network{Port: s.DependencyID("Port", n.PortRef)})
			} else {
				nics = append(nics, servers.Network{UUID: s.DependencyID("Network", n.NetworkRef), FixedIP: n.FixedIP})
			}
		}
		opts.Networks = nics
	}
	var create servers.CreateOptsBuilder = opts
	if kp := vm.Spec.KeyPairRef; kp != "" {
		create = keyPairOpts{opts, s.DependencyID("KeyPair", kp)}
	}
	sc, err := nova.Client(ctx, s, microversion)
	if err != nil {
		return nil, err
	}
	srv, err := servers.Create(ctx, sc, create, schedulerHints(s, vm)).Extract()
	if err != nil {
		return nil, networkWithoutSubnet(replacingPortBusy(vm, err, time.Now()))
	}
	vm.Status.AppliedPowerState = kupenstackv1.PowerStateRunning
	vm.Status.Resize = nil // a new server has the spec's flavor; an old resize is no longer its
	// The create response has the ID only; the first observation must not look like an error.
	srv.Status, srv.Name = "BUILD", opts.Name
	return srv, nil
}

// keyPairOpts adds key_name to the create request.
type keyPairOpts struct {
	servers.CreateOpts
	keyName string
}

func (o keyPairOpts) ToServerCreateMap() (map[string]any, error) {
	m, err := o.CreateOpts.ToServerCreateMap()
	if err != nil {
		return nil, err
	}
	m["server"].(map[string]any)["key_name"] = o.keyName
	return m, nil
}
