// Megaflows in XDP: translate() (flow.hh), what XDP makes of a megaflow's
// match and actions, one function per kind of action.
#include "flow.hh"

#include <arpa/inet.h>

#include <cstring>

namespace afxdp {

namespace {

constexpr uint16_t kVlanCfi = 0x1000;   // OVS's "has a tag" bit.

// What the match pins down about the packet's VLAN tag, and so about
// every push or pop the actions make.
enum class Tag { kUnknown, kAbsent, kPresent };

Tag
tag_in(const afxdp_flow_match &m)
{
    const uint16_t cfi = to_be16(kVlanCfi);
    if (!(m.mask.vlan_tci & cfi)) {
        return Tag::kUnknown;
    }
    return m.key.vlan_tci & cfi ? Tag::kPresent : Tag::kAbsent;
}

// The walk over the actions: the packet's tag as the actions leave it,
// the rewrites so far, and the one output.
struct Walk {
    Tag tag;
    bool tag_changed = false;
    uint16_t tpid = 0, tci = 0;
    bool dropped = false;
    const afxdp_flow_action *output = nullptr;
    std::array<uint8_t, 6> src{}, src_mask{}, dst{}, dst_mask{};
    const afxdp_flow_action *set_ip = nullptr;
    const afxdp_flow_action *set_l4 = nullptr;
};

// Whether a set of IP fields changes nothing in any packet: OVS writes
// IPv4's fields only where their mask is nonzero, and IPv6's as value |
// (old & ~mask) whatever the mask.
bool
set_ip_is_noop(const afxdp_flow_action &a)
{
    if (a.set_ip.version == 4) {
        return !a.set_ip.tos_mask && !a.set_ip.ttl_mask
               && !a.set_ip.src_mask && !a.set_ip.dst_mask;
    }
    uint8_t any = a.set_ip.tos | a.set_ip.tos_mask | a.set_ip.ttl
                  | a.set_ip.ttl_mask;
    for (int i = 0; i < 16; i++) {
        any |= a.set_ip.src6[i] | a.set_ip.src6_mask[i] | a.set_ip.dst6[i]
               | a.set_ip.dst6_mask[i];
    }
    return !any && !(a.set_ip.label | a.set_ip.label_mask);
}

// Whether a set of ports changes nothing in any packet: OVS writes each
// port as value | (old & ~mask).
bool
set_l4_is_noop(const afxdp_flow_action &a)
{
    return !(a.set_l4.src | a.set_l4.src_mask | a.set_l4.dst
             | a.set_l4.dst_mask);
}

// The Ethernet type the match pins down (host order), or 0 if it leaves
// it open.
uint16_t
pinned_dl_type(const afxdp_flow_match &m)
{
    return m.mask.dl_type == 0xffff ? ntohs(m.key.dl_type) : 0;
}

// Whether the match rules out a later fragment, whose payload OVS would
// take for an L4 header: its ports' and checksum's bytes rewritten.
bool
no_later_fragment(const afxdp_flow_match &m)
{
    constexpr uint8_t kLater = 2;   // OVS's FLOW_NW_FRAG_LATER.
    return (m.mask.nw_frag & kLater) && !(m.key.nw_frag & kLater);
}

// Later set_eth bits override earlier ones, as OVS applies them in turn:
// OVS writes key | (old & ~mask) (odp-execute.c), so a key bit outside
// the mask (a flow put with dpctl may have one) is set all the same.
void
merge_eth(std::array<uint8_t, 6> &value, std::array<uint8_t, 6> &mask,
          const uint8_t *set, const uint8_t *set_mask)
{
    for (size_t i = 0; i < 6; i++) {
        uint8_t m = set_mask[i] | set[i];
        value[i] = (value[i] & ~m) | set[i];
        mask[i] |= m;
    }
}

// Why an action keeps the flow out of XDP; none if 'why' is
// AFXDP_REFUSED_N.
struct Refusal {
    afxdp_offload_refusal why = AFXDP_REFUSED_N;
    const char *detail = nullptr;
    explicit operator bool() const { return why != AFXDP_REFUSED_N; }
};

Refusal
output(Walk &w, const afxdp_flow_action &a)
{
    if (w.output) {
        return {AFXDP_REFUSED_several_outputs, a.output.name};
    }
    if (!a.output.xdp_target || a.output.ifindex <= 0) {
        return {AFXDP_REFUSED_output_target, a.output.name};
    }
    w.output = &a;
    return {};
}

Refusal
push_vlan(Walk &w, const afxdp_flow_action &a)
{
    // One tag at most: the program builds no 802.1ad stacks.
    if (w.tag != Tag::kAbsent
        || (a.push_vlan.tpid != 0x8100 && a.push_vlan.tpid != 0x88a8)) {
        return {AFXDP_REFUSED_vlan, "push_vlan"};
    }
    if (!w.output) {
        w.tag = Tag::kPresent;
        w.tag_changed = true;
        w.tpid = a.push_vlan.tpid;
        w.tci = a.push_vlan.tci & ~kVlanCfi;
    }
    return {};
}

Refusal
pop_vlan(Walk &w)
{
    if (w.tag != Tag::kPresent) {
        return {AFXDP_REFUSED_vlan, "pop_vlan"};
    }
    if (!w.output) {
        w.tag = Tag::kAbsent;
        w.tag_changed = true;
    }
    return {};
}

void
set_eth(Walk &w, const afxdp_flow_action &a)
{
    // After the one output a rewrite changes nothing anyone sees.
    if (!w.output) {
        merge_eth(w.src, w.src_mask, a.set_eth.src, a.set_eth.src_mask);
        merge_eth(w.dst, w.dst_mask, a.set_eth.dst, a.set_eth.dst_mask);
    }
}

Refusal
set_ip(Walk &w, const afxdp_flow_action &a, const afxdp_flow_match &match)
{
    // After the one output a rewrite changes nothing anyone sees.
    const uint16_t type = a.set_ip.version == 4 ? 0x0800
                          : a.set_ip.version == 6 ? 0x86dd : 0;
    if (w.output || (type && set_ip_is_noop(a))) {
        return {};
    }
    // OVS writes where the packet's IP header would be, whatever the
    // packet: the match must say it is one of that version.  One set
    // only: OVS updates the IPv4 checksum a set at a time, and two in a
    // row can leave it other than one would (0xffff for 0), with a
    // checksum that was wrong to begin with.  dpif-netdev's flows set
    // each header once.
    if (!type || pinned_dl_type(match) != type) {
        return {AFXDP_REFUSED_action, "set of IP fields on a packet the "
                "match does not pin to that IP version"};
    }
    if (w.set_ip) {
        return {AFXDP_REFUSED_action, "a second set of IP fields"};
    }
    // OVS ors the label's value into the header's first word: bits past
    // its 20 would land in the traffic class.  None of OVS's own flows
    // has them.
    if (type == 0x86dd && (ntohl(a.set_ip.label) & ~0xfffffu)) {
        return {AFXDP_REFUSED_action,
                "set of an IPv6 flow label past 20 bits"};
    }
    // An address changes the L4 checksum, as a set of ports does; the
    // program sets the addresses first, whatever the order of the two
    // sets.  Both add to the checksum's ones' complement sum, and their
    // order changes none of its bits: a sum comes out 0 (rather than
    // 0xffff) only if it was 0 and every term so far was 0, in any order,
    // and UDP's 0xffff for 0 after each set is another way of writing the
    // same sum.
    if (type == 0x0800 && (a.set_ip.src_mask || a.set_ip.dst_mask)
        && !no_later_fragment(match)) {
        return {AFXDP_REFUSED_action, "set of IPv4 addresses on a match "
                "that does not rule out later fragments"};
    }
    w.set_ip = &a;
    return {};
}

Refusal
set_l4(Walk &w, const afxdp_flow_action &a, const afxdp_flow_match &match)
{
    if (w.output || set_l4_is_noop(a)) {
        return {};
    }
    // OVS writes where the packet's L4 header would be, whatever the
    // packet: the match must say it has one of that protocol behind an
    // IP header of a known version, and is no later fragment (OVS takes
    // one's payload for the header).
    const uint8_t proto = a.set_l4.proto;
    const uint16_t type = pinned_dl_type(match);
    if ((proto != 6 && proto != 17 && proto != 132)
        || (type != 0x0800 && type != 0x86dd)
        || match.mask.nw_proto != 0xff || match.key.nw_proto != proto) {
        return {AFXDP_REFUSED_action, "set of ports on a packet the match "
                "does not pin to that protocol"};
    }
    if (!no_later_fragment(match)) {
        return {AFXDP_REFUSED_action, "set of ports on a match that does "
                "not rule out later fragments"};
    }
    if (w.set_l4) {
        return {AFXDP_REFUSED_action, "a second set of ports"};
    }
    w.set_l4 = &a;
    return {};
}

// One action taken into the walk, or why not.
Refusal
take(Walk &w, const afxdp_flow_action &a, const afxdp_flow_match &match)
{
    switch (a.type) {
    case AFXDP_ACTION_OUTPUT:
        return output(w, a);
    case AFXDP_ACTION_DROP:
        w.dropped = true;
        return {};
    case AFXDP_ACTION_PUSH_VLAN:
        return push_vlan(w, a);
    case AFXDP_ACTION_POP_VLAN:
        return pop_vlan(w);
    case AFXDP_ACTION_SET_ETH:
        set_eth(w, a);
        return {};
    case AFXDP_ACTION_SET_IP:
        return set_ip(w, a, match);
    case AFXDP_ACTION_SET_L4:
        return set_l4(w, a, match);
    case AFXDP_ACTION_OTHER:
    default:
        return {AFXDP_REFUSED_action,
                a.type == AFXDP_ACTION_OTHER ? a.other : nullptr};
    }
}

// The flow's IP rewrite, from the one set of IP fields.
void
fill_set_ip(XdpFlow &f, const afxdp_flow_action &a)
{
    const auto &ip = a.set_ip;
    // IPv4 ignores a field's value under a zero mask: none kept.
    const bool v4 = ip.version == 4;
    f.set_ip = ip.version;
    f.nw_tos = v4 && !ip.tos_mask ? 0 : ip.tos;
    f.nw_tos_mask = ip.tos_mask;
    f.nw_ttl = v4 && !ip.ttl_mask ? 0 : ip.ttl;
    f.nw_ttl_mask = ip.ttl_mask;
    if (v4) {
        f.nw_src = ip.src_mask ? ip.src : 0;
        f.nw_src_mask = ip.src_mask;
        f.nw_dst = ip.dst_mask ? ip.dst : 0;
        f.nw_dst_mask = ip.dst_mask;
    } else {
        std::memcpy(f.ipv6_src.data(), ip.src6, 16);
        std::memcpy(f.ipv6_src_mask.data(), ip.src6_mask, 16);
        std::memcpy(f.ipv6_dst.data(), ip.dst6, 16);
        std::memcpy(f.ipv6_dst_mask.data(), ip.dst6_mask, 16);
        f.ipv6_label = ip.label;
        f.ipv6_label_mask = ip.label_mask;
    }
}

// The flow's port rewrite, from the one set of ports.
void
fill_set_l4(XdpFlow &f, const afxdp_flow_action &a)
{
    const auto &l4 = a.set_l4;
    f.set_l4 = l4.proto;
    f.tp_src = l4.src;
    f.tp_src_mask = l4.src_mask;
    f.tp_dst = l4.dst;
    f.tp_dst_mask = l4.dst_mask;
}

// The flow's VLAN change: from the tag the match pins down to the one the
// actions leave.
void
fill_vlan(XdpFlow &f, const Walk &w, const afxdp_flow_match &match)
{
    const Tag in = tag_in(match);
    if (w.tag == Tag::kAbsent) {
        f.vlan = in == Tag::kPresent ? VlanOp::kPop : VlanOp::kNone;
    } else {
        f.vlan = in == Tag::kPresent ? VlanOp::kReplace : VlanOp::kPush;
        f.tpid = w.tpid;
        f.tci = w.tci;
    }
}

Translation
refused(Translation t, afxdp_offload_refusal why, const char *detail)
{
    t.refusal = why;
    t.detail = detail;
    t.flow.verdict = Verdict::kToSocket;
    t.flow.refusal = why;
    return t;
}

}  // namespace

Translation
translate(const afxdp_flow_match &match, const afxdp_flow_action *actions,
          size_t n_actions, uint32_t mark)
{
    Translation t;
    t.flow.mask = match.mask;
    std::memset(t.flow.mask.pad, 0, sizeof t.flow.mask.pad);
    t.flow.key = masked(match.key, t.flow.mask);
    t.flow.mark = mark;
    if (match.unparsed_field) {
        return refused(t, AFXDP_REFUSED_match_field, match.unparsed_field);
    }

    Walk w{tag_in(match)};
    for (size_t i = 0; i < n_actions; i++) {
        if (w.dropped) {
            return refused(t, AFXDP_REFUSED_after_drop, nullptr);
        }
        const Refusal r = take(w, actions[i], match);
        if (r) {
            return refused(t, r.why, r.detail);
        }
    }

    XdpFlow &f = t.flow;
    if (!w.output) {
        // No output, or an explicit drop: OVS drops it too.
        f.verdict = Verdict::kDrop;
        return t;
    }
    f.verdict = Verdict::kRedirect;
    f.ifindex = w.output->output.ifindex;
    f.eth_src = w.src;
    f.eth_src_mask = w.src_mask;
    f.eth_dst = w.dst;
    f.eth_dst_mask = w.dst_mask;
    if (w.set_ip) {
        fill_set_ip(f, *w.set_ip);
    }
    if (w.set_l4) {
        fill_set_l4(f, *w.set_l4);
    }
    if (w.tag_changed) {
        fill_vlan(f, w, match);
    }
    return t;
}

}  // namespace afxdp
