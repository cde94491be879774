// TCP and UDP checksums a sender on this host left for its device to
// finish.
//
// A socket whose device offers TX checksum offload (every veth and tap,
// by Linux's defaults) hands the device a packet whose TCP or UDP
// checksum field holds only the sum of the pseudo-header, folded
// (CHECKSUM_PARTIAL): the device is to add the segment's bytes and write
// the complement.  A veth passes such a packet on as it is, and the
// kernel finishes it only where it leaves the host or reaches a socket of
// the stack that trusts it.  An XDP program sees only the bytes: copied
// into an AF_XDP frame (or redirected by XDP to another device) the
// checksum stays unfinished, and every receiver drops the segment.
//
// XDP is not told which packets are partial, so they are recognised by
// that field: equal to the pseudo-header's folded sum.  Finishing one
// computes the checksum over the segment with the field as it is, which
// for a packet whose complete checksum happens to equal that sum (1 in
// 65536) gives the same value again: only a packet whose checksum was
// wrong and equal to that sum comes out changed (made right).
#ifndef AFXDP_L4CSUM_HH
#define AFXDP_L4CSUM_HH

#include <cstddef>
#include <cstdint>

namespace afxdp {

// One buffer of a packet.
struct PacketPart {
    uint8_t *data;
    size_t len;
};

// Whether the packet in 'parts' (an Ethernet frame, with up to two VLAN
// tags, in 'n' buffers: its headers in the first) is TCP or UDP over IPv4
// (no fragment) or IPv6 (no extension header) with its checksum left
// partial; if so finishes it and returns true.  Reads only the headers of
// any other packet.
bool finish_partial_l4_csum(const PacketPart *parts, size_t n) noexcept;

// The same for a packet in one buffer.
inline bool
finish_partial_l4_csum(uint8_t *pkt, size_t len) noexcept
{
    const PacketPart part{pkt, len};
    return finish_partial_l4_csum(&part, 1);
}

// TCP segmentation on receive.  A sender on this host may hand its veth
// or tap TCP packets of up to 64 KiB (GSO) for the device to cut; a veth
// whose XDP program runs in generic mode keeps that offload on its peer,
// and generic XDP passes such a packet on whole (it copies the skb and
// cuts nothing).  OVS would forward it to receivers whose MTU it exceeds:
// it is cut here, into segments the MTU admits, as the sender's device
// would have cut it.
struct TcpCut {
    size_t l3 = 0;          // Where the IP header starts.
    size_t hdr_len = 0;     // Ethernet, IP and TCP headers, copied into
                            // each segment.
    size_t payload = 0;     // The TCP payload's bytes.
    size_t mss = 0;         // Each segment's payload; the last's at most.
    size_t n = 0;           // Segments.
    bool ipv6 = false;
};

// Whether the packet of 'len' bytes at 'pkt' (an Ethernet frame with up to
// two VLAN tags) is TCP over IPv4 (no fragment) or IPv6 (no extension
// header) whose IP packet is longer than 'mtu' bytes; if so '*cut' says
// how it is cut into segments of at most 'mtu' bytes of IP and
// 'max_frame' bytes in all.
bool plan_tcp_cut(const uint8_t *pkt, size_t len, size_t mtu,
                  size_t max_frame, TcpCut *cut) noexcept;

// Writes segment 'i' of 'cut' of the packet at 'pkt' into 'out' (room for
// cut.hdr_len + cut.mss bytes) and returns its length: the headers with
// the lengths, the IPv4 ID (the packet's plus 'i') and the TCP sequence
// number of that segment, FIN and PSH only on the last, CWR only on the
// first, and both checksums complete.
size_t write_tcp_segment(const uint8_t *pkt, const TcpCut &cut, size_t i,
                         uint8_t *out) noexcept;

// The ones' complement sum of 'n' bytes at 'p' added to 'sum', in 16-bit
// words as this machine loads them (so the folded result is written back
// with a native store), not folded.
uint64_t csum_add_bytes(const uint8_t *p, size_t n, uint64_t sum) noexcept;

// 'sum' folded to 16 bits.
uint16_t csum_fold(uint64_t sum) noexcept;

}  // namespace afxdp

#endif  // AFXDP_L4CSUM_HH
