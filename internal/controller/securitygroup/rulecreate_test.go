package securitygroup

import (
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
)

// TestRuleCreateSendsZero: ICMP type 0 (echo reply) and code 0 reach Neutron; left out, as
// gophercloud leaves out a 0, they would allow every ICMP type or code.
func TestRuleCreateSendsZero(t *testing.T) {
	zero, eight := 0, 8
	for _, tt := range []struct {
		min, max *int
		want     map[string]any
	}{
		{&zero, nil, map[string]any{"port_range_min": 0}},
		{&eight, &zero, map[string]any{"port_range_min": 8, "port_range_max": 0}},
		{nil, nil, map[string]any{}},
	} {
		m, err := ruleCreate{CreateOpts: rules.CreateOpts{Direction: rules.DirIngress, EtherType: rules.EtherType4,
			SecGroupID: "sg", Protocol: rules.ProtocolICMP}, min: tt.min, max: tt.max}.ToSecGroupRuleCreateMap()
		if err != nil {
			t.Fatal(err)
		}
		r := m["security_group_rule"].(map[string]any)
		for _, k := range []string{"port_range_min", "port_range_max"} {
			if got, want := r[k], tt.want[k]; got != want {
				t.Errorf("%v/%v: %s = %v, want %v", tt.min, tt.max, k, got, want)
			}
		}
	}
}
