package applicationcredential

import (
	"context"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"

	"github.com/kupenstack/kupenstack/internal/openstack"
)

// Request is one application credential to make.
type Request struct {
	Name, Description string
	Roles             []string
	// ExpiresAt is zero for a credential that does not expire.
	ExpiresAt time.Time
}

// Credential is an application credential as Keystone reports it. Secret is set only in the
// answer to Create: Keystone never shows it again.
type Credential struct {
	ID, Name, ProjectID string
	Secret              string
	ExpiresAt           time.Time
}

// Keystone is the part of Keystone the controller uses: application credentials of the
// operator's own user. A fake stands in for it in the envtest suite.
type Keystone interface {
	// Create makes a restricted application credential in projectID (with a token scoped to it).
	Create(ctx context.Context, projectID string, r Request) (Credential, error)
	// List returns the operator's user's application credentials whose name starts with prefix.
	List(ctx context.Context, prefix string) ([]Credential, error)
	// Delete revokes one; a credential that is already gone is not an error.
	Delete(ctx context.Context, id string) error
	// Location is where tools reach the cloud.
	Location(ctx context.Context) (openstack.Location, error)
}

// OpenStackKeystone reaches the real cloud through the operator's clients.
func OpenStackKeystone(c *openstack.Clients) Keystone { return &keystone{c} }

type keystone struct{ clients *openstack.Clients }

func (k *keystone) Create(ctx context.Context, projectID string, r Request) (Credential, error) {
	user, err := k.clients.AdminUserID(ctx)
	if err != nil {
		return Credential{}, err
	}
	identity, err := k.clients.Identity(ctx, projectID)
	if err != nil {
		return Credential{}, err
	}
	opts := applicationcredentials.CreateOpts{
		Name: r.Name, Description: r.Description,
		// Restricted: the credential cannot make other credentials or trusts, so a leaked one
		// does not outlive its own revocation.
		Unrestricted: false,
	}
	for _, role := range r.Roles {
		opts.Roles = append(opts.Roles, applicationcredentials.Role{Name: role})
	}
	if !r.ExpiresAt.IsZero() {
		at := r.ExpiresAt.UTC()
		opts.ExpiresAt = &at
	}
	// No Secret in the request: Keystone generates it and returns it once.
	made, err := applicationcredentials.Create(ctx, identity, user, opts).Extract()
	if err != nil {
		return Credential{}, err
	}
	return Credential{ID: made.ID, Name: made.Name, ProjectID: made.ProjectID, Secret: made.Secret, ExpiresAt: made.ExpiresAt}, nil
}

func (k *keystone) List(ctx context.Context, prefix string) ([]Credential, error) {
	user, err := k.clients.AdminUserID(ctx)
	if err != nil {
		return nil, err
	}
	identity, err := k.clients.AdminIdentity(ctx)
	if err != nil {
		return nil, err
	}
	// Keystone filters by exact name only: the prefix is matched here.
	pages, err := applicationcredentials.List(identity, user, nil).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := applicationcredentials.ExtractApplicationCredentials(pages)
	if err != nil {
		return nil, err
	}
	var out []Credential
	for _, c := range all {
		if strings.HasPrefix(c.Name, prefix) {
			out = append(out, Credential{ID: c.ID, Name: c.Name, ProjectID: c.ProjectID, ExpiresAt: c.ExpiresAt})
		}
	}
	return out, nil
}

func (k *keystone) Delete(ctx context.Context, id string) error {
	user, err := k.clients.AdminUserID(ctx)
	if err != nil {
		return err
	}
	// The owner's token of any scope may delete its credentials.
	identity, err := k.clients.AdminIdentity(ctx)
	if err != nil {
		return err
	}
	if err := applicationcredentials.Delete(ctx, identity, user, id).ExtractErr(); err != nil && !openstack.IsNotFound(err) {
		return err
	}
	return nil
}

func (k *keystone) Location(ctx context.Context) (openstack.Location, error) {
	return k.clients.Location(ctx)
}
