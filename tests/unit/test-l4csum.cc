// TCP and UDP checksums a sender on this host left partial (l4csum.hh):
// tier 1 on packets built here, against a checksum written anew for the
// test (16-bit words in network order, RFC 1071's plain loop); tier 2
// (root) with the kernel's own partial packets, from sockets on a veth
// with Linux's default TX checksum offload, received by our port.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

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
