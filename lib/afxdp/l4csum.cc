// TCP and UDP checksums a sender on this host left partial (l4csum.hh).
#include "l4csum.hh"

#include <arpa/inet.h>

#include <cstring>

namespace afxdp {

namespace {

constexpr uint16_t kEthIpv4 = 0x0800;
constexpr uint16_t kEthIpv6 = 0x86dd;
constexpr uint16_t kEthVlan = 0x8100;
constexpr uint16_t kEthQinQ = 0x88a8;
constexpr size_t kEthHlen = 14;
constexpr size_t kVlanHlen = 4;
constexpr size_t kIpv4Hlen = 20;
constexpr size_t kIpv6Hlen = 40;
constexpr uint16_t kIpv4FragBits = 0x3fff;     // MF and the offset.
constexpr uint8_t kTcp = 6;
constexpr uint8_t kUdp = 17;
constexpr size_t kTcpHlen = 20;
constexpr size_t kTcpCheck = 16;               // offsetof(tcphdr, check)
constexpr size_t kUdpHlen = 8;
constexpr size_t kUdpCheck = 6;                // offsetof(udphdr, check)

uint16_t
be16(const uint8_t *p) noexcept
{
    return uint16_t(p[0] << 8 | p[1]);
}

uint16_t
native16(const uint8_t *p) noexcept
{
    uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Where the L4 segment of an IP packet lies, and its pseudo-header.
struct Segment {
    uint8_t *l4 = nullptr;
    size_t len = 0;
    uint8_t proto = 0;
    uint64_t pseudo = 0;     // Sum of the addresses, protocol, length.
};

// The segment behind the IP header at 'ip' of EtherType 'type', 'avail'
// bytes to the packet's end and 'in_buffer' to its first buffer's; false
// if not IPv4 without fragments or IPv6 without extension headers, or if
// its lengths do not hold.
bool
find_segment(uint16_t type, uint8_t *ip, size_t avail, size_t in_buffer,
             Segment *s) noexcept
{
    if (type == kEthIpv4) {
        if (in_buffer < kIpv4Hlen || ip[0] >> 4 != 4) {
            return false;
        }
        const size_t ihl = size_t(ip[0] & 0xf) * 4;
        const size_t total = be16(ip + 2);
        if (ihl < kIpv4Hlen || ihl > in_buffer || total < ihl
            || total > avail || be16(ip + 6) & kIpv4FragBits) {
            return false;
        }
        s->proto = ip[9];
        s->l4 = ip + ihl;
        s->len = total - ihl;
        s->pseudo = csum_add_bytes(ip + 12, 8, 0);
    } else if (type == kEthIpv6) {
        if (in_buffer < kIpv6Hlen || ip[0] >> 4 != 6) {
            return false;
        }
        const size_t payload = be16(ip + 4);
        if (payload > avail - kIpv6Hlen) {
            return false;
        }
        s->proto = ip[6];
        s->l4 = ip + kIpv6Hlen;
        s->len = payload;
        s->pseudo = csum_add_bytes(ip + 8, 32, 0);
    } else {
        return false;
    }
    // The protocol and the length as 16-bit words in network order (in
    // IPv6's 32-bit fields the upper words are 0).
    s->pseudo += htons(s->proto) + htons(uint16_t(s->len));
    return true;
}

}  // namespace

uint64_t
csum_add_bytes(const uint8_t *p, size_t n, uint64_t sum) noexcept
{
    // Eight bytes a step, as two 32-bit words: a 32-bit word's two halves
    // are two 16-bit words modulo 0xffff, and a 64-bit sum of 32-bit words
    // cannot overflow for any packet.
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        std::memcpy(&w, p, sizeof w);
        sum += (w & 0xffffffff) + (w >> 32);
    }
    if (n >= 4) {
        uint32_t w;
        std::memcpy(&w, p, sizeof w);
        sum += w;
        p += 4;
        n -= 4;
    }
    if (n >= 2) {
        sum += native16(p);
        p += 2;
        n -= 2;
    }
    if (n) {
        uint16_t w = 0;      // The odd byte, padded with a zero after it.
        std::memcpy(&w, p, 1);
        sum += w;
    }
    return sum;
}

uint16_t
csum_fold(uint64_t sum) noexcept
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return uint16_t(sum);
}

namespace {

// The segment of the Ethernet frame at 'pkt' (up to two VLAN tags), 'len'
// bytes in its first buffer and 'total' in all; its IP header's offset in
// '*l3'.  False as find_segment().
bool
find_frame_segment(uint8_t *pkt, size_t len, size_t total, size_t *l3,
                   Segment *s) noexcept
{
    if (len < kEthHlen) {
        return false;
    }
    size_t off = kEthHlen;
    uint16_t type = be16(pkt + 12);
    for (int tags = 0; tags < 2 && (type == kEthVlan || type == kEthQinQ);
         tags++) {
        if (len < off + kVlanHlen) {
            return false;
        }
        type = be16(pkt + off + 2);
        off += kVlanHlen;
    }
    // The IP header in the first buffer, its lengths against the packet's.
    *l3 = off;
    return len >= off
           && find_segment(type, pkt + off, total - off, len - off, s);
}

void
put_be16(uint8_t *p, uint16_t v) noexcept
{
    p[0] = uint8_t(v >> 8);
    p[1] = uint8_t(v);
}

}  // namespace

bool
finish_partial_l4_csum(const PacketPart *parts, size_t n) noexcept
{
    if (!n) {
        return false;
    }
    uint8_t *pkt = parts[0].data;
    const size_t len = parts[0].len;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        total += parts[i].len;
    }
    Segment s;
    size_t l3;
    if (!find_frame_segment(pkt, len, total, &l3, &s)) {
        return false;
    }
    size_t check;
    if (s.proto == kTcp && s.len >= kTcpHlen) {
        check = kTcpCheck;
    } else if (s.proto == kUdp && s.len >= kUdpHlen) {
        check = kUdpCheck;     // 0 (no checksum) never equals the sum.
    } else {
        return false;
    }
    if (size_t(s.l4 - pkt) + check + 2 > len
        || native16(s.l4 + check) != csum_fold(s.pseudo)) {
        return false;
    }
    // The device's part: the segment's bytes, the field as it is (the
    // pseudo-header's sum), complemented.  A buffer that starts at an odd
    // offset of the segment adds its sum byte-swapped.
    uint64_t sum = 0;
    bool odd = false;
    size_t left = s.len;
    for (size_t i = 0; i < n && left; i++) {
        const uint8_t *from = i ? parts[i].data : s.l4;
        size_t bytes = i ? parts[i].len : len - size_t(s.l4 - pkt);
        bytes = bytes < left ? bytes : left;
        uint16_t part = csum_fold(csum_add_bytes(from, bytes, 0));
        sum += odd ? uint16_t(part << 8 | part >> 8) : part;
        odd ^= bytes & 1;
        left -= bytes;
    }
    uint16_t csum = uint16_t(~csum_fold(sum));
    if (s.proto == kUdp && !csum) {
        csum = 0xffff;         // UDP's 0 means none.
    }
    std::memcpy(s.l4 + check, &csum, sizeof csum);
    return true;
}

bool
plan_tcp_cut(const uint8_t *pkt, size_t len, size_t mtu, size_t max_frame,
             TcpCut *cut) noexcept
{
    // Only read: find_frame_segment() takes a writable packet.
    uint8_t *p = const_cast<uint8_t *>(pkt);
    Segment s;
    size_t l3;
    if (!find_frame_segment(p, len, len, &l3, &s) || s.proto != kTcp
        || s.len < kTcpHlen || size_t(s.l4 - p) + kTcpHlen > len) {
        return false;
    }
    const size_t ip_hlen = size_t(s.l4 - p) - l3;
    const size_t tcp_hlen = size_t(s.l4[12] >> 4) * 4;
    if (ip_hlen + s.len <= mtu || tcp_hlen < kTcpHlen || tcp_hlen >= s.len
        || size_t(s.l4 - p) + tcp_hlen > len) {
        return false;
    }
    cut->l3 = l3;
    cut->hdr_len = size_t(s.l4 - p) + tcp_hlen;
    cut->payload = s.len - tcp_hlen;
    cut->ipv6 = ip_hlen == kIpv6Hlen && p[l3] >> 4 == 6;
    size_t mss = mtu > ip_hlen + tcp_hlen ? mtu - ip_hlen - tcp_hlen : 0;
    if (max_frame < cut->hdr_len + mss) {
        mss = max_frame > cut->hdr_len ? max_frame - cut->hdr_len : 0;
    }
    if (!mss) {
        return false;
    }
    cut->mss = mss;
    cut->n = (cut->payload + mss - 1) / mss;
    return true;
}

size_t
write_tcp_segment(const uint8_t *pkt, const TcpCut &cut, size_t i,
                  uint8_t *out) noexcept
{
    constexpr uint8_t kFin = 0x01, kPsh = 0x08, kCwr = 0x80;
    const size_t from = i * cut.mss;
    const size_t seg = cut.payload - from < cut.mss ? cut.payload - from
                                                    : cut.mss;
    std::memcpy(out, pkt, cut.hdr_len);
    std::memcpy(out + cut.hdr_len, pkt + cut.hdr_len + from, seg);
    uint8_t *ip = out + cut.l3;
    const size_t ip_hlen = cut.ipv6 ? kIpv6Hlen : size_t(ip[0] & 0xf) * 4;
    uint8_t *tcp = ip + ip_hlen;
    const size_t l4_len = cut.hdr_len - cut.l3 - ip_hlen + seg;
    if (cut.ipv6) {
        put_be16(ip + 4, uint16_t(l4_len));
    } else {
        put_be16(ip + 2, uint16_t(ip_hlen + l4_len));
        put_be16(ip + 4, uint16_t(be16(ip + 4) + i));
        put_be16(ip + 10, 0);
        const uint16_t check = uint16_t(~csum_fold(csum_add_bytes(ip, ip_hlen,
                                                                  0)));
        std::memcpy(ip + 10, &check, sizeof check);
    }
    uint32_t seq = uint32_t(be16(tcp + 4)) << 16 | be16(tcp + 6);
    seq += uint32_t(from);
    put_be16(tcp + 4, uint16_t(seq >> 16));
    put_be16(tcp + 6, uint16_t(seq));
    if (i + 1 < cut.n) {
        tcp[13] &= uint8_t(~(kFin | kPsh));
    }
    if (i) {
        tcp[13] &= uint8_t(~kCwr);
    }
    // Left partial, as the sender left it, then finished.
    const uint64_t pseudo = csum_add_bytes(ip + (cut.ipv6 ? 8 : 12),
                                           cut.ipv6 ? 32 : 8, 0)
                            + htons(kTcp) + htons(uint16_t(l4_len));
    const uint16_t partial = csum_fold(pseudo);
    std::memcpy(tcp + kTcpCheck, &partial, sizeof partial);
    finish_partial_l4_csum(out, cut.hdr_len + seg);
    return cut.hdr_len + seg;
}

}  // namespace afxdp
