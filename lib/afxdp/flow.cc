// Megaflows in XDP: translate() and FlowTable (see flow.hh).
#include "flow.hh"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdio>
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

Translation
refused(Translation t, afxdp_offload_refusal why, const char *detail)
{
    t.refusal = why;
    t.detail = detail;
    t.flow.verdict = Verdict::kToSocket;
    t.flow.refusal = why;
    return t;
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

}  // namespace

afxdp_flow_key
masked(const afxdp_flow_key &key, const afxdp_flow_key &mask)
{
    afxdp_flow_key out;
    const auto *k = reinterpret_cast<const uint8_t *>(&key);
    const auto *m = reinterpret_cast<const uint8_t *>(&mask);
    auto *o = reinterpret_cast<uint8_t *>(&out);
    for (size_t i = 0; i < sizeof out; i++) {
        o[i] = k[i] & m[i];
    }
    return out;
}

bool
key_equal(const afxdp_flow_key &a, const afxdp_flow_key &b)
{
    return !std::memcmp(&a, &b, sizeof a);
}

uint64_t
fp_key_hash(const afxdp_flow_key &key)
{
    static_assert(sizeof key % 8 == 0, "the key is hashed in 64-bit words");
    return afxdp_fp_key_hash(&key);
}

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
        const afxdp_flow_action &a = actions[i];
        if (w.dropped) {
            return refused(t, AFXDP_REFUSED_after_drop, nullptr);
        }
        switch (a.type) {
        case AFXDP_ACTION_OUTPUT:
            if (w.output) {
                return refused(t, AFXDP_REFUSED_several_outputs,
                               a.output.name);
            }
            if (!a.output.xdp_target || a.output.ifindex <= 0) {
                return refused(t, AFXDP_REFUSED_output_target,
                               a.output.name);
            }
            w.output = &a;
            break;
        case AFXDP_ACTION_DROP:
            w.dropped = true;
            break;
        case AFXDP_ACTION_PUSH_VLAN:
            // One tag at most: the program builds no 802.1ad stacks.
            if (w.tag != Tag::kAbsent
                || (a.push_vlan.tpid != 0x8100
                    && a.push_vlan.tpid != 0x88a8)) {
                return refused(t, AFXDP_REFUSED_vlan, "push_vlan");
            }
            if (!w.output) {
                w.tag = Tag::kPresent;
                w.tag_changed = true;
                w.tpid = a.push_vlan.tpid;
                w.tci = a.push_vlan.tci & ~kVlanCfi;
            }
            break;
        case AFXDP_ACTION_POP_VLAN:
            if (w.tag != Tag::kPresent) {
                return refused(t, AFXDP_REFUSED_vlan, "pop_vlan");
            }
            if (!w.output) {
                w.tag = Tag::kAbsent;
                w.tag_changed = true;
            }
            break;
        case AFXDP_ACTION_SET_ETH:
            // After the one output a rewrite changes nothing anyone sees.
            if (!w.output) {
                merge_eth(w.src, w.src_mask, a.set_eth.src,
                          a.set_eth.src_mask);
                merge_eth(w.dst, w.dst_mask, a.set_eth.dst,
                          a.set_eth.dst_mask);
            }
            break;
        case AFXDP_ACTION_SET_IP: {
            // After the one output a rewrite changes nothing anyone sees.
            const uint16_t type = a.set_ip.version == 4 ? 0x0800
                                  : a.set_ip.version == 6 ? 0x86dd : 0;
            if (w.output || (type && set_ip_is_noop(a))) {
                break;
            }
            // OVS writes where the packet's IP header would be, whatever
            // the packet: the match must say it is one of that version.
            // One set only: OVS updates the IPv4 checksum a set at a time,
            // and two in a row can leave it other than one would (0xffff
            // for 0), with a checksum that was wrong to begin with.
            // dpif-netdev's flows set each header once.
            if (!type || pinned_dl_type(match) != type) {
                return refused(t, AFXDP_REFUSED_action,
                               "set of IP fields on a packet the match "
                               "does not pin to that IP version");
            }
            if (w.set_ip) {
                return refused(t, AFXDP_REFUSED_action,
                               "a second set of IP fields");
            }
            // OVS ors the label's value into the header's first word:
            // bits past its 20 would land in the traffic class.  None of
            // OVS's own flows has them.
            if (type == 0x86dd && (ntohl(a.set_ip.label) & ~0xfffffu)) {
                return refused(t, AFXDP_REFUSED_action,
                               "set of an IPv6 flow label past 20 bits");
            }
            // An address changes the L4 checksum, as a set of ports does;
            // the program sets the addresses first, whatever the order of
            // the two sets.  Both add to the checksum's ones' complement
            // sum, and their order changes none of its bits: a sum comes
            // out 0 (rather than 0xffff) only if it was 0 and every term
            // so far was 0, in any order, and UDP's 0xffff for 0 after
            // each set is another way of writing the same sum.
            if (type == 0x0800 && (a.set_ip.src_mask || a.set_ip.dst_mask)
                && !no_later_fragment(match)) {
                return refused(t, AFXDP_REFUSED_action,
                               "set of IPv4 addresses on a match that "
                               "does not rule out later fragments");
            }
            w.set_ip = &a;
            break;
        }
        case AFXDP_ACTION_SET_L4: {
            if (w.output || set_l4_is_noop(a)) {
                break;
            }
            // OVS writes where the packet's L4 header would be, whatever
            // the packet: the match must say it has one of that protocol
            // behind an IP header of a known version, and is no later
            // fragment (OVS takes one's payload for the header).
            const uint8_t proto = a.set_l4.proto;
            const uint16_t type = pinned_dl_type(match);
            if ((proto != 6 && proto != 17 && proto != 132)
                || (type != 0x0800 && type != 0x86dd)
                || match.mask.nw_proto != 0xff
                || match.key.nw_proto != proto) {
                return refused(t, AFXDP_REFUSED_action,
                               "set of ports on a packet the match does "
                               "not pin to that protocol");
            }
            if (!no_later_fragment(match)) {
                return refused(t, AFXDP_REFUSED_action,
                               "set of ports on a match that does not "
                               "rule out later fragments");
            }
            if (w.set_l4) {
                return refused(t, AFXDP_REFUSED_action,
                               "a second set of ports");
            }
            w.set_l4 = &a;
            break;
        }
        case AFXDP_ACTION_OTHER:
        default:
            return refused(t, AFXDP_REFUSED_action,
                           a.type == AFXDP_ACTION_OTHER ? a.other : nullptr);
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
        const auto &ip = w.set_ip->set_ip;
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
    if (w.set_l4) {
        const auto &l4 = w.set_l4->set_l4;
        f.set_l4 = l4.proto;
        f.tp_src = l4.src;
        f.tp_src_mask = l4.src_mask;
        f.tp_dst = l4.dst;
        f.tp_dst_mask = l4.dst_mask;
    }
    if (w.tag_changed) {
        Tag in = tag_in(match);
        if (w.tag == Tag::kAbsent) {
            f.vlan = in == Tag::kPresent ? VlanOp::kPop : VlanOp::kNone;
        } else {
            f.vlan = in == Tag::kPresent ? VlanOp::kReplace : VlanOp::kPush;
            f.tpid = w.tpid;
            f.tci = w.tci;
        }
    }
    return t;
}

int
FlowTable::slot_of(const afxdp_flow_key &mask) const
{
    for (size_t i = 0; i < kMaxMasks; i++) {
        if (mask_refs_[i] && key_equal(masks_[i], mask)) {
            return int(i);
        }
    }
    return -1;
}

int
FlowTable::put(const Ufid &ufid, const XdpFlow &flow)
{
    // The program's flow map has one entry per masked key (or its hash)
    // and mask.
    const uint64_t hash = fp_key_hash(flow.key);
    for (const auto &[other, e] : flows_) {
        if (other != ufid && key_equal(e.flow.mask, flow.mask)
            && (key_equal(e.flow.key, flow.key)
                || fp_key_hash(e.flow.key) == hash)) {
            return -EEXIST;
        }
    }
    auto old = flows_.find(ufid);
    if (old == flows_.end() && flows_.size() >= kMaxFlows) {
        return -ENOSPC;
    }
    int slot = slot_of(flow.mask);
    if (slot < 0) {
        // The lowest free slot; or the one a replaced flow was the last
        // to use, which is free once it goes.
        for (size_t i = 0; i < kMaxMasks && slot < 0; i++) {
            if (!mask_refs_[i]) {
                slot = int(i);
            }
        }
        if (slot < 0 && old != flows_.end()
            && mask_refs_[old->second.mask_slot] == 1) {
            slot = int(old->second.mask_slot);
        }
        if (slot < 0) {
            return -ENOSPC;
        }
    }
    // A counter slot freed last is the one a packet still in flight on
    // another CPU may yet count in: take never-used ones first, then the
    // one freed longest ago.
    uint32_t stats;
    if (old != flows_.end()) {
        stats = old->second.stats_slot;
        mask_refs_[old->second.mask_slot]--;
    } else if (next_stats_ < kMaxFlows) {
        stats = next_stats_++;
    } else {
        stats = free_stats_.front();
        free_stats_.pop_front();
    }
    masks_[slot] = flow.mask;
    mask_refs_[slot]++;
    flows_[ufid] = Entry{flow, uint32_t(slot), stats};
    return 0;
}

int
FlowTable::del(const Ufid &ufid)
{
    auto it = flows_.find(ufid);
    if (it == flows_.end()) {
        return -ENOENT;
    }
    mask_refs_[it->second.mask_slot]--;
    free_stats_.push_back(it->second.stats_slot);
    flows_.erase(it);
    return 0;
}

const FlowTable::Entry *
FlowTable::entry(const Ufid &ufid) const
{
    auto it = flows_.find(ufid);
    return it == flows_.end() ? nullptr : &it->second;
}

const XdpFlow *
FlowTable::find(const Ufid &ufid) const
{
    const Entry *e = entry(ufid);
    return e ? &e->flow : nullptr;
}

size_t
FlowTable::n_masks() const
{
    size_t n = 0;
    for (size_t refs : mask_refs_) {
        n += refs != 0;
    }
    return n;
}

uint32_t
FlowTable::mask_slots() const
{
    uint32_t n = 0;
    for (size_t i = 0; i < kMaxMasks; i++) {
        if (mask_refs_[i]) {
            n = uint32_t(i + 1);
        }
    }
    return n;
}

const afxdp_flow_key *
FlowTable::mask_at(uint32_t slot) const
{
    return slot < kMaxMasks && mask_refs_[slot] ? &masks_[slot] : nullptr;
}

const XdpFlow *
FlowTable::lookup(const afxdp_flow_key &packet) const
{
    const uint32_t n = mask_slots();
    for (uint32_t slot = 0; slot < n; slot++) {
        if (!mask_refs_[slot]) {
            continue;
        }
        afxdp_flow_key k = masked(packet, masks_[slot]);
        for (const auto &[ufid, e] : flows_) {
            if (e.mask_slot == slot && key_equal(e.flow.key, k)) {
                return &e.flow;
            }
        }
    }
    return nullptr;
}

// --- describe() -----------------------------------------------------

namespace {

// How each field of afxdp_flow_key is written, in the key's order.
// nw_src and nw_dst are IPv6 addresses where the flow's dl_type is IPv6,
// IPv4 (the first four bytes) otherwise.
#define AFXDP_KEY_FORMATS            \
    KEY_FORMAT(dl_dst, kMac)         \
    KEY_FORMAT(dl_src, kMac)         \
    KEY_FORMAT(dl_type, kHex)        \
    KEY_FORMAT(vlan_tci, kHex)       \
    KEY_FORMAT(nw_src, kAddress)     \
    KEY_FORMAT(nw_dst, kAddress)     \
    KEY_FORMAT(ipv6_label, kHex)     \
    KEY_FORMAT(nw_proto, kDecimal)   \
    KEY_FORMAT(nw_tos, kHex)         \
    KEY_FORMAT(nw_ttl, kDecimal)     \
    KEY_FORMAT(nw_frag, kDecimal)    \
    KEY_FORMAT(tp_src, kDecimal)     \
    KEY_FORMAT(tp_dst, kDecimal)     \
    KEY_FORMAT(arp_sha, kMac)        \
    KEY_FORMAT(arp_tha, kMac)        \
    KEY_FORMAT(tcp_flags, kHex)      \
    KEY_FORMAT(vlan_tpid, kHex)

enum class Format { kMac, kHex, kDecimal, kAddress };

// A field of 'n' bytes in network order as a number.
uint64_t
be_value(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        v = v << 8 | p[i];
    }
    return v;
}

std::string
format_value(const uint8_t *p, size_t n, Format f, bool ipv6)
{
    char buf[INET6_ADDRSTRLEN + 1];
    switch (f) {
    case Format::kMac:
        std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x",
                      p[0], p[1], p[2], p[3], p[4], p[5]);
        break;
    case Format::kAddress:
        inet_ntop(ipv6 ? AF_INET6 : AF_INET, p, buf, sizeof buf);
        break;
    case Format::kHex:
        std::snprintf(buf, sizeof buf, "%#llx",
                      (unsigned long long) be_value(p, n));
        break;
    case Format::kDecimal:
        std::snprintf(buf, sizeof buf, "%llu",
                      (unsigned long long) be_value(p, n));
        break;
    }
    return buf;
}

// "name=value" or "name=value/mask" for a field the mask touches.
void
describe_field(std::string &out, const char *name, const void *value,
               const void *mask, size_t n, Format f, bool ipv6)
{
    const auto *v = static_cast<const uint8_t *>(value);
    const auto *m = static_cast<const uint8_t *>(mask);
    if (f == Format::kAddress && !ipv6) {
        n = 4;
    }
    bool any = false, whole = true;
    for (size_t i = 0; i < n; i++) {
        any |= m[i] != 0;
        whole &= m[i] == 0xff;
    }
    if (!any) {
        return;
    }
    out += name;
    out += '=';
    out += format_value(v, n, f, ipv6);
    if (!whole) {
        out += '/';
        out += format_value(m, n, f, ipv6);
    }
    out += ' ';
}

std::string
describe_eth(const char *name, const std::array<uint8_t, 6> &value,
             const std::array<uint8_t, 6> &mask)
{
    std::string out;
    describe_field(out, name, value.data(), mask.data(), 6, Format::kMac,
                   false);
    if (!out.empty()) {
        out.pop_back();
        out.insert(0, ",");
    }
    return out;
}

// ",set_ipv4(tos=0x10/0xfc,ttl=63)": each field the set writes, "/mask"
// where the mask is not whole.
std::string
describe_set_ip(const XdpFlow &f)
{
    const bool v4 = f.set_ip == 4;
    std::string out = v4 ? ",set_ipv4(" : ",set_ipv6(";
    std::string addrs;
    if (v4) {
        describe_field(addrs, "src", &f.nw_src, &f.nw_src_mask, 4,
                       Format::kAddress, false);
        describe_field(addrs, "dst", &f.nw_dst, &f.nw_dst_mask, 4,
                       Format::kAddress, false);
    } else {
        describe_field(addrs, "src", f.ipv6_src.data(),
                       f.ipv6_src_mask.data(), 16, Format::kAddress, true);
        describe_field(addrs, "dst", f.ipv6_dst.data(),
                       f.ipv6_dst_mask.data(), 16, Format::kAddress, true);
        // The label's whole mask is its 20 bits.
        uint32_t label_mask = f.ipv6_label_mask;
        if (label_mask == htonl(0xfffff)) {
            label_mask = 0xffffffff;
        }
        describe_field(addrs, "label", &f.ipv6_label, &label_mask, 4,
                       Format::kHex, true);
    }
    for (char &c : addrs) {
        c = c == ' ' ? ',' : c;
    }
    out += addrs;
    const struct {
        const char *name;
        uint8_t value, mask;
    } fields[] = {{v4 ? "tos" : "tclass", f.nw_tos, f.nw_tos_mask},
                  {v4 ? "ttl" : "hlimit", f.nw_ttl, f.nw_ttl_mask}};
    const char *sep = "";
    if (out.back() == ',') {
        out.pop_back();
        sep = ",";
    }
    for (const auto &x : fields) {
        if (x.mask || (!v4 && x.value)) {
            char buf[32];
            std::snprintf(buf, sizeof buf, x.mask == 0xff ? "%s%s=%u"
                                                          : "%s%s=%u/%#x",
                          sep, x.name, x.value, x.mask);
            out += buf;
            sep = ",";
        }
    }
    return out + ")";
}

// ",set_tcp(dst=9)": each port the set writes (OVS ors a value in
// under any mask), "/mask" where the mask is not whole.
std::string
describe_set_l4(const XdpFlow &f)
{
    std::string out = f.set_l4 == 6 ? ",set_tcp("
                      : f.set_l4 == 17 ? ",set_udp(" : ",set_sctp(";
    const struct {
        const char *name;
        uint16_t value, mask;
    } ports[] = {{"src", f.tp_src, f.tp_src_mask},
                 {"dst", f.tp_dst, f.tp_dst_mask}};
    const char *sep = "";
    for (const auto &x : ports) {
        const unsigned value = ntohs(x.value), mask = ntohs(x.mask);
        if (value | mask) {
            char buf[48];
            std::snprintf(buf, sizeof buf, mask == 0xffff ? "%s%s=%u"
                                                          : "%s%s=%u/%#x",
                          sep, x.name, value, mask);
            out += buf;
            sep = ",";
        }
    }
    return out + ")";
}

}  // namespace

std::string
describe(const Translation &t)
{
    const XdpFlow &f = t.flow;
    const bool ipv6 = f.mask.dl_type == 0xffff
                      && f.key.dl_type == to_be16(0x86dd);
    std::string out;
    if (t.offloadable()) {
#define KEY_FORMAT(FIELD, FORMAT)                                           \
        describe_field(out, #FIELD, &f.key.FIELD, &f.mask.FIELD,            \
                       sizeof f.key.FIELD, Format::FORMAT, ipv6);
        AFXDP_KEY_FORMATS
#undef KEY_FORMAT
    }
    out += "-> ";
    if (!t.full()) {
        out += t.offloadable() ? "ovs(" : "userspace(";
        out += afxdp_offload_refusal_name(t.refusal);
        if (t.detail) {
            out += ": ";
            out += t.detail;
        }
        return out + ")";
    }
    if (f.verdict == Verdict::kDrop) {
        return out + "drop";
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "redirect(ifindex=%d", f.ifindex);
    out += buf;
    switch (f.vlan) {
    case VlanOp::kNone:
        break;
    case VlanOp::kPop:
        out += ",pop_vlan";
        break;
    case VlanOp::kPush:
    case VlanOp::kReplace:
        std::snprintf(buf, sizeof buf, ",%s_vlan(tpid=%#x,tci=%#x)",
                      f.vlan == VlanOp::kPush ? "push" : "replace",
                      f.tpid, f.tci);
        out += buf;
        break;
    }
    out += describe_eth("eth_src", f.eth_src, f.eth_src_mask);
    out += describe_eth("eth_dst", f.eth_dst, f.eth_dst_mask);
    if (f.set_ip) {
        out += describe_set_ip(f);
    }
    if (f.set_l4) {
        out += describe_set_l4(f);
    }
    return out + ")";
}

}  // namespace afxdp

extern "C" {

enum afxdp_offload_refusal
afxdp_flow_describe(const struct afxdp_flow_match *match,
                    const struct afxdp_flow_action *actions,
                    size_t n_actions, char *buf, size_t size) noexcept
{
    try {
        afxdp::Translation t = afxdp::translate(*match, actions, n_actions,
                                                0);
        if (size) {
            std::snprintf(buf, size, "%s", afxdp::describe(t).c_str());
        }
        return t.refusal;
    } catch (...) {     // std::bad_alloc: an empty line.
        if (size) {
            buf[0] = '\0';
        }
        return AFXDP_REFUSED_action;
    }
}

const char *
afxdp_offload_refusal_name(enum afxdp_offload_refusal r) noexcept
{
    switch (r) {
#define AFXDP_REFUSAL(NAME, TEXT) case AFXDP_REFUSED_##NAME: return #NAME;
        AFXDP_OFFLOAD_REFUSALS
#undef AFXDP_REFUSAL
    case AFXDP_REFUSED_N:
        break;
    }
    return "none";
}

const char *
afxdp_offload_refusal_text(enum afxdp_offload_refusal r) noexcept
{
    switch (r) {
#define AFXDP_REFUSAL(NAME, TEXT) case AFXDP_REFUSED_##NAME: return TEXT;
        AFXDP_OFFLOAD_REFUSALS
#undef AFXDP_REFUSAL
    case AFXDP_REFUSED_N:
        break;
    }
    return "offloaded";
}

}  // extern "C"
