// Package nova holds what the Nova-backed kinds share: compute clients pinned to the microversion
// a kind's calls need.
package nova

import (
	"context"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// Client is the compute client of the scope's project ("" for the admin scope), pinned to
// microversion. The cached client is copied, never changed: other kinds share it.
func Client(ctx context.Context, s generic.Scope, microversion string) (*gophercloud.ServiceClient, error) {
	return ClientFor(ctx, s, s.ProjectID, microversion)
}

// ClientFor is Client for another project than the scope's ("" for the admin scope).
func ClientFor(ctx context.Context, s generic.Scope, projectID, microversion string) (*gophercloud.ServiceClient, error) {
	sc, err := s.Clients.Compute(ctx, projectID)
	if err != nil {
		return nil, err
	}
	c := *sc
	c.Microversion = microversion
	return &c, nil
}
