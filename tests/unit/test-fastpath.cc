// Tier 2 (kernel, no traffic): the XDP fast path (lib/afxdp/fastpath.bpf.c,
// its parts in bpf/) run by the kernel on packets we build
// (BPF_PROG_TEST_RUN): its lookup, verdicts and rewrites against
// FlowTable, the maps' model, and the reference key of what OVS extracts
// (fastpath-test.hh; the parser's own tests are test-fastpath-parse.cc).

#include <gtest/gtest.h>

#include "fastpath-test.hh"

using namespace afxdp_fp_test;

// ---- The fast path: lookup, verdicts and rewrites (ovs_afxdp_fast). ----
//
// The program is loaded as the core loads it (FastPath, from the object
// built into it) and run by the kernel on the same packets.  What it
// must do is decided here from the reference's key and FlowTable's
// lookup (the maps' model): punt what the parser punts, miss what no
// flow matches, and for a hit drop, redirect after exactly the flow's
// rewrites, or hand the packet to the socket with the flow's mark in
// front.

namespace {

using afxdp::FastPath;
using afxdp::FastPathFlowStats;
using afxdp::FlowTable;
using afxdp::Verdict;
using afxdp::VlanOp;
using afxdp::XdpFlow;

constexpr int kLoopback = 1;   // A redirect target every namespace has.

// Where OVS's flow extraction puts the L4 header behind the IP header at
// 'l3' of a packet whose header it passed (the parser's PARSED_IP), and
// how many bytes it gives it: dp_packet_l4() and dp_packet_l4_size().
size_t
ovs_l4_ofs(const Bytes &p, size_t l3, size_t *size)
{
    if (p[l3 - 2] == 0x86 && p[l3 - 1] == 0xdd) {
        *size = size_t(p[l3 + 4] << 8 | p[l3 + 5]);
        return l3 + 40;
    }
    const size_t ihl = (p[l3] & 0x0f) * 4u;
    *size = size_t(p[l3 + 2] << 8 | p[l3 + 3]) - ihl;
    return l3 + ihl;
}

// OVS's packet_set_ipv4_addr() (lib/packets.c) on the address at 'addr'
// of the IPv4 header at 'l3'.
void
ovs_set_ipv4_addr(Bytes &p, size_t l3, size_t addr, uint32_t new_addr)
{
    uint8_t *nh = &p[l3];
    uint32_t old_addr;
    std::memcpy(&old_addr, &p[addr], 4);
    size_t l4_size;
    const size_t l4 = ovs_l4_ofs(p, l3, &l4_size);
    uint16_t csum;
    if (nh[9] == IPPROTO_TCP && l4_size >= 20) {
        std::memcpy(&csum, &p[l4 + 16], 2);
        csum = ovs_recalc_csum32(csum, old_addr, new_addr);
        std::memcpy(&p[l4 + 16], &csum, 2);
    } else if (nh[9] == IPPROTO_UDP && l4_size >= 8) {
        std::memcpy(&csum, &p[l4 + 6], 2);
        if (csum) {
            csum = ovs_recalc_csum32(csum, old_addr, new_addr);
            if (!csum) {
                csum = 0xffff;
            }
            std::memcpy(&p[l4 + 6], &csum, 2);
        }
    }
    std::memcpy(&csum, nh + 10, 2);
    csum = ovs_recalc_csum32(csum, old_addr, new_addr);
    std::memcpy(nh + 10, &csum, 2);
    std::memcpy(&p[addr], &new_addr, 4);
}

// OVS's odp_set_ipv4() and odp_set_ipv6() (lib/odp-execute.c) for the
// fields a flow's set_ip holds, on the header at 'l3'.
void
ovs_set_ip(Bytes &p, size_t l3, const XdpFlow &f)
{
    uint8_t *nh = &p[l3];
    if (f.set_ip == 4) {
        for (auto [off, value, mask] :
             {std::tuple{12, f.nw_src, f.nw_src_mask},
              std::tuple{16, f.nw_dst, f.nw_dst_mask}}) {
            if (mask) {
                uint32_t old;
                std::memcpy(&old, nh + off, 4);
                const uint32_t now = value | (old & ~mask);
                if (now != old) {
                    ovs_set_ipv4_addr(p, l3, l3 + off, now);
                }
            }
        }
        uint16_t csum;
        std::memcpy(&csum, nh + 10, 2);
        if (f.nw_tos_mask) {
            uint8_t tos = uint8_t(f.nw_tos | (nh[1] & ~f.nw_tos_mask));
            if (nh[1] != tos) {
                csum = ovs_recalc_csum16(csum, htons(nh[1]), htons(tos));
                nh[1] = tos;
            }
        }
        if (f.nw_ttl_mask) {
            uint8_t ttl = uint8_t(f.nw_ttl | (nh[8] & ~f.nw_ttl_mask));
            if (nh[8] != ttl) {
                csum = ovs_recalc_csum16(csum, htons(uint16_t(nh[8] << 8)),
                                         htons(uint16_t(ttl << 8)));
                nh[8] = ttl;
            }
        }
        std::memcpy(nh + 10, &csum, 2);
    } else if (f.set_ip == 6) {
        // odp_set_ipv6(): every field value | (old & ~mask), the old
        // traffic class and label read first; packet_set_ipv6(): each
        // address that changes, with packet_update_csum128() on the
        // checksum behind (no extension header here), then the traffic
        // class, the label and the hop limit.
        uint32_t flow;
        std::memcpy(&flow, nh, 4);
        const uint8_t old_tc = uint8_t(ntohl(flow) >> 20);
        const uint32_t old_fl = flow & htonl(0xfffff);
        size_t l4_size;
        const size_t l4 = ovs_l4_ofs(p, l3, &l4_size);
        size_t csum = 0;
        const bool udp = nh[6] == IPPROTO_UDP;
        if (nh[6] == IPPROTO_TCP && l4_size >= 20) {
            csum = l4 + 16;
        } else if (udp && l4_size >= 8) {
            csum = l4 + 6;
        } else if (nh[6] == IPPROTO_ICMPV6 && l4_size >= 4) {
            csum = l4 + 2;
        }
        for (auto [off, value, mask] :
             {std::tuple{8, &f.ipv6_src, &f.ipv6_src_mask},
              std::tuple{24, &f.ipv6_dst, &f.ipv6_dst_mask}}) {
            uint8_t now[16];
            for (int i = 0; i < 16; i++) {
                now[i] = uint8_t((*value)[i] | (nh[off + i] & ~(*mask)[i]));
            }
            if (!std::memcmp(now, nh + off, 16)) {
                continue;
            }
            uint16_t c = 0;
            if (csum) {
                std::memcpy(&c, &p[csum], 2);
            }
            if (csum && (!udp || c)) {
                c = ovs_recalc_csum128(c, nh + off, now);
                if (udp && !c) {
                    c = 0xffff;
                }
                std::memcpy(&p[csum], &c, 2);
            }
            std::memcpy(nh + off, now, 16);
        }
        const uint8_t tc = uint8_t(f.nw_tos | (old_tc & ~f.nw_tos_mask));
        const uint32_t fl = f.ipv6_label | (old_fl & ~f.ipv6_label_mask);
        std::memcpy(&flow, nh, 4);
        flow = (flow & htonl(0xf00fffff)) | htonl(uint32_t(tc) << 20);
        flow = (flow & htonl(~0xfffffu)) | fl;
        std::memcpy(nh, &flow, 4);
        nh[7] = uint8_t(f.nw_ttl | (nh[7] & ~f.nw_ttl_mask));
    }
}

// OVS's packet_set_port() (lib/packets.c): the port at 'at', and the
// checksum at 'csum' with it unless 'csum' is 0.
void
ovs_set_port(Bytes &p, size_t at, uint16_t port, size_t csum)
{
    uint16_t old, c;
    std::memcpy(&old, &p[at], 2);
    if (old != port) {
        if (csum) {
            std::memcpy(&c, &p[csum], 2);
            c = ovs_recalc_csum16(c, old, port);
            std::memcpy(&p[csum], &c, 2);
        }
        std::memcpy(&p[at], &port, 2);
    }
}

// CRC32c as OVS's crc32c() (lib/crc32c.c) computes it, bit by bit here
// (the XDP program computes only what a change of ports adds to it): the
// reflected CRC of polynomial 0x1EDC6F41, initial and final value all
// ones.  The word is what OVS stores: its bytes, low first, are the
// packet's.
uint32_t
crc32c(const uint8_t *data, size_t size)
{
    uint32_t crc = 0xffffffff;
    for (size_t i = 0; i < size; i++) {
        crc ^= data[i];
        for (int bit = 0; bit < 8; bit++) {
            crc = (crc >> 1) ^ (0x82f63b78 & -(crc & 1));
        }
    }
    return ~crc;
}

// OVS's packet_set_sctp_port(): the ports of the SCTP packet at 'l4', of
// 'size' bytes, and its checksum xored with the CRC32c of the packet,
// checksum zeroed, before and after.
void
ovs_set_sctp_ports(Bytes &p, size_t l4, size_t size, uint16_t src,
                   uint16_t dst)
{
    const uint32_t old_csum = get_le32(&p[l4 + 8]);
    put_le32(&p[l4 + 8], 0);
    const uint32_t old_correct = crc32c(&p[l4], size);
    std::memcpy(&p[l4], &src, 2);
    std::memcpy(&p[l4 + 2], &dst, 2);
    const uint32_t new_csum = crc32c(&p[l4], size);
    put_le32(&p[l4 + 8], old_csum ^ old_correct ^ new_csum);
}

// OVS's odp_set_tcp(), odp_set_udp() and odp_set_sctp()
// (lib/odp-execute.c) for the ports a flow's set_l4 holds, behind the IP
// header at 'l3'.
void
ovs_set_l4(Bytes &p, size_t l3, const XdpFlow &f)
{
    size_t size;
    const size_t l4 = ovs_l4_ofs(p, l3, &size);
    // The ports as odp_set_*() computes them, read where OVS sees them.
    uint16_t src = 0, dst = 0;
    if (size >= 8) {
        std::memcpy(&src, &p[l4], 2);
        std::memcpy(&dst, &p[l4 + 2], 2);
        src = uint16_t(f.tp_src | (src & ~f.tp_src_mask));
        dst = uint16_t(f.tp_dst | (dst & ~f.tp_dst_mask));
    }
    if (f.set_l4 == IPPROTO_SCTP) {
        // dp_packet_get_sctp_payload(): SCTP_HEADER_LEN.
        if (size >= 12) {
            ovs_set_sctp_ports(p, l4, size, src, dst);
        }
    } else if (f.set_l4 == IPPROTO_TCP) {
        // dp_packet_get_tcp_payload(): a header whose offset fits.
        const size_t hdr = size >= 20 ? (p[l4 + 12] >> 4) * 4u : 0;
        if (size >= 20 && hdr >= 20 && hdr <= size) {
            ovs_set_port(p, l4, src, l4 + 16);
            ovs_set_port(p, l4 + 2, dst, l4 + 16);
        }
    } else if (size >= 8) {
        const size_t csum = p[l4 + 6] | p[l4 + 7] ? l4 + 6 : 0;
        ovs_set_port(p, l4, src, csum);
        ovs_set_port(p, l4 + 2, dst, csum);
        if (csum && !(p[l4 + 6] | p[l4 + 7])) {
            p[l4 + 6] = p[l4 + 7] = 0xff;
        }
    }
}

// What the packet becomes after the flow's rewrites, as OVS would write
// it: the IP fields set, then the ports (or, 'ports_first', the ports
// then the IP fields: a megaflow may hold the two sets either way), the
// tag popped, pushed or replaced, then set_eth's bits.
Bytes
rewritten(Bytes p, const XdpFlow &f, bool ports_first = false)
{
    const uint8_t tag[4] = {uint8_t(f.tpid >> 8), uint8_t(f.tpid),
                            uint8_t(f.tci >> 8), uint8_t(f.tci)};
    const bool tagged = (p[12] == 0x81 && p[13] == 0x00)
                        || (p[12] == 0x88 && p[13] == 0xa8);
    if (f.set_l4 && ports_first) {
        ovs_set_l4(p, tagged ? 18 : 14, f);
    }
    if (f.set_ip) {
        ovs_set_ip(p, tagged ? 18 : 14, f);
    }
    if (f.set_l4 && !ports_first) {
        ovs_set_l4(p, tagged ? 18 : 14, f);
    }
    switch (f.vlan) {
    case VlanOp::kNone:
        break;
    case VlanOp::kPop:
        p.erase(p.begin() + 12, p.begin() + 16);
        break;
    case VlanOp::kPush:
        p.insert(p.begin() + 12, tag, tag + 4);
        break;
    case VlanOp::kReplace:
        std::memcpy(&p[12], tag, 4);
        break;
    }
    for (int i = 0; i < 6; i++) {
        p[i] = uint8_t(f.eth_dst[i] | (p[i] & ~f.eth_dst_mask[i]));
        p[6 + i] = uint8_t(f.eth_src[i] | (p[6 + i] & ~f.eth_src_mask[i]));
    }
    return p;
}

afxdp_flow_key
masked_key(const afxdp_flow_key &k, const afxdp_flow_key &m)
{
    return afxdp::masked(k, m);
}

// Masks of the shapes OVS's megaflows take.
afxdp_flow_key
mask_shape(int shape)
{
    afxdp_flow_key m{};
    auto all = [](auto &field) { std::memset(&field, 0xff, sizeof field); };
    switch (shape % 6) {
    case 0:                       // The learning switch: L2.
        all(m.dl_dst);
        all(m.dl_src);
        all(m.dl_type);
        m.vlan_tci = htons(0x1fff);
        all(m.vlan_tpid);
        break;
    case 1:                       // A 5-tuple.
        all(m.dl_type);
        all(m.nw_src);
        all(m.nw_dst);
        all(m.nw_proto);
        all(m.nw_frag);
        all(m.tp_src);
        all(m.tp_dst);
        break;
    case 2:                       // Destination address, tag present or not.
        all(m.dl_type);
        std::memset(m.nw_dst, 0xff, 4);
        m.vlan_tci = htons(0x1000);
        break;
    case 3:                       // Everything.
        all(m);
        std::memset(m.pad, 0, sizeof m.pad);
        break;
    case 4:                       // Ethernet type only.
        all(m.dl_type);
        break;
    default:                      // Nothing: every packet.
        break;
    }
    return m;
}

uint64_t
monotonic_now()
{
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return uint64_t(now.tv_sec) * 1000000000 + uint64_t(now.tv_nsec);
}

// A flow of mask shape 'shape' (mask_shape()) that 'pkt' matches, with
// 'verdict' (a redirect to the loopback device).
XdpFlow
flow_matching(const Bytes &pkt, int shape, Verdict verdict)
{
    XdpFlow f;
    f.mask = mask_shape(shape);
    f.key = masked_key(reference(pkt).key, f.mask);
    f.verdict = verdict;
    if (verdict == Verdict::kRedirect) {
        f.ifindex = kLoopback;
    }
    return f;
}

// A random flow matching the packet whose key is 'k', with actions XDP
// can do: VLAN changes only where the mask pins the tag down.
XdpFlow
random_flow(std::mt19937 &rng, const afxdp_flow_key &k, uint32_t mark)
{
    XdpFlow f;
    f.mask = mask_shape(int(rng() % 6));
    f.key = masked_key(k, f.mask);
    f.mark = mark;
    switch (rng() % 3) {
    case 0:
        f.verdict = Verdict::kDrop;
        break;
    case 1:
        f.verdict = Verdict::kToSocket;
        break;
    default:
        f.verdict = Verdict::kRedirect;
        f.ifindex = kLoopback;
        break;
    }
    if (f.verdict == Verdict::kRedirect) {
        bool pinned = f.mask.vlan_tci & htons(0x1000);
        bool tagged = k.vlan_tci & htons(0x1000);
        if (pinned && rng() % 2) {
            f.vlan = tagged ? (rng() % 2 ? VlanOp::kPop : VlanOp::kReplace)
                            : VlanOp::kPush;
            f.tpid = rng() % 2 ? 0x8100 : 0x88a8;
            f.tci = uint16_t(rng() & 0xefff);
        }
        if (rng() % 2) {
            for (int i = 0; i < 6; i++) {
                f.eth_dst_mask[i] = uint8_t(rng());
                f.eth_dst[i] = uint8_t(rng()) & f.eth_dst_mask[i];
                f.eth_src_mask[i] = 0xff;
                f.eth_src[i] = uint8_t(0x10 + i);
            }
        }
        // A set of IP fields where the mask pins the IP version, as
        // translate() allows; values and masks of every kind (IPv4's
        // values under a zero mask are ignored, as OVS ignores them).
        const bool v4 = k.dl_type == htons(0x0800);
        if (f.mask.dl_type == 0xffff && (v4 || k.dl_type == htons(0x86dd))
            && rng() % 2) {
            f.set_ip = v4 ? 4 : 6;
            const uint8_t masks[] = {0, 0xff, 0xfc, 0x03, uint8_t(rng())};
            f.nw_tos_mask = masks[rng() % 5];
            f.nw_ttl_mask = masks[rng() % 5];
            f.nw_tos = uint8_t(rng());
            f.nw_ttl = uint8_t(rng());
        }
        // Addresses and ports where the match also pins the protocol and
        // rules out a later fragment, as translate() asks.
        const bool l4_pinned = f.mask.dl_type == 0xffff
                               && f.mask.nw_proto == 0xff
                               && (f.mask.nw_frag & 2) && !(k.nw_frag & 2);
        const uint32_t masks32[] = {0, 0xffffffff, htonl(0xffffff00),
                                    uint32_t(rng())};
        if (f.set_ip == 4 && l4_pinned && rng() % 2) {
            f.nw_src_mask = masks32[rng() % 4];
            f.nw_src = f.nw_src_mask ? uint32_t(rng()) : 0;
            f.nw_dst_mask = masks32[rng() % 4];
            f.nw_dst = f.nw_dst_mask ? uint32_t(rng()) : 0;
        }
        if (l4_pinned && (v4 || k.dl_type == htons(0x86dd))
            && (k.nw_proto == IPPROTO_TCP || k.nw_proto == IPPROTO_UDP)
            && rng() % 2) {
            const uint16_t masks16[] = {0, 0xffff, htons(0xff00),
                                        uint16_t(rng())};
            f.set_l4 = k.nw_proto;
            f.tp_src_mask = masks16[rng() % 4];
            f.tp_dst_mask = masks16[rng() % 4];
            f.tp_src = uint16_t(rng());
            f.tp_dst = uint16_t(rng());
        }
    }
    return f;
}

FlowTable::Ufid
ufid(uint32_t n)
{
    return {n, 0xfa57, 0, 1};
}

// One run of the program over a packet: its verdict, the bytes it left
// (from the metadata on, if any) and where the packet starts in them.
struct ProgRun {
    uint32_t retval = 0;
    Bytes out;
    uint32_t data = 0;      // Offset of the packet in 'out': the metadata.
};

class FastPathLookup : public ::testing::Test {
protected:
    void SetUp() override
    {
        if (!FastPath::built()) {
            GTEST_SKIP() << "the core was built without the fast path's "
                         << "program: configure found no clang that "
                         << "compiles BPF programs (see its summary)";
        }
        if (geteuid()) {
            GTEST_SKIP() << "not root: BPF programs cannot be loaded";
        }
        auto r = FastPath::load(-1);
        ASSERT_TRUE(r.ok()) << r.error().why;
        fp_ = r.take();
        ASSERT_EQ(fp_.add_target(kLoopback), 0);
    }

    // With 'ifindex', as received on its receive queue 'queue'.
    ProgRun run(const Bytes &pkt, int ifindex = 0, uint32_t queue = 0)
    {
        ProgRun r;
        Bytes data = pkt;
        r.out.resize(pkt.size() + 64);
        xdp_md ctx_in = {}, ctx_out = {};
        ctx_in.data_end = uint32_t(pkt.size());
        ctx_in.ingress_ifindex = uint32_t(ifindex);
        ctx_in.rx_queue_index = queue;
        LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = data.data(),
                    .data_out = r.out.data(),
                    .data_size_in = uint32_t(data.size()),
                    .data_size_out = uint32_t(r.out.size()),
                    .ctx_in = &ctx_in, .ctx_out = &ctx_out,
                    .ctx_size_in = sizeof ctx_in,
                    .ctx_size_out = sizeof ctx_out,
                    .repeat = 1);
        int err = bpf_prog_test_run_opts(fp_.prog_fd(), &opts);
        EXPECT_EQ(err, 0) << "test run of a " << pkt.size() << "-byte packet";
        r.retval = opts.retval;
        r.out.resize(opts.data_size_out);
        r.data = ctx_out.data;
        return r;
    }

    // The program's map 'name' (a new descriptor), to play the core's
    // writes caught half done.
    int map_fd(const char *name)
    {
        uint32_t ids[16] = {};
        bpf_prog_info info = {};
        info.nr_map_ids = 16;
        info.map_ids = uint64_t(uintptr_t(ids));
        uint32_t len = sizeof info;
        if (bpf_obj_get_info_by_fd(fp_.prog_fd(), &info, &len)) {
            return -1;
        }
        for (uint32_t i = 0; i < info.nr_map_ids && i < 16; i++) {
            int fd = bpf_map_get_fd_by_id(ids[i]);
            bpf_map_info m = {};
            uint32_t mlen = sizeof m;
            if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &m, &mlen)
                && !std::strcmp(m.name, name)) {
                return fd;
            }
            if (fd >= 0) {
                close(fd);
            }
        }
        return -1;
    }

    std::array<uint64_t, AFXDP_FP_N_COUNTERS> counters()
    {
        std::array<uint64_t, AFXDP_FP_N_COUNTERS> c{};
        fp_.counters(c.data());
        return c;
    }

    // The program does with 'pkt' what the model says; false (with a
    // failure saying what differs) if not.
    bool behaves(const Bytes &pkt, const std::string &what)
    {
        Expect ref = reference(pkt);
        const XdpFlow *f = ref.punt ? nullptr : fp_.flows().lookup(ref.key);
        auto before = counters();
        ProgRun r = run(pkt);
        auto after = counters();
        auto delta = [&](afxdp_fp_counter c) { return after[c] - before[c]; };
        Bytes packet(r.out.begin() + r.data, r.out.end());

        uint32_t want_ret = XDP_PASS;
        Bytes want = pkt;
        afxdp_fp_counter want_counter = ref.punt ? AFXDP_FP_punted
                                                 : AFXDP_FP_missed;
        if (f && f->verdict == Verdict::kDrop) {
            want_ret = XDP_DROP;
            want_counter = AFXDP_FP_dropped;
        } else if (f && f->verdict == Verdict::kRedirect
                   && (f->set_ip || f->set_l4) && !ref.ip) {
            // No IP header that OVS parses, where it would write: OVS's.
            want_counter = AFXDP_FP_ip_unparsed;
        } else if (f && f->verdict == Verdict::kRedirect) {
            want_ret = XDP_REDIRECT;
            want = rewritten(pkt, *f, ports_first_);
            want_counter = AFXDP_FP_redirected;
        } else if (f) {
            // Marked, but with no socket on the queue the packet goes to
            // the kernel, as the plain program sends it: no metadata.
            want_counter = AFXDP_FP_N_COUNTERS;
        }
        bool ok = true;
        if (r.retval != want_ret) {
            ADD_FAILURE() << what << ": verdict " << r.retval << ", want "
                          << want_ret;
            ok = false;
        }
        if (want_ret != XDP_DROP && packet != want) {
            ADD_FAILURE() << what << ": packet out\n  " << hex(packet.data(), packet.size())
                          << "\n  want\n  " << hex(want.data(), want.size());
            ok = false;
        }
        for (int c = 0; c < AFXDP_FP_N_COUNTERS; c++) {
            uint64_t d = delta(afxdp_fp_counter(c));
            if (c == AFXDP_FP_cache_filled) {
                // A hit either way: found in the cache or in the slots.
                if (d > (f ? 1u : 0u)) {
                    ADD_FAILURE() << what << ": cached " << d << " times";
                    ok = false;
                }
                continue;
            }
            if (d != (c == want_counter ? 1u : 0u)) {
                ADD_FAILURE() << what << ": counter " << c << " moved by " << d;
                ok = false;
            }
        }
        return ok;
    }

    FastPath fp_;
    // behaves() models OVS setting the ports before the IP fields.
    bool ports_first_ = false;
};

}  // namespace

TEST_F(FastPathLookup, WithoutFlowsPacketsGoToTheSocketUntouched)
{
    for (const Bytes &t : templates()) {
        behaves(t, "template without flows");
    }
    auto c = counters();
    EXPECT_GE(c[AFXDP_FP_punted], 6u);
    EXPECT_GE(c[AFXDP_FP_missed], 20u);
}

TEST_F(FastPathLookup, DropCountsPacketsAndBytes)
{
    Bytes udp = ipv4(IPPROTO_UDP);
    XdpFlow f = flow_matching(udp, 1, Verdict::kDrop);
    ASSERT_EQ(fp_.put(ufid(1), f), 0);
    for (int i = 0; i < 3; i++) {
        EXPECT_TRUE(behaves(udp, "matching UDP"));
    }
    Bytes other = udp;
    other[14 + 19] = 3;           // Another destination address.
    EXPECT_TRUE(behaves(other, "UDP to another address"));
    FastPathFlowStats st;
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.packets, 3u);
    EXPECT_EQ(st.bytes, 3 * udp.size());
    uint64_t now_ns = monotonic_now();
    // CLOCK_MONOTONIC of the hits, to the kernel's tick (jiffies where
    // libbpf finds the kernel's HZ): just now, not later.
    EXPECT_LE(st.used_ns, now_ns);
    EXPECT_GT(st.used_ns, now_ns - 100000000);
    // A hit read 200 ms later is still at its own time, within a tick
    // (10 ms at HZ=100): not at the time it was read.  (50 ms first, so
    // that the hit is ticks after the clock reading the read above took.)
    usleep(50000);
    uint64_t hit_from = monotonic_now();
    EXPECT_TRUE(behaves(udp, "matching UDP, timed"));
    uint64_t hit_to = monotonic_now();
    usleep(200000);
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_LE(st.used_ns, hit_to + 10000000);
    EXPECT_GE(st.used_ns + 10000000, hit_from);

    // Deleted: the packet goes to OVS again; put again: counters anew.
    ASSERT_EQ(fp_.del(ufid(1)), 0);
    EXPECT_TRUE(behaves(udp, "after the delete"));
    EXPECT_EQ(fp_.flow_stats(ufid(1), &st), -ENOENT);
    ASSERT_EQ(fp_.put(ufid(1), f), 0);
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.packets, 0u);
}

// libbpf reads the program's CONFIG_HZ from /boot/config-RELEASE or
// /proc/config.gz and fails the whole load where it finds neither (a
// container without the host's /boot, a kernel without IKCONFIG_PROC),
// weak extern or not.  Both hidden in a mount namespace of its own, a
// child loads the fast path anyway, and its hits are timed by the coarse
// clock.  (Its own checks fail it: the child exits 1.)
TEST_F(FastPathLookup, LoadsWithoutTheKernelsConfigurationAndTimesHits)
{
    pid_t pid = fork();
    ASSERT_GE(pid, 0) << std::strerror(errno);
    if (!pid) {
        if (unshare(CLONE_NEWNS)
            || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr)
            || (!access("/boot", F_OK)
                && mount("none", "/boot", "tmpfs", 0, nullptr))
            || mount("none", "/proc", "tmpfs", 0, nullptr)) {
            std::fprintf(stderr, "hiding the kernel's configuration "
                         "failed: %s\n", std::strerror(errno));
            _exit(2);
        }
        EXPECT_NE(access("/proc/config.gz", F_OK), 0);
        fp_ = FastPath();
        auto r = FastPath::load(-1);
        EXPECT_TRUE(r.ok()) << r.error().why;
        if (r.ok()) {
            fp_ = r.take();
            EXPECT_EQ(fp_.add_target(kLoopback), 0);
            Bytes udp = ipv4(IPPROTO_UDP);
            EXPECT_EQ(fp_.put(ufid(1), flow_matching(udp, 1,
                                                     Verdict::kDrop)), 0);
            uint64_t hit_from = monotonic_now();
            EXPECT_TRUE(behaves(udp, "matching UDP, timed"));
            uint64_t hit_to = monotonic_now();
            usleep(100000);
            FastPathFlowStats st;
            EXPECT_EQ(fp_.flow_stats(ufid(1), &st), 0);
            EXPECT_EQ(st.packets, 1u);
            // Within a tick (10 ms at HZ=100) of the hit.
            EXPECT_LE(st.used_ns, hit_to + 10000000);
            EXPECT_GE(st.used_ns + 10000000, hit_from);
        }
        _exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's failures are above";
}

TEST_F(FastPathLookup, TheTcpFlagsOfItsHitsReachTheFlowsStats)
{
    // OVS's fin_timeout shortens a rule's timeouts when its flow's stats
    // show a FIN or RST; XDP's hits must show them as OVS's would.
    Bytes tcp = ipv4(IPPROTO_TCP);
    const size_t flags_at = 14 + 20 + 13;
    XdpFlow f = flow_matching(tcp, 1, Verdict::kDrop);   // No flags in it.
    ASSERT_EQ(fp_.put(ufid(1), f), 0);
    FastPathFlowStats st;
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.tcp_flags, 0u);
    for (uint8_t flags : {0x02, 0x10, 0x11}) {   // SYN, ACK, FIN|ACK.
        tcp[flags_at] = flags;
        EXPECT_TRUE(behaves(tcp, "TCP"));
    }
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.packets, 3u);
    EXPECT_EQ(st.tcp_flags, 0x013u);
    // The 12 bits OVS keeps (TCP_FLAGS()): NS, next to the data offset,
    // in host order.
    tcp[flags_at - 1] |= 0x01;
    tcp[flags_at] = 0x04;                        // RST.
    EXPECT_TRUE(behaves(tcp, "TCP with NS"));
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.tcp_flags, 0x117u);

    // Not TCP: no flags, whatever its bytes there.
    Bytes udp = ipv4(IPPROTO_UDP);
    udp[flags_at] = 0xff;
    ASSERT_EQ(fp_.put(ufid(2), flow_matching(udp, 1, Verdict::kDrop)), 0);
    EXPECT_TRUE(behaves(udp, "UDP"));
    ASSERT_EQ(fp_.flow_stats(ufid(2), &st), 0);
    EXPECT_EQ(st.packets, 1u);
    EXPECT_EQ(st.tcp_flags, 0u);

    // Put anew: its flags start again.
    ASSERT_EQ(fp_.del(ufid(1)), 0);
    ASSERT_EQ(fp_.put(ufid(1), f), 0);
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.tcp_flags, 0u);
}

TEST_F(FastPathLookup, PacketsOfAQueueOvsDoesNotPollAreLeftToTheKernel)
{
    // A NIC with more receive queues than the port polls: the plain
    // program gives the others' packets to the kernel (no socket on
    // their queue), and the fast path's flows, OVS's decisions about the
    // packets it receives, must not act on them.  The fixture's program
    // is told of one queue; a device with two receives on both.
    afxdp_test::VethNetns net;
    if (!net.skip_reason().empty()) {
        GTEST_SKIP() << net.skip_reason();
    }
    ASSERT_EQ(afxdp_test::run_ip("link add afq0 numrxqueues 2 numtxqueues 2 "
                                 "type veth peer name afq1 numrxqueues 2 "
                                 "numtxqueues 2"), "");
    int ifindex = int(if_nametoindex("afq0"));
    ASSERT_GT(ifindex, 0);
    Bytes udp = ipv4(IPPROTO_UDP);
    ASSERT_EQ(fp_.put(ufid(1), flow_matching(udp, 1, Verdict::kDrop)), 0);
    ASSERT_EQ(fp_.put(ufid(2), flow_matching(ipv4(IPPROTO_TCP), 1,
                                             Verdict::kRedirect)), 0);

    for (const Bytes &pkt : {udp, ipv4(IPPROTO_TCP)}) {
        auto before = counters();
        ProgRun r = run(pkt, ifindex, 1);
        auto after = counters();
        EXPECT_EQ(r.retval, uint32_t(XDP_PASS));
        EXPECT_EQ(Bytes(r.out.begin() + r.data, r.out.end()), pkt)
            << "a packet for the kernel, as it came";
        for (int c = 0; c < AFXDP_FP_N_COUNTERS; c++) {
            EXPECT_EQ(after[c] - before[c], c == AFXDP_FP_unpolled ? 1u : 0u)
                << "counter " << c;
        }
    }
    FastPathFlowStats st;
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.packets, 0u);

    // The queue it polls: the flow's.
    EXPECT_EQ(run(udp, ifindex, 0).retval, uint32_t(XDP_DROP));
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.packets, 1u);

    // Told of both, it takes both.
    auto both = FastPath::load(-1, 0, 0, 2);
    ASSERT_TRUE(both.ok()) << both.error().why;
    fp_ = both.take();
    ASSERT_EQ(fp_.put(ufid(1), flow_matching(udp, 1, Verdict::kDrop)), 0);
    EXPECT_EQ(run(udp, ifindex, 1).retval, uint32_t(XDP_DROP));
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.packets, 1u);
}

// What a packet on another CPU may meet while the core rewrites an entry
// (fastpath-maps.h): the kernel copies a flow or a mask slot with a plain
// memcpy, into an entry a packet may be reading.  The states are made
// here by hand; the packet must then go to OVS, counted as 'changing',
// never be dropped or redirected by a mix of two versions.
TEST_F(FastPathLookup, AFlowCaughtHalfRewrittenSendsItsPacketsToOvs)
{
    Bytes udp = ipv4(IPPROTO_UDP);
    XdpFlow drop = flow_matching(udp, 1, Verdict::kDrop);
    XdpFlow redirect = flow_matching(udp, 1, Verdict::kRedirect);
    redirect.eth_dst_mask.fill(0xff);
    redirect.eth_dst = {2, 0, 0, 0, 0, 0x77};
    int flows = map_fd("fp_flows");
    ASSERT_GE(flows, 0);
    // The two versions of the one entry, as the core writes them.
    afxdp_fp_flow_key k{}, next{};
    afxdp_fp_flow a{}, b{};
    ASSERT_EQ(fp_.put(ufid(1), drop), 0);
    ASSERT_EQ(bpf_map_get_next_key(flows, nullptr, &k), 0);
    ASSERT_NE(bpf_map_get_next_key(flows, &k, &next), 0) << "one entry";
    ASSERT_EQ(bpf_map_lookup_elem(flows, &k, &a), 0);
    ASSERT_EQ(fp_.put(ufid(1), redirect), 0);
    ASSERT_EQ(bpf_map_lookup_elem(flows, &k, &b), 0);
    ASSERT_NE(a.action.verdict, b.action.verdict);
    EXPECT_EQ(a.check, afxdp_fp_entry_check(&a, AFXDP_FP_FLOW_WORDS));

    // Each mix of the two, word by word: the first 'n' words of one, the
    // rest (the check included) of the other.  Each packet comes after a
    // put (a new generation), so that no CPU's cache answers for it.
    const size_t n_words = sizeof a / 8;
    for (int dir = 0; dir < 2; dir++) {
        const afxdp_fp_flow &first = dir ? b : a, &rest = dir ? a : b;
        for (size_t n = 1; n < n_words; n++) {
            afxdp_fp_flow mix = rest;
            std::memcpy(&mix, &first, 8 * n);
            if (!std::memcmp(&mix, &rest, sizeof mix)) {
                continue;   // The same words in both.
            }
            ASSERT_EQ(fp_.put(ufid(1), redirect), 0);
            ASSERT_EQ(bpf_map_update_elem(flows, &k, &mix, BPF_EXIST), 0);
            auto before = counters();
            ProgRun r = run(udp);
            auto after = counters();
            EXPECT_EQ(r.retval, uint32_t(XDP_PASS)) << dir << " " << n;
            EXPECT_EQ(Bytes(r.out.begin() + r.data, r.out.end()), udp);
            EXPECT_EQ(after[AFXDP_FP_changing] - before[AFXDP_FP_changing],
                      1u) << dir << " " << n;
            EXPECT_EQ(after[AFXDP_FP_dropped] + after[AFXDP_FP_redirected],
                      before[AFXDP_FP_dropped] + before[AFXDP_FP_redirected]);
        }
    }
    // Whole again: the flow's.
    ASSERT_EQ(fp_.put(ufid(1), drop), 0);
    EXPECT_TRUE(behaves(udp, "the flow written whole"));
    close(flows);
}

TEST_F(FastPathLookup, AKeyMaskedWithASlotsEarlierMaskMeetsNoLaterFlow)
{
    // The slot's mask read whole, but the one before the core rewrote it;
    // the flow found is one put under the new mask.  Made here by giving
    // the slot its earlier generation back, check and all.
    Bytes udp = ipv4(IPPROTO_UDP);
    ASSERT_EQ(fp_.put(ufid(1), flow_matching(udp, 1, Verdict::kDrop)), 0);
    int masks = map_fd("fp_masks");
    ASSERT_GE(masks, 0);
    uint32_t slot = 0;
    afxdp_fp_mask m{};
    ASSERT_EQ(bpf_map_lookup_elem(masks, &slot, &m), 0);
    ASSERT_TRUE(m.in_use);
    EXPECT_EQ(m.check, afxdp_fp_entry_check(&m, AFXDP_FP_MASK_WORDS));
    afxdp_fp_mask earlier = m;
    earlier.generation--;
    earlier.check = afxdp_fp_entry_check(&earlier, AFXDP_FP_MASK_WORDS);
    ASSERT_EQ(bpf_map_update_elem(masks, &slot, &earlier, BPF_EXIST), 0);
    auto before = counters();
    EXPECT_EQ(run(udp).retval, uint32_t(XDP_PASS));
    auto after = counters();
    EXPECT_EQ(after[AFXDP_FP_changing] - before[AFXDP_FP_changing], 1u);
    EXPECT_EQ(after[AFXDP_FP_dropped], before[AFXDP_FP_dropped]);

    // Caught half written (its check off), in bits that leave this
    // packet's masked key as it was, so that the flow is found: the same.
    // (A tear that changes the masked key finds no flow: a miss.)
    afxdp_fp_mask torn = m;
    ASSERT_EQ(torn.mask.vlan_tci, 0);
    torn.mask.vlan_tci = 0xffff;
    ASSERT_EQ(bpf_map_update_elem(masks, &slot, &torn, BPF_EXIST), 0);
    before = counters();
    EXPECT_EQ(run(udp).retval, uint32_t(XDP_PASS));
    after = counters();
    EXPECT_EQ(after[AFXDP_FP_changing] - before[AFXDP_FP_changing], 1u);

    // As the core wrote it: the flow's.
    ASSERT_EQ(bpf_map_update_elem(masks, &slot, &m, BPF_EXIST), 0);
    EXPECT_EQ(run(udp).retval, uint32_t(XDP_DROP));
    close(masks);

    // A new flow of the same mask leaves the slot's generation as it was:
    // the first flow is still met.
    Bytes other = udp;
    other[14 + 19] = 3;
    FastPathFlowStats st;
    ASSERT_EQ(fp_.put(ufid(2), flow_matching(other, 1, Verdict::kDrop)), 0);
    EXPECT_TRUE(behaves(udp, "the first flow, after a second of its mask"));
    EXPECT_TRUE(behaves(other, "the second flow"));
    ASSERT_EQ(fp_.flow_stats(ufid(2), &st), 0);
    EXPECT_EQ(st.packets, 1u);
}

TEST_F(FastPathLookup, RedirectRewritesAsOvsWould)
{
    Bytes untagged = ipv4(IPPROTO_TCP);
    Bytes tagged = ipv4(IPPROTO_TCP, 10);
    struct Case {
        const Bytes &pkt;
        VlanOp op;
    } cases[] = {{untagged, VlanOp::kNone}, {untagged, VlanOp::kPush},
                 {tagged, VlanOp::kPop}, {tagged, VlanOp::kReplace},
                 {tagged, VlanOp::kNone}};
    uint32_t n = 0;
    for (const Case &c : cases) {
        XdpFlow f = flow_matching(c.pkt, 0, Verdict::kRedirect);
        f.vlan = c.op;
        f.tpid = 0x88a8;
        f.tci = 0x2fff;           // PCP 1, DEI, VID 4095.
        f.eth_dst_mask = {0xff, 0xff, 0xff, 0, 0, 0x0f};
        f.eth_src = {1, 2, 3, 4, 5, 6};
        f.eth_src_mask = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
        f.eth_dst = {0xaa, 0xbb, 0xcc, 0, 0, 0x0f};
        ASSERT_EQ(fp_.put(ufid(++n), f), 0);
        EXPECT_TRUE(behaves(c.pkt, "VLAN op " + std::to_string(int(c.op))));
        ASSERT_EQ(fp_.del(ufid(n)), 0);
    }
}

// The ones' complement sum of 'n' bytes at 'p', added to 'sum'.
uint32_t
sum_bytes(const uint8_t *p, size_t n, uint32_t sum = 0)
{
    for (size_t i = 0; i + 1 < n; i += 2) {
        sum += uint32_t(p[i] << 8 | p[i + 1]);
    }
    if (n % 2) {
        sum += uint32_t(p[n - 1] << 8);
    }
    return sum;
}

uint16_t
fold(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return uint16_t(~sum);
}

// The IPv4 header checksum at 'l3' computed whole: 0 for a header
// whose checksum is right.
uint16_t
ipv4_header_sum(const Bytes &p, size_t l3)
{
    return fold(sum_bytes(&p[l3], 20));
}

// 'p' (untagged) as a sender on this host hands it to a veth with TX
// checksum offload: its TCP or UDP checksum left partial, the field
// holding the pseudo-header's sum, folded.
Bytes
left_partial(Bytes p, bool v6)
{
    const size_t l3 = 14, hlen = v6 ? 40 : 20;
    const uint8_t proto = p[l3 + (v6 ? 6 : 9)];
    uint32_t sum = v6 ? sum_bytes(&p[l3 + 8], 32) : sum_bytes(&p[l3 + 12], 8);
    sum += proto + uint32_t(p.size() - l3 - hlen);
    const uint16_t partial = uint16_t(~fold(sum));
    const size_t at = l3 + hlen + (proto == IPPROTO_TCP ? 16 : 6);
    p[at] = uint8_t(partial >> 8);
    p[at + 1] = uint8_t(partial);
    return p;
}

// On a veth or tap (load()'s 'local_senders') such a redirect hit goes to
// the socket, where the core finishes it; a physical NIC's program never
// meets one and does not look.
TEST_F(FastPathLookup, APartialChecksumGoesToTheSocketOnlyFromLocalSenders)
{
    std::vector<std::pair<Bytes, std::string>> pkts;
    for (bool v6 : {false, true}) {
        for (uint8_t proto : {uint8_t(IPPROTO_TCP), uint8_t(IPPROTO_UDP)}) {
            pkts.emplace_back(left_partial(v6 ? ipv6(proto) : ipv4(proto), v6),
                              std::string(v6 ? "IPv6 " : "IPv4 ")
                              + (proto == IPPROTO_TCP ? "TCP" : "UDP"));
        }
    }
    uint32_t n = 0;
    for (const auto &[pkt, what] : pkts) {
        ASSERT_EQ(fp_.put(ufid(++n), flow_matching(pkt, 0, Verdict::kRedirect)),
                  0);
        auto before = counters();
        ProgRun r = run(pkt);
        // To the socket: with none on the queue here, to the kernel.
        EXPECT_EQ(r.retval, XDP_PASS) << what;
        EXPECT_EQ(counters()[AFXDP_FP_csum_partial]
                  - before[AFXDP_FP_csum_partial], 1u) << what;
        EXPECT_EQ(counters()[AFXDP_FP_redirected]
                  - before[AFXDP_FP_redirected], 0u) << what;
        ASSERT_EQ(fp_.del(ufid(n)), 0);
    }

    auto nic = FastPath::load(-1, 0, 0, 1, false);
    ASSERT_TRUE(nic.ok()) << nic.error().why;
    fp_ = nic.take();
    ASSERT_EQ(fp_.add_target(kLoopback), 0);
    for (const auto &[pkt, what] : pkts) {
        ASSERT_EQ(fp_.put(ufid(++n), flow_matching(pkt, 0, Verdict::kRedirect)),
                  0);
        EXPECT_TRUE(behaves(pkt, what + " from a physical NIC"));
        ASSERT_EQ(fp_.del(ufid(n)), 0);
    }
}

TEST_F(FastPathLookup, SetIpFieldsAsOvsSetsThem)
{
    // Routing's dec_ttl and a DSCP rewrite that keeps ECN, on IPv4
    // headers with a right checksum, a wrong one, and the two that
    // ones' complement makes special (0xffff and 0), untagged, with a
    // tag in the frame, popped, pushed; IPv6's traffic class and hop
    // limit.  Byte for byte as OVS writes them (ovs_set_ip()), and a
    // right checksum stays right.
    struct Case {
        int vid;                 // -1: untagged.
        VlanOp op;
        uint8_t tos, tos_mask, ttl, ttl_mask;
        const char *what;
    } cases[] = {
        {-1, VlanOp::kNone, 0, 0, 63, 0xff, "dec_ttl"},
        {-1, VlanOp::kNone, 0x10, 0xfc, 0, 0, "DSCP, ECN kept"},
        {-1, VlanOp::kNone, 0xb8, 0xfc, 63, 0xff, "TOS unchanged, TTL"},
        {-1, VlanOp::kNone, 0x04, 0xff, 64, 0xff, "TOS, TTL unchanged"},
        {-1, VlanOp::kNone, 0xb8, 0xff, 64, 0xff, "nothing changes"},
        // With the checksum 0, the sum folds twice (0x1ffff).
        {-1, VlanOp::kNone, 0, 0, 65, 0xff, "TTL up by one"},
        {10, VlanOp::kNone, 0x20, 0xfc, 1, 0xff, "tag in the frame"},
        {10, VlanOp::kPop, 0x20, 0xfc, 63, 0xff, "tag popped"},
        {-1, VlanOp::kPush, 0x20, 0xfc, 63, 0xff, "tag pushed"},
        {10, VlanOp::kReplace, 0, 0, 7, 0x0f, "tag replaced"},
    };
    uint32_t n = 0;
    for (const Case &c : cases) {
        Bytes base = ipv4(IPPROTO_UDP, c.vid);
        const size_t l3 = c.vid < 0 ? 14 : 18;
        base[l3 + 1] = 0xb8;
        uint16_t right = ipv4_header_sum(base, l3);
        for (uint16_t csum : {right, uint16_t(right ^ 0x0101),
                              uint16_t(0xffff), uint16_t(0)}) {
            Bytes pkt = base;
            pkt[l3 + 10] = uint8_t(csum >> 8);
            pkt[l3 + 11] = uint8_t(csum);
            XdpFlow f = flow_matching(pkt, 4, Verdict::kRedirect);
            f.mask.vlan_tci = htons(0x1000);
            f.key = masked_key(reference(pkt).key, f.mask);
            f.vlan = c.op;
            f.tpid = 0x8100;
            f.tci = 0x0123;
            f.set_ip = 4;
            f.nw_tos = c.tos;
            f.nw_tos_mask = c.tos_mask;
            f.nw_ttl = c.ttl;
            f.nw_ttl_mask = c.ttl_mask;
            ASSERT_EQ(fp_.put(ufid(++n), f), 0);
            char what[96];
            std::snprintf(what, sizeof what, "%s, checksum 0x%04x", c.what,
                          csum);
            EXPECT_TRUE(behaves(pkt, what));
            if (csum == right) {
                ProgRun r = run(pkt);
                Bytes out(r.out.begin() + r.data, r.out.end());
                const size_t out_l3 = c.op == VlanOp::kPop ? 14
                                      : c.op == VlanOp::kPush ? 18 : l3;
                EXPECT_EQ(ipv4_header_sum(out, out_l3), 0) << what;
            }
            ASSERT_EQ(fp_.del(ufid(n)), 0);
        }
    }

    Bytes v6 = ipv6(IPPROTO_UDP);
    XdpFlow f = flow_matching(v6, 4, Verdict::kRedirect);
    f.set_ip = 6;
    f.nw_tos = 0x28;          // DSCP 10, ECN from the packet.
    f.nw_tos_mask = 0xfc;
    f.nw_ttl = 254;
    f.nw_ttl_mask = 0xff;
    ASSERT_EQ(fp_.put(ufid(++n), f), 0);
    EXPECT_TRUE(behaves(v6, "IPv6 traffic class and hop limit"));
    ProgRun r = run(v6);
    Bytes out(r.out.begin() + r.data, r.out.end());
    EXPECT_EQ(out[14], 0x62) << "version kept, class 0x2b";
    EXPECT_EQ(out[15], 0xbc) << "flow label kept";
    EXPECT_EQ(out[21], 254);
    ASSERT_EQ(fp_.del(ufid(n)), 0);
}

// The TCP or UDP checksum of the segment behind the IP header at 'l3'
// computed whole, pseudo-header included: 0 where the packet's is right.
uint16_t
l4_sum(const Bytes &p, size_t l3)
{
    size_t size;
    const size_t l4 = ovs_l4_ofs(p, l3, &size);
    const bool v6 = l4 - l3 == 40;
    uint32_t sum = sum_bytes(&p[l3 + (v6 ? 8 : 12)], v6 ? 32 : 8);
    sum += p[l3 + (v6 ? 6 : 9)] + uint32_t(size);
    return fold(sum_bytes(&p[l4], size, sum));
}

// 'p' with right IP header and TCP, UDP, ICMPv6 or SCTP checksums.
Bytes
with_checksums(Bytes p, size_t l3)
{
    size_t size;
    const size_t l4 = ovs_l4_ofs(p, l3, &size);
    const uint8_t proto = p[l3 + (l4 - l3 == 40 ? 6 : 9)];
    if (proto == IPPROTO_SCTP) {
        put_le32(&p[l4 + 8], 0);
        put_le32(&p[l4 + 8], crc32c(&p[l4], size));
    } else {
        const size_t at = l4 + (proto == IPPROTO_TCP ? 16
                                : proto == IPPROTO_ICMPV6 ? 2 : 6);
        p[at] = p[at + 1] = 0;
        const uint16_t c = l4_sum(p, l3);
        p[at] = uint8_t(c >> 8);
        p[at + 1] = uint8_t(c);
    }
    if (l4 - l3 == 20) {
        p[l3 + 10] = p[l3 + 11] = 0;
        const uint16_t h = ipv4_header_sum(p, l3);
        p[l3 + 10] = uint8_t(h >> 8);
        p[l3 + 11] = uint8_t(h);
    }
    return p;
}

// A flow that matches exactly 'pkt' and sets its addresses (IPv4) and
// ports.
XdpFlow
nat_flow(const Bytes &pkt, uint32_t src, uint32_t dst, uint16_t sport,
         uint16_t dport)
{
    XdpFlow f = flow_matching(pkt, 3, Verdict::kRedirect);
    const afxdp_flow_key k = reference(pkt).key;
    if (k.dl_type == htons(0x0800)) {
        f.set_ip = 4;
        f.nw_src = src;
        f.nw_src_mask = src ? 0xffffffff : 0;
        f.nw_dst = dst;
        f.nw_dst_mask = dst ? 0xffffffff : 0;
    }
    f.set_l4 = k.nw_proto;
    f.tp_src = sport;
    f.tp_src_mask = sport ? 0xffff : 0;
    f.tp_dst = dport;
    f.tp_dst_mask = dport ? 0xffff : 0;
    return f;
}

TEST_F(FastPathLookup, AddressesAndPortsAreSetAsOvsSetsThem)
{
    // Stateless NAT: IPv4 addresses with the header's and the TCP or UDP
    // checksum behind it, and ports, each byte as OVS writes it
    // (ovs_set_ipv4_addr(), ovs_set_l4()), and right checksums stay right.
    const uint32_t a = inet_addr("192.0.2.7"), b = inet_addr("198.51.100.9");
    struct Case {
        Bytes pkt;
        size_t l3;
        uint32_t src, dst;
        uint16_t sport, dport;
        const char *what;
    };
    std::vector<Case> cases = {
        {ipv4(IPPROTO_TCP), 14, a, b, htons(80), htons(8080), "TCP, all"},
        {ipv4(IPPROTO_UDP), 14, 0, b, 0, htons(5353), "UDP, DNAT"},
        {ipv4(IPPROTO_UDP, 10), 18, a, 0, htons(999), 0, "UDP, SNAT, tag"},
        {ipv4(IPPROTO_TCP, -1, 0x2000), 14, a, b, htons(1), htons(2),
         "TCP, first fragment"},
        {ipv6(IPPROTO_TCP), 14, 0, 0, htons(443), htons(4433), "IPv6 TCP"},
        {ipv6(IPPROTO_UDP, 7), 18, 0, 0, 0, htons(53), "IPv6 UDP, tag"},
    };
    uint32_t n = 0;
    for (const Case &c : cases) {
        Bytes pkt = with_checksums(c.pkt, c.l3);
        ASSERT_EQ(l4_sum(pkt, c.l3), 0) << c.what;
        XdpFlow f = nat_flow(pkt, c.src, c.dst, c.sport, c.dport);
        ASSERT_EQ(fp_.put(ufid(++n), f), 0);
        EXPECT_TRUE(behaves(pkt, c.what));
        ProgRun r = run(pkt);
        Bytes out(r.out.begin() + r.data, r.out.end());
        EXPECT_EQ(l4_sum(out, c.l3), 0) << c.what << ": L4 checksum";
        if (out[c.l3] >> 4 == 4) {
            EXPECT_EQ(ipv4_header_sum(out, c.l3), 0) << c.what;
        }
        size_t size;
        const size_t l4 = ovs_l4_ofs(out, c.l3, &size);
        if (c.dport) {
            EXPECT_EQ(std::memcmp(&out[l4 + 2], &c.dport, 2), 0) << c.what;
        }
        if (c.dst) {
            EXPECT_EQ(std::memcmp(&out[c.l3 + 16], &c.dst, 4), 0) << c.what;
        }
        ASSERT_EQ(fp_.del(ufid(n)), 0);
    }

    // A UDP checksum of 0 (none) stays 0; one whose update comes out 0 is
    // sent as 0xffff, by an address and by a port.
    for (int by_port = 0; by_port < 2; by_port++) {
        Bytes pkt = with_checksums(ipv4(IPPROTO_UDP), 14);
        pkt[40] = pkt[41] = 0;
        XdpFlow f = by_port ? nat_flow(pkt, 0, 0, 0, htons(7))
                            : nat_flow(pkt, 0, b, 0, 0);
        ASSERT_EQ(fp_.put(ufid(++n), f), 0);
        EXPECT_TRUE(behaves(pkt, "UDP without a checksum"));
        ProgRun r = run(pkt);
        EXPECT_EQ(r.out.at(r.data + 40) | r.out.at(r.data + 41), 0);
        // The checksum whose update is 0.
        uint16_t old_port, new_port = htons(7);
        uint32_t old_dst;
        std::memcpy(&old_port, &pkt[36], 2);
        std::memcpy(&old_dst, &pkt[30], 4);
        uint16_t zero_after = 0;
        for (uint32_t c = 1; c <= 0xffff; c++) {
            uint16_t after = by_port
                ? ovs_recalc_csum16(uint16_t(c), old_port, new_port)
                : ovs_recalc_csum32(uint16_t(c), old_dst, b);
            if (!after) {
                zero_after = uint16_t(c);
                break;
            }
        }
        ASSERT_NE(zero_after, 0);
        std::memcpy(&pkt[40], &zero_after, 2);
        EXPECT_TRUE(behaves(pkt, "UDP checksum updated to 0"));
        r = run(pkt);
        EXPECT_EQ(r.out.at(r.data + 40), 0xff);
        EXPECT_EQ(r.out.at(r.data + 41), 0xff);
        ASSERT_EQ(fp_.del(ufid(n)), 0);
    }

    // Where OVS sees no L4 header, or none it sets ports in: a TCP
    // segment of 8 bytes (the IP checksum alone follows the address), a
    // data offset past the segment (the ports stay, the address still
    // updates the TCP checksum), a UDP datagram of 4 bytes.
    Bytes short_tcp = ipv4(IPPROTO_TCP);
    short_tcp.resize(14 + 20 + 8);
    short_tcp[17] = 28;
    Bytes long_offset = with_checksums(ipv4(IPPROTO_TCP), 14);
    long_offset[46] = 0xf0;
    Bytes short_udp = ipv4(IPPROTO_UDP);
    short_udp.resize(14 + 20 + 4);
    short_udp[17] = 24;
    // The same TCP segment padded to Ethernet's 60 bytes: OVS measures by
    // the IP header's length, not the frame's.
    Bytes padded = short_tcp;
    padded.resize(60, 0xee);
    for (const Bytes &pkt : {short_tcp, long_offset, short_udp, padded}) {
        ASSERT_TRUE(reference(pkt).ip);
        XdpFlow f = nat_flow(pkt, a, b, htons(1), htons(2));
        ASSERT_EQ(fp_.put(ufid(++n), f), 0);
        EXPECT_TRUE(behaves(pkt, "no L4 header to OVS: " + hex(pkt.data(), pkt.size())));
        ASSERT_EQ(fp_.del(ufid(n)), 0);
    }

    // Checksums of 0xffff, where an update that changes nothing would
    // make them 0: OVS writes an address or a port only if it changes.
    for (uint8_t proto : {uint8_t(IPPROTO_TCP), uint8_t(IPPROTO_UDP)}) {
        Bytes pkt = ipv4(proto);
        const size_t csum = proto == IPPROTO_TCP ? 50 : 40;
        pkt[csum] = pkt[csum + 1] = 0xff;
        pkt[24] = pkt[25] = 0xff;
        uint16_t sport, dport;
        uint32_t src, dst;
        std::memcpy(&src, &pkt[26], 4);
        std::memcpy(&dst, &pkt[30], 4);
        std::memcpy(&sport, &pkt[34], 2);
        std::memcpy(&dport, &pkt[36], 2);
        XdpFlow f = nat_flow(pkt, src, dst, sport, dport);
        ASSERT_EQ(fp_.put(ufid(++n), f), 0);
        EXPECT_TRUE(behaves(pkt, "checksums 0xffff, nothing changes"));
        ASSERT_EQ(fp_.del(ufid(n)), 0);
    }
}

// The IPv6 address 'a', its 16 bytes.
std::array<uint8_t, 16>
in6(const char *a)
{
    std::array<uint8_t, 16> b{};
    EXPECT_EQ(inet_pton(AF_INET6, a, b.data()), 1) << a;
    return b;
}

TEST_F(FastPathLookup, Ipv6AddressesAndLabelAreSetAsOvsSetsThem)
{
    // IPv6 NAT (a prefix rewritten, an address replaced) and the flow
    // label: each byte as OVS writes it (ovs_set_ip()), the TCP, UDP or
    // ICMPv6 checksum behind updated, and right checksums stay right.
    const auto prefix = in6("2001:db8:1::"), prefix_mask = in6("ffff:ffff:ffff:ffff::");
    const auto host = in6("fd00::42"), whole = in6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
    auto v6_flow = [&](const Bytes &pkt) {
        XdpFlow f = flow_matching(pkt, 3, Verdict::kRedirect);
        f.set_ip = 6;
        f.ipv6_src = prefix;
        f.ipv6_src_mask = prefix_mask;
        f.ipv6_dst = host;
        f.ipv6_dst_mask = whole;
        f.ipv6_label = htonl(0x54321);
        f.ipv6_label_mask = htonl(0xfffff);
        return f;
    };
    struct Case {
        Bytes pkt;
        size_t l3;
        const char *what;
    };
    std::vector<Case> cases = {
        {ipv6(IPPROTO_TCP), 14, "TCP"},
        {ipv6(IPPROTO_UDP), 14, "UDP"},
        {ipv6(IPPROTO_ICMPV6), 14, "ICMPv6"},
        {ipv6(IPPROTO_UDP, 7), 18, "UDP, tag"},
        {ipv6(IPPROTO_TCP, 3000), 18, "TCP, tag"},
    };
    uint32_t n = 0;
    for (const Case &c : cases) {
        Bytes pkt = with_checksums(c.pkt, c.l3);
        ASSERT_EQ(l4_sum(pkt, c.l3), 0) << c.what;
        XdpFlow f = v6_flow(pkt);
        ASSERT_EQ(fp_.put(ufid(++n), f), 0);
        EXPECT_TRUE(behaves(pkt, c.what));
        ProgRun r = run(pkt);
        Bytes out(r.out.begin() + r.data, r.out.end());
        EXPECT_EQ(l4_sum(out, c.l3), 0) << c.what << ": L4 checksum";
        EXPECT_EQ(std::memcmp(&out[c.l3 + 8], prefix.data(), 8), 0) << c.what;
        EXPECT_EQ(std::memcmp(&out[c.l3 + 16], &pkt[c.l3 + 16], 8), 0) << c.what;
        EXPECT_EQ(std::memcmp(&out[c.l3 + 24], host.data(), 16), 0) << c.what;
        EXPECT_EQ(out[c.l3] >> 4, 6) << c.what;
        EXPECT_EQ(out[c.l3 + 1] & 0x0f, 0x05) << c.what;
        EXPECT_EQ(out[c.l3 + 2], 0x43) << c.what;
        EXPECT_EQ(out[c.l3 + 3], 0x21) << c.what;
        ASSERT_EQ(fp_.del(ufid(n)), 0);
    }

    // No checksum OVS updates: another protocol (SCTP's CRC covers no
    // pseudo-header), and a TCP segment too short for OVS to see its
    // header: the addresses alone change.
    Bytes sctp = ipv6(IPPROTO_SCTP);
    Bytes short_tcp = ipv6(IPPROTO_TCP);
    short_tcp.resize(14 + 40 + 12);
    short_tcp[19] = 12;
    for (const Bytes &pkt : {sctp, short_tcp}) {
        ASSERT_TRUE(reference(pkt).ip) << hex(pkt.data(), pkt.size());
        ASSERT_EQ(fp_.put(ufid(++n), v6_flow(pkt)), 0);
        EXPECT_TRUE(behaves(pkt, "no L4 checksum: " + hex(pkt.data(), pkt.size())));
        ASSERT_EQ(fp_.del(ufid(n)), 0);
    }

    // A UDP checksum of 0 (none) stays 0; one whose update comes out 0 is
    // sent as 0xffff.
    Bytes pkt = with_checksums(ipv6(IPPROTO_UDP), 14);
    const size_t csum = 14 + 40 + 6;
    pkt[csum] = pkt[csum + 1] = 0;
    XdpFlow f = v6_flow(pkt);
    f.ipv6_src_mask = {};
    f.ipv6_src = {};
    ASSERT_EQ(fp_.put(ufid(++n), f), 0);
    EXPECT_TRUE(behaves(pkt, "UDP without a checksum"));
    ProgRun r = run(pkt);
    EXPECT_EQ(r.out.at(r.data + csum) | r.out.at(r.data + csum + 1), 0);
    uint16_t zero_after = 0;
    for (uint32_t c = 1; c <= 0xffff && !zero_after; c++) {
        if (!ovs_recalc_csum128(uint16_t(c), &pkt[14 + 24], host.data())) {
            zero_after = uint16_t(c);
        }
    }
    ASSERT_NE(zero_after, 0);
    std::memcpy(&pkt[csum], &zero_after, 2);
    EXPECT_TRUE(behaves(pkt, "UDP checksum updated to 0"));
    r = run(pkt);
    EXPECT_EQ(r.out.at(r.data + csum), 0xff);
    EXPECT_EQ(r.out.at(r.data + csum + 1), 0xff);
    ASSERT_EQ(fp_.del(ufid(n)), 0);

    // A checksum of 0xffff and addresses that stay: OVS writes an address
    // only if it changes, so the checksum stays too.
    Bytes same = ipv6(IPPROTO_TCP);
    same[14 + 40 + 16] = same[14 + 40 + 17] = 0xff;
    f = v6_flow(same);
    std::memcpy(f.ipv6_src.data(), &same[14 + 8], 16);
    f.ipv6_src_mask = whole;
    std::memcpy(f.ipv6_dst.data(), &same[14 + 24], 16);
    ASSERT_EQ(fp_.put(ufid(++n), f), 0);
    EXPECT_TRUE(behaves(same, "checksum 0xffff, addresses unchanged"));
    r = run(same);
    EXPECT_EQ(r.out.at(r.data + 14 + 40 + 16), 0xff);
    ASSERT_EQ(fp_.del(ufid(n)), 0);
}

// An SCTP packet, IPv4 or IPv6, tagged or not, its payload 'extra' more
// bytes past the common header (pseudo-random: 'seed'), its checksum
// right, its IP header's length saying so, and 'pad' bytes of Ethernet
// padding that OVS does not count.
Bytes
sctp_packet(bool v6, int vid, size_t extra, uint32_t seed, size_t pad = 0)
{
    Bytes p = v6 ? ipv6(IPPROTO_SCTP, vid) : ipv4(IPPROTO_SCTP, vid);
    const size_t l3 = vid < 0 ? 14 : 18;
    std::mt19937 rng(seed);
    for (size_t i = 0; i < extra; i++) {
        p.push_back(uint8_t(rng()));
    }
    const size_t len = p.size() - l3 - (v6 ? 40 : 0);
    p[l3 + (v6 ? 4 : 2)] = uint8_t(len >> 8);
    p[l3 + (v6 ? 5 : 3)] = uint8_t(len);
    p = with_checksums(p, l3);
    p.resize(p.size() + pad, 0xee);
    return p;
}

// Whether the SCTP packet behind the IP header at 'l3' has a right CRC32c.
bool
sctp_crc_right(const Bytes &p, size_t l3)
{
    size_t size;
    const size_t l4 = ovs_l4_ofs(p, l3, &size);
    Bytes seg(p.begin() + long(l4), p.begin() + long(l4 + size));
    const uint32_t have = get_le32(&seg[8]);
    put_le32(&seg[8], 0);
    return crc32c(seg.data(), seg.size()) == have;
}

TEST_F(FastPathLookup, SctpPortsAreSetWithTheirChecksumAsOvsSetsThem)
{
    // OVS recomputes SCTP's CRC32c over the whole packet before and after
    // it sets the ports; XDP adds what the change of ports alone adds,
    // which depends on the packet's length: lengths from the bare header
    // to a full frame's, IPv4 and IPv6, tagged or not, padded or not.  A
    // right checksum stays right, a wrong one as wrong as OVS leaves it.
    uint32_t n = 0;
    int failures = 0;
    for (size_t extra : {0, 1, 3, 4, 7, 52, 255, 256, 257, 1000, 1434}) {
        for (int v6 = 0; v6 < 2; v6++) {
            const int vid = extra % 2 ? 7 : -1;
            const size_t l3 = vid < 0 ? 14 : 18;
            Bytes pkt = sctp_packet(v6, vid, extra, uint32_t(extra),
                                    extra == 0 ? 6 : 0);
            if (v6 && extra > 1400) {
                continue;   // Past 1514 bytes.
            }
            ASSERT_TRUE(sctp_crc_right(pkt, l3));
            const std::string what = std::string(v6 ? "IPv6" : "IPv4")
                                     + " SCTP, " + std::to_string(extra)
                                     + " bytes of payload";
            XdpFlow f = nat_flow(pkt, 0, 0, htons(36412), htons(2905));
            ASSERT_EQ(f.set_l4, IPPROTO_SCTP);
            ASSERT_EQ(fp_.put(ufid(++n), f), 0);
            failures += !behaves(pkt, what);
            ProgRun r = run(pkt);
            Bytes out(r.out.begin() + r.data, r.out.end());
            EXPECT_TRUE(sctp_crc_right(out, l3)) << what;
            EXPECT_EQ(out[l3 + (v6 ? 40 : 20) + 3], 2905 & 0xff) << what;
            // A wrong checksum.
            Bytes wrong = pkt;
            wrong[l3 + (v6 ? 40 : 20) + 9] ^= 0x5a;
            failures += !behaves(wrong, what + ", checksum wrong");
            ASSERT_EQ(fp_.del(ufid(n)), 0);
        }
    }
    EXPECT_EQ(failures, 0);

    // One port under a mask, the other kept; ports that do not change
    // (the checksum as it was, right or wrong).
    Bytes pkt = sctp_packet(false, -1, 40, 9);
    XdpFlow f = nat_flow(pkt, 0, 0, htons(0x1200), 0);
    f.tp_src_mask = htons(0xff00);
    ASSERT_EQ(fp_.put(ufid(++n), f), 0);
    EXPECT_TRUE(behaves(pkt, "masked source port"));
    ASSERT_EQ(fp_.del(ufid(n)), 0);
    uint16_t same_src, same_dst;
    std::memcpy(&same_src, &pkt[34], 2);
    std::memcpy(&same_dst, &pkt[36], 2);
    pkt[14 + 20 + 10] ^= 1;
    f = nat_flow(pkt, 0, 0, same_src, same_dst);
    ASSERT_EQ(fp_.put(ufid(++n), f), 0);
    EXPECT_TRUE(behaves(pkt, "ports unchanged, checksum wrong"));
    ProgRun r = run(pkt);
    EXPECT_EQ(Bytes(r.out.begin() + r.data, r.out.end()), pkt);
    ASSERT_EQ(fp_.del(ufid(n)), 0);

    // Shorter than SCTP's 12-byte header by the IP length: OVS sets
    // nothing (the address set, if any, still happens).
    Bytes short_sctp = ipv4(IPPROTO_SCTP);
    short_sctp[17] = 20 + 8;
    short_sctp.resize(14 + 20 + 8);
    short_sctp.resize(60, 0);
    ASSERT_TRUE(reference(short_sctp).ip);
    f = nat_flow(short_sctp, 0, inet_addr("192.0.2.1"), htons(1), htons(2));
    ASSERT_EQ(fp_.put(ufid(++n), f), 0);
    EXPECT_TRUE(behaves(short_sctp, "SCTP header past the IP length"));
    ASSERT_EQ(fp_.del(ufid(n)), 0);
}

TEST_F(FastPathLookup, RandomAddressAndPortSetsFollowOvs)
{
    // Random TCP, UDP and SCTP packets (SCTP's of random lengths), IPv4
    // and IPv6, tagged or not, with random checksums (UDP's 0 among
    // them), under random masked sets of
    // addresses and ports and a VLAN change: byte for byte as OVS, which
    // sets the ports after the addresses or, half the time, before (the
    // program has one order for both: the order changes no byte).
    std::mt19937 rng(2024);
    const VlanOp tagged_ops[] = {VlanOp::kNone, VlanOp::kPop,
                                 VlanOp::kReplace};
    int failures = 0, changed = 0;
    for (uint32_t i = 0; i < 1500 && failures < 3; i++) {
        const bool v6 = rng() % 3 == 0;
        const uint8_t protos[] = {IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP};
        const uint8_t proto = protos[rng() % 3];
        const int vid = rng() % 2 ? int(rng() % 4095) : -1;
        const size_t l3 = vid < 0 ? 14 : 18;
        Bytes pkt = proto == IPPROTO_SCTP
                    ? sctp_packet(v6, vid, rng() % 1200, uint32_t(rng()))
                    : v6 ? ipv6(proto, vid) : ipv4(proto, vid);
        for (size_t at = l3 + (v6 ? 8 : 12); at < l3 + (v6 ? 40 : 20);
             at++) {
            pkt[at] = uint8_t(rng());     // Addresses.
        }
        const size_t l4 = l3 + (v6 ? 40 : 20);
        for (size_t at = l4; at < l4 + 4; at++) {
            pkt[at] = uint8_t(rng());     // Ports.
        }
        if (rng() % 2) {
            pkt = with_checksums(pkt, l3);
        }
        const size_t csum = l4 + (proto == IPPROTO_TCP ? 16
                                  : proto == IPPROTO_UDP ? 6 : 8);
        switch (rng() % 4) {
        case 0:
            pkt[csum] = pkt[csum + 1] = 0;
            break;
        case 1:
            pkt[csum] = uint8_t(rng());
            pkt[csum + 1] = uint8_t(rng());
            break;
        default:
            break;
        }
        if (!v6 && rng() % 4 == 0) {
            pkt[l3 + 10] = uint8_t(rng());
        }
        const uint32_t m32[] = {0, 0xffffffff, htonl(0xffff0000),
                                uint32_t(rng())};
        const uint16_t m16[] = {0, 0xffff, htons(0x00ff), uint16_t(rng())};
        XdpFlow f = flow_matching(pkt, 3, Verdict::kRedirect);
        if (!v6) {
            f.set_ip = 4;
            f.nw_src_mask = m32[rng() % 4];
            f.nw_src = f.nw_src_mask ? uint32_t(rng()) : 0;
            f.nw_dst_mask = m32[rng() % 4];
            f.nw_dst = f.nw_dst_mask ? uint32_t(rng()) : 0;
            f.nw_ttl_mask = rng() % 2 ? 0xff : 0;
            f.nw_ttl = f.nw_ttl_mask ? uint8_t(rng()) : 0;
        } else if (rng() % 4) {
            // Each address: none, whole, a /64 prefix, random bits (OVS
            // ors the value in under any mask).
            f.set_ip = 6;
            for (auto [value, mask] :
                 {std::pair{&f.ipv6_src, &f.ipv6_src_mask},
                  std::pair{&f.ipv6_dst, &f.ipv6_dst_mask}}) {
                const unsigned kind = rng() % 4;
                for (int b = 0; b < 16; b++) {
                    (*mask)[b] = kind == 1 || (kind == 2 && b < 8) ? 0xff
                                 : kind == 3 ? uint8_t(rng()) : 0;
                    (*value)[b] = kind ? uint8_t(rng()) : 0;
                }
            }
            f.ipv6_label_mask = rng() % 2 ? htonl(0xfffff)
                                          : htonl(rng() & 0xfffff);
            f.ipv6_label = htonl(rng() & 0xfffff);
            f.nw_ttl_mask = rng() % 2 ? 0xff : 0;
            f.nw_ttl = uint8_t(rng());
        }
        // Addresses alone a quarter of the time.
        f.set_l4 = v6 || rng() % 4 ? proto : 0;
        f.tp_src_mask = m16[rng() % 4];
        f.tp_src = uint16_t(rng());
        f.tp_dst_mask = m16[rng() % 4];
        f.tp_dst = uint16_t(rng());
        if (rng() % 3 == 0) {
            f.vlan = vid < 0 ? VlanOp::kPush : tagged_ops[rng() % 3];
            f.tpid = 0x8100;
            f.tci = uint16_t(rng() & 0xefff);
        }
        ASSERT_EQ(fp_.put(ufid(1), f), 0);
        ports_first_ = rng() % 2;
        failures += !behaves(pkt, "packet " + std::to_string(i)
                                      + (ports_first_ ? ", ports first"
                                                      : ""));
        changed += rewritten(pkt, f) != pkt;
        ASSERT_EQ(fp_.del(ufid(1)), 0);
    }
    EXPECT_EQ(failures, 0);
    EXPECT_GT(changed, 1000);
}

TEST_F(FastPathLookup, SetIpOnAHeaderOvsTakesForNoneGoesToOvs)
{
    // dl_type 0x0800 but a total length past the packet: OVS extracts no
    // IP fields, yet would write where the header would be.  Its call.
    Bytes bad = ipv4(IPPROTO_UDP);
    bad[16] = 0x7f;
    ASSERT_FALSE(reference(bad).ip);
    XdpFlow f = flow_matching(bad, 4, Verdict::kRedirect);
    f.set_ip = 4;
    f.nw_ttl = 1;
    f.nw_ttl_mask = 0xff;
    ASSERT_EQ(fp_.put(ufid(1), f), 0);
    auto before = counters();
    EXPECT_TRUE(behaves(bad, "IPv4 header OVS rejects"));
    EXPECT_EQ(counters()[AFXDP_FP_ip_unparsed],
              before[AFXDP_FP_ip_unparsed] + 1);
    // The same flow on a good packet.
    Bytes good = ipv4(IPPROTO_UDP);
    f = flow_matching(good, 4, Verdict::kRedirect);
    f.set_ip = 4;
    f.nw_ttl = 1;
    f.nw_ttl_mask = 0xff;
    ASSERT_EQ(fp_.put(ufid(1), f), 0);
    EXPECT_TRUE(behaves(good, "the same flow, a good header"));
    ProgRun r = run(good);
    EXPECT_EQ(r.out.at(r.data + 22), 1);
}

TEST_F(FastPathLookup, RedirectToAnInterfaceNotInTheMapGoesToOvsUntouched)
{
    Bytes tagged = ipv4(IPPROTO_UDP, 7);
    XdpFlow f = flow_matching(tagged, 0, Verdict::kRedirect);
    f.vlan = VlanOp::kPop;
    ASSERT_EQ(fp_.put(ufid(1), f), 0);
    ASSERT_EQ(fp_.del_target(kLoopback), 0);
    auto before = counters();
    ProgRun r = run(tagged);
    EXPECT_EQ(r.retval, uint32_t(XDP_PASS));
    EXPECT_EQ(Bytes(r.out.begin() + r.data, r.out.end()), tagged);
    EXPECT_EQ(counters()[AFXDP_FP_redirect_failed],
              before[AFXDP_FP_redirect_failed] + 1);
    // OVS counts that packet, not us.
    FastPathFlowStats st;
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.packets, 0u);
    ASSERT_EQ(fp_.add_target(kLoopback), 0);
    EXPECT_TRUE(behaves(tagged, "target back"));
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.packets, 1u);
}

TEST_F(FastPathLookup, PacketsOfSeveralBuffersAreDroppedButNotRedirected)
{
    // 6000 bytes: the kernel's test run makes it a multi-buffer packet.
    Bytes big = ipv4(IPPROTO_UDP);
    big.resize(6000, 0x5a);
    XdpFlow f = flow_matching(big, 1, Verdict::kRedirect);
    ASSERT_EQ(fp_.put(ufid(1), f), 0);
    auto before = counters();
    ProgRun r = run(big);
    EXPECT_EQ(r.retval, uint32_t(XDP_PASS));
    EXPECT_EQ(counters()[AFXDP_FP_multi_buffer],
              before[AFXDP_FP_multi_buffer] + 1);

    f.verdict = Verdict::kDrop;
    ASSERT_EQ(fp_.put(ufid(1), f), 0);
    r = run(big);
    EXPECT_EQ(r.retval, uint32_t(XDP_DROP));
    FastPathFlowStats st;
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.packets, 1u);
    EXPECT_EQ(st.bytes, 6000u);   // The whole packet, every buffer.
}

TEST_F(FastPathLookup, AFlowReplacedIntoItsOwnFreedSlotWhenAllAreFull)
{
    // 32 flows, 32 masks: flow 0 changed to a 33rd mask fits only in the
    // slot it frees itself, and its old entry must be gone first.
    Bytes udp = ipv4(IPPROTO_UDP);
    afxdp_flow_key k = reference(udp).key;
    for (uint32_t i = 0; i < FlowTable::kMaxMasks; i++) {
        XdpFlow f;
        f.mask = mask_shape(1);
        f.mask.nw_ttl = uint8_t(i);       // A mask of its own.
        f.key = masked_key(k, f.mask);
        f.key.tp_dst ^= htons(i ? 0x100 : 0);   // Only flow 0 matches.
        f.verdict = Verdict::kDrop;
        ASSERT_EQ(fp_.put(ufid(i), f), 0) << i;
    }
    EXPECT_TRUE(behaves(udp, "flow 0, dropped"));
    XdpFlow g;
    g.mask = mask_shape(0);
    g.key = masked_key(k, g.mask);
    g.verdict = Verdict::kRedirect;
    g.ifindex = kLoopback;
    ASSERT_EQ(fp_.put(ufid(0), g), 0);
    EXPECT_EQ(fp_.flows().entry(ufid(0))->mask_slot, 0u);
    EXPECT_TRUE(behaves(udp, "flow 0 changed, redirected"));
    EXPECT_EQ(counters()[AFXDP_FP_redirected], 1u);
}

TEST_F(FastPathLookup, TheCacheAnswersOnlyForTheMapsItWasFilledFrom)
{
    Bytes udp = ipv4(IPPROTO_UDP);
    XdpFlow f = flow_matching(udp, 1, Verdict::kDrop);
    ASSERT_EQ(fp_.put(ufid(1), f), 0);
    auto filled = [&]() { return counters()[AFXDP_FP_cache_filled]; };
    uint64_t before = filled();
    EXPECT_TRUE(behaves(udp, "first, found in the slots"));
    EXPECT_EQ(filled(), before + 1);
    for (int i = 0; i < 3; i++) {
        EXPECT_TRUE(behaves(udp, "again, from the cache"));
    }
    EXPECT_EQ(filled(), before + 1);
    FastPathFlowStats st;
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.packets, 4u);   // Counted for the flow either way.

    // Replaced: the cached drop is not served again.
    f.verdict = Verdict::kRedirect;
    f.ifindex = kLoopback;
    ASSERT_EQ(fp_.put(ufid(1), f), 0);
    EXPECT_TRUE(behaves(udp, "after the replacement"));
    EXPECT_EQ(filled(), before + 2);
    EXPECT_TRUE(behaves(udp, "after the replacement, again"));
    // Another flow put, of another mask, first in slot order for this
    // packet: it wins over the cached one.
    XdpFlow g = flow_matching(udp, 0, Verdict::kDrop);
    ASSERT_EQ(fp_.del(ufid(1)), 0);
    ASSERT_EQ(fp_.put(ufid(2), g), 0);
    ASSERT_EQ(fp_.put(ufid(1), f), 0);
    EXPECT_TRUE(behaves(udp, "two flows"));
    // Deleted: to OVS, and no stale entry answers.
    ASSERT_EQ(fp_.del(ufid(1)), 0);
    ASSERT_EQ(fp_.del(ufid(2)), 0);
    uint64_t missed = counters()[AFXDP_FP_missed];
    EXPECT_TRUE(behaves(udp, "deleted"));
    EXPECT_TRUE(behaves(udp, "deleted, again"));
    EXPECT_EQ(counters()[AFXDP_FP_missed], missed + 2);
}

TEST_F(FastPathLookup, ChangesUnderThePacketsFollowTheModel)
{
    // Random flows over the templates' keys, put, replaced (with other
    // masks and actions) and deleted, and after each change every
    // template and some mutations of it: the program does what
    // FlowTable's lookup says, byte for byte.
    std::mt19937 rng(1202);
    std::vector<Bytes> t = templates();
    std::vector<Bytes> packets;
    for (const Bytes &p : t) {
        packets.push_back(p);
        Bytes m = p;
        m[12 + rng() % std::min<size_t>(p.size() - 12, 40)] ^= uint8_t(1 + rng() % 255);
        packets.push_back(m);
        // Random checksums: IPv4's header, UDP's and TCP's, untagged.
        Bytes c = p;
        for (size_t at : {24u, 25u, 40u, 41u, 50u, 51u}) {
            if (at < c.size()) {
                c[at] = uint8_t(rng());
            }
        }
        packets.push_back(c);
    }
    size_t failures = 0, puts = 0, hits = 0, cached = 0;
    for (int step = 0; step < 300 && failures < 3; step++) {
        uint32_t id = 1 + rng() % 40;
        if (rng() % 4 == 0) {
            fp_.del(ufid(id));
        } else {
            const Bytes &p = t[rng() % t.size()];
            Expect e = reference(p);
            if (e.punt) {
                continue;
            }
            XdpFlow f = random_flow(rng, e.key, id);
            int err = fp_.put(ufid(id), f);
            ASSERT_TRUE(err == 0 || err == -EEXIST) << err;
            puts += err == 0;
        }
        // Each packet twice: the second time a hit comes from the
        // exact-match cache, which the change must have voided.
        for (size_t i = 0; i < packets.size(); i++) {
            Expect e = reference(packets[i]);
            bool hit = !e.punt && fp_.flows().lookup(e.key);
            hits += hit;
            for (int again = 0; again < 2; again++) {
                uint64_t filled = counters()[AFXDP_FP_cache_filled];
                failures += !behaves(packets[i], "step "
                                     + std::to_string(step) + ", packet "
                                     + std::to_string(i)
                                     + (again ? ", again" : ""));
                cached += again && hit
                          && counters()[AFXDP_FP_cache_filled] == filled;
            }
        }
    }
    // Both sides of the model are exercised (many puts collide with a
    // flow of the same mask and masked key: -EEXIST), and the cache.
    EXPECT_GT(puts, 80u);
    EXPECT_GT(hits, 1000u);
    EXPECT_GT(cached, hits / 2);
    std::printf("%zu flows put, %zu packets hit a flow, %zu of them again "
                "from the cache\n", puts, hits, cached);
    // Every flow deleted: no entry left behind in the maps finds a packet.
    for (uint32_t id = 1; id <= 40; id++) {
        fp_.del(ufid(id));
    }
    EXPECT_EQ(fp_.flows().n_flows(), 0u);
    EXPECT_EQ(fp_.flows().mask_slots(), 0u);
    for (const Bytes &p : packets) {
        behaves(p, "all deleted");
    }
}

namespace {

// An AF_XDP socket on queue 0 of a veth end, in an XSKMAP of its own, so
// that the program's redirects to the socket succeed.  Nothing is received
// on it: BPF_PROG_TEST_RUN reports the redirect without making it.
class SocketMap {
public:
    explicit SocketMap(const char *ifname)
    {
        map_ = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "test_xsks", 4, 4, 4,
                              nullptr);
        if (map_ < 0) {
            why_ = std::string("creating an XSKMAP: ") + std::strerror(-map_);
            return;
        }
        size_ = 64 * 4096;
        buf_ = mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf_ == MAP_FAILED) {
            buf_ = nullptr;
            why_ = "mmap failed";
            return;
        }
        int err = xsk_umem__create(&umem_, buf_, size_, &fq_, &cq_, nullptr);
        if (err) {
            why_ = std::string("xsk_umem__create: ") + std::strerror(-err);
            return;
        }
        xsk_socket_config cfg = {};
        cfg.rx_size = 64;
        cfg.tx_size = 64;
        cfg.libbpf_flags = XSK_LIBBPF_FLAGS__INHIBIT_PROG_LOAD;
        cfg.bind_flags = XDP_COPY;
        err = xsk_socket__create(&xsk_, ifname, 0, umem_, &rx_, &tx_, &cfg);
        if (err) {
            why_ = std::string("xsk_socket__create: ") + std::strerror(-err);
            return;
        }
        uint32_t q = 0;
        int fd = xsk_socket__fd(xsk_);
        if (bpf_map_update_elem(map_, &q, &fd, BPF_ANY)) {
            why_ = std::string("adding the socket: ") + std::strerror(errno);
        }
    }
    ~SocketMap()
    {
        if (xsk_) {
            xsk_socket__delete(xsk_);
        }
        if (umem_) {
            xsk_umem__delete(umem_);
        }
        if (buf_) {
            munmap(buf_, size_);
        }
        if (map_ >= 0) {
            close(map_);
        }
    }
    const std::string &why() const { return why_; }
    int fd() const { return map_; }

private:
    int map_ = -1;
    void *buf_ = nullptr;
    size_t size_ = 0;
    xsk_umem *umem_ = nullptr;
    xsk_socket *xsk_ = nullptr;
    xsk_ring_prod fq_, tx_;
    xsk_ring_cons cq_, rx_;
    std::string why_;
};

}  // namespace

TEST_F(FastPathLookup, PartialOffloadHandsTheMarkToTheSocket)
{
    afxdp_test::VethNetns net;
    if (!net.skip_reason().empty()) {
        GTEST_SKIP() << net.skip_reason();
    }
    SocketMap sockets(net.a());
    ASSERT_EQ(sockets.why(), "");
    auto r = FastPath::load(sockets.fd());
    ASSERT_TRUE(r.ok()) << r.error().why;
    fp_ = r.take();

    if (!fp_.writes_meta()) {
        GTEST_SKIP() << afxdp::kNoXdpMetaWhy << ": no mark or hash reaches "
                     << "the socket";
    }
    Bytes udp = ipv4(IPPROTO_UDP, 42);
    XdpFlow f = flow_matching(udp, 1, Verdict::kToSocket);
    f.mark = 0x12345;
    ASSERT_EQ(fp_.put(ufid(1), f), 0);

    // A hit: the socket's redirect, with the mark in the metadata.
    auto before = counters();
    ProgRun hit = run(udp);
    EXPECT_EQ(hit.retval, uint32_t(XDP_REDIRECT));
    ASSERT_EQ(hit.data, 12u);
    uint32_t meta[3];
    std::memcpy(meta, hit.out.data(), sizeof meta);
    // The flow's wire mark (marks.hh), which the port's table turns
    // into OVS's mark; with the program's own hash: a test run has no
    // driver's.
    uint32_t mark = 0;
    EXPECT_TRUE(fp_.marks()->find(meta[0], &mark));
    EXPECT_EQ(mark, 0x12345u);
    EXPECT_EQ(meta[1], afxdp_test::key_hash(reference(udp).key));
    EXPECT_EQ(meta[2], AFXDP_META_MAGIC | AFXDP_META_MARK | AFXDP_META_HASH);
    EXPECT_EQ(Bytes(hit.out.begin() + 12, hit.out.end()), udp);
    EXPECT_EQ(counters()[AFXDP_FP_marked], before[AFXDP_FP_marked] + 1);
    // OVS counts what it then does with the packet itself.
    FastPathFlowStats st;
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.packets, 0u);

    // A miss: the socket's redirect, with metadata that says no mark (a
    // frame's headroom may hold an undelivered packet's).
    Bytes other = ipv4(IPPROTO_TCP, 42);
    ProgRun miss = run(other);
    EXPECT_EQ(miss.retval, uint32_t(XDP_REDIRECT));
    ASSERT_EQ(miss.data, 8u);
    std::memcpy(meta, miss.out.data(), 8);
    EXPECT_EQ(meta[0], afxdp_test::key_hash(reference(other).key));
    EXPECT_EQ(meta[1], AFXDP_META_MAGIC | AFXDP_META_HASH);
    EXPECT_EQ(Bytes(miss.out.begin() + 8, miss.out.end()), other);
    EXPECT_EQ(counters()[AFXDP_FP_missed], before[AFXDP_FP_missed] + 1);

    // The hash is the connection's: another TTL, the same; another
    // port, another; IPv6 too.  A punted packet (two VLAN tags) gets
    // none: OVS computes its own.
    Bytes ttl = udp;
    ttl[22] = 7;
    Bytes port = udp;
    port[35] ^= 1;
    uint32_t hash[2];
    for (const Bytes *p : {&ttl, &port}) {
        // Marked if it hit the flow (mark, hash, flags), else not (hash,
        // flags): the hash either way.
        ProgRun r = run(*p);
        ASSERT_TRUE(r.data == 12u || r.data == 8u) << r.data;
        std::memcpy(meta, r.out.data(), r.data);
        EXPECT_EQ(meta[r.data / 4 - 1] & AFXDP_META_HASH, AFXDP_META_HASH);
        hash[p == &ttl ? 0 : 1] = meta[r.data / 4 - 2];
    }
    EXPECT_EQ(hash[0], afxdp_test::key_hash(reference(udp).key));
    EXPECT_NE(hash[1], hash[0]);
    Bytes v6 = ipv6(IPPROTO_UDP);
    ProgRun r6 = run(v6);
    ASSERT_EQ(r6.data, 8u);
    std::memcpy(meta, r6.out.data(), 8);
    EXPECT_EQ(meta[0], afxdp_test::key_hash(reference(v6).key));
    EXPECT_EQ(meta[1], AFXDP_META_MAGIC | AFXDP_META_HASH);
    Bytes qinq = eth(0x0800, 10, 20);
    qinq.insert(qinq.end(), udp.begin() + 14, udp.end());
    ASSERT_TRUE(reference(qinq).punt);
    ProgRun rq = run(qinq);
    ASSERT_EQ(rq.data, 8u);
    std::memcpy(meta, rq.out.data(), 8);
    EXPECT_EQ(meta[0], 0u);
    EXPECT_EQ(meta[1], AFXDP_META_MAGIC);
}

TEST_F(FastPathLookup, WithHintsAnOffloadedTagIsThePacketsTag)
{
    // A sender whose VLAN tag travels outside the frame (tc-vlan.hh): the
    // frame XDP sees is untagged, and only the hint has the tag.  The
    // program bound to the device must match the tag all the same.  The
    // kernel does not test-run a bound program: this runs on real frames.
    afxdp_test::VethNetns net;
    if (!net.skip_reason().empty()) {
        GTEST_SKIP() << net.skip_reason();
    }
    const int ifindex = int(if_nametoindex(net.a()));
    afxdp::HintSupport support = afxdp::rx_hint_support(ifindex);
    if (!(support.hints & afxdp::kHintVlan)) {
        GTEST_SKIP() << "no RX VLAN tag here: " << support.vlan_why;
    }
    SocketMap sockets(net.a());
    ASSERT_EQ(sockets.why(), "");
    auto r = FastPath::load(sockets.fd(), support.hints, ifindex);
    ASSERT_TRUE(r.ok()) << r.error().why;
    fp_ = r.take();
    bpf_prog_info info = {};
    uint32_t len = sizeof info;
    ASSERT_EQ(bpf_obj_get_info_by_fd(fp_.prog_fd(), &info, &len), 0);
    EXPECT_STREQ(info.name, afxdp::kFastHintsProgName);
    ASSERT_EQ(bpf_xdp_attach(ifindex, fp_.prog_fd(), XDP_FLAGS_DRV_MODE,
                             nullptr), 0);
    struct Detach {
        int ifindex;
        ~Detach() { bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, nullptr); }
    } detach{ifindex};

    const uint16_t tci = 5 << 13 | 0x1000 | 42;   // PCP 5, DEI, VID 42.
    ASSERT_EQ(afxdp_test::tc_vlan_attach(net.b(), tci, 0x88a8), "");
    Bytes frame = ipv4(IPPROTO_UDP);
    Bytes tagged = ipv4(IPPROTO_UDP, 0x10000 | tci);  // As OVS sees it.
    XdpFlow f;
    f.mask = mask_shape(0);       // L2, the tag's VID and TPID included.
    f.key = masked_key(reference(tagged).key, f.mask);
    ASSERT_EQ(f.key.vlan_tci, htons(0x1000 | 42));
    ASSERT_EQ(f.key.vlan_tpid, htons(0x88a8));
    f.verdict = Verdict::kDrop;
    ASSERT_EQ(fp_.put(ufid(1), f), 0);

    auto wait_for = [&](afxdp_fp_counter c, uint64_t n) {
        for (int i = 0; i < 200 && counters()[c] < n; i++) {
            usleep(5000);
        }
        return counters()[c];
    };
    const int n = 20;
    for (int i = 0; i < n; i++) {
        ASSERT_TRUE(afxdp_test::send_raw(net.b(), frame));
    }
    EXPECT_EQ(wait_for(AFXDP_FP_dropped, n), uint64_t(n));
    FastPathFlowStats st;
    ASSERT_EQ(fp_.flow_stats(ufid(1), &st), 0);
    EXPECT_EQ(st.packets, uint64_t(n));
    EXPECT_EQ(st.bytes, n * (frame.size() + 4)) << "as OVS counts: tagged";

    // The same frames untagged miss the flow.
    ASSERT_EQ(afxdp_test::tc_vlan_detach(net.b()), "");
    uint64_t missed = counters()[AFXDP_FP_missed];
    for (int i = 0; i < n; i++) {
        ASSERT_TRUE(afxdp_test::send_raw(net.b(), frame));
    }
    EXPECT_GE(wait_for(AFXDP_FP_missed, missed + n), missed + n);
    EXPECT_EQ(counters()[AFXDP_FP_dropped], uint64_t(n));
}
