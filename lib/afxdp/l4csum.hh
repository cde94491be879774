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

// The ones' complement sum of 'n' bytes at 'p' added to 'sum', in 16-bit
// words as this machine loads them (so the folded result is written back
// with a native store), not folded.
uint64_t csum_add_bytes(const uint8_t *p, size_t n, uint64_t sum) noexcept;

// 'sum' folded to 16 bits.
uint16_t csum_fold(uint64_t sum) noexcept;

}  // namespace afxdp

#endif  // AFXDP_L4CSUM_HH
