//go:build bench

package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gcopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/config"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	nquotas "github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/quotas"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/openstack/cloudconfig"
)

// cloud is the benchmark's own admin access to the all-in-one cloud (not the operator's
// clients, so that its calls never show in the operator's metrics).
type cloud struct {
	cfg                     *cloudconfig.Cloud
	identity, nova, neutron *gophercloud.ServiceClient
	userID, memberRoleID    string
}

func connectCloud(t *testing.T) *cloud {
	t.Helper()
	data, err := os.ReadFile(cloudsPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := cloudconfig.Parse(data, cloudName)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := cfg.Connect(ctx)
	if err != nil {
		t.Fatalf("is the cloud up (make openstack-up)? %v", err)
	}
	c := &cloud{cfg: cfg}
	if c.identity, err = gcopenstack.NewIdentityV3(p, cfg.Endpoint); err != nil {
		t.Fatal(err)
	}
	if c.nova, err = gcopenstack.NewComputeV2(p, cfg.Endpoint); err != nil {
		t.Fatal(err)
	}
	c.nova.Microversion = "2.71"
	if c.neutron, err = gcopenstack.NewNetworkV2(p, cfg.Endpoint); err != nil {
		t.Fatal(err)
	}
	user, err := p.GetAuthResult().(tokens.CreateResult).ExtractUser()
	if err != nil {
		t.Fatal(err)
	}
	c.userID = user.ID
	pages, err := roles.List(c.identity, roles.ListOpts{Name: "member"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := roles.ExtractRoles(pages)
	if err != nil || len(rs) == 0 {
		t.Fatalf("no member role (%v)", err)
	}
	c.memberRoleID = rs[0].ID
	return c
}

// scoped returns compute and network clients with a token scoped to projectID.
func (c *cloud) scoped(ctx context.Context, projectID string) (nova, neutron *gophercloud.ServiceClient, err error) {
	auth := c.cfg.Auth
	auth.TenantID, auth.TenantName = "", ""
	auth.Scope = &gophercloud.AuthScope{ProjectID: projectID}
	p, err := config.NewProviderClient(ctx, auth, config.WithTLSConfig(c.cfg.TLS))
	if err != nil {
		return nil, nil, err
	}
	if nova, err = gcopenstack.NewComputeV2(p, c.cfg.Endpoint); err != nil {
		return nil, nil, err
	}
	nova.Microversion = "2.71"
	neutron, err = gcopenstack.NewNetworkV2(p, c.cfg.Endpoint)
	return nova, neutron, err
}

// newProject makes a Keystone project for the baseline, with the admin user as a member, and
// deletes it when the test ends.
func (c *cloud) newProject(t *testing.T, name string) string {
	t.Helper()
	p, err := projects.Create(env.Ctx, c.identity, projects.CreateOpts{Name: name, DomainID: "default"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = projects.Delete(context.Background(), c.identity, p.ID).ExtractErr() })
	if err := roles.Assign(env.Ctx, c.identity, c.memberRoleID, roles.AssignOpts{UserID: c.userID, ProjectID: p.ID}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	return p.ID
}

// unlimit lifts the Nova and Neutron quotas of projectID that N VMs would hit (10 instances,
// 100 key pairs, networks and ports by default).
func (c *cloud) unlimit(t *testing.T, projectID string) {
	t.Helper()
	n := -1
	if _, err := quotasets.Update(env.Ctx, c.nova, projectID, quotasets.UpdateOpts{
		Instances: &n, Cores: &n, RAM: &n, KeyPairs: &n,
	}).Extract(); err != nil {
		t.Fatalf("nova quotas: %v", err)
	}
	if _, err := nquotas.Update(env.Ctx, c.neutron, projectID, nquotas.UpdateOpts{
		Network: &n, Subnet: &n, Port: &n, SecurityGroup: &n, SecurityGroupRule: &n,
	}).Extract(); err != nil {
		t.Fatalf("neutron quotas: %v", err)
	}
}

// newNamespace creates a namespace and, at the end of the test, deletes it and waits until its
// Project (and so its Keystone project, with everything the operator made in it) is gone.
func newNamespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	create(t, ns)
	t.Cleanup(func() {
		ctx := context.Background()
		_ = env.Client.Delete(ctx, ns)
		deadline := time.Now().Add(15 * time.Minute)
		for time.Now().Before(deadline) {
			var p kupenstackv1.Project
			err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &p)
			if apierrors.IsNotFound(err) {
				return
			}
			if err == nil && p.DeletionTimestamp.IsZero() {
				_ = env.Client.Delete(ctx, &p) // in case no owner reference leads there
			}
			time.Sleep(time.Second)
		}
		t.Errorf("namespace %s: its Project is still there after 15 min", name)
	})
	return name
}

// projectID waits until namespace ns has its Keystone project (made for its first object).
func projectID(t *testing.T, ns string) string {
	t.Helper()
	var id string
	waitFor(t, "project of "+ns, 200*time.Millisecond, 3*time.Minute, func() error {
		var p kupenstackv1.Project
		if err := env.Client.Get(env.Ctx, client.ObjectKey{Name: ns}, &p); err != nil {
			return err
		}
		if id = p.Status.ID; id == "" {
			return fmt.Errorf("no ID yet")
		}
		return nil
	})
	return id
}
