// The kernel's packet hints (XDP RX metadata): what a driver knows about a
// packet before any protocol parses it, which an XDP program reads with
// kfuncs (Linux 6.3: the RSS hash; 6.8: the VLAN tag the NIC stripped).
//
// Our program asks for them and passes them on to the AF_XDP socket: the
// VLAN tag put back into the frame, the hash in the packet's XDP metadata
// (an RxMeta right in front of its first byte).  Such a program is bound
// to one device and runs only in its driver (native) mode.
#ifndef AFXDP_HINTS_HH
#define AFXDP_HINTS_HH

#include <cstdint>

namespace afxdp {

// The hints, as bits.
enum RxHint : unsigned {
    kHintHash = 1 << 0,   // bpf_xdp_metadata_rx_hash.
    kHintVlan = 1 << 1,   // bpf_xdp_metadata_rx_vlan_tag.
};

// What a program with hints leaves in front of every packet it redirects.
struct RxMeta {
    uint32_t hash;    // The driver's RSS hash, if kMetaHash.
    uint32_t flags;   // kMetaMagic | kMeta* bits.
};
inline constexpr uint32_t kMetaMagic = 0x0afd0000;
inline constexpr uint32_t kMetaMagicMask = 0xffff0000;
inline constexpr uint32_t kMetaHash = 1 << 0;          // 'hash' is valid.
inline constexpr uint32_t kMetaVlanRestored = 1 << 1;  // Tag put back.
inline constexpr uint32_t kMetaVlanLost = 1 << 2;      // Tag there, and no
                                                       // room to put it back.

// Which hints a program for the interface 'ifindex' can ask for.
struct HintSupport {
    unsigned hints = 0;          // RxHint bits.
    uint32_t hash_kfunc = 0;     // BTF ids of the kfuncs in vmlinux.
    uint32_t vlan_kfunc = 0;
    const char *hash_why = "";   // Why kHintHash is not in 'hints'.
    const char *vlan_why = "";
};

// Asks the kernel (its BTF, once per process) which kfuncs it has, and the
// device's driver (netlink, each time) which it implements.  Where the
// kernel cannot say what the driver implements (before Linux 6.8), the
// hash is asked for anyway: the kfunc then tells, packet by packet.
HintSupport rx_hint_support(int ifindex) noexcept;

}  // namespace afxdp

#endif  // AFXDP_HINTS_HH
