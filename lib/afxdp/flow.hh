// Megaflows in XDP: what our XDP program does with a packet a megaflow
// matches, decided once when OVS puts the flow.
//
// translate() (translate.cc) is the one place that decides whether XDP can execute a
// megaflow's actions exactly as OVS would.  It walks the actions in order
// over what the match pins down about the packet (tagged or not), and
// yields one XdpFlow: a verdict (drop, redirect to one interface, or up to
// the socket with the flow's mark for OVS) and the rewrites to make
// before a redirect.  Anything it cannot prove exact goes up to the
// socket, with the reason, so that a packet is never forwarded in XDP
// where OVS would have done anything else.
//
// FlowTable (flow_table.cc) is a port's set of offloaded flows as the XDP program's maps
// hold them: one masked key per flow, in a bounded number of mask slots
// and counter slots.  It is the program's maps' model (FastPath keeps the
// maps equal to one): what fits, where it sits, and which flow a packet
// meets.  describe() (describe.cc) puts either in one line.
#ifndef AFXDP_FLOW_HH
#define AFXDP_FLOW_HH

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "afxdp-offload.h"
#include "fastpath-maps.h"

namespace afxdp {

static_assert(sizeof(afxdp_flow_key) == 80, "the XDP program's key layout");

// What XDP does with a packet the flow matches (valued as the program's
// maps hold it).
enum class Verdict : uint8_t {
    kDrop = AFXDP_FP_DROP,             // XDP_DROP.
    kRedirect = AFXDP_FP_REDIRECT,     // Rewrite, then to 'ifindex'.
    kToSocket = AFXDP_FP_TO_SOCKET,    // Up to the socket with 'mark'
                                       // (partial offload).
};

// The VLAN rewrite before a redirect.
enum class VlanOp : uint8_t {
    kNone = AFXDP_FP_VLAN_NONE,
    kPop = AFXDP_FP_VLAN_POP,          // Remove the tag.
    kPush = AFXDP_FP_VLAN_PUSH,        // Add 'tpid'/'tci' to an untagged
                                       // packet.
    kReplace = AFXDP_FP_VLAN_REPLACE,  // Tagged in, tagged out: overwrite
                                       // 'tpid'/'tci'.
};

struct XdpFlow {
    afxdp_flow_key key{};     // Masked: key & mask.
    afxdp_flow_key mask{};
    Verdict verdict = Verdict::kToSocket;
    afxdp_offload_refusal refusal = AFXDP_REFUSED_N;  // With kToSocket.
    int ifindex = 0;                                  // With kRedirect.
    VlanOp vlan = VlanOp::kNone;
    uint16_t tpid = 0, tci = 0;                       // Host order.
    std::array<uint8_t, 6> eth_src{}, eth_src_mask{};
    std::array<uint8_t, 6> eth_dst{}, eth_dst_mask{};
    // The IP header's rewrite, as afxdp_flow_action's set_ip says OVS
    // makes it: 0 (none), 4 or 6.
    uint8_t set_ip = 0;
    uint8_t nw_tos = 0, nw_tos_mask = 0;    // IPv6: the traffic class.
    uint8_t nw_ttl = 0, nw_ttl_mask = 0;    // IPv6: the hop limit.
    uint32_t nw_src = 0, nw_src_mask = 0;   // IPv4 only; network order.
    uint32_t nw_dst = 0, nw_dst_mask = 0;
    std::array<uint8_t, 16> ipv6_src{}, ipv6_src_mask{};   // IPv6 only.
    std::array<uint8_t, 16> ipv6_dst{}, ipv6_dst_mask{};
    uint32_t ipv6_label = 0, ipv6_label_mask = 0;   // Network order.
    // The TCP or UDP ports' rewrite, as afxdp_flow_action's set_l4 says
    // OVS makes it: 0 (none), 6 or 17.
    uint8_t set_l4 = 0;
    uint16_t tp_src = 0, tp_src_mask = 0;   // Network byte order.
    uint16_t tp_dst = 0, tp_dst_mask = 0;
    uint32_t mark = 0;                                // OVS's flow mark.
};

// What translate() says: the flow, or, for a match XDP cannot evaluate
// (refusal == AFXDP_REFUSED_match_field), no flow at all.
struct Translation {
    bool offloadable() const { return refusal != AFXDP_REFUSED_match_field; }
    bool full() const { return refusal == AFXDP_REFUSED_N; }
    XdpFlow flow;
    afxdp_offload_refusal refusal = AFXDP_REFUSED_N;
    const char *detail = nullptr;   // The field or action named, if any.
};

Translation translate(const afxdp_flow_match &, const afxdp_flow_action *,
                      size_t n_actions, uint32_t mark);

// The translation as the program's maps hold it, in one line: the masked
// key's fields that the mask touches (value, and "/mask" where the mask
// is not the whole field), then what XDP does:
//   "dl_type=0x800 nw_dst=10.0.0.2 -> redirect(ifindex=5,pop_vlan)"
//   "dl_type=0x800 -> ovs(action: ct)"         (partial offload)
//   "-> userspace(match_field: ct_state)"      (not in the maps)
std::string describe(const Translation &);

// The flows of one port, as the XDP program's maps hold them: each flow
// in one of kMaxMasks mask slots (shared by the flows with that mask) and
// in one of kMaxFlows counter slots.  A slot keeps its number while in
// use, so that the program's entries need not move.
class FlowTable {
public:
    // The program's maps' sizes (fastpath-maps.h, shared with it).
    static constexpr size_t kMaxMasks = AFXDP_FP_MAX_MASKS;   // Lookups.
    static constexpr size_t kMaxFlows = AFXDP_FP_MAX_FLOWS;   // Flows.
    using Ufid = std::array<uint32_t, 4>;

    struct Entry {
        XdpFlow flow;
        uint32_t mask_slot;    // The mask's slot.
        uint32_t stats_slot;   // The flow's counters' slot.
    };

    // Puts (or replaces) the flow OVS knows by 'ufid'.  -ENOSPC if the
    // flow map or the mask slots are full, -EEXIST if another flow has the
    // same mask and masked key, or its masked key's fp_key_hash() (the map
    // holds one); the table is then unchanged.  A replaced flow keeps its counters' slot.
    int put(const Ufid &ufid, const XdpFlow &);
    // -ENOENT if there is no such flow.
    int del(const Ufid &ufid);
    const XdpFlow *find(const Ufid &ufid) const;
    const Entry *entry(const Ufid &ufid) const;

    size_t n_flows() const { return flows_.size(); }
    size_t n_masks() const;
    // Every mask in use is in a slot below this.
    uint32_t mask_slots() const;
    // The mask in 'slot', or nullptr if the slot is free.
    const afxdp_flow_key *mask_at(uint32_t slot) const;
    // Which flow a packet with fields 'packet' meets first, as the
    // program finds it (slot by slot): nullptr if none.
    const XdpFlow *lookup(const afxdp_flow_key &packet) const;

private:
    int slot_of(const afxdp_flow_key &mask) const;

    std::map<Ufid, Entry> flows_;
    // Each flow by its mask's slot and its key's fp_key_hash(), as the
    // program's flow map holds it: put() finds a clash without a walk.
    std::map<std::pair<uint32_t, uint64_t>, Ufid> by_key_;
    std::array<afxdp_flow_key, kMaxMasks> masks_{};
    std::array<size_t, kMaxMasks> mask_refs_{};   // 0: the slot is free.
    std::deque<uint32_t> free_stats_;             // Counter slots given
                                                  // back, oldest first.
    uint32_t next_stats_ = 0;                     // Never used yet from here.
};

// A 16-bit field in network byte order, as the key and the program's maps
// hold it (compared as bytes), without <arpa/inet.h>'s macros.
inline uint16_t
to_be16(uint16_t host)
{
    const uint8_t b[2] = {uint8_t(host >> 8), uint8_t(host)};
    uint16_t v;
    std::memcpy(&v, b, 2);
    return v;
}

// key & mask, field by field over the whole struct.
afxdp_flow_key masked(const afxdp_flow_key &key, const afxdp_flow_key &mask);
bool key_equal(const afxdp_flow_key &, const afxdp_flow_key &);
// The hash the program's flow map is keyed by, with the mask slot
// (afxdp_fp_key_hash() of fastpath-maps.h): of a masked key.
uint64_t fp_key_hash(const afxdp_flow_key &);

}  // namespace afxdp

#endif  // AFXDP_FLOW_HH
