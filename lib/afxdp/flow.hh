// Megaflows in XDP: what our XDP program does with a packet a megaflow
// matches, decided once when OVS puts the flow.
//
// translate() is the one place that decides whether XDP can execute a
// megaflow's actions exactly as OVS would.  It walks the actions in order
// over what the match pins down about the packet (tagged or not), and
// yields one XdpFlow: a verdict (drop, redirect to one interface, or up to
// the socket with the flow's mark for OVS) and the rewrites to make
// before a redirect.  Anything it cannot prove exact goes up to the
// socket, with the reason, so that a packet is never forwarded in XDP
// where OVS would have done anything else.
//
// FlowTable is a port's set of offloaded flows as the XDP program's maps
// hold them: one masked key per flow, found through the list of distinct
// masks, both bounded.  It is the program's maps' model: what fits and
// what each put and delete changes.
#ifndef AFXDP_FLOW_HH
#define AFXDP_FLOW_HH

#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "afxdp.h"

namespace afxdp {

static_assert(sizeof(afxdp_flow_key) == 80, "the XDP program's key layout");

// What XDP does with a packet the flow matches.
enum class Verdict : uint8_t {
    kDrop,        // XDP_DROP.
    kRedirect,    // Rewrite, then bpf_redirect_map() to 'ifindex'.
    kToSocket,    // Up to the AF_XDP socket with 'mark' (partial offload).
};

// The VLAN rewrite before a redirect.
enum class VlanOp : uint8_t {
    kNone,
    kPop,         // Remove the tag.
    kPush,        // Add 'tpid'/'tci' to an untagged packet.
    kReplace,     // Tagged in, tagged out: overwrite 'tpid'/'tci'.
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

// The flows of one port, as the XDP program's maps hold them.
class FlowTable {
public:
    static constexpr size_t kMaxMasks = 32;      // Lookups per packet.
    static constexpr size_t kMaxFlows = 16384;   // Entries of the flow map.

    // Puts (or replaces) the flow OVS knows by 'ufid'.  -ENOSPC if the
    // flow map or the mask list is full, -EEXIST if another flow has the
    // same mask and masked key (the map holds one); the table is then
    // unchanged.
    int put(const std::array<uint32_t, 4> &ufid, const XdpFlow &);
    // -ENOENT if there is no such flow.
    int del(const std::array<uint32_t, 4> &ufid);
    const XdpFlow *find(const std::array<uint32_t, 4> &ufid) const;

    // The masks in the order the program tries them.
    const std::vector<afxdp_flow_key> &masks() const { return masks_; }
    size_t n_flows() const { return flows_.size(); }
    // Which flow a packet with fields 'packet' meets first, as the
    // program finds it: nullptr if none.
    const XdpFlow *lookup(const afxdp_flow_key &packet) const;

private:
    int mask_index(const afxdp_flow_key &) const;
    void unref_mask(const afxdp_flow_key &);

    std::map<std::array<uint32_t, 4>, XdpFlow> flows_;
    std::vector<afxdp_flow_key> masks_;
    std::vector<size_t> mask_refs_;
};

// key & mask, field by field over the whole struct.
afxdp_flow_key masked(const afxdp_flow_key &key, const afxdp_flow_key &mask);
bool key_equal(const afxdp_flow_key &, const afxdp_flow_key &);

}  // namespace afxdp

#endif  // AFXDP_FLOW_HH
