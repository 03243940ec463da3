package projectquota

import (
	"context"
	"encoding/json"

	"github.com/gophercloud/gophercloud/v2"
	volumequotas "github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/quotasets"
	computequotas "github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	networkquotas "github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/quotas"

	"github.com/kupenstack/kupenstack/internal/openstack"
)

// Limits are quota limits by the service's own name for them ("instances", "floatingip").
type Limits map[string]int64

// Usage is what a service reports of a project's quota: limit and usage by its name for them.
type Usage map[string]Used

// Used is one limit and how much of it is used.
type Used struct{ Limit, InUse int64 }

// Service is the quota API of one OpenStack service, always with the admin scope (a project's
// own token may read its quota but not change it).
type Service interface {
	// Get reads every limit of the project and its usage.
	Get(ctx context.Context, projectID string) (Usage, error)
	// Set changes the limits given and leaves the others.
	Set(ctx context.Context, projectID string, limits Limits) error
	// Reset returns every limit of the project to the cloud's default.
	Reset(ctx context.Context, projectID string) error
}

// Services are the quota APIs of the cloud's compute, network and block storage services.
type Services struct{ Compute, Network, Volume Service }

// OpenStackServices reach the real cloud through the operator's clients.
func OpenStackServices(c *openstack.Clients) Services {
	return Services{
		Compute: &service{
			client: func(ctx context.Context) (*gophercloud.ServiceClient, error) { return c.Compute(ctx, "") },
			get: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) gophercloud.Result {
				return computequotas.GetDetail(ctx, sc, id).Result
			},
			set: func(ctx context.Context, sc *gophercloud.ServiceClient, id string, l Limits) error {
				// force: a limit below the current usage is what the admin declared; Nova would
				// otherwise refuse it. Existing servers stay, new ones are refused.
				return computequotas.Update(ctx, sc, id, body{"quota_set", l, true}).Err
			},
			reset: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
				return computequotas.Delete(ctx, sc, id).Err
			},
			inUse: "in_use",
		},
		Network: &service{
			client: func(ctx context.Context) (*gophercloud.ServiceClient, error) { return c.Network(ctx, "") },
			get: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) gophercloud.Result {
				return networkquotas.GetDetail(ctx, sc, id).Result
			},
			set: func(ctx context.Context, sc *gophercloud.ServiceClient, id string, l Limits) error {
				// force, as for Nova: Neutron announces it will check the usage by default.
				return networkquotas.Update(ctx, sc, id, body{"quota", l, true}).Err
			},
			reset: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
				return networkquotas.Delete(ctx, sc, id).Err
			},
			inUse: "used",
		},
		Volume: &service{
			client: func(ctx context.Context) (*gophercloud.ServiceClient, error) { return c.BlockStorage(ctx, "") },
			get: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) gophercloud.Result {
				return volumequotas.GetUsage(ctx, sc, id).Result
			},
			set: func(ctx context.Context, sc *gophercloud.ServiceClient, id string, l Limits) error {
				// Cinder has no force: a limit below the usage is refused (the quota is Degraded).
				return volumequotas.Update(ctx, sc, id, body{"quota_set", l, false}).Err
			},
			reset: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
				return volumequotas.Delete(ctx, sc, id).Err
			},
			inUse: "in_use",
		},
	}
}

// service is one service's quota API through gophercloud. The three services answer alike (a
// map of limit, usage and reservation by name), so one reader serves them all.
type service struct {
	client func(context.Context) (*gophercloud.ServiceClient, error)
	get    func(ctx context.Context, sc *gophercloud.ServiceClient, projectID string) gophercloud.Result
	set    func(ctx context.Context, sc *gophercloud.ServiceClient, projectID string, l Limits) error
	reset  func(ctx context.Context, sc *gophercloud.ServiceClient, projectID string) error
	// inUse is the service's name for the usage: Neutron says used, Nova and Cinder in_use.
	inUse string
}

func (s *service) Get(ctx context.Context, projectID string) (Usage, error) {
	sc, err := s.client(ctx)
	if err != nil {
		return nil, err
	}
	r := s.get(ctx, sc, projectID)
	if r.Err != nil {
		return nil, r.Err
	}
	// {"quota_set": {"id": "…", "instances": {"limit": 10, "in_use": 1, "reserved": 0}, …}}
	var top map[string]map[string]json.RawMessage
	if err := r.ExtractInto(&top); err != nil {
		return nil, err
	}
	usage := Usage{}
	for _, set := range top {
		for name, raw := range set {
			var d map[string]any
			if json.Unmarshal(raw, &d) != nil { // the id
				continue
			}
			limit, ok := d["limit"].(float64)
			if !ok {
				continue
			}
			used, _ := d[s.inUse].(float64)
			usage[name] = Used{Limit: int64(limit), InUse: int64(used)}
		}
	}
	return usage, nil
}

func (s *service) Set(ctx context.Context, projectID string, limits Limits) error {
	sc, err := s.client(ctx)
	if err != nil {
		return err
	}
	return s.set(ctx, sc, projectID, limits)
}

func (s *service) Reset(ctx context.Context, projectID string) error {
	sc, err := s.client(ctx)
	if err != nil {
		return err
	}
	return s.reset(ctx, sc, projectID)
}

// body is an update request of any of the three services: the limits under the service's key,
// by the service's own names, so no field of gophercloud's option structs needs mapping.
type body struct {
	key    string
	limits Limits
	force  bool
}

func (b body) build() (map[string]any, error) {
	set := map[string]any{}
	for name, v := range b.limits {
		set[name] = v
	}
	if b.force {
		set["force"] = true
	}
	return map[string]any{b.key: set}, nil
}

func (b body) ToComputeQuotaUpdateMap() (map[string]any, error)      { return b.build() }
func (b body) ToQuotaUpdateMap() (map[string]any, error)             { return b.build() }
func (b body) ToBlockStorageQuotaUpdateMap() (map[string]any, error) { return b.build() }
