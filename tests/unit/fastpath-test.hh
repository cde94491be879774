// Test helpers of the XDP fast path's program tests (test-fastpath.cc,
// test-fastpath-parse.cc): a reference of what OVS extracts from a
// packet, packets of every kind the parser knows, and one of the test
// object's programs loaded alone.
#ifndef AFXDP_TESTS_FASTPATH_TEST_HH
#define AFXDP_TESTS_FASTPATH_TEST_HH

#include <arpa/inet.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "afxdp.h"
#include "afxdp-offload.h"
#include "compat.hh"
#include "fastpath.hh"
#include "flow.hh"
#include "hints.hh"
#include "key-hash.hh"
#include "netns.hh"
#include "ovs-csum.hh"
#include "tc-vlan.hh"

namespace afxdp_fp_test {


using Bytes = std::vector<uint8_t>;

// ---- What OVS extracts (lib/flow.c, miniflow_extract), written anew. ----

struct Expect {
    bool punt = false;
    bool ip = false;    // An IP header OVS's sanity check passes: the
                        // header a set of IP fields writes to.
    afxdp_flow_key key{};
    // The parser's verdict: 0 parsed, 1 punted, 2 parsed with an IP
    // header.
    uint32_t verdict() const { return punt ? 1 : ip ? 2 : 0; }
};

// A read cursor over the packet, like OVS's data_pull(): 'size' is what
// is left that OVS counts (the IP length fields shrink it).
struct Cursor {
    const Bytes &b;
    size_t at;
    size_t size;
    uint8_t u8(size_t off) const { return b.at(at + off); }
    uint16_t be16(size_t off) const
    {
        return uint16_t(b.at(at + off) << 8 | b.at(at + off + 1));
    }
    void pull(size_t n) { at += n; size -= n; }
};

inline void
put16(uint16_t &field, uint16_t host)
{
    field = htons(host);
}

inline void
reference_l4(Cursor c, afxdp_flow_key &k, Expect &e)
{
    switch (k.nw_proto) {
    case IPPROTO_TCP:
        if (c.size >= 20) {
            size_t hdr = (c.u8(12) >> 4) * 4u;
            if (hdr >= 20 && c.size >= hdr) {
                put16(k.tp_src, c.be16(0));
                put16(k.tp_dst, c.be16(2));
                put16(k.tcp_flags, c.be16(12) & 0x0fff);
            }
        }
        break;
    case IPPROTO_UDP:
    case IPPROTO_SCTP:
        // UDP_HEADER_LEN, SCTP_HEADER_LEN.
        if (c.size >= (k.nw_proto == IPPROTO_UDP ? 8u : 12u)) {
            put16(k.tp_src, c.be16(0));
            put16(k.tp_dst, c.be16(2));
        }
        break;
    case IPPROTO_ICMP:
    case IPPROTO_IGMP:
        if (c.size >= 8) {
            put16(k.tp_src, c.u8(0));
            put16(k.tp_dst, c.u8(1));
        }
        break;
    case IPPROTO_ICMPV6:
        if (c.size >= 8) {
            // Neighbour discovery: OVS extracts more than the key holds.
            if ((c.u8(0) == 135 || c.u8(0) == 136) && c.u8(1) == 0) {
                e.punt = true;
            }
            put16(k.tp_src, c.u8(0));
            put16(k.tp_dst, c.u8(1));
        }
        break;
    }
}

inline Expect
reference(const Bytes &pkt)
{
    Expect e;
    afxdp_flow_key &k = e.key;
    if (pkt.size() < 14) {
        e.punt = true;
        return e;
    }
    Cursor c{pkt, 0, pkt.size()};
    std::memcpy(k.dl_dst, &pkt[0], 6);
    std::memcpy(k.dl_src, &pkt[6], 6);
    c.pull(12);
    // OVS takes a tag when 6 bytes (tag and next type) are left.
    auto is_tpid = [](uint16_t t) { return t == 0x8100 || t == 0x88a8; };
    if (is_tpid(c.be16(0)) && c.size >= 6) {
        put16(k.vlan_tpid, c.be16(0));
        put16(k.vlan_tci, c.be16(2) | 0x1000);
        c.pull(4);
    }
    uint16_t type = c.be16(0);
    c.pull(2);
    if (is_tpid(type)) {
        // A second tag, or a tag cut short: what OVS makes of it depends
        // on its vlan-limit, and the key holds one tag.
        e.punt = true;
        return e;
    }
    if (type < 0x600) {
        e.punt = true;   // 802.3: OVS reads LLC/SNAP.
        return e;
    }
    put16(k.dl_type, type);
    if (type == 0x8847 || type == 0x8848 || type == 0x894f) {
        e.punt = true;   // MPLS, NSH.
        return e;
    }
    if (type == 0x0800) {
        if (c.size < 20) {
            return e;
        }
        size_t ihl = (c.u8(0) & 0x0f) * 4u;
        size_t tot = c.be16(2);
        if (ihl < 20 || c.size < ihl || tot > c.size || ihl > tot
            || c.size - tot > 0xffff) {
            return e;   // ipv4_sanity_check() failed.
        }
        if (ihl > 20) {
            e.punt = true;   // Options.
            return e;
        }
        e.ip = true;
        std::memcpy(k.nw_src, &pkt[c.at + 12], 4);
        std::memcpy(k.nw_dst, &pkt[c.at + 16], 4);
        k.nw_tos = c.u8(1);
        k.nw_ttl = c.u8(8);
        k.nw_proto = c.u8(9);
        uint16_t frag = c.be16(6);
        c.size = tot;
        c.pull(ihl);
        if (frag & 0x3fff) {
            k.nw_frag = 1;
        }
        if (frag & 0x1fff) {
            k.nw_frag |= 2;
            return e;
        }
        reference_l4(c, k, e);
        return e;
    }
    if (type == 0x86dd) {
        if (c.size < 40) {
            return e;
        }
        size_t plen = c.be16(4);
        if (plen + 40 > c.size || c.size - (plen + 40) > 0xffff) {
            return e;   // ipv6_sanity_check() failed.
        }
        uint8_t nxt = c.u8(6);
        for (uint8_t ext : {0, 43, 44, 60, 51, 50, 135, 139, 140}) {
            if (nxt == ext) {
                e.punt = true;   // Extension headers.
                return e;
            }
        }
        e.ip = true;
        uint32_t first = uint32_t(c.be16(0)) << 16 | c.be16(2);
        std::memcpy(k.nw_src, &pkt[c.at + 8], 16);
        std::memcpy(k.nw_dst, &pkt[c.at + 24], 16);
        k.ipv6_label = htonl(first & 0xfffff);
        k.nw_tos = uint8_t(first >> 20);
        k.nw_ttl = c.u8(7);
        k.nw_proto = nxt;
        c.pull(40);
        c.size = plen;
        reference_l4(c, k, e);
        return e;
    }
    if (type == 0x0806 || type == 0x8035) {
        if (c.size < 28 || c.be16(0) != 1 || c.be16(2) != 0x0800
            || c.u8(4) != 6 || c.u8(5) != 4) {
            return e;
        }
        if (c.be16(6) <= 0xff) {
            k.nw_proto = uint8_t(c.be16(6));
        }
        std::memcpy(k.arp_sha, &pkt[c.at + 8], 6);
        std::memcpy(k.nw_src, &pkt[c.at + 14], 4);
        std::memcpy(k.arp_tha, &pkt[c.at + 18], 6);
        std::memcpy(k.nw_dst, &pkt[c.at + 24], 4);
    }
    return e;
}

// ---- Packets. ----

// An Ethernet header with up to two tags; a VID above 0xffff makes the
// tag 802.1ad.
inline Bytes
eth(uint16_t type, int vid = -1, int vid2 = -1)
{
    Bytes b = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01};
    for (int v : {vid, vid2}) {
        if (v >= 0) {
            uint8_t tpid_lo = v > 0xffff ? 0xa8 : 0x00;
            b.insert(b.end(), {uint8_t(v > 0xffff ? 0x88 : 0x81), tpid_lo,
                               uint8_t(v >> 8), uint8_t(v)});
        }
    }
    b.insert(b.end(), {uint8_t(type >> 8), uint8_t(type)});
    return b;
}

inline void
append(Bytes &b, std::initializer_list<uint8_t> bytes)
{
    b.insert(b.end(), bytes);
}

inline Bytes
l4(uint8_t proto)
{
    switch (proto) {
    case IPPROTO_TCP:
        return {0x30, 0x39, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0,
                0x50, 0x12, 0xff, 0xff, 0, 0, 0, 0};
    case IPPROTO_UDP:
        return {0x30, 0x39, 0x00, 0x35, 0, 12, 0, 0, 0xde, 0xad, 0xbe, 0xef};
    case IPPROTO_SCTP:
        return {0x0b, 0xb8, 0x0b, 0xb9, 1, 2, 3, 4, 0, 0, 0, 0};
    case IPPROTO_ICMP:
        return {8, 0, 0, 0, 0, 1, 0, 1};
    case IPPROTO_IGMP:
        return {0x16, 0, 0, 0, 239, 1, 1, 1};
    case IPPROTO_ICMPV6:
        return {128, 0, 0, 0, 0, 1, 0, 1};
    default:
        return {1, 2, 3, 4};
    }
}

inline Bytes
ipv4(uint8_t proto, int vid = -1, uint16_t frag = 0)
{
    Bytes payload = l4(proto);
    Bytes b = eth(0x0800, vid);
    uint16_t tot = uint16_t(20 + payload.size());
    append(b, {0x45, 0xb8, uint8_t(tot >> 8), uint8_t(tot), 0x12, 0x34,
               uint8_t(frag >> 8), uint8_t(frag), 64, proto, 0, 0,
               10, 1, 1, 1, 10, 1, 1, 2});
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

inline Bytes
ipv6(uint8_t proto, int vid = -1)
{
    Bytes payload = l4(proto);
    Bytes b = eth(0x86dd, vid);
    uint16_t plen = uint16_t(payload.size());
    append(b, {0x6a, 0xbc, 0xde, 0xf1, uint8_t(plen >> 8), uint8_t(plen),
               proto, 255});
    for (int i = 0; i < 32; i++) {
        b.push_back(uint8_t(i * 7));
    }
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

inline Bytes
arp(uint16_t op = 1, uint16_t type = 0x0806)
{
    Bytes b = eth(type);
    append(b, {0, 1, 8, 0, 6, 4, uint8_t(op >> 8), uint8_t(op),
               2, 0, 0, 0, 0, 1, 10, 1, 1, 1,
               0, 0, 0, 0, 0, 0, 10, 1, 1, 2});
    return b;
}

// Every kind of packet the parser knows, and the ones it punts.
inline std::vector<Bytes>
templates()
{
    std::vector<Bytes> t;
    for (uint8_t proto : {int(IPPROTO_TCP), int(IPPROTO_UDP),
                          int(IPPROTO_SCTP), int(IPPROTO_ICMP),
                          int(IPPROTO_IGMP), int(IPPROTO_GRE)}) {
        t.push_back(ipv4(proto));
        t.push_back(ipv4(proto, 10));
    }
    t.push_back(ipv4(IPPROTO_UDP, 0x10000 | 0x2005)); // 802.1ad, PCP 1.
    t.push_back(ipv4(IPPROTO_UDP, -1, 0x2000));   // First fragment.
    t.push_back(ipv4(IPPROTO_UDP, -1, 0x00b9));   // A later one.
    for (uint8_t proto : {int(IPPROTO_TCP), int(IPPROTO_UDP),
                          int(IPPROTO_ICMPV6), int(IPPROTO_SCTP),
                          int(IPPROTO_GRE)}) {
        t.push_back(ipv6(proto));
        t.push_back(ipv6(proto, 4095));
    }
    Bytes ns = ipv6(IPPROTO_ICMPV6);
    ns[54] = 135;                                   // Neighbour solicitation.
    t.push_back(ns);
    Bytes hop = ipv6(IPPROTO_UDP);
    hop[20] = 0;                                    // Hop-by-hop header.
    t.push_back(hop);
    t.push_back(arp(1));
    t.push_back(arp(2, 0x8035));
    t.push_back(arp(0x0100));                       // Opcode above 0xff.
    Bytes opts = ipv4(IPPROTO_UDP);
    opts[14] = 0x46;                                // IHL 6: options.
    t.push_back(opts);
    t.push_back(eth(0x88cc));                       // LLDP: L2 only.
    Bytes two = eth(0x0800, 1, 2);
    append(two, {0x45, 0, 0, 20});
    t.push_back(two);                               // Two tags.
    t.push_back(eth(0x0060));                       // 802.3 length.
    Bytes mpls = eth(0x8847);
    append(mpls, {0, 0, 0x11, 64});
    t.push_back(mpls);
    Bytes bare_tag = eth(0x8100);
    append(bare_tag, {0, 5});
    t.push_back(bare_tag);                          // A tag cut short.
    return t;
}

inline std::string
hex(const void *p, size_t n)
{
    std::string s;
    char b[4];
    for (size_t i = 0; i < n; i++) {
        std::snprintf(b, sizeof b, "%02x", static_cast<const uint8_t *>(p)[i]);
        s += b;
        if (i % 8 == 7) {
            s += ' ';
        }
    }
    return s;
}

// ---- The program, loaded once. ----

struct ParseResult {
    uint32_t verdict;   // Expect::verdict().
    uint32_t pad;
    afxdp_flow_key key;
};

// One of the object's test programs, loaded alone (the fast path with
// hints would need a device): 'obj_' and 'prog_fd_'.
class FastPathTestProgram : public ::testing::Test {
protected:
    explicit FastPathTestProgram(const char *name) : name_(name) {}

    void SetUp() override
    {
        const char *path = AFXDP_FASTPATH_TEST_BPF_OBJ;
        if (access(path, R_OK)) {
            GTEST_SKIP() << path << " is not there: `make` builds it "
                         << "where configure found a clang that compiles "
                         << "BPF programs (see its summary)";
        }
        if (geteuid()) {
            GTEST_SKIP() << "not root: BPF programs cannot be loaded";
        }
        obj_ = bpf_object__open_file(path, nullptr);
        ASSERT_TRUE(obj_ && !libbpf_get_error(obj_)) << path;
        bpf_program *p;
        bpf_object__for_each_program(p, obj_) {
            bpf_program__set_autoload(p,
                                      !std::strcmp(bpf_program__name(p), name_));
        }
        ASSERT_EQ(bpf_object__load(obj_), 0) << "loading " << path;
        prog_fd_ = bpf_program__fd(
            bpf_object__find_program_by_name(obj_, name_));
        ASSERT_GE(prog_fd_, 0);
    }
    void TearDown() override { bpf_object__close(obj_); }

    const char *name_;
    bpf_object *obj_ = nullptr;
    int prog_fd_ = -1;
};

// 4 bytes at 'p' as a word, the first in the low byte; and back.
inline uint32_t
get_le32(const uint8_t *p)
{
    return p[0] | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16
           | uint32_t(p[3]) << 24;
}

inline void
put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = uint8_t(v >> (8 * i));
    }
}

}  // namespace afxdp_fp_test

#endif  // AFXDP_TESTS_FASTPATH_TEST_HH
