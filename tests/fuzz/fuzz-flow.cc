// libFuzzer harness: megaflows into XDP flows (flow.hh), against a model
// of what OVS's datapath does with the same packet.
//
// Input (missing bytes read as zero):
//   bytes 0-79    the match's key      bytes 80-159  its mask
//   byte 160      bit 0: a field the key cannot hold is matched; bit 1:
//                 OVS sees an L4 header big enough for TCP's, UDP's or
//                 ICMPv6's checksum (by the IP header's length); bit 2: a TCP data
//                 offset that fits
//   byte 161      bit 0: the packet has a VLAN tag, for the model's run
//                 when the match leaves it open; bit 1: its TPID is
//                 0x88a8 (else 0x8100)
//   bytes 162-163 that tag's TCI
//   bytes 164-167 the IP header's TOS, TTL and checksum, for the model's
//                 run where the match pins an IPv4 or IPv6 type
//   then up to 8 actions of 8 bytes: type (modulo 8: the seven types and
//   an output to a port that takes no redirect; 5 with bit 3 a set of
//   ports, else an action XDP does not do), then its arguments.
// The model's packet takes the key's own bytes (under the mask or not) for
// its addresses, IPv6 label, protocol, fragment, ports, and (tcp_flags) L4
// checksum.
//
// For every input, translate() must hold to:
//   - no flow for a match on an unparsed field, and otherwise a flow
//     whose key is the match's key under its mask;
//   - a redirect or a drop only where the model, running the actions over
//     a packet the match admits (tagged or not where the match says
//     nothing), ran no action it does not know and output the packet
//     exactly once (redirect: to that port, and the flow's rewrites,
//     applied to the same packet, give exactly the model's packet) or not
//     at all (drop);
//   - otherwise, the socket with the mark and a reason.
// The flow then goes into a FlowTable, is found by the match's own key,
// and leaves it empty when deleted.

#include <arpa/inet.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "flow.hh"
#include "fuzz-check.hh"
#include "../unit/ovs-csum.hh"

namespace {

template <size_t N>
bool
is_zero(const uint8_t (&b)[N])
{
    for (uint8_t x : b) {
        if (x) {
            return false;
        }
    }
    return true;
}

// The packet fields the actions touch, as the datapath would see them.
struct Tag {
    uint16_t tpid, tci;   // TCI without CFI.
    bool operator==(const Tag &o) const
    {
        return tpid == o.tpid && tci == o.tci;
    }
};
struct Packet {
    std::vector<Tag> tags;   // Outermost first.
    uint8_t src[6] = {}, dst[6] = {};
    int ip = 0;              // 4, 6, 0: unknown, -1: garbled by a set
                             // of IP fields of the other version.
    uint8_t tos = 0, ttl = 0;   // IPv6: traffic class, hop limit.
    uint16_t csum = 0;          // IPv4's header checksum.
    uint32_t saddr = 0, daddr = 0;   // IPv4, network byte order.
    uint8_t saddr6[16] = {}, daddr6[16] = {};   // IPv6.
    uint32_t label = 0;              // IPv6, network byte order.
    uint16_t sport = 0, dport = 0;   // Network byte order.
    uint16_t l4csum = 0;             // TCP's or UDP's checksum.
    // What the sets find (never changed by them): the protocol, a later
    // fragment, an L4 header OVS sees whole enough to update its checksum,
    // a TCP data offset that fits.
    uint8_t proto = 0;
    bool later = false, l4big = false, doff_ok = false;
    bool operator==(const Packet &o) const
    {
        return tags == o.tags && !std::memcmp(src, o.src, 6)
               && !std::memcmp(dst, o.dst, 6) && ip == o.ip
               && tos == o.tos && ttl == o.ttl && csum == o.csum
               && saddr == o.saddr && daddr == o.daddr
               && !std::memcmp(saddr6, o.saddr6, 16)
               && !std::memcmp(daddr6, o.daddr6, 16) && label == o.label
               && sport == o.sport && dport == o.dport
               && l4csum == o.l4csum;
    }
};

// packet_set_ipv4_addr(): an IPv4 address from 'field' to 'v', the TCP or
// UDP checksum first where OVS sees one (in a later fragment's payload,
// which this model does not hold: garbled), then the header's.
void
set_ipv4_addr(Packet &p, uint32_t &field, uint32_t v)
{
    const bool l4 = p.l4big && (p.proto == 6 || p.proto == 17);
    if (l4 && p.later) {
        p.ip = -1;
        return;
    }
    if (l4 && p.proto == 6) {
        p.l4csum = ovs_recalc_csum32(p.l4csum, field, v);
    } else if (l4 && p.l4csum) {
        p.l4csum = ovs_recalc_csum32(p.l4csum, field, v);
        p.l4csum = p.l4csum ? p.l4csum : 0xffff;
    }
    p.csum = ovs_recalc_csum32(p.csum, field, v);
    field = v;
}

// odp_set_ipv4()'s addresses: each where its mask is nonzero and it
// changes.
void
set_ipv4_addrs(Packet &p, uint32_t src, uint32_t src_mask, uint32_t dst,
               uint32_t dst_mask)
{
    for (auto [field, value, mask] : {std::tuple{&p.saddr, src, src_mask},
                                      std::tuple{&p.daddr, dst, dst_mask}}) {
        const uint32_t v = value | (*field & ~mask);
        if (mask && v != *field && p.ip == 4) {
            set_ipv4_addr(p, *field, v);
        }
    }
}

// odp_set_ipv6() on an IPv6 packet: each field value | (old & ~mask);
// packet_set_ipv6(): an address that changes updates the TCP, UDP or
// ICMPv6 checksum where OVS sees one (UDP's 0 stays, a result of 0 is
// 0xffff), then the traffic class, label and hop limit.  The label's
// value is or'ed into the header's first word: bits past its 20 land
// elsewhere, which this model does not follow (garbled).
void
set_ipv6(Packet &p, const uint8_t *src, const uint8_t *src_mask,
         const uint8_t *dst, const uint8_t *dst_mask, uint32_t label,
         uint32_t label_mask, uint8_t tc, uint8_t tc_mask, uint8_t hl,
         uint8_t hl_mask)
{
    const bool l4 = p.l4big && (p.proto == 6 || p.proto == 17
                                || p.proto == 58);
    for (auto [field, value, mask] : {std::tuple{p.saddr6, src, src_mask},
                                      std::tuple{p.daddr6, dst, dst_mask}}) {
        uint8_t v[16];
        for (int i = 0; i < 16; i++) {
            v[i] = uint8_t(value[i] | (field[i] & ~mask[i]));
        }
        if (!std::memcmp(v, field, 16)) {
            continue;
        }
        if (l4 && (p.proto != 17 || p.l4csum)) {
            p.l4csum = ovs_recalc_csum128(p.l4csum, field, v);
            if (p.proto == 17 && !p.l4csum) {
                p.l4csum = 0xffff;
            }
        }
        std::memcpy(field, v, 16);
    }
    if (ntohl(label) & ~0xfffffu) {
        p.ip = -1;
        return;
    }
    p.tos = uint8_t(tc | (p.tos & ~tc_mask));
    p.label = label | (p.label & ~label_mask);
    p.ttl = uint8_t(hl | (p.ttl & ~hl_mask));
}

// odp_set_tcp() and odp_set_udp() on a packet whose L4 header is of
// 'proto' (garbled where it is not, or a later fragment's payload).
void
set_ports(Packet &p, uint8_t proto, uint16_t src, uint16_t src_mask,
          uint16_t dst, uint16_t dst_mask)
{
    if (p.ip != 4 && p.ip != 6) {
        p.ip = -1;
        return;
    }
    if (proto != p.proto || p.later) {
        p.ip = -1;
        return;
    }
    if (!p.l4big || (proto == 6 && !p.doff_ok)) {
        return;   // OVS sees no header it sets ports in.
    }
    const bool csum = proto == 6 || p.l4csum;
    for (auto [field, value, mask] : {std::tuple{&p.sport, src, src_mask},
                                      std::tuple{&p.dport, dst, dst_mask}}) {
        const uint16_t v = uint16_t(value | (*field & ~mask));
        if (v != *field) {
            if (csum) {
                p.l4csum = ovs_recalc_csum16(p.l4csum, *field, v);
            }
            *field = v;
        }
    }
    if (proto == 17 && csum && !p.l4csum) {
        p.l4csum = 0xffff;
    }
}

// One byte of the IPv4 header set as odp_set_ipv4() sets it, where its
// mask is nonzero and it changes; 'hi': the byte is its word's first.
void
set_ipv4_byte(Packet &p, uint8_t &field, uint8_t value, uint8_t mask,
              bool hi)
{
    uint8_t v = uint8_t(value | (field & ~mask));
    if (mask && v != field) {
        p.csum = ovs_recalc_csum16(p.csum,
                                   htons(uint16_t(hi ? field << 8 : field)),
                                   htons(uint16_t(hi ? v << 8 : v)));
        field = v;
    }
}

std::string
describe(const Packet &p)
{
    std::string s = std::to_string(p.tags.size()) + " tags";
    char b[96];
    for (const Tag &t : p.tags) {
        std::snprintf(b, sizeof b, " %04x/%04x", t.tpid, t.tci);
        s += b;
    }
    std::snprintf(b, sizeof b, ", dst ..%02x src ..%02x, IPv%d %02x %02x %04x",
                  p.dst[5], p.src[5], p.ip, p.tos, p.ttl, p.csum);
    s += b;
    std::snprintf(b, sizeof b, " %08x > %08x, %u: %04x > %04x %04x",
                  ntohl(p.saddr), ntohl(p.daddr), p.proto, ntohs(p.sport),
                  ntohs(p.dport), p.l4csum);
    return s + b;
}

// What OVS's datapath does: each action in turn over the packet.
struct ModelRun {
    std::vector<std::pair<int, Packet>> outputs;   // ifindex, packet.
    bool unknown = false;      // An action whose effect it cannot model,
                               // or an output XDP cannot make.
};

ModelRun
model(Packet p, const std::vector<afxdp_flow_action> &acts)
{
    ModelRun r;
    for (const afxdp_flow_action &a : acts) {
        switch (a.type) {
        case AFXDP_ACTION_OUTPUT:
            r.outputs.emplace_back(a.output.ifindex, p);
            if (!a.output.xdp_target || p.tags.size() > 1 || p.ip < 0) {
                r.unknown = true;
            }
            break;
        case AFXDP_ACTION_DROP:
            return r;
        case AFXDP_ACTION_PUSH_VLAN:
            p.tags.insert(p.tags.begin(),
                          Tag{a.push_vlan.tpid,
                              uint16_t(a.push_vlan.tci & ~0x1000)});
            break;
        case AFXDP_ACTION_POP_VLAN:
            // eth_pop_vlan(): only an 802.1Q or 802.1ad tag comes off.
            if (!p.tags.empty() && (p.tags[0].tpid == 0x8100
                                    || p.tags[0].tpid == 0x88a8)) {
                p.tags.erase(p.tags.begin());
            }
            break;
        case AFXDP_ACTION_SET_ETH:
            // odp-execute.c: key | (old & ~mask).
            for (int i = 0; i < 6; i++) {
                p.src[i] = a.set_eth.src[i] | (p.src[i] & ~a.set_eth.src_mask[i]);
                p.dst[i] = a.set_eth.dst[i] | (p.dst[i] & ~a.set_eth.dst_mask[i]);
            }
            break;
        case AFXDP_ACTION_SET_IP:
            // OVS writes where its L3 header is: what it writes in a
            // packet of another kind is not modelled (the packet is then
            // garbled, ip -1, should it be sent), unless it writes
            // nothing (IPv4: no mask; IPv6: no value, no mask) or what
            // was there.
            if (a.set_ip.version == 4 && !a.set_ip.tos_mask
                && !a.set_ip.ttl_mask && !a.set_ip.src_mask
                && !a.set_ip.dst_mask) {
                break;
            }
            if (a.set_ip.version == 6
                && !(a.set_ip.tos | a.set_ip.tos_mask | a.set_ip.ttl
                     | a.set_ip.ttl_mask | a.set_ip.label
                     | a.set_ip.label_mask)
                && is_zero(a.set_ip.src6) && is_zero(a.set_ip.src6_mask)
                && is_zero(a.set_ip.dst6) && is_zero(a.set_ip.dst6_mask)) {
                break;
            }
            if (a.set_ip.version != p.ip) {
                p.ip = -1;
            } else if (p.ip == 4) {
                // odp_set_ipv4(): addresses, TOS, then TTL.
                set_ipv4_addrs(p, a.set_ip.src, a.set_ip.src_mask,
                               a.set_ip.dst, a.set_ip.dst_mask);
                set_ipv4_byte(p, p.tos, a.set_ip.tos, a.set_ip.tos_mask,
                              false);
                set_ipv4_byte(p, p.ttl, a.set_ip.ttl, a.set_ip.ttl_mask,
                              true);
            } else {
                set_ipv6(p, a.set_ip.src6, a.set_ip.src6_mask,
                         a.set_ip.dst6, a.set_ip.dst6_mask, a.set_ip.label,
                         a.set_ip.label_mask, a.set_ip.tos,
                         a.set_ip.tos_mask, a.set_ip.ttl, a.set_ip.ttl_mask);
            }
            break;
        case AFXDP_ACTION_SET_L4:
            if (a.set_l4.src | a.set_l4.src_mask | a.set_l4.dst
                | a.set_l4.dst_mask) {
                set_ports(p, a.set_l4.proto, a.set_l4.src,
                          a.set_l4.src_mask, a.set_l4.dst,
                          a.set_l4.dst_mask);
            }
            break;
        default:
            r.unknown = true;
            break;
        }
    }
    return r;
}

// What our XDP program does with a flow's redirect.
Packet
apply(Packet p, const afxdp::XdpFlow &f)
{
    switch (f.vlan) {
    case afxdp::VlanOp::kNone:
        break;
    case afxdp::VlanOp::kPop:
        FUZZ_CHECK(p.tags.size() == 1, "pop on a packet without a tag");
        p.tags.clear();
        break;
    case afxdp::VlanOp::kPush:
        FUZZ_CHECK(p.tags.empty(), "push onto a tagged packet");
        p.tags.push_back(Tag{f.tpid, f.tci});
        break;
    case afxdp::VlanOp::kReplace:
        FUZZ_CHECK(p.tags.size() == 1, "replace on a packet without a tag");
        p.tags[0] = Tag{f.tpid, f.tci};
        break;
    }
    for (int i = 0; i < 6; i++) {
        p.src[i] = (p.src[i] & ~f.eth_src_mask[i])
                   | (f.eth_src[i] & f.eth_src_mask[i]);
        p.dst[i] = (p.dst[i] & ~f.eth_dst_mask[i])
                   | (f.eth_dst[i] & f.eth_dst_mask[i]);
    }
    if (f.set_ip) {
        FUZZ_CHECK(f.set_ip == p.ip, "set of IP fields of another version");
        if (p.ip == 4) {
            set_ipv4_addrs(p, f.nw_src, f.nw_src_mask, f.nw_dst,
                           f.nw_dst_mask);
            FUZZ_CHECK(p.ip == 4, "set of addresses in a later fragment");
            set_ipv4_byte(p, p.tos, f.nw_tos, f.nw_tos_mask, false);
            set_ipv4_byte(p, p.ttl, f.nw_ttl, f.nw_ttl_mask, true);
        } else {
            set_ipv6(p, f.ipv6_src.data(), f.ipv6_src_mask.data(),
                     f.ipv6_dst.data(), f.ipv6_dst_mask.data(), f.ipv6_label,
                     f.ipv6_label_mask, f.nw_tos, f.nw_tos_mask, f.nw_ttl,
                     f.nw_ttl_mask);
            FUZZ_CHECK(p.ip == 6, "a flow label past 20 bits");
        }
    }
    if (f.set_l4) {
        set_ports(p, f.set_l4, f.tp_src, f.tp_src_mask, f.tp_dst,
                  f.tp_dst_mask);
        FUZZ_CHECK(p.ip == 4 || p.ip == 6,
                   "set of ports on a packet without that L4 header");
    }
    return p;
}

afxdp_flow_action
decode_action(const uint8_t *b)
{
    afxdp_flow_action a{};
    uint8_t kind = b[0] % 8;
    uint16_t arg = uint16_t(b[1] | b[2] << 8);
    switch (kind) {
    case 0:
    case 7:
        a.type = AFXDP_ACTION_OUTPUT;
        a.output.ifindex = b[1] % 4 + 1;
        a.output.xdp_target = kind == 0;
        a.output.name = "p";
        break;
    case 1:
        a.type = AFXDP_ACTION_DROP;
        break;
    case 2:
        a.type = AFXDP_ACTION_PUSH_VLAN;
        a.push_vlan.tpid = b[3] & 1 ? 0x88a8 : b[3] & 2 ? 0x9100 : 0x8100;
        a.push_vlan.tci = arg;
        break;
    case 3:
        a.type = AFXDP_ACTION_POP_VLAN;
        break;
    case 4:
        a.type = AFXDP_ACTION_SET_ETH;
        a.set_eth.dst[5] = b[1];
        a.set_eth.dst_mask[5] = b[2];
        a.set_eth.src[5] = b[3];
        a.set_eth.src_mask[5] = b[4];
        a.set_eth.dst_mask[0] = b[5];
        a.set_eth.dst[0] = b[6];
        break;
    case 6:
        a.type = AFXDP_ACTION_SET_IP;
        a.set_ip.version = b[1] & 1 ? 6 : 4;
        a.set_ip.tos = b[2];
        a.set_ip.tos_mask = b[1] & 2 ? 0 : b[1] & 4 ? 0xff : b[3];
        a.set_ip.ttl = b[4];
        a.set_ip.ttl_mask = b[1] & 8 ? 0 : b[1] & 16 ? 0xff : b[5];
        if (a.set_ip.version == 4 && b[7] & 1) {
            a.set_ip.src = htonl(0x0a000000u | b[6]);
            a.set_ip.src_mask = b[7] & 2 ? 0xffffffff : htonl(0xffffff00);
        }
        if (a.set_ip.version == 4 && b[7] & 4) {
            a.set_ip.dst = htonl(0xc0a80000u | b[6] << 8 | b[7]);
            a.set_ip.dst_mask = b[7] & 8 ? 0xffffffff : htonl(0xffff0000);
        }
        // IPv6: fd00::B6 (whole, or its /64), 2001:db8::B6:B7 (whole, or
        // under B6 bits of mask in its last byte), a label (20 bits, or
        // one past them).
        if (a.set_ip.version == 6 && b[7] & 1) {
            a.set_ip.src6[0] = 0xfd;
            a.set_ip.src6[15] = b[6];
            std::memset(a.set_ip.src6_mask, 0xff, b[7] & 2 ? 16 : 8);
        }
        if (a.set_ip.version == 6 && b[7] & 4) {
            const uint8_t d[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
                                   0, 0, 0, 0, 0, 0, b[6], b[7]};
            std::memcpy(a.set_ip.dst6, d, 16);
            std::memset(a.set_ip.dst6_mask, 0xff, 15);
            a.set_ip.dst6_mask[15] = b[7] & 8 ? 0xff : b[6];
        }
        if (a.set_ip.version == 6 && b[7] & 16) {
            a.set_ip.label = htonl((b[7] & 32 ? 0x100000u : 0) | b[6] << 4);
            a.set_ip.label_mask = b[7] & 64 ? htonl(0xfffff) : htonl(0xff0);
        }
        break;
    case 5:
        if (!(b[0] & 8)) {
            a.type = AFXDP_ACTION_OTHER;
            a.other = "ct";
            break;
        }
        a.type = AFXDP_ACTION_SET_L4;
        a.set_l4.proto = b[1] & 1 ? 17 : b[1] & 2 ? 132 : 6;
        a.set_l4.src = uint16_t(b[2] | b[3] << 8);
        a.set_l4.src_mask = b[1] & 4 ? 0 : b[1] & 8 ? 0xffff : b[4];
        a.set_l4.dst = uint16_t(b[5] | b[6] << 8);
        a.set_l4.dst_mask = b[1] & 16 ? 0xffff : uint16_t(b[7] << 8);
        break;
    default:
        a.type = AFXDP_ACTION_OTHER;
        a.other = "ct";
        break;
    }
    return a;
}

}  // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    std::vector<uint8_t> in(data, data + size);
    in.resize(168 + 8 * 8, 0);
    afxdp_flow_match m{};
    std::memcpy(&m.key, &in[0], 80);
    std::memcpy(&m.mask, &in[80], 80);
    if (in[160] & 1) {
        m.unparsed_field = "tunnel";
    }
    std::vector<afxdp_flow_action> acts;
    for (size_t off = 168; off + 8 <= size && acts.size() < 8; off += 8) {
        acts.push_back(decode_action(&in[off]));
    }

    afxdp::Translation t = afxdp::translate(m, acts.data(), acts.size(), 42);
    const afxdp::XdpFlow &f = t.flow;
    FUZZ_CHECK(t.offloadable() == !m.unparsed_field, "offloadable");
    afxdp_flow_key want_mask = m.mask;
    std::memset(want_mask.pad, 0, sizeof want_mask.pad);
    FUZZ_CHECK(afxdp::key_equal(f.mask, want_mask), "the flow's mask");
    FUZZ_CHECK(afxdp::key_equal(f.key, afxdp::masked(m.key, want_mask)),
               "the flow's key is the match's key under its mask");
    FUZZ_CHECK(f.mark == 42, "mark");
    FUZZ_CHECK(t.full() == (f.verdict != afxdp::Verdict::kToSocket),
               "socket iff refused");
    FUZZ_CHECK(f.refusal == t.refusal, "the flow's refusal");
    if (!t.offloadable()) {
        return 0;
    }

    // The packet the model runs: the match's addresses, its tag where the
    // match pins one, and the input's where it leaves it open.
    Packet p;
    std::memcpy(p.dst, m.key.dl_dst, 6);
    std::memcpy(p.src, m.key.dl_src, 6);
    const uint16_t cfi = htons(0x1000);
    bool tagged = m.mask.vlan_tci & cfi ? (m.key.vlan_tci & cfi) != 0
                                        : (in[161] & 1) != 0;
    if (tagged) {
        p.tags.push_back(Tag{uint16_t(in[161] & 2 ? 0x88a8 : 0x8100),
                             uint16_t((in[162] | in[163] << 8) & ~0x1000)});
    }
    if (m.mask.dl_type == 0xffff) {
        p.ip = m.key.dl_type == htons(0x0800) ? 4
               : m.key.dl_type == htons(0x86dd) ? 6 : 0;
    }
    if (p.ip) {
        p.tos = in[164];
        p.ttl = in[165];
        p.csum = p.ip == 4 ? uint16_t(in[166] | in[167] << 8) : 0;
        if (p.ip == 4) {
            std::memcpy(&p.saddr, m.key.nw_src, 4);
            std::memcpy(&p.daddr, m.key.nw_dst, 4);
            p.later = m.key.nw_frag & 2;
        } else {
            // A later fragment (an extension header) never reaches a
            // flow in XDP: the program leaves it to OVS.
            std::memcpy(p.saddr6, m.key.nw_src, 16);
            std::memcpy(p.daddr6, m.key.nw_dst, 16);
            p.label = m.key.ipv6_label & htonl(0xfffff);
        }
        p.proto = m.key.nw_proto;
        p.sport = m.key.tp_src;
        p.dport = m.key.tp_dst;
        p.l4csum = m.key.tcp_flags;
        p.l4big = in[160] & 2;
        p.doff_ok = in[160] & 4;
    }
    ModelRun r = model(p, acts);

    if (f.verdict == afxdp::Verdict::kRedirect) {
        FUZZ_CHECK(!r.unknown, "redirect of what XDP cannot do");
        FUZZ_CHECK(r.outputs.size() == 1,
                   "redirect, model outputs " + std::to_string(r.outputs.size()));
        FUZZ_CHECK(r.outputs[0].first == f.ifindex, "redirect target");
        Packet ours = apply(p, f);
        FUZZ_CHECK(ours == r.outputs[0].second,
                   "ours " + describe(ours) + ", OVS "
                   + describe(r.outputs[0].second));
    } else if (f.verdict == afxdp::Verdict::kDrop) {
        FUZZ_CHECK(!r.unknown && r.outputs.empty(), "drop of a packet OVS sends");
    }

    afxdp::FlowTable table;
    std::array<uint32_t, 4> ufid{1, 2, 3, 4};
    FUZZ_CHECK(table.put(ufid, f) == 0, "put into an empty table");
    FUZZ_CHECK(table.lookup(m.key) == table.find(ufid),
               "lookup by the match's own key");
    FUZZ_CHECK(table.del(ufid) == 0 && table.n_masks() == 0
               && table.n_flows() == 0, "delete empties the table");
    return 0;
}
