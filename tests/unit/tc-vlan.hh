// Test helper: a sender whose VLAN tag is offloaded, without 8021q.
//
// A NIC, or veth with `txvlan on` (its default), carries a VLAN tag
// outside the frame, in the packet's metadata; the receiving driver then
// has it as metadata too, and XDP sees an untagged frame.  This kernel
// has no 8021q module to make such a sender, so a tc program does it:
// on egress it gives every packet a tag the way the 8021q driver
// does (bpf_skb_vlan_push: an offloaded tag), and on ingress it takes any
// tag off (bpf_skb_vlan_pop), so that the interface's own IP stack sees
// untagged traffic both ways, like a VLAN interface on top of it.
#ifndef AFXDP_TESTS_TC_VLAN_HH
#define AFXDP_TESTS_TC_VLAN_HH

#include <cstdint>
#include <string>

namespace afxdp_test {

// Attaches both programs to 'ifname' (in this thread's namespace), the
// egress one pushing the tag 'tci' (VID, DEI and priority) with TPID
// 'tpid' (host order: 0x8100, or 0x88a8 for 802.1ad); returns "" on
// success, else what failed.
std::string tc_vlan_attach(const char *ifname, uint16_t tci,
                           uint16_t tpid = 0x8100);

// Removes them (the clsact qdisc); returns "" on success.
std::string tc_vlan_detach(const char *ifname);

}  // namespace afxdp_test

#endif  // AFXDP_TESTS_TC_VLAN_HH
