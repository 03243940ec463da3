package subnet

import (
	"fmt"
	"net/netip"

	kupenstackv1 "github.com/kupenstack/kupenstack/api/v1alpha1"
)

// CheckAllocationPools applies Neutron's rules for allocation pools (validate_allocation_pools:
// well-formed, not reversed, inside the cidr without its network address, nor the broadcast
// address of an IPv4 subnet, no overlap, gateway outside every pool) before Neutron is asked.
// Admission checks the same (IPv6 by cidr containment, see subnet_types.go); this catches objects
// stored before a rule existed, with a message naming the field rather than Neutron's.
func CheckAllocationPools(spec *kupenstackv1.SubnetParameters) error {
	if len(spec.AllocationPools) == 0 {
		return nil
	}
	prefix, err := netip.ParsePrefix(spec.CIDR)
	if err != nil {
		return nil // an imported subnet, or a cidr admission refuses: Neutron answers for it
	}
	prefix = prefix.Masked()
	first := prefix.Addr() // the network address; pools start after it
	last := lastAddr(prefix)
	if prefix.Addr().Is4() {
		last = last.Prev() // the broadcast address
	}
	type pool struct{ start, end netip.Addr }
	var parsed []pool
	for i, p := range spec.AllocationPools {
		field := fmt.Sprintf("spec.allocationPools[%d]", i)
		start, err1 := netip.ParseAddr(p.Start)
		end, err2 := netip.ParseAddr(p.End)
		switch {
		case err1 != nil || err2 != nil || start.Zone() != "" || end.Zone() != "":
			return fmt.Errorf("%s: start and end must be IP addresses", field)
		case start.Is4() != end.Is4() || start.Is4() != prefix.Addr().Is4():
			return fmt.Errorf("%s: start and end must be of the cidr's IP version", field)
		case start.Compare(end) > 0:
			return fmt.Errorf("%s: start must not be after end (%s is after %s)", field, start, end)
		case !prefix.Contains(start) || !prefix.Contains(end):
			return fmt.Errorf("%s: allocation pools must be inside the cidr %s", field, prefix)
		case start == first:
			return fmt.Errorf("%s: an allocation pool cannot start at the cidr's network address %s", field, first)
		case end.Compare(last) > 0:
			return fmt.Errorf("%s: an IPv4 allocation pool cannot include the broadcast address %s", field, last.Next())
		}
		for j, q := range parsed {
			if start.Compare(q.end) <= 0 && q.start.Compare(end) <= 0 {
				return fmt.Errorf("%s: allocation pools must not overlap (spec.allocationPools[%d] is %s-%s)", field, j, q.start, q.end)
			}
		}
		parsed = append(parsed, pool{start, end})
	}
	if gw, err := netip.ParseAddr(spec.GatewayIP); err == nil && !spec.DisableGateway {
		for i, p := range parsed {
			if p.start.Compare(gw) <= 0 && gw.Compare(p.end) <= 0 {
				return fmt.Errorf("spec.gatewayIP: gatewayIP must not be inside an allocation pool (spec.allocationPools[%d] is %s-%s)", i, p.start, p.end)
			}
		}
	}
	return nil
}

// lastAddr is the last address of prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	bits := p.Bits()
	for i := range b {
		for bit := 0; bit < 8; bit++ {
			if i*8+bit >= bits {
				b[i] |= 0x80 >> bit
			}
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
