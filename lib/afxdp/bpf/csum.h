/* Checksums as OVS updates them: the Internet checksum by RFC 1624
 * (IP, TCP, UDP, ICMPv6), and SCTP's CRC32c by what a change of 4 bytes
 * adds to it. */

#ifndef AFXDP_BPF_CSUM_H
#define AFXDP_BPF_CSUM_H 1

#include "crc32c-zeros.h"
#include "packet.h"

/* OVS's recalc_csum16() (lib/csum.c): RFC 1624's HC' = ~(~HC + ~m + m'),
 * folded.  Two folds are all three 16-bit terms need. */
static __always_inline __u16
recalc_csum16(__u16 csum, __u16 old, __u16 new)
{
    __u32 sum = (__u32) (__u16) ~csum + (__u16) ~old + new;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return ~sum;
}

/* OVS's recalc_csum32(): recalc_csum16() on the low 16 bits of the word
 * as a 32-bit load holds it, then on the high, as OVS's casts take them
 * on the same machine. */
static __always_inline __u16
recalc_csum32(__u16 csum, __u32 old, __u32 new)
{
    return recalc_csum16(recalc_csum16(csum, (__u16) old, (__u16) new),
                         (__u16) (old >> 16), (__u16) (new >> 16));
}

/* SCTP's checksum is CRC32c, the reflected CRC with polynomial 0x1EDC6F41
 * (0x82F63B78 bit-reversed), over the whole SCTP packet.  OVS sets ports
 * by computing it over the packet before and after, with the checksum
 * field zeroed, and xoring both into the field: a wrong checksum stays
 * wrong by as much.  A CRC's constant parts cancel in such a xor, so it
 * is the CRC with no initial or final value of the two packets' xor: the
 * 4 bytes of ports that changed, then n zero bytes (the rest of the
 * packet), which is the CRC of those 4 bytes multiplied by x^(8n) modulo
 * the polynomial.  Here polynomials over GF(2) are 32-bit words in the
 * reflected order: bit 31 is x^0, bit 0 is x^31. */
#define CRC32C_POLY 0x82F63B78u

/* All ones if bit 0 of 'x' is set, else 0, with no branch: through the
 * empty asm clang knows nothing of the bit, and cannot turn a mask made
 * of it into a jump (BPF has no conditional move), where the verifier
 * would follow each way with the word's value known: 2 ways a bit, 32
 * bits a step of the CRC. */
static __always_inline __u32
bit0_mask(__u32 x)
{
    __u32 bit = x & 1;
    asm volatile("" : "+r"(bit));
    return -bit;
}

/* a(x) * b(x) mod P: b(x) * x^i added for each term x^i of a, lowest
 * first, b multiplied by x on the way (a shift to the right, the
 * polynomial subtracted for the term that would reach x^32). */
static __always_inline __u32
crc32c_mulmod(__u32 a, __u32 b)
{
    __u32 p = 0;
#pragma clang loop unroll(disable)
    for (int i = 0; i < 32; i++) {
        p ^= b & bit0_mask(a >> (31 - i));
        b = (b >> 1) ^ (CRC32C_POLY & bit0_mask(b));
    }
    return p;
}

/* What the xor of the 4 bytes 'd' (in packet order, the first in the low
 * byte, so the word is their polynomial) at the head of a packet of
 * 'len' bytes, zero bytes after them, adds to its CRC32c: d times
 * x^(8 len) modulo the polynomial, that power the product of two of the
 * table's (crc32c-zeros.h).  (The 4 bytes are themselves 32 shifts of the
 * CRC register, x^32: 'len' counts them.)  Two products of 32 steps;
 * squaring, the power took up to 32 more.
 *
 * A global function, which the verifier checks once: inlined in
 * fp_rewrite(), its loops were checked again on each way through it. */
__attribute__((noinline)) __u32
crc32c_delta(__u32 d, __u32 len)
{
    /* len < 2^16: an L4 size from a 16-bit IP length. */
    const __u32 x8len = crc32c_mulmod(afxdp_crc32c_zeros[0][len & 0xff],
                                      afxdp_crc32c_zeros[1][(len >> 8)
                                                            & 0xff]);
    return crc32c_mulmod(d, x8len);
}

#endif /* AFXDP_BPF_CSUM_H */
