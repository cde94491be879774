// What the kernel's "netdev" generic netlink family (Linux 6.3) says about
// a device: the XDP features its driver has now (xdp-features), and the
// packet hints it gives XDP programs (xdp-rx-metadata-features, 6.8);
// before 6.3, what rtnetlink says of a veth's peer.  One request per
// question, on a socket of its own.
#ifndef AFXDP_NETDEV_NL_HH
#define AFXDP_NETDEV_NL_HH

#include <cstddef>
#include <cstdint>

#include "result.hh"

namespace afxdp {

// Attributes of the family's device (linux/netdev.h, which older uapi
// headers lack), and their bits we read.
inline constexpr uint16_t kNetdevAttrXdpFeatures = 3;   // u64, 6.3.
inline constexpr uint16_t kNetdevAttrRxMetadata = 5;    // u64, 6.8.
inline constexpr uint64_t kNetdevXdpActNdoXmit = 1 << 2;
inline constexpr uint64_t kNetdevRxMetadataHash = 1 << 1;
inline constexpr uint64_t kNetdevRxMetadataVlanTag = 1 << 2;

// Device 'ifindex''s u64 attribute 'attr' into '*value': 0, -EOPNOTSUPP
// if the kernel does not say (no such family or attribute), or -errno.
int netdev_dev_attr(int ifindex, uint16_t attr, uint64_t *value) noexcept;

// Whether frames an XDP program redirects to 'ifindex' get out: its
// driver transmits XDP frames now (NETDEV_XDP_ACT_NDO_XMIT).  On veth
// that holds only while the peer has an XDP program or GRO on, and the
// kernel updates the bit as that changes.  No failure if they do; else
// -EOPNOTSUPP (also where the kernel does not say) or the errno of the
// question, and why.  Some drivers other than veth take them only while
// an XDP program is attached in native mode.
Failure check_xdp_redirect_target(int ifindex) noexcept;

// Whether interface 'ifindex' is the one named 'name' (in this network
// namespace): an index freed by a deleted interface may be given to the
// next one created, or to one moved in.  Else -ENODEV and why.
Failure check_interface_is(int ifindex, const char *name) noexcept;

// Both: a redirect target that is still interface 'name' (nullptr: any)
// and takes XDP frames now.
Failure check_xdp_target(int ifindex, const char *name) noexcept;

// The same answer where the kernel has no xdp-features to ask (before
// Linux 6.3), for veth, from its peer: a veth takes redirected frames
// while its peer is up with NAPI on, that is with an XDP program in
// native mode or GRO on (veth_xdp_xmit() checks the peer's NAPI).
// rtnetlink tells the peer's program in any namespace; ethtool tells
// its GRO in its own namespace, which the thread enters for the question:
// found among /run/netns and the processes' namespaces (so one visible
// in OVS's mount and PID namespaces), where it was found before, and not
// looked for again for 5 s after it was not.  Needs CAP_SYS_ADMIN (and
// CAP_SYS_PTRACE for other users' processes); where the GRO cannot be
// read, its errno and why.  A peer down: -ENETDOWN.  Any other driver:
// the kernel cannot say, so -EOPNOTSUPP.
Failure check_veth_peer_takes_xdp(int ifindex) noexcept;

// Whether packets that interface 'ifindex' receives may come from a
// sender on this host with their TCP or UDP checksum left for the device
// to finish (l4csum.hh): a veth (its peer's stack) or a tap (a VM's or
// a program's writes).  Not a physical NIC: what arrives from the wire
// is finished.
bool local_senders_may_leave_csums(int ifindex) noexcept;

}  // namespace afxdp

#endif  // AFXDP_NETDEV_NL_HH
