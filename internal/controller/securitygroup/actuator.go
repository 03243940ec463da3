// Package securitygroup maps the SecurityGroup kind to Neutron security groups and their rules.
package securitygroup

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
	"github.com/kupenstack/kupenstack/internal/controller/neutron"
	"github.com/kupenstack/kupenstack/internal/openstack"
)

// +kubebuilder:rbac:groups=kupenstack.io,resources=securitygroups,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=securitygroups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kupenstack.io,resources=securitygroups/finalizers,verbs=update

// Setup registers the SecurityGroup controller.
func Setup(ctx context.Context, mgr ctrl.Manager, o generic.Options) error {
	a := actuator{neutron.Resource[*kupenstackv1.SecurityGroup, groups.SecGroup]{API: api, NameOf: name}}
	return generic.Setup(ctx, mgr, o, generic.Kind[*kupenstackv1.SecurityGroup, groups.SecGroup]{
		Name:         "SecurityGroup",
		Controller:   "securitygroup",
		Actuator:     a,
		Can:          generic.Capabilities[*kupenstackv1.SecurityGroup, groups.SecGroup]{List: a.ListAll, ListOwned: a.ListOwned, Claims: a.Claims},
		New:          func() *kupenstackv1.SecurityGroup { return &kupenstackv1.SecurityGroup{} },
		NewList:      func() client.ObjectList { return &kupenstackv1.SecurityGroupList{} },
		Dependencies: []generic.Dependency[*kupenstackv1.SecurityGroup]{generic.Refers[kupenstackv1.SecurityGroup]("spec.rules[].remoteGroupRef", remoteGroups)},
	})
}

// remoteGroups are the other groups sg's rules refer to (a reference to itself needs no waiting).
func remoteGroups(sg *kupenstackv1.SecurityGroup) []string {
	var names []string
	seen := map[string]bool{sg.Name: true}
	for _, r := range sg.Spec.Rules {
		if r.RemoteGroupRef != "" && !seen[r.RemoteGroupRef] {
			seen[r.RemoteGroupRef] = true
			names = append(names, r.RemoteGroupRef)
		}
	}
	return names
}

// api are Neutron's security group calls.
var api = neutron.API[groups.SecGroup]{
	GetFn: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) (*groups.SecGroup, error) {
		return groups.Get(ctx, sc, id).Extract()
	},
	ListFn: func(ctx context.Context, sc *gophercloud.ServiceClient, f neutron.Filter) ([]groups.SecGroup, error) {
		pages, err := groups.List(sc, groups.ListOpts{ProjectID: f.ProjectID, Tags: f.Tags, Name: f.Name}).AllPages(ctx)
		if err != nil {
			return nil, err
		}
		return groups.ExtractGroups(pages)
	},
	DeleteFn: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
		return groups.Delete(ctx, sc, id).ExtractErr()
	},
	IDOf:      func(r *groups.SecGroup) string { return r.ID },
	TagsOf:    func(r *groups.SecGroup) []string { return r.Tags },
	CreatedAt: func(r *groups.SecGroup) time.Time { return r.CreatedAt },
	NameOf:    func(r *groups.SecGroup) string { return r.Name },
}

type actuator struct {
	neutron.Resource[*kupenstackv1.SecurityGroup, groups.SecGroup]
}

var (
	_ generic.Actuator[*kupenstackv1.SecurityGroup, groups.SecGroup] = actuator{}
)

func name(sg *kupenstackv1.SecurityGroup) string { return generic.Name(sg, sg.Spec.Name) }

func (actuator) Create(ctx context.Context, s generic.Scope, sg *kupenstackv1.SecurityGroup) (*groups.SecGroup, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	// Rules and tags follow in Update, so that a failure there never loses the group's ID.
	return groups.Create(ctx, sc, groups.CreateOpts{Name: name(sg), Description: sg.Spec.Description}).Extract()
}

// ruleKey identifies a rule by what it allows; two rules with the same key are the same rule.
type ruleKey struct {
	direction, ethertype, protocol string
	portMin, portMax               int
	remoteIP, remoteGroup          string
}

// compare orders rule keys, for readable Want and Have.
func (k ruleKey) compare(o ruleKey) int { return strings.Compare(k.String(), o.String()) }

// String writes the rule as `openstack security group rule list` would show it.
func (k ruleKey) String() string {
	remote := cmp.Or(k.remoteIP, k.remoteGroup, "any")
	return fmt.Sprintf("%s %s %s %d:%d %s", k.direction, k.ethertype, cmp.Or(k.protocol, "any"), k.portMin, k.portMax, remote)
}

func normalizeCIDR(c string) string {
	if _, n, err := net.ParseCIDR(c); err == nil {
		return n.String()
	}
	return c
}

// desiredRules are the spec's rules with references resolved, keyed by what they allow.
func desiredRules(s generic.Scope, sg *kupenstackv1.SecurityGroup, ownID string) map[ruleKey]kupenstackv1.SecurityGroupRule {
	out := map[ruleKey]kupenstackv1.SecurityGroupRule{}
	for _, r := range sg.Spec.Rules {
		k := ruleKey{direction: r.Direction, ethertype: r.Ethertype, protocol: r.Protocol, remoteIP: r.RemoteIPPrefix}
		if k.ethertype == "" {
			k.ethertype = "IPv4"
		}
		if r.PortRangeMin != nil {
			k.portMin = *r.PortRangeMin
		}
		if r.PortRangeMax != nil { // an ICMP type may come without a code
			k.portMax = *r.PortRangeMax
		}
		if k.remoteIP != "" {
			k.remoteIP = normalizeCIDR(k.remoteIP)
		}
		switch r.RemoteGroupRef {
		case "":
		case sg.Name:
			k.remoteGroup = ownID
		default:
			k.remoteGroup = s.DependencyID("SecurityGroup", r.RemoteGroupRef)
		}
		out[k] = r
	}
	return out
}

func ruleOwner(r rules.SecGroupRule) string { return cmp.Or(r.ProjectID, r.TenantID) }

func groupOwner(g *groups.SecGroup) string { return cmp.Or(g.ProjectID, g.TenantID) }

func keyOf(r rules.SecGroupRule) ruleKey {
	k := ruleKey{direction: r.Direction, ethertype: r.EtherType, protocol: r.Protocol,
		portMin: r.PortRangeMin, portMax: r.PortRangeMax, remoteGroup: r.RemoteGroupID}
	if r.RemoteIPPrefix != "" {
		k.remoteIP = normalizeCIDR(r.RemoteIPPrefix)
	}
	return k
}

// Diff compares the name, description, tags and the rules, as a set of what they allow: a rule
// added, removed or changed out of band (Neutron cannot change a rule, only replace it) is drift
// on spec.rules. A rule's description is not compared: Neutron cannot update it, so the rule
// would have to be replaced for it.
func (actuator) Diff(s generic.Scope, sg *kupenstackv1.SecurityGroup, res *groups.SecGroup) generic.Changes {
	var d generic.Diff
	generic.Value(&d, "spec.name", name(sg), res.Name)
	generic.Value(&d, "spec.description", sg.Spec.Description, res.Description)
	generic.Set(&d, "spec.tags", neutron.Tags(sg, sg.Spec.Tags), res.Tags)
	// A remote group not resolved yet (the drift check before it is cached) would make its rules
	// look missing: they are compared once it is.
	for _, ref := range remoteGroups(sg) {
		if s.DependencyID("SecurityGroup", ref) == "" {
			return d.Changes()
		}
	}
	var want, have []ruleKey
	for k := range desiredRules(s, sg, res.ID) {
		want = append(want, k)
	}
	for _, r := range res.Rules {
		have = append(have, keyOf(r))
	}
	if !generic.SameSet(want, have) || hasRepeats(have) {
		slices.SortFunc(want, ruleKey.compare)
		slices.SortFunc(have, ruleKey.compare)
		d.Add("spec.rules", want, have)
	}
	return d.Changes()
}

// hasRepeats says whether two of the group's rules allow the same: Neutron refuses such twins,
// except where only what keyOf ignores tells them apart (ICMP type 0 and none); one must go.
func hasRepeats(keys []ruleKey) bool {
	seen := map[ruleKey]bool{}
	for _, k := range keys {
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

// Update makes the changes Diff found: tags, name and description, and the rules, replacing
// those that differ.
func (a actuator) Update(ctx context.Context, s generic.Scope, sg *kupenstackv1.SecurityGroup, cur *groups.SecGroup, changes generic.Changes) (*groups.SecGroup, error) {
	sc, err := neutron.Client(ctx, s)
	if err != nil {
		return nil, err
	}
	if res, done, err := neutron.UpdateTags(ctx, sc, "security-groups", cur.ID, neutron.Tags(sg, sg.Spec.Tags), cur.Tags, cur, changes,
		func(g groups.SecGroup, tags []string) groups.SecGroup { g.Tags = tags; return g }); done {
		return res, err
	}
	if changes.Has("spec.name") || changes.Has("spec.description") {
		upd := groups.UpdateOpts{Description: &sg.Spec.Description}
		if changes.Has("spec.name") {
			upd.Name = name(sg)
		}
		if err := groups.Update(ctx, sc, cur.ID, upd).Err; err != nil {
			return cur, err
		}
	}
	if changes.Has("spec.rules") {
		if err := a.syncRules(ctx, s, sc, sg, cur); err != nil {
			return cur, err
		}
	}
	// Re-read: the group's answer to each call carries only part of the change.
	return a.Get(ctx, s, cur.ID)
}

// syncRules deletes the group's rules the spec does not have and creates those it lacks.
func (actuator) syncRules(ctx context.Context, s generic.Scope, sc *gophercloud.ServiceClient, sg *kupenstackv1.SecurityGroup, cur *groups.SecGroup) error {
	var err error
	want := desiredRules(s, sg, cur.ID)
	have := map[ruleKey]bool{}
	for _, r := range cur.Rules {
		k := keyOf(r)
		if _, ok := want[k]; ok && !have[k] {
			have[k] = true
			continue
		}
		del := sc
		if owner := ruleOwner(r); owner != "" && owner != groupOwner(cur) {
			// A rule another project owns (an admin's `openstack security group rule create`
			// into this group): Neutron hides it from the group project's token, which is
			// answered 404 on delete, so only the admin scope can remove it.
			if del, err = s.Clients.Network(ctx, ""); err != nil {
				return err
			}
		}
		if err := rules.Delete(ctx, del, r.ID).ExtractErr(); err != nil && !openstack.IsNotFound(err) {
			return fmt.Errorf("removing rule %s: %w", r.ID, err)
		}
	}
	for k, r := range want {
		if have[k] {
			continue
		}
		_, err := rules.Create(ctx, sc, ruleCreate{CreateOpts: rules.CreateOpts{
			Direction: rules.RuleDirection(k.direction), EtherType: rules.RuleEtherType(k.ethertype),
			SecGroupID: cur.ID, Protocol: rules.RuleProtocol(k.protocol),
			RemoteIPPrefix: k.remoteIP, RemoteGroupID: k.remoteGroup, Description: r.Description,
		}, min: r.PortRangeMin, max: r.PortRangeMax}).Extract()
		if err != nil {
			return fmt.Errorf("adding rule %s %s: %w", k.direction, k.protocol, err)
		}
	}
	return nil
}

func (actuator) Observe(sg *kupenstackv1.SecurityGroup, res *groups.SecGroup) (bool, string) {
	st := &kupenstackv1.SecurityGroupResourceStatus{Name: res.Name, Description: res.Description, Stateful: res.Stateful, Tags: res.Tags}
	for _, r := range res.Rules {
		st.Rules = append(st.Rules, kupenstackv1.SecurityGroupRuleStatus{
			ID: r.ID, Direction: r.Direction, Ethertype: r.EtherType, Protocol: r.Protocol,
			PortRangeMin: r.PortRangeMin, PortRangeMax: r.PortRangeMax, RemoteIPPrefix: r.RemoteIPPrefix, RemoteGroupID: r.RemoteGroupID,
		})
	}
	sg.Status.Resource = st
	return true, ""
}

// ruleCreate sends the port range (or ICMP type and code) as the spec has it: gophercloud leaves
// out a 0, which for ICMP type 0 (echo reply) or code 0 would allow every type or code.
type ruleCreate struct {
	rules.CreateOpts
	min, max *int
}

func (o ruleCreate) ToSecGroupRuleCreateMap() (map[string]any, error) {
	m, err := o.CreateOpts.ToSecGroupRuleCreateMap()
	if err != nil {
		return nil, err
	}
	if r, ok := m["security_group_rule"].(map[string]any); ok {
		if o.min != nil {
			r["port_range_min"] = *o.min
		}
		if o.max != nil {
			r["port_range_max"] = *o.max
		}
	}
	return m, nil
}
