// TCP and UDP checksums a sender on this host left partial (l4csum.hh):
// tier 1 on packets built here, against a checksum written anew for the
// test (16-bit words in network order, RFC 1071's plain loop); tier 2
// (root) with the kernel's own partial packets, from sockets on a veth
// with Linux's default TX checksum offload, received by our port.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "l4csum.hh"
#include "veth-test.hh"

using namespace afxdp_test;

namespace {

// RFC 1071, the obvious way: 16-bit big-endian words, an odd byte padded.
uint32_t
sum_words(const uint8_t *p, size_t n, uint32_t sum = 0)
{
    for (size_t i = 0; i + 1 < n; i += 2) {
        sum += uint32_t(p[i]) << 8 | p[i + 1];
    }
    if (n & 1) {
        sum += uint32_t(p[n - 1]) << 8;
    }
    return sum;
}

uint16_t
fold(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return uint16_t(sum);
}

struct Packet {
    std::vector<uint8_t> bytes;
    size_t l4 = 0;          // Offset of the L4 header.
    size_t check = 0;       // Offset of its checksum field.
    uint8_t proto = 0;
    bool ipv6 = false;
};

// The pseudo-header's sum of 'p', in host order.
uint32_t
pseudo_sum(const Packet &p)
{
    const uint8_t *ip = &p.bytes[p.l4 - (p.ipv6 ? 40 : 20)];
    const size_t len = p.bytes.size() - p.l4;
    uint32_t sum = p.ipv6 ? sum_words(ip + 8, 32) : sum_words(ip + 12, 8);
    return sum + p.proto + uint32_t(len);
}

// The complete checksum 'p' should carry, computed with the field as 0.
uint16_t
complete_csum(Packet p)
{
    p.bytes[p.check] = p.bytes[p.check + 1] = 0;
    uint16_t c = uint16_t(~fold(pseudo_sum(p)
                               + sum_words(&p.bytes[p.l4],
                                           p.bytes.size() - p.l4)));
    return p.proto == 17 && c == 0 ? 0xffff : c;
}

uint16_t
field(const Packet &p)
{
    return uint16_t(p.bytes[p.check] << 8 | p.bytes[p.check + 1]);
}

void
set_field(Packet *p, uint16_t v)
{
    p->bytes[p->check] = uint8_t(v >> 8);
    p->bytes[p->check + 1] = uint8_t(v);
}

// A TCP or UDP packet over IPv4 or IPv6 with 'payload' bytes of 'seed',
// 'tags' VLAN tags, and its checksum left partial as Linux leaves it:
// the pseudo-header's sum, folded, not complemented.
Packet
partial(uint8_t proto, bool ipv6, size_t payload, int tags = 0,
        uint32_t seed = 1)
{
    Packet p;
    p.proto = proto;
    p.ipv6 = ipv6;
    std::vector<uint8_t> &b = p.bytes;
    b = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1};
    for (int t = 0; t < tags; t++) {
        b.insert(b.end(), {uint8_t(t ? 0x81 : 0x88), uint8_t(t ? 0x00 : 0xa8),
                           0x00, uint8_t(10 + t)});
    }
    b.insert(b.end(), {uint8_t(ipv6 ? 0x86 : 0x08), uint8_t(ipv6 ? 0xdd : 0)});
    const size_t l4_len = (proto == 6 ? 20 : 8) + payload;
    if (ipv6) {
        b.insert(b.end(), {0x60, 0, 0, 0, uint8_t(l4_len >> 8),
                           uint8_t(l4_len), proto, 64});
        for (int i = 0; i < 32; i++) {
            b.push_back(uint8_t(0xfd + i * 7));
        }
    } else {
        const size_t total = 20 + l4_len;
        b.insert(b.end(), {0x45, 0, uint8_t(total >> 8), uint8_t(total),
                           0x12, 0x34, 0x40, 0, 64, proto, 0, 0,
                           10, 0, 0, 1, 10, 0, 0, 2});
    }
    p.l4 = b.size();
    if (proto == 6) {
        b.insert(b.end(), {0x9c, 0x40, 0x14, 0x51, 1, 2, 3, 4, 0, 0, 0, 0,
                           0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0});
        p.check = p.l4 + 16;
    } else {
        b.insert(b.end(), {0x9c, 0x40, 0x00, 0x35, uint8_t(l4_len >> 8),
                           uint8_t(l4_len), 0, 0});
        p.check = p.l4 + 6;
    }
    std::mt19937 rng(seed);
    for (size_t i = 0; i < payload; i++) {
        b.push_back(uint8_t(rng()));
    }
    set_field(&p, fold(pseudo_sum(p)));
    return p;
}

// TCP segmentation on receive: 'p' (TCP, from partial()) cut for 'mtu'
// into frames of at most 'max_frame' bytes, each segment checked against
// what the sender's device would have sent; the payloads, put back
// together, are the packet's.
void
expect_cut_as_a_device_would(const Packet &p, size_t mtu, size_t max_frame,
                             const std::string &what)
{
    afxdp::TcpCut cut;
    ASSERT_TRUE(afxdp::plan_tcp_cut(p.bytes.data(), p.bytes.size(), mtu,
                                    max_frame, &cut)) << what;
    const size_t l3 = p.l4 - (p.ipv6 ? 40 : 20);
    const size_t payload = p.bytes.size() - p.l4 - 20;
    EXPECT_EQ(cut.l3, l3) << what;
    EXPECT_EQ(cut.payload, payload) << what;
    const uint8_t *tcp0 = &p.bytes[p.l4];
    const uint32_t seq0 = uint32_t(tcp0[4]) << 24 | tcp0[5] << 16
                          | tcp0[6] << 8 | tcp0[7];
    std::vector<uint8_t> joined;
    std::vector<uint8_t> out(max_frame);
    for (size_t i = 0; i < cut.n; i++) {
        const std::string seg = what + ", segment " + std::to_string(i);
        Packet s = p;
        const size_t len = afxdp::write_tcp_segment(p.bytes.data(), cut, i,
                                                    out.data());
        ASSERT_LE(len, max_frame) << seg;
        s.bytes.assign(out.begin(), out.begin() + long(len));
        ASSERT_LE(len - l3, mtu) << seg;
        ASSERT_GT(len, p.l4 + 20) << seg;
        EXPECT_TRUE(std::equal(s.bytes.begin(), s.bytes.begin() + long(l3),
                               p.bytes.begin())) << seg << ": Ethernet";
        const uint8_t *ip = &s.bytes[l3];
        const size_t l4_len = len - p.l4;
        if (p.ipv6) {
            EXPECT_EQ(size_t(ip[4] << 8 | ip[5]), l4_len) << seg;
        } else {
            EXPECT_EQ(size_t(ip[2] << 8 | ip[3]), 20 + l4_len) << seg;
            EXPECT_EQ(ip[4] << 8 | ip[5], int(0x1234 + i)) << seg << ": ID";
            EXPECT_EQ(fold(sum_words(ip, 20)), 0xffff) << seg << ": IP csum";
        }
        const uint8_t *tcp = &s.bytes[p.l4];
        const uint32_t seq = uint32_t(tcp[4]) << 24 | tcp[5] << 16
                             | tcp[6] << 8 | tcp[7];
        EXPECT_EQ(seq, uint32_t(seq0 + i * cut.mss)) << seg;
        const bool last = i + 1 == cut.n;
        EXPECT_EQ(tcp[13] & 0x09, last ? tcp0[13] & 0x09 : 0)
            << seg << ": FIN and PSH only on the last";
        EXPECT_EQ(tcp[13] & 0x80, i ? 0 : tcp0[13] & 0x80)
            << seg << ": CWR only on the first";
        EXPECT_EQ(tcp[13] & 0x76, tcp0[13] & 0x76) << seg << ": other flags";
        EXPECT_EQ(field(s), complete_csum(s)) << seg << ": TCP csum";
        EXPECT_TRUE(last || len - l3 == mtu || len == max_frame)
            << seg << ": not full";
        joined.insert(joined.end(), s.bytes.begin() + long(p.l4 + 20),
                      s.bytes.end());
    }
    EXPECT_EQ(joined.size(), payload) << what;
    EXPECT_TRUE(std::equal(joined.begin(), joined.end(),
                           p.bytes.begin() + long(p.l4 + 20)))
        << what << ": payload";
}

}  // namespace

TEST(L4Csum, PartialChecksumsAreFinishedAsTheDeviceWould)
{
    for (uint8_t proto : {uint8_t(6), uint8_t(17)}) {
        for (bool ipv6 : {false, true}) {
            for (int tags = 0; tags <= 2; tags++) {
                for (size_t payload : {0, 1, 2, 3, 1399, 1448, 8948}) {
                    Packet p = partial(proto, ipv6, payload, tags,
                                       uint32_t(payload + tags));
                    const uint16_t want = complete_csum(p);
                    ASSERT_TRUE(afxdp::finish_partial_l4_csum(
                        p.bytes.data(), p.bytes.size()))
                        << int(proto) << (ipv6 ? " v6 " : " v4 ") << tags
                        << " tags, " << payload;
                    EXPECT_EQ(field(p), want);
                    // Finished: it is complete now, and left alone.
                    const std::vector<uint8_t> done = p.bytes;
                    EXPECT_FALSE(afxdp::finish_partial_l4_csum(
                        p.bytes.data(), p.bytes.size()));
                    EXPECT_EQ(p.bytes, done);
                }
            }
        }
    }
}

TEST(L4Csum, AnythingElseIsLeftAsItIs)
{
    auto untouched = [](Packet p, const char *what) {
        const std::vector<uint8_t> before = p.bytes;
        EXPECT_FALSE(afxdp::finish_partial_l4_csum(p.bytes.data(),
                                                   p.bytes.size()))
            << what;
        EXPECT_EQ(p.bytes, before) << what;
    };
    Packet p = partial(6, false, 100);
    set_field(&p, complete_csum(p));
    untouched(p, "a complete TCP checksum");
    p = partial(17, false, 100);
    set_field(&p, 0);
    untouched(p, "UDP without a checksum");
    p = partial(17, false, 100);
    set_field(&p, uint16_t(field(p) ^ 0x0100));
    untouched(p, "a checksum neither complete nor partial");
    p = partial(6, false, 100);
    p.bytes[p.l4 - 20 + 6] |= 0x20;            // More fragments.
    untouched(p, "a first fragment");
    p = partial(6, false, 100);
    p.bytes[p.l4 - 20 + 9] = 132;              // SCTP.
    untouched(p, "another protocol");
    p = partial(6, true, 100);
    p.bytes[p.l4 - 40 + 6] = 0;                // Hop-by-hop options.
    untouched(p, "IPv6 with an extension header");
    p = partial(6, false, 100);
    p.bytes.resize(p.l4 + 10);                 // Shorter than it says.
    untouched(p, "a truncated packet");
    p = partial(6, false, 100);
    p.bytes[12] = 0x08;
    p.bytes[13] = 0x06;                        // ARP's EtherType.
    untouched(p, "not IP");
}

TEST(L4Csum, AChecksumThatHappensToEqualThePseudoHeadersSumStaysTheSame)
{
    // A complete checksum equal to the pseudo-header's sum looks partial:
    // finishing it computes the same value again.  Search payloads for
    // one (1 in 65536).
    for (uint32_t seed = 0;; seed++) {
        Packet p = partial(17, false, 64, 0, seed);
        const uint16_t sum = field(p);
        if (complete_csum(p) != sum) {
            ASSERT_LT(seed, 2000000u) << "no such payload found";
            continue;
        }
        EXPECT_TRUE(afxdp::finish_partial_l4_csum(p.bytes.data(),
                                                  p.bytes.size()));
        EXPECT_EQ(field(p), sum);
        break;
    }
}

TEST(L4Csum, APacketInSeveralBuffersIsFinishedAsInOne)
{
    std::mt19937 rng(7);
    for (int round = 0; round < 200; round++) {
        Packet p = partial(round & 1 ? 6 : 17, round & 2, 100 + rng() % 9000,
                           round % 3, uint32_t(round));
        const uint16_t want = complete_csum(p);
        // Cut it at random places, the headers whole in the first buffer.
        std::vector<size_t> cuts = {p.check + 2 + rng() % 64};
        while (cuts.back() < p.bytes.size()) {
            cuts.push_back(cuts.back() + 1 + rng() % 3000);
        }
        std::vector<afxdp::PacketPart> parts;
        std::vector<std::vector<uint8_t>> bufs;
        size_t from = 0;
        for (size_t cut : cuts) {
            cut = std::min(cut, p.bytes.size());
            bufs.emplace_back(p.bytes.begin() + long(from),
                              p.bytes.begin() + long(cut));
            from = cut;
        }
        for (auto &b : bufs) {
            parts.push_back({b.data(), b.size()});
        }
        ASSERT_TRUE(afxdp::finish_partial_l4_csum(parts.data(),
                                                  parts.size()));
        EXPECT_EQ(uint16_t(bufs[0][p.check] << 8 | bufs[0][p.check + 1]),
                  want) << "round " << round << ", " << parts.size()
                        << " buffers";
    }
}

// A TCP packet longer than the MTU admits (a local sender's GSO packet)
// is cut as the sender's device would have cut it.
TEST(TcpCut, AnOversizePacketIsCutAsTheSendersDeviceWould)
{
    for (bool ipv6 : {false, true}) {
        for (int tags : {0, 2}) {
            const size_t mss = 1500 - (ipv6 ? 40 : 20) - 20;
            for (size_t payload : {mss + 1, 2 * mss, 2 * mss + 1, 7 * mss - 3,
                                   size_t(65535 - 40 - 20)}) {
                Packet p = partial(6, ipv6, payload, tags, uint32_t(payload));
                p.bytes[p.l4 + 13] = 0x80 | 0x10 | 0x08 | 0x01;  // CWR,
                set_field(&p, fold(pseudo_sum(p)));           // ACK, PSH, FIN.
                const std::string what = std::string(ipv6 ? "IPv6" : "IPv4")
                    + ", " + std::to_string(tags) + " tags, payload "
                    + std::to_string(payload);
                expect_cut_as_a_device_would(p, 1500, 4096, what);
                // A frame smaller than the MTU bounds the segments.
                if (p.bytes.size() - (p.l4 - (ipv6 ? 40 : 20)) > 9000) {
                    expect_cut_as_a_device_would(p, 9000, 3800,
                                                 what + ", MTU 9000");
                }
            }
        }
    }
}

TEST(TcpCut, WhatIsNoOversizeTcpPacketIsNotCut)
{
    afxdp::TcpCut cut;
    auto cuts = [&](const Packet &p, size_t mtu) {
        return afxdp::plan_tcp_cut(p.bytes.data(), p.bytes.size(), mtu, 4096,
                                   &cut);
    };
    for (bool ipv6 : {false, true}) {
        const size_t mss = 1500 - (ipv6 ? 40 : 20) - 20;
        EXPECT_FALSE(cuts(partial(6, ipv6, mss), 1500)) << "fits";
        EXPECT_TRUE(cuts(partial(6, ipv6, mss + 1), 1500)) << "one over";
        EXPECT_FALSE(cuts(partial(17, ipv6, 3000), 1500)) << "UDP";
    }
    Packet frag = partial(6, false, 3000);
    frag.bytes[frag.l4 - 20 + 6] = 0x20;             // More fragments.
    EXPECT_FALSE(cuts(frag, 1500)) << "an IPv4 fragment";
    Packet ext = partial(6, true, 3000);
    ext.bytes[ext.l4 - 40 + 6] = 0;                  // Hop-by-hop options.
    EXPECT_FALSE(cuts(ext, 1500)) << "an IPv6 extension header";
    Packet bad = partial(6, false, 3000);
    bad.bytes[bad.l4 + 12] = 0x40;                   // Data offset 16 bytes.
    EXPECT_FALSE(cuts(bad, 1500)) << "a TCP header shorter than 20 bytes";
    Packet cut_short = partial(6, false, 3000);
    cut_short.bytes.resize(1000);                    // IP says 3040 bytes.
    EXPECT_FALSE(cuts(cut_short, 500)) << "shorter than its IP length";
}

// Tier 2: what the kernel sends from a socket on a veth with its default
// TX checksum offload arrives partial; our port finishes it, counts it,
// and leaves a sender's finished checksums alone.
class L4CsumVeth : public Veth {
protected:
    // B sends to 10.0.0.1 (not this host's: out of B, to A's MAC).
    std::string address_b()
    {
        std::string err = run_ip(std::string("addr add 10.0.0.2/24 dev ")
                                 + net_.b());
        if (err.empty()) {
            // A's MAC, as the kernel has it in this namespace.
            ifreq ifr = {};
            std::snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", net_.a());
            int fd = socket(AF_INET, SOCK_DGRAM, 0);
            const bool ok = fd >= 0 && !ioctl(fd, SIOCGIFHWADDR, &ifr);
            if (fd >= 0) {
                close(fd);
            }
            if (!ok) {
                return std::string("SIOCGIFHWADDR: ") + std::strerror(errno);
            }
            const auto *m = reinterpret_cast<const uint8_t *>(
                ifr.ifr_hwaddr.sa_data);
            char mac[32];
            std::snprintf(mac, sizeof mac, "%02x:%02x:%02x:%02x:%02x:%02x",
                          m[0], m[1], m[2], m[3], m[4], m[5]);
            err = run_ip(std::string("neigh add 10.0.0.1 lladdr ") + mac
                         + " dev " + net_.b());
        }
        return err;
    }
    // One UDP datagram and one TCP SYN from B's stack to 10.0.0.1.
    void send_from_stack()
    {
        sockaddr_in to = {};
        to.sin_family = AF_INET;
        to.sin_port = htons(9);
        inet_pton(AF_INET, "10.0.0.1", &to.sin_addr);
        int u = socket(AF_INET, SOCK_DGRAM, 0);
        ASSERT_GE(u, 0);
        const char msg[] = "a datagram whose checksum the device finishes";
        ASSERT_EQ(sendto(u, msg, sizeof msg, 0,
                         reinterpret_cast<sockaddr *>(&to), sizeof to),
                  ssize_t(sizeof msg));
        close(u);
        int t = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        ASSERT_GE(t, 0);
        connect(t, reinterpret_cast<sockaddr *>(&to), sizeof to);  // SYN.
        usleep(100 * 1000);
        close(t);
    }
    // Each received TCP or UDP packet, checked against the checksum it
    // should carry; returns how many there were.
    int check_received(afxdp_queue *q)
    {
        int n = 0;
        for (const Received &r : receive_copies(q, 8, 500)) {
            Packet p;
            p.bytes = r.data;
            if (p.bytes.size() < 34 || p.bytes[12] != 0x08 || p.bytes[13]
                || (p.bytes[23] != 6 && p.bytes[23] != 17)) {
                continue;
            }
            p.proto = p.bytes[23];
            p.l4 = 14 + size_t(p.bytes[14] & 0xf) * 4;
            p.check = p.l4 + (p.proto == 6 ? 16 : 6);
            p.bytes.resize(14 + (size_t(p.bytes[16]) << 8 | p.bytes[17]));
            EXPECT_EQ(field(p), complete_csum(p))
                << (p.proto == 6 ? "TCP" : "UDP");
            n++;
        }
        return n;
    }
};

TEST_F(L4CsumVeth, TheKernelsPartialChecksumsArriveFinished)
{
    ASSERT_EQ(address_b(), "");
    for (afxdp_xdp_mode mode : {AFXDP_MODE_GENERIC, AFXDP_MODE_NATIVE}) {
        Dev d = open_dev(config(net_.a(), mode));
        ASSERT_TRUE(d);
        afxdp_dev_info info;
        afxdp_dev_get_info(d.get(), &info);
        EXPECT_TRUE(info.rx_csum_finish) << "a veth";
        afxdp_queue *q = afxdp_dev_queue(d.get(), 0);

        // Linux's default: TX checksum offload on, so B's stack leaves
        // the checksums partial, and XDP sees them so.
        ASSERT_EQ(run_ethtool(std::string("-K ") + net_.b() + " tx on"), 0);
        send_from_stack();
        EXPECT_EQ(check_received(q), 2) << afxdp_mode_name(mode);
        EXPECT_EQ(stats_of(q).rx_csum_finished, 2u)
            << afxdp_mode_name(mode) << ": a datagram and a SYN";

        // Offload off: the stack finishes them, and we count none.
        ASSERT_EQ(run_ethtool(std::string("-K ") + net_.b() + " tx off"),
                  0);
        send_from_stack();
        EXPECT_EQ(check_received(q), 2) << afxdp_mode_name(mode);
        EXPECT_EQ(stats_of(q).rx_csum_finished, 2u)
            << afxdp_mode_name(mode) << ": finished checksums are not";
        ASSERT_EQ(run_ethtool(std::string("-K ") + net_.b() + " tx on"), 0);
    }
}

// A GSO packet as a sender on this host hands it to its veth (through a
// packet socket with a virtio-net header, as a VM's tap would): in generic
// mode XDP passes it to our port whole, and the port cuts it for A's MTU.
TEST_F(L4CsumVeth, AGsoPacketArrivesCutForTheMtu)
{
    afxdp_dev_config cfg = config(net_.a(), AFXDP_MODE_GENERIC);
    Dev d = open_dev(cfg);
    ASSERT_TRUE(d);
    afxdp_dev_info info;
    afxdp_dev_get_info(d.get(), &info);
    if (!info.multi_buffer) {
        // Generic XDP then linearizes it, too long for any frame.
        GTEST_SKIP() << "no multi-buffer AF_XDP: " << info.multi_buffer_reason;
    }
    afxdp_queue *q = afxdp_dev_queue(d.get(), 0);

    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    int on = 1;
    ASSERT_EQ(setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &on, sizeof on), 0)
        << std::strerror(errno);
    sockaddr_ll sll = {};
    sll.sll_family = AF_PACKET;
    sll.sll_ifindex = int(if_nametoindex(net_.b()));
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr *>(&sll), sizeof sll), 0);
    uint64_t segmented = 0, segments = 0;
    for (size_t payload : {size_t(4000), size_t(60000)}) {
        Packet p = partial(6, false, payload, 0, uint32_t(payload));
        VirtioNetHdr vh = {};
        vh.flags = kVirtioNeedsCsum;
        vh.gso_type = kVirtioGsoTcpv4;
        vh.hdr_len = uint16_t(p.l4 + 20);
        vh.gso_size = 1448;
        vh.csum_start = uint16_t(p.l4);
        vh.csum_offset = 16;
        std::vector<uint8_t> msg(sizeof vh);
        std::memcpy(msg.data(), &vh, sizeof vh);
        msg.insert(msg.end(), p.bytes.begin(), p.bytes.end());
        ASSERT_EQ(send(fd, msg.data(), msg.size(), 0), ssize_t(msg.size()))
            << std::strerror(errno);

        const size_t mss = 1500 - 20 - 20;
        const size_t want = (payload + mss - 1) / mss;
        std::vector<uint8_t> joined;
        for (const Received &r : receive_copies(q, want, 1000)) {
            Packet s = p;
            s.bytes = r.data;
            ASSERT_LE(s.bytes.size(), 14u + 1500) << "a segment";
            EXPECT_EQ(field(s), complete_csum(s));
            joined.insert(joined.end(), s.bytes.begin() + long(p.l4 + 20),
                          s.bytes.end());
        }
        EXPECT_EQ(joined.size(), payload) << "every segment, once";
        EXPECT_TRUE(std::equal(joined.begin(), joined.end(),
                               p.bytes.begin() + long(p.l4 + 20)));
        segmented++;
        segments += want;
        EXPECT_EQ(stats_of(q).rx_segmented, segmented);
        EXPECT_EQ(stats_of(q).rx_segments, segments);
    }
    close(fd);
}
