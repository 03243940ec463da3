// Package computeservice reads and switches the nova-compute service of a cloud's node through
// Nova's API: the life-cycle disables it before a node stops being a compute node, so that the
// scheduler stops placing servers on a host whose compute pods are about to go, and enables it
// when the node comes back.
package computeservice

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/services"

	"github.com/kupenstack/kupenstack/internal/openstack"
)

// ReasonPrefix starts the disabled reason of every service KupenStack disables: it enables again
// only those, never a service an administrator disabled for a reason of their own.
const ReasonPrefix = "kupenstack: "

// Reason is the disabled reason KupenStack gives the nova-compute service of node.
func Reason(node string) string {
	return ReasonPrefix + "node " + node + " taken out of the cloud's compute nodes"
}

// DisabledByKupenStack says whether a disabled reason is one KupenStack wrote.
func DisabledByKupenStack(reason string) bool { return strings.HasPrefix(reason, ReasonPrefix) }

// Service is the part of a nova-compute service the life-cycle reads.
type Service struct {
	ID string
	// Status is "enabled" or "disabled"; State is "up" or "down".
	Status, State  string
	DisabledReason string
	// UpdatedAt is the service's last heartbeat (or change) as Nova recorded it.
	UpdatedAt time.Time
}

// UpOnlyFromBefore says whether Nova counts the service up from a heartbeat older than t alone.
// Nova waits service_down_time (a minute by default) before it counts a silent service down, so
// such a service may have no nova-compute behind it: enabling or disabling it then makes Nova's
// API call that nova-compute and wait a minute for the answer.
func (s *Service) UpOnlyFromBefore(t time.Time) bool {
	return s.State == "up" && s.UpdatedAt.Before(t)
}

// UpButSilent says whether Nova counts the service up although its last heartbeat is more than
// silent old at now: its nova-compute has most likely stopped, and Nova counts it down once
// service_down_time has passed. A heartbeat more than limit old with the service still up is
// taken for a clock apart from Nova's, not silence, so that no wait on it lasts for ever.
func (s *Service) UpButSilent(now time.Time, silent, limit time.Duration) bool {
	age := now.Sub(s.UpdatedAt)
	return s.State == "up" && age > silent && age < limit
}

// Enabled says whether the scheduler may place servers on the service's host.
func (s *Service) Enabled() bool { return s.Status == string(services.ServiceEnabled) }

// Nova reads and switches nova-compute services with the operator's admin credentials.
type Nova struct{ Clients *openstack.Clients }

// servicesByIDVersion is the first compute API microversion whose services are addressed by
// UUID (PUT /os-services/{id}); before it, by host and binary.
const servicesByIDVersion = "2.53"

func (n Nova) client(ctx context.Context) (*gophercloud.ServiceClient, error) {
	sc, err := n.Clients.Compute(ctx, "")
	if err != nil {
		return nil, err
	}
	c := *sc
	c.Microversion = servicesByIDVersion
	return &c, nil
}

// Find returns host's nova-compute service, or nil when the host has none (it never ran
// nova-compute, or the service was deleted).
func (n Nova) Find(ctx context.Context, host string) (*Service, error) {
	sc, err := n.client(ctx)
	if err != nil {
		return nil, err
	}
	pages, err := services.List(sc, services.ListOpts{Binary: "nova-compute"}).AllPages(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the nova-compute services: %w", err)
	}
	found, err := services.ExtractServices(pages)
	if err != nil {
		return nil, err
	}
	hosts := make([]string, len(found))
	for i, s := range found {
		hosts[i] = s.Host
	}
	i := HostOf(hosts, host)
	if i < 0 {
		return nil, nil
	}
	s := found[i]
	return &Service{ID: s.ID, Status: s.Status, State: s.State, DisabledReason: s.DisabledReason, UpdatedAt: s.UpdatedAt}, nil
}

// HostOf is the index of node's host among Nova's hosts, -1 when none is. Nova knows a host by
// the name its nova-compute pod gives: the node's name, or its FQDN (OpenStack-Helm's default,
// pod.use_fqdn.compute) whose first label is the node's short name. The exact name wins; a
// short name alone counts only when exactly one host has it, so that KupenStack never switches
// another host's service.
func HostOf(hosts []string, node string) int {
	short := func(h string) string { return strings.SplitN(h, ".", 2)[0] }
	match := -1
	for i, h := range hosts {
		if h == node {
			return i
		}
		if short(h) == short(node) {
			if match >= 0 {
				return -1 // ambiguous
			}
			match = i
		}
	}
	return match
}

// SetEnabled enables the service, or disables it with reason.
func (n Nova) SetEnabled(ctx context.Context, id string, enabled bool, reason string) error {
	sc, err := n.client(ctx)
	if err != nil {
		return err
	}
	opts := services.UpdateOpts{Status: services.ServiceDisabled, DisabledReason: reason}
	if enabled {
		opts = services.UpdateOpts{Status: services.ServiceEnabled}
	}
	if _, err := services.Update(ctx, sc, id, opts).Extract(); err != nil {
		return fmt.Errorf("setting nova-compute service %s %s: %w", id, opts.Status, err)
	}
	return nil
}
