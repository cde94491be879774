// Test helper: a sender whose VLAN tag is offloaded, without 8021q.
//
// A NIC, or veth with `txvlan on` (its default), carries a VLAN tag
// outside the frame, in the packet's metadata; the receiving driver then
// has it as metadata too, and XDP sees an untagged frame.  This kernel
// has no 8021q module to make such a sender, so a tc program does it:
// on egress it gives every packet the tag 'vid' the way the 8021q driver
// does (bpf_skb_vlan_push: an offloaded tag), and on ingress it takes any
// tag off (bpf_skb_vlan_pop), so that the interface's own IP stack sees
// untagged traffic both ways, like a VLAN interface on top of it.
#ifndef AFXDP_TESTS_TC_VLAN_HH
#define AFXDP_TESTS_TC_VLAN_HH

#include <cstdint>
#include <string>

namespace afxdp_test {

// Attaches both programs to 'ifname' (in this thread's namespace);
// returns "" on success, else what failed.
std::string tc_vlan_attach(const char *ifname, uint16_t vid);

// Removes them (the clsact qdisc); returns "" on success.
std::string tc_vlan_detach(const char *ifname);

}  // namespace afxdp_test

#endif  // AFXDP_TESTS_TC_VLAN_HH
