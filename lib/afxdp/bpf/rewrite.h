/* A flow's rewrites on a packet XDP redirects, each as OVS's datapath
 * makes it (odp_execute_actions()): the VLAN tag pushed, popped or
 * replaced, IP fields, TCP, UDP or SCTP ports, Ethernet addresses, and
 * the checksums they change. */

#ifndef AFXDP_BPF_REWRITE_H
#define AFXDP_BPF_REWRITE_H 1

#include "csum.h"
#include "kernel.h"
#include "parse.h"

/* The stripped tag back into the frame, after the MAC addresses: 0, or
 * -1 with the frame as it was. */
static __always_inline int
put_back_tag(struct xdp_md *ctx, const struct stripped_tag *tag)
{
    if (bpf_xdp_adjust_head(ctx, -VLAN_HLEN)) {
        return -1;
    }
    __u8 *p = (__u8 *) (long) ctx->data;
    void *end = (void *) (long) ctx->data_end;
    if (!HAVE(p, TAGGED_HLEN, end)) {
        bpf_xdp_adjust_head(ctx, VLAN_HLEN);
        return -1;
    }
    __builtin_memmove(p, p + VLAN_HLEN, MACS_LEN);
    __builtin_memcpy(p + MACS_LEN, &tag->tpid, 2);
    __builtin_memcpy(p + MACS_LEN + 2, &tag->tci, 2);
    return 0;
}

/* OVS's set_eth on one address: value | (old & ~mask). */
static __always_inline void
set_addr(__u8 *p, const __u8 *value, const __u8 *mask)
{
#pragma unroll
    for (int i = 0; i < ETH_ALEN; i++) {
        p[i] = value[i] | (p[i] & ~mask[i]);
    }
}

/* Where OVS puts the L4 header behind the IP header at 'nh' (one the
 * parser passed: PARSED_IP, so no IPv4 options or IPv6 extension
 * headers), and its size as OVS measures it, by the IP header's own
 * length (dp_packet_l4_size(): padding does not count).  The parser
 * checked that length against the packet's, and a redirect is of one
 * buffer (fast_path() sends a packet of several to OVS first): the bytes
 * are in the frame.  NULL only if the IP header is not (cannot be). */
static __always_inline __u8 *
l4_header(__u8 *nh, const void *end, int ipv6, __u32 *size)
{
    const __u32 hlen = ipv6 ? HLEN(ipv6hdr) : HLEN(iphdr);
    if (!HAVE(nh, hlen, end)) {
        return 0;
    }
    *size = ipv6 ? bpf_ntohs(load16(nh + OFF(ipv6hdr, payload_len)))
                 : bpf_ntohs(load16(nh + OFF(iphdr, tot_len))) - HLEN(iphdr);
    return nh + hlen;
}

/* The L4 checksum that OVS updates when it sets an address of the IP
 * header at 'nh' (packet_set_ipv4_addr(), packet_update_csum128()), into
 * '*csum', NULL if none: TCP's where OVS sees 20 bytes of it, UDP's where
 * it sees 8 ('*udp' set: its 0 means none), IPv6's ICMPv6 where it sees 4
 * (ICMP's covers no address).  0, or -1 if the header is not in the frame
 * (cannot be: see l4_header()). */
static __always_inline int
address_l4_csum(__u8 *nh, const void *end, int ipv6, __u8 **csum, int *udp)
{
    __u32 size;
    __u8 *l4 = l4_header(nh, end, ipv6, &size);
    if (!l4) {
        return -1;
    }
    const __u8 proto = nh[ipv6 ? OFF(ipv6hdr, nexthdr) : OFF(iphdr, protocol)];
    const __u32 need = proto == IPPROTO_TCP ? HLEN(tcphdr)
                       : proto == IPPROTO_UDP ? HLEN(udphdr)
                       : proto == IPPROTO_ICMPV6 && ipv6 ? 4 : 0;
    if (!need || size < need) {
        return 0;
    }
    if (!HAVE(l4, need, end)) {
        return -1;
    }
    *csum = l4 + (proto == IPPROTO_TCP ? OFF(tcphdr, check)
                  : proto == IPPROTO_UDP ? OFF(udphdr, check)
                  : OFF(icmp6hdr, icmp6_cksum));
    *udp = proto == IPPROTO_UDP;
    return 0;
}

/* OVS's packet_set_ipv4_addr(): the address at 'addr' from 'old' to
 * 'new', the checksum of the TCP or UDP header OVS sees behind the IP
 * header (at 'l4csum', NULL if it sees none) first, then the header's
 * own, returned. */
static __always_inline __u16
set_ipv4_addr(__u8 *addr, __u32 old, __u32 new, __u16 csum, __u8 *l4csum,
              int udp)
{
    if (l4csum) {
        __u16 c = load16(l4csum);
        if (!udp) {
            *(__u16 *) l4csum = recalc_csum32(c, old, new);
        } else if (c) {
            /* UDP's 0 means no checksum: one that comes out 0 is sent
             * as 0xffff. */
            c = recalc_csum32(c, old, new);
            *(__u16 *) l4csum = c ? c : 0xffff;
        }
    }
    *(__u32 *) addr = new;
    return recalc_csum32(csum, old, new);
}

/* OVS's packet_set_ipv6_addr() for the address at 'addr' (value | (old &
 * ~mask), word by word), if it changes: the checksum at 'l4csum' first
 * (NULL: none), as recalc_csum128() updates it, a halfword at a time in
 * order (a UDP checksum of 0 stays 0, one that comes out 0 is sent as
 * 0xffff), then the address. */
static __always_inline void
set_ipv6_addr(__u8 *addr, const __u8 *value, const __u8 *mask,
              __u8 *l4csum, int udp)
{
    __u32 old[4], new[4], changed = 0;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        old[i] = load32(addr + 4 * i);
        new[i] = *(const __u32 *) (value + 4 * i)
                 | (old[i] & ~*(const __u32 *) (mask + 4 * i));
        changed |= old[i] ^ new[i];
    }
    if (!changed) {
        return;
    }
    if (l4csum) {
        __u16 c = load16(l4csum);
        if (!udp || c) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                c = recalc_csum32(c, old[i], new[i]);
            }
            *(__u16 *) l4csum = udp && !c ? 0xffff : c;
        }
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        *(__u32 *) (addr + 4 * i) = new[i];
    }
}
/* The flow's set of IP fields on the header at 'nh' (one the parser
 * passed: PARSED_IP, so no options), as OVS's odp_set_ipv4() and
 * odp_set_ipv6() make it: IPv4's source, destination, TOS, then TTL,
 * each where its mask is nonzero and only if it changes, with the
 * header checksum updated as OVS updates it (a wrong one stays wrong as
 * OVS leaves it), and for an address a TCP or UDP checksum behind the
 * header where OVS sees that header (its size by the IP header's total
 * length, as OVS measures it); IPv6's traffic class and hop limit as
 * value | (old & ~mask), with no checksum.  0, or -1 with the packet as
 * it was. */
static __always_inline int
rewrite_ip(__u8 *nh, const void *end, const struct afxdp_fp_action *a)
{
    if (a->set_ip == 4) {
        if (!HAVE(nh, HLEN(iphdr), end)) {
            return -1;
        }
        const __u32 src_mask = *(const __u32 *) a->nw_src_mask;
        const __u32 dst_mask = *(const __u32 *) a->nw_dst_mask;
        __u8 *l4csum = 0;
        int udp = 0;
        if ((src_mask | dst_mask)
            && address_l4_csum(nh, end, 0, &l4csum, &udp)) {
            return -1;
        }
        __u16 csum = load16(nh + OFF(iphdr, check));
        if (src_mask) {
            __u32 old = load32(nh + OFF(iphdr, saddr));
            __u32 new = *(const __u32 *) a->nw_src | (old & ~src_mask);
            if (new != old) {
                csum = set_ipv4_addr(nh + OFF(iphdr, saddr), old, new, csum,
                                     l4csum, udp);
            }
        }
        if (dst_mask) {
            __u32 old = load32(nh + OFF(iphdr, daddr));
            __u32 new = *(const __u32 *) a->nw_dst | (old & ~dst_mask);
            if (new != old) {
                csum = set_ipv4_addr(nh + OFF(iphdr, daddr), old, new, csum,
                                     l4csum, udp);
            }
        }
        if (a->nw_tos_mask) {
            __u8 old = nh[OFF(iphdr, tos)];
            __u8 new = a->nw_tos | (old & ~a->nw_tos_mask);
            if (new != old) {
                csum = recalc_csum16(csum, bpf_htons(old), bpf_htons(new));
                nh[OFF(iphdr, tos)] = new;
            }
        }
        if (a->nw_ttl_mask) {
            __u8 old = nh[OFF(iphdr, ttl)];
            __u8 new = a->nw_ttl | (old & ~a->nw_ttl_mask);
            if (new != old) {
                csum = recalc_csum16(csum, bpf_htons((__u16) old << 8),
                                     bpf_htons((__u16) new << 8));
                nh[OFF(iphdr, ttl)] = new;
            }
        }
        *(__u16 *) (nh + OFF(iphdr, check)) = csum;
        return 0;
    }
    /* OVS's odp_set_ipv6(): each field value | (old & ~mask), whatever
     * the mask; the source, then the destination, written only if it
     * changes, with the TCP, UDP or ICMPv6 checksum behind the header
     * (packet_set_ipv6(): the parser passed no extension header, so no
     * routing header stops the update); then the traffic class, the
     * label (translate() let none past its 20 bits) and the hop limit,
     * which no checksum covers. */
    __u8 *l4csum = 0;
    int udp = 0;
    if (address_l4_csum(nh, end, 1, &l4csum, &udp)) {
        return -1;
    }
    set_ipv6_addr(nh + OFF(ipv6hdr, saddr), a->nw_src, a->nw_src_mask,
                  l4csum, udp);
    set_ipv6_addr(nh + OFF(ipv6hdr, daddr), a->nw_dst, a->nw_dst_mask,
                  l4csum, udp);
    __u32 flow = bpf_ntohl(load32(nh));
    __u8 tc = a->nw_tos
              | ((__u8) (flow >> IPV6_TCLASS_SHIFT) & ~a->nw_tos_mask);
    __u32 label = bpf_ntohl(a->ipv6_label)
                  | (flow & IPV6_LABEL_MASK & ~bpf_ntohl(a->ipv6_label_mask));
    *(__u32 *) nh = bpf_htonl((flow & IPV6_VERSION_MASK)
                              | ((__u32) tc << IPV6_TCLASS_SHIFT) | label);
    __u8 *hop_limit = nh + OFF(ipv6hdr, hop_limit);
    *hop_limit = a->nw_ttl | (*hop_limit & ~a->nw_ttl_mask);
    return 0;
}

/* OVS's packet_set_port(): the port at 'port' to value | (old & ~mask),
 * and '*csum' with it if it changes and 'csum' is not NULL. */
static __always_inline void
set_port(__u8 *port, __u16 value, __u16 mask, __u16 *csum)
{
    __u16 old = load16(port);
    __u16 new = value | (old & ~mask);
    if (new != old) {
        if (csum) {
            *csum = recalc_csum16(*csum, old, new);
        }
        *(__u16 *) port = new;
    }
}

/* The flow's set of SCTP ports on the header at 'l4' of 'l4_size' bytes
 * (packet_set_sctp_port() where OVS sees 12 bytes of it), the checksum
 * changed as OVS changes it (see crc32c_delta()).  0, or -1 with the
 * packet as it was. */
static __always_inline int
rewrite_sctp(__u8 *l4, __u32 l4_size, const void *end,
             const struct afxdp_fp_action *a)
{
    if (l4_size < SCTP_HLEN) {
        return 0;
    }
    if (!HAVE(l4, SCTP_HLEN, end)) {
        return -1;
    }
    /* The ports lie where UDP's do. */
    const __u32 before = load_le32(l4);
    set_port(l4 + OFF(udphdr, source), a->tp_src, a->tp_src_mask, 0);
    set_port(l4 + OFF(udphdr, dest), a->tp_dst, a->tp_dst_mask, 0);
    const __u32 d = before ^ load_le32(l4);
    if (d) {
        __u8 *c = l4 + SCTP_CSUM;
        const __u32 csum = load_le32(c) ^ crc32c_delta(d, l4_size);
        c[0] = csum;
        c[1] = csum >> 8;
        c[2] = csum >> 16;
        c[3] = csum >> 24;
    }
    return 0;
}

/* The flow's set of TCP or UDP ports on the L4 header behind the IP
 * header at 'nh' (one the parser passed: PARSED_IP, so no IPv4 options or
 * IPv6 extension headers; the match pinned the protocol and ruled out a
 * later fragment), as OVS's odp_set_tcp() and odp_set_udp() make it: only
 * where OVS sees the header (a TCP header whose data offset fits, 8 bytes
 * of UDP, by the IP header's own length), the source then the
 * destination, each changed port updating the checksum; a UDP checksum
 * of 0 stays 0, and one that comes out 0 is sent as 0xffff.  0, or -1
 * with the packet as it was. */
static __always_inline int
rewrite_l4(__u8 *nh, const void *end, int ipv6,
           const struct afxdp_fp_action *a)
{
    __u32 l4_size;
    __u8 *l4 = l4_header(nh, end, ipv6, &l4_size);
    if (!l4) {
        return -1;
    }
    if (a->set_l4 == IPPROTO_SCTP) {
        return rewrite_sctp(l4, l4_size, end, a);
    }
    if (a->set_l4 == IPPROTO_TCP) {
        if (l4_size < HLEN(tcphdr)) {
            return 0;
        }
        if (!HAVE(l4, HLEN(tcphdr), end)) {
            return -1;
        }
        __u32 hdr_len = TCP_HLEN(l4);
        if (hdr_len < HLEN(tcphdr) || hdr_len > l4_size) {
            return 0;
        }
        __u16 csum = load16(l4 + OFF(tcphdr, check));
        set_port(l4 + OFF(tcphdr, source), a->tp_src, a->tp_src_mask, &csum);
        set_port(l4 + OFF(tcphdr, dest), a->tp_dst, a->tp_dst_mask, &csum);
        *(__u16 *) (l4 + OFF(tcphdr, check)) = csum;
        return 0;
    }
    if (l4_size < HLEN(udphdr)) {
        return 0;
    }
    if (!HAVE(l4, HLEN(udphdr), end)) {
        return -1;
    }
    __u8 *source = l4 + OFF(udphdr, source), *dest = l4 + OFF(udphdr, dest);
    __u16 csum = load16(l4 + OFF(udphdr, check));
    if (!csum) {
        set_port(source, a->tp_src, a->tp_src_mask, 0);
        set_port(dest, a->tp_dst, a->tp_dst_mask, 0);
        return 0;
    }
    set_port(source, a->tp_src, a->tp_src_mask, &csum);
    set_port(dest, a->tp_dst, a->tp_dst_mask, &csum);
    *(__u16 *) (l4 + OFF(udphdr, check)) = csum ? csum : 0xffff;
    return 0;
}

/* The flow's VLAN, IP, L4 and Ethernet rewrites: 0, or -1 with the
 * packet as it was.  The IP header (IPv6 if 'ipv6') is at 'l3' (past a
 * tag in the frame) before a push or pop moves it.  The match pinned
 * the tag down, so a pop or replace finds one and a push finds none.  A tag the driver stripped
 * ('tag') is the packet's tag but not in the frame, and a redirect
 * leaves it behind: the frame must then get the tag the flow leaves on
 * the packet.  Only a push can fail (no headroom), and it goes first.
 *
 * A function of its own, not inlined (a global function, the verifier
 * checks it once for any flow): inlined, its branches multiplied the
 * paths through the lookup past the verifier's million instructions. */
__attribute__((noinline)) int
fp_rewrite(struct xdp_md *ctx, const struct afxdp_fp_action *a,
           const struct stripped_tag *tag, __u32 l3, int ipv6)
{
    if (!a || !tag) {
        return -1;   /* Cannot be: the verifier asks all the same. */
    }
    __u8 *p = (__u8 *) (long) ctx->data;
    void *end = (void *) (long) ctx->data_end;
    int pop = 0, push = 0, replace = 0;
    __u16 tpid = a->tpid, tci = a->tci;

    switch (a->vlan_op) {
    case AFXDP_FP_VLAN_NONE:
        push = tag->present;
        tpid = tag->tpid;
        tci = tag->tci;
        break;
    case AFXDP_FP_VLAN_POP:
        pop = !tag->present;
        break;
    case AFXDP_FP_VLAN_PUSH:
        if (tag->present) {
            return -1;   /* Not for a tagged packet: the match says so. */
        }
        push = 1;
        break;
    default:
        push = tag->present;
        replace = !tag->present;
        break;
    }
    if (pop) {
        if (!HAVE(p, TAGGED_HLEN, end)) {
            return -1;
        }
        __builtin_memmove(p + VLAN_HLEN, p, MACS_LEN);
        if (bpf_xdp_adjust_head(ctx, VLAN_HLEN)) {
            return -1;   /* Cannot fail: the frame had its 18 bytes. */
        }
    } else if (push) {
        struct stripped_tag t = {1, tpid, tci};
        if (put_back_tag(ctx, &t)) {
            return -1;
        }
    } else if (replace) {
        if (!HAVE(p, TAGGED_HLEN, end)) {
            return -1;
        }
        __builtin_memcpy(p + MACS_LEN, &tpid, 2);
        __builtin_memcpy(p + MACS_LEN + 2, &tci, 2);
    }
    p = (__u8 *) (long) ctx->data;
    end = (void *) (long) ctx->data_end;
    /* Cannot fail: the parser found the whole header in the frame, which
     * a push or pop only moved. */
    l3 = l3 + (push ? VLAN_HLEN : 0) - (pop ? VLAN_HLEN : 0);
    if (a->set_ip && rewrite_ip(p + (l3 & 31), end, a)) {
        return -1;
    }
    /* After the IP set: OVS's flows set the addresses before the ports,
     * and both update the L4 checksum. */
    if (a->set_l4 && rewrite_l4(p + (l3 & 31), end, ipv6, a)) {
        return -1;
    }
    if (!a->set_eth) {
        return 0;   /* The common case: 12 bytes left as they are. */
    }
    if (!HAVE(p, MACS_LEN, end)) {
        return -1;
    }
    set_addr(p + OFF(ethhdr, h_dest), a->eth_dst, a->eth_dst_mask);
    set_addr(p + OFF(ethhdr, h_source), a->eth_src, a->eth_src_mask);
    return 0;
}

#endif /* AFXDP_BPF_REWRITE_H */
