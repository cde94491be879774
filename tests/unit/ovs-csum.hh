// Open vSwitch's recalc_csum16() (lib/csum.c), written anew for the
// tests' models of what OVS writes into a packet: the ones' complement
// update of RFC 1624, HC' = ~(~HC + ~m + m'), on 16-bit words as the
// packet holds them.  (The XDP program has its own, the code under test.)
#ifndef AFXDP_TESTS_OVS_CSUM_HH
#define AFXDP_TESTS_OVS_CSUM_HH

#include <cstdint>
#include <cstring>

inline uint16_t
ovs_recalc_csum16(uint16_t old_csum, uint16_t old_u16, uint16_t new_u16)
{
    uint32_t sum = uint32_t(uint16_t(~old_csum)) + uint16_t(~old_u16)
                   + new_u16;
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return uint16_t(~sum);
}

// OVS's recalc_csum32(): recalc_csum16() on the halves of a word as a
// 32-bit load of it holds them, the low then the high (OVS's casts of an
// ovs_be32 to ovs_be16 and of its >> 16), on this machine's byte order.
inline uint16_t
ovs_recalc_csum32(uint16_t old_csum, uint32_t old_u32, uint32_t new_u32)
{
    return ovs_recalc_csum16(ovs_recalc_csum16(old_csum, uint16_t(old_u32),
                                               uint16_t(new_u32)),
                             uint16_t(old_u32 >> 16),
                             uint16_t(new_u32 >> 16));
}

// OVS's recalc_csum128(): recalc_csum16() on the eight 16-bit words of an
// IPv6 address, in the order the packet holds them.
inline uint16_t
ovs_recalc_csum128(uint16_t old_csum, const uint8_t old_addr[16],
                   const uint8_t new_addr[16])
{
    for (int i = 0; i < 16; i += 2) {
        uint16_t o, n;
        std::memcpy(&o, old_addr + i, 2);
        std::memcpy(&n, new_addr + i, 2);
        old_csum = ovs_recalc_csum16(old_csum, o, n);
    }
    return old_csum;
}

#endif  // AFXDP_TESTS_OVS_CSUM_HH
