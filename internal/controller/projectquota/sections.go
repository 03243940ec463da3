package projectquota

import (
	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// section is one service's part of a ProjectQuota: spec.compute, .network or .volume, and the
// same part of the status.
type section interface {
	// name is the spec's name for it: compute, network, volume.
	name() string
	service(Services) Service
	// declared says whether the spec has this section, and the limits it sets.
	declared(*kupenstackv1.ProjectQuotaSpec) (bool, []limit)
	// observe writes the service's report into the status; nil removes the section.
	observe(*kupenstackv1.ProjectQuotaStatus, Usage)
}

// limit is one limit the spec sets.
type limit struct {
	field   string // the spec's name, e.g. floatingIPs
	service string // the service's, e.g. floatingip
	value   int64
}

// field ties one limit of a spec section S and its line in a status section U to the service's
// name for it.
type field[S, U any] struct {
	name, service string
	spec          func(*S) *int64
	status        func(*U) *kupenstackv1.QuotaUsage
}

type sectionOf[S, U any] struct {
	title  string
	svc    func(Services) Service
	spec   func(*kupenstackv1.ProjectQuotaSpec) *S
	status func(*kupenstackv1.ProjectQuotaStatus) **U
	fields []field[S, U]
}

func (s sectionOf[S, U]) name() string                 { return s.title }
func (s sectionOf[S, U]) service(all Services) Service { return s.svc(all) }

func (s sectionOf[S, U]) declared(spec *kupenstackv1.ProjectQuotaSpec) (bool, []limit) {
	sec := s.spec(spec)
	if sec == nil {
		return false, nil
	}
	var out []limit
	for _, f := range s.fields {
		if v := f.spec(sec); v != nil {
			out = append(out, limit{field: f.name, service: f.service, value: *v})
		}
	}
	return true, out
}

func (s sectionOf[S, U]) observe(st *kupenstackv1.ProjectQuotaStatus, usage Usage) {
	p := s.status(st)
	if usage == nil {
		*p = nil
		return
	}
	*p = new(U)
	for _, f := range s.fields {
		u := usage[f.service]
		*f.status(*p) = kupenstackv1.QuotaUsage{Limit: u.Limit, InUse: u.InUse}
	}
}

// sections are the parts of a ProjectQuota, in the order they are applied.
var sections = []section{
	sectionOf[kupenstackv1.ComputeQuota, kupenstackv1.ComputeQuotaStatus]{
		title:  "compute",
		svc:    func(s Services) Service { return s.Compute },
		spec:   func(s *kupenstackv1.ProjectQuotaSpec) *kupenstackv1.ComputeQuota { return s.Compute },
		status: func(s *kupenstackv1.ProjectQuotaStatus) **kupenstackv1.ComputeQuotaStatus { return &s.Compute },
		fields: []field[kupenstackv1.ComputeQuota, kupenstackv1.ComputeQuotaStatus]{
			{"instances", "instances",
				func(q *kupenstackv1.ComputeQuota) *int64 { return q.Instances },
				func(u *kupenstackv1.ComputeQuotaStatus) *kupenstackv1.QuotaUsage { return &u.Instances }},
			{"cores", "cores",
				func(q *kupenstackv1.ComputeQuota) *int64 { return q.Cores },
				func(u *kupenstackv1.ComputeQuotaStatus) *kupenstackv1.QuotaUsage { return &u.Cores }},
			{"ramMiB", "ram",
				func(q *kupenstackv1.ComputeQuota) *int64 { return q.RAMMiB },
				func(u *kupenstackv1.ComputeQuotaStatus) *kupenstackv1.QuotaUsage { return &u.RAMMiB }},
			{"serverGroups", "server_groups",
				func(q *kupenstackv1.ComputeQuota) *int64 { return q.ServerGroups },
				func(u *kupenstackv1.ComputeQuotaStatus) *kupenstackv1.QuotaUsage { return &u.ServerGroups }},
			{"serverGroupMembers", "server_group_members",
				func(q *kupenstackv1.ComputeQuota) *int64 { return q.ServerGroupMembers },
				func(u *kupenstackv1.ComputeQuotaStatus) *kupenstackv1.QuotaUsage { return &u.ServerGroupMembers }},
		},
	},
	sectionOf[kupenstackv1.NetworkQuota, kupenstackv1.NetworkQuotaStatus]{
		title:  "network",
		svc:    func(s Services) Service { return s.Network },
		spec:   func(s *kupenstackv1.ProjectQuotaSpec) *kupenstackv1.NetworkQuota { return s.Network },
		status: func(s *kupenstackv1.ProjectQuotaStatus) **kupenstackv1.NetworkQuotaStatus { return &s.Network },
		fields: []field[kupenstackv1.NetworkQuota, kupenstackv1.NetworkQuotaStatus]{
			{"networks", "network",
				func(q *kupenstackv1.NetworkQuota) *int64 { return q.Networks },
				func(u *kupenstackv1.NetworkQuotaStatus) *kupenstackv1.QuotaUsage { return &u.Networks }},
			{"subnets", "subnet",
				func(q *kupenstackv1.NetworkQuota) *int64 { return q.Subnets },
				func(u *kupenstackv1.NetworkQuotaStatus) *kupenstackv1.QuotaUsage { return &u.Subnets }},
			{"ports", "port",
				func(q *kupenstackv1.NetworkQuota) *int64 { return q.Ports },
				func(u *kupenstackv1.NetworkQuotaStatus) *kupenstackv1.QuotaUsage { return &u.Ports }},
			{"routers", "router",
				func(q *kupenstackv1.NetworkQuota) *int64 { return q.Routers },
				func(u *kupenstackv1.NetworkQuotaStatus) *kupenstackv1.QuotaUsage { return &u.Routers }},
			{"floatingIPs", "floatingip",
				func(q *kupenstackv1.NetworkQuota) *int64 { return q.FloatingIPs },
				func(u *kupenstackv1.NetworkQuotaStatus) *kupenstackv1.QuotaUsage { return &u.FloatingIPs }},
			{"securityGroups", "security_group",
				func(q *kupenstackv1.NetworkQuota) *int64 { return q.SecurityGroups },
				func(u *kupenstackv1.NetworkQuotaStatus) *kupenstackv1.QuotaUsage { return &u.SecurityGroups }},
			{"securityGroupRules", "security_group_rule",
				func(q *kupenstackv1.NetworkQuota) *int64 { return q.SecurityGroupRules },
				func(u *kupenstackv1.NetworkQuotaStatus) *kupenstackv1.QuotaUsage { return &u.SecurityGroupRules }},
		},
	},
	sectionOf[kupenstackv1.VolumeQuota, kupenstackv1.VolumeQuotaStatus]{
		title:  "volume",
		svc:    func(s Services) Service { return s.Volume },
		spec:   func(s *kupenstackv1.ProjectQuotaSpec) *kupenstackv1.VolumeQuota { return s.Volume },
		status: func(s *kupenstackv1.ProjectQuotaStatus) **kupenstackv1.VolumeQuotaStatus { return &s.Volume },
		fields: []field[kupenstackv1.VolumeQuota, kupenstackv1.VolumeQuotaStatus]{
			{"volumes", "volumes",
				func(q *kupenstackv1.VolumeQuota) *int64 { return q.Volumes },
				func(u *kupenstackv1.VolumeQuotaStatus) *kupenstackv1.QuotaUsage { return &u.Volumes }},
			{"gigabytes", "gigabytes",
				func(q *kupenstackv1.VolumeQuota) *int64 { return q.Gigabytes },
				func(u *kupenstackv1.VolumeQuotaStatus) *kupenstackv1.QuotaUsage { return &u.Gigabytes }},
			{"snapshots", "snapshots",
				func(q *kupenstackv1.VolumeQuota) *int64 { return q.Snapshots },
				func(u *kupenstackv1.VolumeQuotaStatus) *kupenstackv1.QuotaUsage { return &u.Snapshots }},
		},
	},
}
