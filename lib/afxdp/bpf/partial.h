/* TCP and UDP checksums a sender on this host left for its device to
 * finish (CHECKSUM_PARTIAL, Linux's default on veth and tap; see
 * lib/afxdp/l4csum.hh): the field holds the pseudo-header's sum, folded.
 * XDP is given only the bytes, and a frame it redirects reaches its
 * receiver with the checksum unfinished, which drops it.  Such a packet
 * goes to the AF_XDP socket instead, where the core finishes it. */

#ifndef AFXDP_BPF_PARTIAL_H
#define AFXDP_BPF_PARTIAL_H 1

#include "rewrite.h"

/* l4_csum_partial() for IPv6 or IPv4, 'ipv6' a constant: one copy each,
 * so that no load of one follows the bounds check of the other. */
static __always_inline int
l4_csum_partial_in(__u8 *nh, const void *end, const int ipv6)
{
    __u32 size = 0;
    __u8 *l4 = l4_header(nh, end, ipv6, &size);
    if (!l4) {
        return 0;
    }
    const __u8 proto = nh[ipv6 ? OFF(ipv6hdr, nexthdr) : OFF(iphdr, protocol)];
    __u8 *csum;
    if (proto == IPPROTO_TCP && size >= HLEN(tcphdr)
        && HAVE(l4, HLEN(tcphdr), end)) {
        csum = l4 + OFF(tcphdr, check);
    } else if (proto == IPPROTO_UDP && size >= HLEN(udphdr)
               && HAVE(l4, HLEN(udphdr), end)) {
        csum = l4 + OFF(udphdr, check);
    } else {
        return 0;              /* ICMPv6's is never left so. */
    }
    __u64 sum = bpf_htons((__u16) proto) + bpf_htons((__u16) size);
    if (ipv6) {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            sum += load32(nh + OFF(ipv6hdr, saddr) + 4 * i);
        }
    } else {
        sum += (__u64) load32(nh + OFF(iphdr, saddr))
               + load32(nh + OFF(iphdr, daddr));
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return load16(csum) == (__u16) sum;   /* UDP's 0 (none) never is. */
}

/* Whether the TCP or UDP header behind the IP header at 'nh' (one the
 * parser passed: PARSED_IP) has its checksum left partial.  Sums of
 * 16-bit words as the machine loads them, as the field is read. */
static __always_inline int
l4_csum_partial(__u8 *nh, const void *end, int ipv6)
{
    return ipv6 ? l4_csum_partial_in(nh, end, 1)
                : l4_csum_partial_in(nh, end, 0);
}

#endif /* AFXDP_BPF_PARTIAL_H */
