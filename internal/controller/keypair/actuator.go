// Package keypair maps the KeyPair kind to Nova key pairs.
package keypair

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"golang.org/x/crypto/ssh"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	novaclient "github.com/kupenstack/kupenstack/internal/controller/nova"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=keypairs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=keypairs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=keypairs/finalizers,verbs=update

// Setup registers the KeyPair controller.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	a := actuator{}
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.KeyPair, keypairs.KeyPair]{
		Name:       "KeyPair",
		Controller: "keypair",
		Actuator:   a,
		Can:        generic.Capabilities[*kupenstackv1.KeyPair, keypairs.KeyPair]{List: a.ListAll, SameListInEveryProject: true},
		New:        func() *kupenstackv1.KeyPair { return &kupenstackv1.KeyPair{} },
		NewList:    func() client.ObjectList { return &kupenstackv1.KeyPairList{} },
	})
}

// NovaName is the key pair's name in Nova. Nova keeps key pairs per user and the operator is one
// user for every namespace, so the namespace is part of the name; "_" never occurs in either.
func NovaName(k *kupenstackv1.KeyPair) string { return k.Namespace + "_" + k.Name }

type actuator struct{}

var (
	_ generic.Actuator[*kupenstackv1.KeyPair, keypairs.KeyPair] = actuator{}
)

// nova returns the compute client; microversion 2.2 brings key pair types (x509).
func nova(ctx context.Context, s generic.Scope) (*gophercloud.ServiceClient, error) {
	return novaclient.Client(ctx, s, "2.2")
}

func (actuator) Get(ctx context.Context, s generic.Scope, name string) (*keypairs.KeyPair, error) {
	sc, err := nova(ctx, s)
	if err != nil {
		return nil, err
	}
	return keypairs.Get(ctx, sc, name, nil).Extract()
}

// sameKey compares public keys ignoring the comment and surrounding space Nova may drop.
func sameKey(a, b string) bool {
	fa, fb := strings.Fields(a), strings.Fields(b)
	if len(fa) < 2 || len(fb) < 2 {
		return strings.TrimSpace(a) == strings.TrimSpace(b)
	}
	return fa[0] == fb[0] && fa[1] == fb[1]
}

// FindOwned: the key pair of this object's name carrying this object's key is this object's.
func (a actuator) FindOwned(ctx context.Context, s generic.Scope, k *kupenstackv1.KeyPair) (*keypairs.KeyPair, error) {
	found, err := a.Get(ctx, s, NovaName(k))
	switch {
	case openstack.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case !sameKey(found.PublicKey, k.Spec.PublicKey):
		return nil, generic.InvalidConfig(fmt.Sprintf("Nova already has a different key pair named %s; import it or delete it", NovaName(k)))
	}
	return found, nil
}

// FindImport looks the key pair up by its Nova name, import.name (Nova key pairs have no ID;
// import.id is accepted too, for names that fit the ID pattern).
func (a actuator) FindImport(ctx context.Context, s generic.Scope, k *kupenstackv1.KeyPair) (*keypairs.KeyPair, error) {
	name := k.Spec.Import.Name
	if name == "" {
		name = k.Spec.Import.ID
	}
	found, err := a.Get(ctx, s, name)
	if openstack.IsNotFound(err) {
		return nil, nil
	}
	return found, err
}

func (actuator) Create(ctx context.Context, s generic.Scope, k *kupenstackv1.KeyPair) (*keypairs.KeyPair, error) {
	sc, err := nova(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := CheckPublicKey(k.Spec.Type, k.Spec.PublicKey); err != nil {
		return nil, generic.InvalidConfig(err.Error())
	}
	return keypairs.Create(ctx, sc, keypairs.CreateOpts{Name: NovaName(k), PublicKey: k.Spec.PublicKey, Type: k.Spec.Type}).Extract()
}

// CheckPublicKey parses an ssh key as Nova will (admission checks only its form): a key whose
// data does not parse is refused with the parser's reason rather than Nova's generic one.
// Certificates (type x509) are left to Nova.
func CheckPublicKey(typ, key string) error {
	if typ == "x509" || key == "" {
		return nil
	}
	if _, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(key)); err != nil {
		return fmt.Errorf("spec.publicKey is not a usable OpenSSH public key: %v", err)
	} else if len(bytes.TrimSpace(rest)) > 0 {
		return fmt.Errorf("spec.publicKey holds more than one key")
	}
	return nil
}

// Diff finds nothing: a Nova key pair has no field that can change after creation (no update
// API), and its spec (publicKey, type) is immutable too. A key pair deleted and re-made with
// another key under the same name is a different key pair, found by FindOwned's key check when
// the object is re-created, not a drift Update could set back.
func (actuator) Diff(generic.Scope, *kupenstackv1.KeyPair, *keypairs.KeyPair) generic.Changes {
	return nil
}

// Update is never called, since Diff finds no changes; were it, there is nothing it could do.
func (actuator) Update(_ context.Context, _ generic.Scope, _ *kupenstackv1.KeyPair, cur *keypairs.KeyPair, changes generic.Changes) (*keypairs.KeyPair, error) {
	return cur, fmt.Errorf("key pairs cannot be updated (asked to change %s)", changes)
}

func (actuator) Delete(ctx context.Context, s generic.Scope, res *keypairs.KeyPair) error {
	sc, err := nova(ctx, s)
	if err != nil {
		return err
	}
	return keypairs.Delete(ctx, sc, res.Name, nil).ExtractErr()
}

func (actuator) ID(res *keypairs.KeyPair) string { return res.Name }

// SameListInEveryProject: Nova keeps key pairs per user (see NovaName), so the drift check lists
// them once per period for every namespace (generic.SharedLister).
func (actuator) SameListInEveryProject() {}

func (actuator) ListAll(ctx context.Context, s generic.Scope) ([]*keypairs.KeyPair, error) {
	sc, err := nova(ctx, s)
	if err != nil {
		return nil, err
	}
	pages, err := keypairs.List(sc, nil).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return generic.Pointers(keypairs.ExtractKeyPairs(pages))
}

func (actuator) Observe(k *kupenstackv1.KeyPair, res *keypairs.KeyPair) (bool, string) {
	k.Status.Resource = &kupenstackv1.KeyPairResourceStatus{Name: res.Name, Fingerprint: res.Fingerprint, Type: res.Type}
	return true, ""
}
