/* The XDP fast path's packet parser (Documentation/xdp-fast-path.rst).
 *
 * parse_key() fills a struct afxdp_flow_key from a packet exactly as
 * Open vSwitch's miniflow_extract() fills the same fields of struct flow:
 * the same values, and zero where OVS leaves a field out (an IPv4 header
 * that fails OVS's sanity check, a TCP header too short, an ARP packet
 * that is not Ethernet/IPv4, ...).  A packet it cannot describe entirely
 * with the key it punts: two VLAN tags, an 802.3 length field, MPLS, NSH,
 * IPv4 options, IPv6 extension headers, IPv6 neighbour discovery (OVS
 * also extracts nd_target and the options).  A punted packet goes to
 * OVS untouched.
 *
 * It reads the frame's bytes only: a VLAN tag the driver stripped into
 * the packet's metadata (the RX VLAN hint) must be put back into the
 * frame first, as our program does for the socket, or the packet punted;
 * otherwise the key says untagged where OVS sees the tag.
 *
 * Built with clang's BPF target, freestanding: afxdp.h's types come from
 * clang's own <stdint.h>.  For now the only program here is
 * afxdp_parse_test, which stores each packet's key for the unit tests
 * (tests/unit/test-fastpath.cc); the fast path's lookup will share the
 * parser. */

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "afxdp.h"

#define PARSED 0
#define PUNT 1

/* OVS's FLOW_NW_FRAG_ANY and _LATER. */
#define NW_FRAG_ANY 1
#define NW_FRAG_LATER 2

#define VLAN_CFI 0x1000

/* Whether 'n' bytes from 'p' lie inside the packet. */
#define HAVE(P, N, END) ((const __u8 *) (P) + (N) <= (const __u8 *) (END))

static __always_inline void
copy6(__u8 *dst, const __u8 *src)
{
    __builtin_memcpy(dst, src, 6);
}

static __always_inline __u16
load_be16(const __u8 *p)
{
    __u16 v;
    __builtin_memcpy(&v, p, 2);
    return v;
}

/* TCP, UDP, SCTP, ICMP, IGMP and ICMPv6 past the IP header at 'l4', of
 * 'size' bytes (the IP header's own length field, padding excluded).  OVS
 * leaves the L4 fields zero where the header is too short. */
static __always_inline int
parse_l4(const __u8 *l4, __u32 size, const void *end,
         struct afxdp_flow_key *k)
{
    switch (k->nw_proto) {
    case IPPROTO_TCP:
        if (size >= 20 && HAVE(l4, 20, end)) {
            __u32 hdr_len = (l4[12] >> 4) * 4;
            if (hdr_len >= 20 && size >= hdr_len) {
                k->tp_src = load_be16(l4);
                k->tp_dst = load_be16(l4 + 2);
                /* TCP_FLAGS_BE16: the low 12 bits of the offset word. */
                k->tcp_flags = load_be16(l4 + 12) & bpf_htons(0x0fff);
            }
        } else if (size >= 20) {
            return PUNT;
        }
        return PARSED;
    case IPPROTO_UDP:
    case IPPROTO_SCTP: {
        __u32 need = k->nw_proto == IPPROTO_UDP ? 8 : 12;
        if (size >= need) {
            if (!HAVE(l4, 4, end)) {
                return PUNT;
            }
            k->tp_src = load_be16(l4);
            k->tp_dst = load_be16(l4 + 2);
        }
        return PARSED;
    }
    case IPPROTO_ICMP:
    case IPPROTO_IGMP:
        /* IGMP's group address is a field the key does not hold: a
         * megaflow that matches it is never offloaded. */
        if (size >= 8) {
            if (!HAVE(l4, 2, end)) {
                return PUNT;
            }
            k->tp_src = bpf_htons(l4[0]);
            k->tp_dst = bpf_htons(l4[1]);
        }
        return PARSED;
    case IPPROTO_ICMPV6:
        if (size >= 8) {
            if (!HAVE(l4, 2, end)) {
                return PUNT;
            }
            /* Neighbour solicitation and advertisement: OVS also
             * extracts the target and the link-layer options. */
            if ((l4[0] == 135 || l4[0] == 136) && l4[1] == 0) {
                return PUNT;
            }
            k->tp_src = bpf_htons(l4[0]);
            k->tp_dst = bpf_htons(l4[1]);
        }
        return PARSED;
    default:
        return PARSED;
    }
}

static __always_inline int
parse_ipv4(const __u8 *nh, __u32 size, const void *end,
           struct afxdp_flow_key *k)
{
    /* OVS's ipv4_sanity_check(): on failure it extracts nothing past
     * dl_type. */
    if (size < 20) {
        return PARSED;
    }
    if (!HAVE(nh, 20, end)) {
        return PUNT;
    }
    __u32 ihl = (nh[0] & 0x0f) * 4;
    __u32 tot_len = bpf_ntohs(load_be16(nh + 2));
    if (ihl < 20 || size < ihl || tot_len > size || ihl > tot_len
        || size - tot_len > 0xffff) {
        return PARSED;
    }
    if (ihl != 20) {
        return PUNT;   /* Options: OVS skips them; we do not, yet. */
    }
    __builtin_memcpy(k->nw_src, nh + 12, 4);
    __builtin_memcpy(k->nw_dst, nh + 16, 4);
    k->nw_tos = nh[1];
    k->nw_ttl = nh[8];
    k->nw_proto = nh[9];
    __u16 frag = bpf_ntohs(load_be16(nh + 6));
    if (frag & 0x3fff) {            /* MF or an offset. */
        k->nw_frag = NW_FRAG_ANY;
        if (frag & 0x1fff) {
            k->nw_frag |= NW_FRAG_LATER;
            return PARSED;          /* No L4 header in a later fragment. */
        }
    }
    return parse_l4(nh + 20, tot_len - 20, end, k);
}

static __always_inline int
is_ipv6_ext_header(__u8 nxt)
{
    /* The headers OVS's parse_ipv6_ext_hdrs__() walks past. */
    return nxt == 0 || nxt == 43 || nxt == 44 || nxt == 60 || nxt == 51
           || nxt == 50 || nxt == 135 || nxt == 139 || nxt == 140;
}

static __always_inline int
parse_ipv6(const __u8 *nh, __u32 size, const void *end,
           struct afxdp_flow_key *k)
{
    /* OVS's ipv6_sanity_check(): a header, and a payload length that
     * fits. */
    if (size < 40) {
        return PARSED;
    }
    if (!HAVE(nh, 40, end)) {
        return PUNT;
    }
    __u32 plen = bpf_ntohs(load_be16(nh + 4));
    if (plen + 40 > size || size - (plen + 40) > 0xffff) {
        return PARSED;
    }
    __u32 flow;
    __builtin_memcpy(&flow, nh, 4);
    flow = bpf_ntohl(flow);
    if (is_ipv6_ext_header(nh[6])) {
        return PUNT;
    }
    __builtin_memcpy(k->nw_src, nh + 8, 16);
    __builtin_memcpy(k->nw_dst, nh + 24, 16);
    k->ipv6_label = bpf_htonl(flow & 0x000fffff);
    k->nw_tos = (flow >> 20) & 0xff;
    k->nw_ttl = nh[7];
    k->nw_proto = nh[6];
    return parse_l4(nh + 40, plen, end, k);
}

static __always_inline int
parse_arp(const __u8 *arp, __u32 size, const void *end,
          struct afxdp_flow_key *k)
{
    if (size < 28) {
        return PARSED;
    }
    if (!HAVE(arp, 28, end)) {
        return PUNT;
    }
    if (load_be16(arp) != bpf_htons(1) || load_be16(arp + 2) != bpf_htons(ETH_P_IP)
        || arp[4] != 6 || arp[5] != 4) {
        return PARSED;
    }
    __u16 op = bpf_ntohs(load_be16(arp + 6));
    if (op <= 0xff) {
        k->nw_proto = op;
    }
    copy6(k->arp_sha, arp + 8);
    __builtin_memcpy(k->nw_src, arp + 14, 4);
    copy6(k->arp_tha, arp + 18);
    __builtin_memcpy(k->nw_dst, arp + 24, 4);
    return PARSED;
}

/* PARSED with 'k' filled, or PUNT.  'pkt_len' is the whole packet's
 * length; with multi-buffer it goes past 'end', the end of the first
 * buffer, and a header beyond that is punted. */
static __always_inline int
parse_key(const void *data, const void *end, __u32 pkt_len,
          struct afxdp_flow_key *k)
{
    const __u8 *p = data;
    __builtin_memset(k, 0, sizeof *k);
    if (!HAVE(p, 14, end)) {
        return PUNT;   /* OVS extracts nothing at all: not worth a key. */
    }
    copy6(k->dl_dst, p);
    copy6(k->dl_src, p + 6);
    __u16 type = load_be16(p + 12);
    p += 14;
    if (type == bpf_htons(ETH_P_8021Q) || type == bpf_htons(ETH_P_8021AD)) {
        if (!HAVE(p, 4, end)) {
            return PUNT;
        }
        k->vlan_tpid = type;
        k->vlan_tci = load_be16(p) | bpf_htons(VLAN_CFI);
        type = load_be16(p + 2);
        p += 4;
        if (type == bpf_htons(ETH_P_8021Q)
            || type == bpf_htons(ETH_P_8021AD)) {
            return PUNT;   /* A second tag: the key holds one. */
        }
    }
    if (bpf_ntohs(type) < ETH_P_802_3_MIN) {
        return PUNT;       /* 802.3 with LLC/SNAP. */
    }
    k->dl_type = type;
    __u32 size = pkt_len - (__u32) (p - (const __u8 *) data);
    if (type == bpf_htons(ETH_P_IP)) {
        return parse_ipv4(p, size, end, k);
    } else if (type == bpf_htons(ETH_P_IPV6)) {
        return parse_ipv6(p, size, end, k);
    } else if (type == bpf_htons(ETH_P_ARP) || type == bpf_htons(ETH_P_RARP)) {
        return parse_arp(p, size, end, k);
    } else if (type == bpf_htons(ETH_P_MPLS_UC)
               || type == bpf_htons(ETH_P_MPLS_MC)
               || type == bpf_htons(ETH_P_NSH)) {
        return PUNT;
    }
    return PARSED;
}

/* For the unit tests: each packet's result and key, in slot 0. */
struct parse_result {
    __u32 verdict;     /* PARSED or PUNT. */
    __u32 pad;
    struct afxdp_flow_key key;
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct parse_result);
} parse_out SEC(".maps");

SEC("xdp.frags")
int
afxdp_parse_test(struct xdp_md *ctx)
{
    const void *data = (const void *) (long) ctx->data;
    const void *end = (const void *) (long) ctx->data_end;
    __u32 zero = 0;
    struct parse_result *r = bpf_map_lookup_elem(&parse_out, &zero);
    if (!r) {
        return XDP_ABORTED;
    }
    r->verdict = parse_key(data, end, bpf_xdp_get_buff_len(ctx), &r->key);
    return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
