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
#include <cstring>

#include "afxdp-offload.h"

#include "fastpath-maps.h"

namespace afxdp {

// The hints, as bits.
enum RxHint : unsigned {
    kHintHash = AFXDP_FP_HINT_HASH,   // bpf_xdp_metadata_rx_hash.
    kHintVlan = AFXDP_FP_HINT_VLAN,   // bpf_xdp_metadata_rx_vlan_tag.
};

// What a program with hints leaves in front of every packet it redirects
// (fastpath-maps.h has the layout, shared with the fast path's program,
// which may put a flow's mark in front of it).
struct RxMeta {
    uint32_t hash;    // The driver's RSS hash, if kMetaHash.
    uint32_t flags;   // kMetaMagic | kMeta* bits.
};

// Where the kernel puts a received packet in its frame, in copy and
// zero-copy mode alike: after our UMEM headroom and its own XDP headroom;
// 4 bytes earlier if the program put a stripped VLAN tag back.  An RxMeta
// is taken only in front of these two places.
inline constexpr uint32_t kRxDataOffset = AFXDP_FRAME_HEADROOM
                                          + AFXDP_XDP_HEADROOM;
inline constexpr uint32_t kRxTaggedDataOffset = kRxDataOffset - 4;

// Many drivers cannot carry XDP metadata (gve, mana, sfc, mvneta...):
// the program's bpf_xdp_adjust_meta() fails there, and the kernel puts
// nothing in front of the packet.  What the socket then finds there is
// whatever the frame held before: a packet sent from it, or a header OVS
// pushed into its headroom, bytes a sender chooses, which could forge a
// flow's mark.  So before a frame goes to the kernel to receive into,
// the flags word of both places an RxMeta may sit is zeroed (bytes 376 to
// 383, one store): the magic there is then the kernel's, for this packet.
inline void
forget_rx_meta(uint8_t *frame) noexcept
{
    static_assert(kRxTaggedDataOffset - sizeof(RxMeta) + sizeof(uint32_t)
                  + sizeof(uint64_t) == kRxDataOffset,
                  "one 8-byte store covers both flags words");
    std::memset(frame + kRxTaggedDataOffset - sizeof(uint32_t), 0,
                sizeof(uint64_t));
}

inline constexpr uint32_t kMetaMagic = AFXDP_META_MAGIC;
inline constexpr uint32_t kMetaMagicMask = AFXDP_META_MAGIC_MASK;
inline constexpr uint32_t kMetaHash = AFXDP_META_HASH;
inline constexpr uint32_t kMetaVlanRestored = AFXDP_META_VLAN_RESTORED;
inline constexpr uint32_t kMetaVlanLost = AFXDP_META_VLAN_LOST;
inline constexpr uint32_t kMetaMark = AFXDP_META_MARK;

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

// Whether an XDP program of ours may read the kernel's buffer behind its
// context: the kernel has bpf_cast_to_kern_ctx() (Linux 6.2) and this
// process the capability the verifier asks for a read through it
// (CAP_PERFMON, or CAP_SYS_ADMIN).  The fast path then takes a packet's
// length from the buffer's flags, with no helper's call
// (AFXDP_FP_BUFF_FLAGS).
bool buffer_flags_readable() noexcept;

// Whether this kernel lets an XDP program put metadata in front of a
// packet (bpf_xdp_adjust_meta(); some builds refuse the helper to every
// XDP program), asked once per process.  Without it no hint, hash or mark
// reaches the socket: kNoXdpMetaWhy says so.
bool xdp_meta_writable() noexcept;
extern const char kNoXdpMetaWhy[];

}  // namespace afxdp

#endif  // AFXDP_HINTS_HH
