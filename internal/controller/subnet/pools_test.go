package subnet

import (
	"context"
	"strings"
	"testing"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
	"github.com/kupenstack/kupenstack/internal/controller/generic"
)

// TestCheckAllocationPools: Neutron's allocation pool rules, IPv6 above all (objects stored
// before admission's rules existed reach this check).
func TestCheckAllocationPools(t *testing.T) {
	type p struct{ start, end string }
	for _, tt := range []struct {
		name    string
		cidr    string
		gateway string
		pools   []p
		wantErr string
	}{
		{"no pools", "fd00::/64", "", nil, ""},
		{"ipv6 ok", "fd00::/64", "fd00::1", []p{{"fd00::2", "fd00::ff"}, {"fd00::100", "fd00::1ff"}}, ""},
		{"ipv6 to the last address", "fd00::/120", "", []p{{"fd00::2", "fd00::ff"}}, ""},
		{"ipv6 single address", "fd00::/64", "", []p{{"fd00::5", "fd00::5"}}, ""},
		{"ipv6 reversed", "fd00::/64", "", []p{{"fd00::20", "fd00::10"}}, "spec.allocationPools[0]: start must not be after end (fd00::20 is after fd00::10)"},
		{"ipv6 reversed across groups", "fd00::/64", "", []p{{"fd00::1:0", "fd00::ffff"}}, "start must not be after end"},
		{"ipv6 overlap", "fd00::/64", "", []p{{"fd00::10", "fd00::20"}, {"fd00::20", "fd00::30"}}, "spec.allocationPools[1]: allocation pools must not overlap (spec.allocationPools[0] is fd00::10-fd00::20)"},
		{"ipv6 nested", "fd00::/64", "", []p{{"fd00::10", "fd00::90"}, {"fd00::20", "fd00::30"}}, "allocation pools must not overlap"},
		{"ipv6 duplicate", "fd00::/64", "", []p{{"fd00::10", "fd00::20"}, {"fd00::10", "fd00::20"}}, "allocation pools must not overlap"},
		{"ipv6 adjacent", "fd00::/64", "", []p{{"fd00::10", "fd00::1f"}, {"fd00::20", "fd00::30"}}, ""},
		{"ipv6 outside", "fd00::/64", "", []p{{"fd00::10", "fd00:0:0:1::1"}}, "allocation pools must be inside the cidr fd00::/64"},
		{"ipv6 network address", "fd00::/64", "", []p{{"fd00::", "fd00::10"}}, "an allocation pool cannot start at the cidr's network address fd00::"},
		{"ipv6 gateway in pool", "fd00::/64", "fd00::15", []p{{"fd00::10", "fd00::20"}}, "spec.gatewayIP: gatewayIP must not be inside an allocation pool (spec.allocationPools[0] is fd00::10-fd00::20)"},
		{"ipv6 dotted quad reversed", "64:ff9b::/96", "", []p{{"64:ff9b::10.0.0.20", "64:ff9b::10.0.0.10"}}, "start must not be after end"},
		{"ipv6 dotted quad overlap", "64:ff9b::/96", "", []p{{"64:ff9b::10.0.0.10", "64:ff9b::a00:14"}, {"64:ff9b::10.0.0.20", "64:ff9b::10.0.0.30"}}, "allocation pools must not overlap"},
		{"ipv6 gateway disabled", "fd00::/64", "", []p{{"fd00::10", "fd00::20"}}, ""},
		{"mixed versions", "fd00::/64", "", []p{{"10.0.0.1", "fd00::20"}}, "start and end must be of the cidr's IP version"},
		{"ipv4 pool in ipv6 subnet", "fd00::/64", "", []p{{"10.0.0.1", "10.0.0.2"}}, "start and end must be of the cidr's IP version"},
		{"not an address", "fd00::/64", "", []p{{"fd00::zz", "fd00::20"}}, "start and end must be IP addresses"},
		{"zone", "fe80::/64", "", []p{{"fe80::1%eth0", "fe80::20"}}, "start and end must be IP addresses"},
		{"ipv4 ok", "10.0.0.0/24", "10.0.0.1", []p{{"10.0.0.2", "10.0.0.254"}}, ""},
		{"ipv4 broadcast", "10.0.0.0/24", "", []p{{"10.0.0.2", "10.0.0.255"}}, "an IPv4 allocation pool cannot include the broadcast address 10.0.0.255"},
		{"ipv4 reversed", "10.0.0.0/24", "", []p{{"10.0.0.20", "10.0.0.10"}}, "start must not be after end"},
		{"ipv4 overlap", "10.0.0.0/24", "", []p{{"10.0.0.10", "10.0.0.20"}, {"10.0.0.15", "10.0.0.30"}}, "allocation pools must not overlap"},
		{"imported without cidr", "", "", []p{{"10.0.0.20", "10.0.0.10"}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := &kupenstackv1.SubnetSpec{SubnetParameters: kupenstackv1.SubnetParameters{CIDR: tt.cidr, GatewayIP: tt.gateway}}
			for _, r := range tt.pools {
				spec.AllocationPools = append(spec.AllocationPools, kupenstackv1.AllocationPool{Start: r.start, End: r.end})
			}
			err := CheckAllocationPools(&spec.SubnetParameters)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestCreateChecksPoolsBeforeNeutron: a subnet whose pools Neutron would refuse is answered with
// the configuration error (Degraded/InvalidConfiguration and a Warning Event, by the engine)
// without a Neutron client being made: the scope here has no cloud at all.
func TestCreateChecksPoolsBeforeNeutron(t *testing.T) {
	sn := &kupenstackv1.Subnet{Spec: kupenstackv1.SubnetSpec{NetworkRef: "net", SubnetParameters: kupenstackv1.SubnetParameters{CIDR: "fd00::/64",
		AllocationPools: []kupenstackv1.AllocationPool{{Start: "fd00::20", End: "fd00::10"}}}}}
	_, err := tenantActuator.Create(context.Background(), generic.Scope{}, sn)
	if err == nil || !strings.Contains(err.Error(), "spec.allocationPools[0]: start must not be after end") {
		t.Fatalf("Create = %v", err)
	}
	if !generic.IsInvalidConfig(err) {
		t.Fatalf("%v is not a configuration error: it would be retried as transient", err)
	}
}
