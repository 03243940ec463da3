package e2e

import (
	"context"
	"fmt"
	"k8s.io/client-go/util/retry"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// importSite is where a test makes resources by hand: the namespace's project, a network of
// it and the cloud's external network.
type importSite struct{ project, network, public string }

// importCase is one kind for TestImportKinds.
type importCase struct {
	kind string
	// make creates a resource directly in OpenStack with description "by hand"; it returns its
	// ID and the name an import finds it by.
	make func(ctx context.Context, c osClients, at importSite, name string) (id, importName string, err error)
	// describe reads its description; nil for kinds without one.
	describe func(ctx context.Context, c osClients, id string) (string, error)
	// bare is an empty object of the kind.
	bare func() generic.Object
	// missing is an import name that finds nothing.
	missing string
}

var importCIDR atomic.Int32

const byHand = "by hand"

var importCases = []importCase{
	{
		kind: "Subnet",
		make: func(ctx context.Context, c osClients, at importSite, name string) (string, string, error) {
			r, err := subnets.Create(ctx, c.neutron, subnets.CreateOpts{NetworkID: at.network, ProjectID: at.project, Name: name,
				Description: byHand, IPVersion: 4, CIDR: fmt.Sprintf("10.62.%d.0/24", importCIDR.Add(1)%250)}).Extract()
			return made(r, err, func(r *subnets.Subnet) (string, string) { return r.ID, r.Name })
		},
		describe: neutronDescription("subnets"),
		bare:     func() generic.Object { return &kupenstackv1.Subnet{} },
	},
	{
		kind: "Router",
		make: func(ctx context.Context, c osClients, at importSite, name string) (string, string, error) {
			r, err := routers.Create(ctx, c.neutron, routers.CreateOpts{ProjectID: at.project, Name: name, Description: byHand}).Extract()
			return made(r, err, func(r *routers.Router) (string, string) { return r.ID, r.Name })
		},
		describe: neutronDescription("routers"),
		bare:     func() generic.Object { return &kupenstackv1.Router{} },
	},
	{
		kind: "Port",
		make: func(ctx context.Context, c osClients, at importSite, name string) (string, string, error) {
			r, err := ports.Create(ctx, c.neutron, ports.CreateOpts{NetworkID: at.network, ProjectID: at.project, Name: name, Description: byHand}).Extract()
			return made(r, err, func(r *ports.Port) (string, string) { return r.ID, r.Name })
		},
		describe: neutronDescription("ports"),
		bare:     func() generic.Object { return &kupenstackv1.Port{} },
	},
	{
		kind: "FloatingIP",
		// A floating IP's import name is its address.
		make: func(ctx context.Context, c osClients, at importSite, _ string) (string, string, error) {
			r, err := floatingips.Create(ctx, c.neutron, floatingips.CreateOpts{FloatingNetworkID: at.public, ProjectID: at.project, Description: byHand}).Extract()
			return made(r, err, func(r *floatingips.FloatingIP) (string, string) { return r.ID, r.FloatingIP })
		},
		describe: neutronDescription("floatingips"),
		bare:     func() generic.Object { return &kupenstackv1.FloatingIP{} },
		missing:  "192.0.2.250",
	},
	{
		kind: "SecurityGroup",
		make: func(ctx context.Context, c osClients, at importSite, name string) (string, string, error) {
			r, err := groups.Create(ctx, c.neutron, groups.CreateOpts{ProjectID: at.project, Name: name, Description: byHand}).Extract()
			return made(r, err, func(r *groups.SecGroup) (string, string) { return r.ID, r.Name })
		},
		describe: neutronDescription("security-groups"),
		bare:     func() generic.Object { return &kupenstackv1.SecurityGroup{} },
	},
	{
		kind: "KeyPair",
		// Nova key pairs are named, not numbered: hex names also fit import.id.
		make: func(ctx context.Context, c osClients, _ importSite, name string) (string, string, error) {
			kpName := fmt.Sprintf("%x-%x", time.Now().UnixNano(), len(name))
			r, err := keypairs.Create(ctx, c.nova, keypairs.CreateOpts{Name: kpName, PublicKey: testPublicKey}).Extract()
			return made(r, err, func(r *keypairs.KeyPair) (string, string) { return r.Name, r.Name })
		},
		bare: func() generic.Object { return &kupenstackv1.KeyPair{} },
	},
}

// made returns a hand-made resource's ID and import name.
func made[R any](r *R, err error, idName func(*R) (string, string)) (string, string, error) {
	if err != nil {
		return "", "", err
	}
	id, name := idName(r)
	return id, name, nil
}

// specDescription is the spec's description field of the kinds that have one.
func specDescription(obj generic.Object) *string {
	switch o := obj.(type) {
	case *kupenstackv1.Subnet:
		return &o.Spec.Description
	case *kupenstackv1.Router:
		return &o.Spec.Description
	case *kupenstackv1.Port:
		return &o.Spec.Description
	case *kupenstackv1.FloatingIP:
		return &o.Spec.Description
	case *kupenstackv1.SecurityGroup:
		return &o.Spec.Description
	}
	return nil
}

// importing makes an object of the case's kind that imports imp.
func (k importCase) importing(ns, name string, imp kupenstackv1.ImportSpec, policy kupenstackv1.ManagementPolicy,
	onDelete kupenstackv1.OnDelete, desc string,
) generic.Object {
	obj := k.bare()
	obj.SetNamespace(ns)
	obj.SetName(name)
	*obj.GetManagedSpec() = kupenstackv1.ManagedSpec{Import: &imp, ManagementPolicy: policy, OnDelete: onDelete}
	if d := specDescription(obj); d != nil {
		*d = desc
	}
	return obj
}

// TestImportKinds, for every namespaced kind but Network (import_test.go, network_test.go): a
// resource made by hand in the namespace's project is imported by name (unmanaged: spec changes
// never reach OpenStack) and by ID (managed: they do); with unmanaged and onDelete: detach, the
// resources stay in OpenStack when the objects go; an import of a name that does not exist waits.
func TestImportKinds(t *testing.T) {
	parallel(t)
	c := adminClients(t)
	ctx := env.Ctx
	publics, err := neutronList(ctx, c, "networks", url.Values{"name": {"public"}})
	if err != nil || len(publics) != 1 {
		t.Fatalf("the cloud's external network: %v (%v)", publics, err)
	}
	for _, k := range importCases {
		t.Run(k.kind, func(t *testing.T) {
			t.Parallel()
			kc := kindCaseOf(k.kind)
			ns := newNamespace(t)
			proj, seed := projectOf(t, ns)
			waitReady(t, seed)
			at := importSite{project: proj.Status.ID, network: seed.Status.ID, public: publics[0]}
			observedID, observedName, err := k.make(ctx, c, at, "legacy-observed")
			if err != nil {
				t.Fatal(err)
			}
			adoptedID, _, err := k.make(ctx, c, at, "legacy-adopted")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = kc.remove(ctx, c, observedID)
				_ = kc.remove(ctx, c, adoptedID)
			})
			missingName := k.missing
			if missingName == "" {
				missingName = "no-such-" + strings.ToLower(k.kind)
			}
			observed := k.importing(ns, "observed", kupenstackv1.ImportSpec{Name: observedName},
				kupenstackv1.ManagementPolicyUnmanaged, "", "never written")
			adopted := k.importing(ns, "adopted", kupenstackv1.ImportSpec{ID: adoptedID}, "", kupenstackv1.OnDeleteDetach, "written")
			missing := k.importing(ns, "missing", kupenstackv1.ImportSpec{Name: missingName}, "", "", "")
			create(t, observed, adopted, missing)

			waitReady(t, observed)
			waitReady(t, adopted)
			if observed.GetManagedStatus().ID != observedID || adopted.GetManagedStatus().ID != adoptedID {
				t.Fatalf("imported %q and %q, want %s and %s", observed.GetManagedStatus().ID, adopted.GetManagedStatus().ID, observedID, adoptedID)
			}
			waitCondition(t, missing, kupenstackv1.ConditionProgressing, "to import to exist in OpenStack")

			if k.describe != nil {
				expectDescription(t, k, c, adoptedID, "written")
				for obj, desc := range map[generic.Object]string{observed: "still never written", adopted: "written again"} {
					// The operator writes the status meanwhile: re-read on a conflict.
					if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
						if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
							return err
						}
						*specDescription(obj) = desc
						return env.Client.Update(ctx, obj)
					}); err != nil {
						t.Fatal(err)
					}
				}
				expectDescription(t, k, c, adoptedID, "written again")
				waitReady(t, observed) // the pass for the new generation is done
				if got, err := k.describe(ctx, c, observedID); err != nil || got != byHand {
					t.Errorf("unmanaged %s: description %q (%v), want it untouched", k.kind, got, err)
				}
			}

			deleteAll(t, ns, true, observed, adopted, missing)
			for _, id := range []string{observedID, adoptedID} {
				if err := kc.get(ctx, c, id); err != nil {
					t.Errorf("%s %s gone after its unmanaged or detached object was deleted: %v", k.kind, id, err)
				}
			}
			// Hand-made resources go before the project does.
			for _, id := range []string{observedID, adoptedID} {
				if err := kc.remove(ctx, c, id); err != nil {
					t.Error(err)
				}
			}
			deleteAll(t, ns, false, seed)
		})
	}
}

func expectDescription(t *testing.T, k importCase, c osClients, id, want string) {
	t.Helper()
	eventually(t, k.kind+" description "+want, func() error {
		got, err := k.describe(env.Ctx, c, id)
		if err == nil && got != want {
			err = fmt.Errorf("description %q", got)
		}
		return err
	})
}

// waitCondition waits until obj has condition typ (True) with a message containing msg.
func waitCondition(t *testing.T, obj generic.Object, typ, msg string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s %s: %s", obj.GetName(), typ, msg), func() error {
		if err := env.Client.Get(env.Ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		for _, c := range obj.GetManagedStatus().Conditions {
			if c.Type == typ && c.Status == "True" && strings.Contains(c.Message, msg) {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", obj.GetManagedStatus().Conditions)
	})
}
