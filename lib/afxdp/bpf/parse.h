/* parse_key(): a struct afxdp_flow_key from a packet, exactly as Open
 * vSwitch's miniflow_extract() fills the same fields of struct flow: the
 * same values, and zero where OVS leaves a field out (an IPv4 header
 * that fails OVS's sanity check, a TCP header too short, an ARP packet
 * that is not Ethernet/IPv4, ...).  A packet it cannot describe entirely
 * with the key it punts: two VLAN tags, an 802.3 length field, MPLS, NSH,
 * IPv4 options, IPv6 extension headers, IPv6 neighbour discovery (OVS
 * also extracts nd_target and the options).  A punted packet goes to
 * OVS untouched.
 *
 * A VLAN tag the driver stripped into the packet's metadata is not in
 * the frame: the fast path asks for it (the RX VLAN hint) and gives it to
 * the parser, or the key would say untagged where OVS sees the tag. */

#ifndef AFXDP_BPF_PARSE_H
#define AFXDP_BPF_PARSE_H 1

#include "key.h"
#include "packet.h"

#define PARSED 0
#define PUNT 1
#define PARSED_IP 2     /* PARSED, and an IP header OVS's sanity check
                         * passes (its fields are the key's) lies at the
                         * packet's L3 offset. */

/* OVS's FLOW_NW_FRAG_ANY and _LATER. */
#define NW_FRAG_ANY 1
#define NW_FRAG_LATER 2

/* TCP, UDP, SCTP, ICMP, IGMP and ICMPv6 past the IP header at 'l4', of
 * 'size' bytes (the IP header's own length field, padding excluded), its
 * protocol 'proto': the key's word of ports, and of TCP flags (with the
 * tag's TPID, 'tpid', which shares it).  OVS leaves the L4 fields zero
 * where the header is too short. */
static __always_inline int
parse_l4(const __u8 *l4, __u32 size, const void *end, __u8 proto,
         __u16 tpid, key_word *w)
{
    switch (proto) {
    case IPPROTO_TCP:
        if (size >= HLEN(tcphdr)
            && HAVE(l4, HLEN(tcphdr), end)) {
            __u32 hdr_len = TCP_HLEN(l4);
            if (hdr_len >= HLEN(tcphdr) && size >= hdr_len) {
                w[KEY_WORD(tp_src)]
                    = KEY_AT(tp_src, load16(l4 + OFF(tcphdr, source)))
                      | KEY_AT(tp_dst, load16(l4 + OFF(tcphdr, dest)));
                /* TCP_FLAGS_BE16: the low 12 bits of the offset word. */
                w[KEY_WORD(tcp_flags)]
                    = KEY_AT(tcp_flags,
                             load16(l4 + TCP_DOFF)
                             & bpf_htons(TCP_FLAGS_MASK))
                      | KEY_AT(vlan_tpid, tpid);
            }
        } else if (size >= HLEN(tcphdr)) {
            return PUNT;
        }
        return PARSED;
    case IPPROTO_UDP:
    case IPPROTO_SCTP: {
        /* SCTP's ports lie where UDP's do. */
        __u32 need = proto == IPPROTO_UDP ? HLEN(udphdr)
                                          : SCTP_HLEN;
        if (size >= need) {
            if (!HAVE(l4, 4, end)) {
                return PUNT;
            }
            w[KEY_WORD(tp_src)]
                = KEY_AT(tp_src, load16(l4 + OFF(udphdr, source)))
                  | KEY_AT(tp_dst, load16(l4 + OFF(udphdr, dest)));
        }
        return PARSED;
    }
    case IPPROTO_ICMP:
    case IPPROTO_IGMP:
        /* IGMP's group address is a field the key does not hold: a
         * megaflow that matches it is never offloaded. */
        if (size >= ICMP_HLEN) {
            if (!HAVE(l4, 2, end)) {
                return PUNT;
            }
            /* Type and code, as ICMPv6's. */
            w[KEY_WORD(tp_src)]
                = KEY_AT(tp_src, bpf_htons(l4[OFF(icmp6hdr, icmp6_type)]))
                  | KEY_AT(tp_dst, bpf_htons(l4[OFF(icmp6hdr, icmp6_code)]));
        }
        return PARSED;
    case IPPROTO_ICMPV6:
        if (size >= ICMP_HLEN) {
            if (!HAVE(l4, 2, end)) {
                return PUNT;
            }
            /* Neighbour solicitation and advertisement: OVS also
             * extracts the target and the link-layer options. */
            const __u8 *type = l4 + OFF(icmp6hdr, icmp6_type);
            const __u8 *code = l4 + OFF(icmp6hdr, icmp6_code);
            if ((*type == ND_NEIGHBOR_SOLICIT || *type == ND_NEIGHBOR_ADVERT)
                && *code == 0) {
                return PUNT;
            }
            w[KEY_WORD(tp_src)] = KEY_AT(tp_src, bpf_htons(*type))
                                  | KEY_AT(tp_dst, bpf_htons(*code));
        }
        return PARSED;
    default:
        return PARSED;
    }
}

static __always_inline int
parse_ipv4(const __u8 *nh, __u32 size, const void *end, __u16 tpid,
           key_word *w)
{
    /* OVS's ipv4_sanity_check(): on failure it extracts nothing past
     * dl_type. */
    if (size < HLEN(iphdr)) {
        return PARSED;
    }
    if (!HAVE(nh, HLEN(iphdr), end)) {
        return PUNT;
    }
    __u32 ihl = IPV4_HLEN(nh);
    __u32 tot_len = bpf_ntohs(load16(nh + OFF(iphdr, tot_len)));
    if (ihl < HLEN(iphdr) || size < ihl || tot_len > size || ihl > tot_len
        || size - tot_len > 0xffff) {
        return PARSED;
    }
    if (ihl != HLEN(iphdr)) {
        return PUNT;   /* Options: OVS skips them; we do not, yet. */
    }
    w[KEY_WORD(nw_src)] = KEY_BYTES(KEY_OFF(nw_src), 4,
                                    load32(nh + OFF(iphdr, saddr)));
    w[KEY_WORD(nw_dst)] = KEY_BYTES(KEY_OFF(nw_dst), 4,
                                    load32(nh + OFF(iphdr, daddr)));
    __u8 nw_frag = 0;
    __u16 frag = bpf_ntohs(load16(nh + OFF(iphdr, frag_off)));
    if (frag & (IPV4_MF | IPV4_OFFSET)) {
        nw_frag = NW_FRAG_ANY;
        if (frag & IPV4_OFFSET) {
            nw_frag |= NW_FRAG_LATER;
        }
    }
    w[KEY_WORD(nw_proto)] = KEY_AT(nw_proto, nh[OFF(iphdr, protocol)])
                            | KEY_AT(nw_tos, nh[OFF(iphdr, tos)])
                            | KEY_AT(nw_ttl, nh[OFF(iphdr, ttl)])
                            | KEY_AT(nw_frag, nw_frag);
    if (nw_frag & NW_FRAG_LATER) {
        return PARSED_IP;           /* No L4 header in a later fragment. */
    }
    return parse_l4(nh + HLEN(iphdr),
                    tot_len - HLEN(iphdr), end, nh[OFF(iphdr, protocol)],
                    tpid, w)
           == PUNT
           ? PUNT : PARSED_IP;
}

static __always_inline int
is_ipv6_ext_header(__u8 nxt)
{
    /* The headers OVS's parse_ipv6_ext_hdrs__() walks past. */
    return nxt == IPPROTO_HOPOPTS || nxt == IPPROTO_ROUTING
           || nxt == IPPROTO_FRAGMENT || nxt == IPPROTO_DSTOPTS
           || nxt == IPPROTO_AH || nxt == IPPROTO_ESP || nxt == IPPROTO_MH
           || nxt == IPPROTO_HIP || nxt == IPPROTO_SHIM6;
}

static __always_inline int
parse_ipv6(const __u8 *nh, __u32 size, const void *end, __u16 tpid,
           key_word *w)
{
    /* OVS's ipv6_sanity_check(): a header, and a payload length that
     * fits. */
    const __u32 hlen = HLEN(ipv6hdr);
    if (size < hlen) {
        return PARSED;
    }
    if (!HAVE(nh, hlen, end)) {
        return PUNT;
    }
    __u32 plen = bpf_ntohs(load16(nh + OFF(ipv6hdr, payload_len)));
    if (plen + hlen > size || size - (plen + hlen) > 0xffff) {
        return PARSED;
    }
    __u32 flow = bpf_ntohl(load32(nh));
    if (is_ipv6_ext_header(nh[OFF(ipv6hdr, nexthdr)])) {
        return PUNT;
    }
    /* The two addresses, one after the other from the source: the key's
     * words 2 to 5. */
    const __u8 *addrs = nh + OFF(ipv6hdr, saddr);
#pragma unroll
    for (int i = 0; i < 4; i++) {
        w[KEY_WORD(nw_src) + i] = KEY_BYTES(0, 4, load32(addrs + 8 * i))
                                  | KEY_BYTES(4, 4, load32(addrs + 4 + 8 * i));
    }
    w[KEY_WORD(nw_proto)]
        = KEY_AT(ipv6_label, bpf_htonl(flow & IPV6_LABEL_MASK))
          | KEY_AT(nw_tos, (flow >> IPV6_TCLASS_SHIFT) & 0xff)
          | KEY_AT(nw_ttl, nh[OFF(ipv6hdr, hop_limit)])
          | KEY_AT(nw_proto, nh[OFF(ipv6hdr, nexthdr)]);
    return parse_l4(nh + hlen, plen, end, nh[OFF(ipv6hdr, nexthdr)], tpid, w)
           == PUNT
           ? PUNT : PARSED_IP;
}

static __always_inline int
parse_arp(const __u8 *arp, __u32 size, const void *end, key_word *w)
{
    if (size < ARP_ETH_IPV4_LEN) {
        return PARSED;
    }
    if (!HAVE(arp, ARP_ETH_IPV4_LEN, end)) {
        return PUNT;
    }
    if (load16(arp + ARP_HRD) != bpf_htons(ARP_HRD_ETHER)
        || load16(arp + ARP_PRO) != bpf_htons(ETH_P_IP)
        || arp[ARP_HLN] != ETH_ALEN || arp[ARP_PLN] != 4) {
        return PARSED;
    }
    __u16 op = bpf_ntohs(load16(arp + ARP_OP));
    if (op <= 0xff) {
        w[KEY_WORD(nw_proto)] = KEY_AT(nw_proto, op);
    }
    /* arp_sha straddles words 7 and 8. */
    w[KEY_WORD(nw_src)] = KEY_BYTES(KEY_OFF(nw_src), 4,
                                    load32(arp + ARP_SPA));
    w[KEY_WORD(nw_dst)] = KEY_BYTES(KEY_OFF(nw_dst), 4,
                                    load32(arp + ARP_TPA));
    w[7] = KEY_4(KEY_OFF(arp_sha), arp + ARP_SHA);
    w[8] = KEY_BYTES(64, 2, load16(arp + ARP_SHA + 4))
           | KEY_BYTES(KEY_OFF(arp_tha), 2, load16(arp + ARP_THA))
           | KEY_4(KEY_OFF(arp_tha) + 2, arp + ARP_THA + 2);
    return PARSED;
}

/* A VLAN tag the driver stripped from the frame into its metadata (the
 * RX VLAN hint), which OVS sees as the packet's tag. */
struct stripped_tag {
    int present;
    __u16 tpid;        /* Network byte order. */
    __u16 tci;         /* Network byte order. */
};

/* PARSED (or PARSED_IP) with 'k' filled, or PUNT (with 'k' part
 * written, and not to be used).  'pkt_len' is the whole packet's length;
 * with multi-buffer it goes past 'end', the end of the first buffer, and
 * a header beyond that is punted.  'tag' is the tag the
 * driver stripped, which came first: a tag still in the frame is then a
 * second one. */
static __always_inline int
parse_key(const void *data, const void *end, __u32 pkt_len,
          const struct stripped_tag *tag, struct afxdp_flow_key *k)
{
    const __u8 *p = data;
    key_word *w = (key_word *) k;
    __builtin_memset(k, 0, sizeof *k);
    if (!HAVE(p, ETH_HLEN, end)) {
        return PUNT;   /* OVS extracts nothing at all: not worth a key. */
    }
    /* dl_dst and dl_src are the frame's first twelve bytes. */
    w[0] = KEY_4(0, p) | KEY_4(4, p + 4);
    __u64 w1 = KEY_4(8, p + 8);
    __u16 type = load16(p + OFF(ethhdr, h_proto)), tpid = 0, tci = 0;
    p += ETH_HLEN;
    if (tag->present) {
        tpid = tag->tpid;
        tci = tag->tci | bpf_htons(VLAN_CFI);
        if (type == bpf_htons(ETH_P_8021Q)
            || type == bpf_htons(ETH_P_8021AD)) {
            return PUNT;   /* A second tag: the key holds one. */
        }
    } else if (type == bpf_htons(ETH_P_8021Q)
               || type == bpf_htons(ETH_P_8021AD)) {
        if (!HAVE(p, VLAN_HLEN, end)) {
            return PUNT;
        }
        tpid = type;
        tci = load16(p + VLAN_TCI) | bpf_htons(VLAN_CFI);
        type = load16(p + VLAN_ENCAP_PROTO);
        p += VLAN_HLEN;
        if (type == bpf_htons(ETH_P_8021Q)
            || type == bpf_htons(ETH_P_8021AD)) {
            return PUNT;   /* A second tag: the key holds one. */
        }
    }
    if (bpf_ntohs(type) < ETH_P_802_3_MIN) {
        return PUNT;       /* 802.3 with LLC/SNAP. */
    }
    w[KEY_WORD(dl_type)] = w1 | KEY_AT(dl_type, type)
                           | KEY_AT(vlan_tci, tci);
    w[KEY_WORD(vlan_tpid)] = KEY_AT(vlan_tpid, tpid);
    __u32 size = pkt_len - (__u32) (p - (const __u8 *) data);
    if (type == bpf_htons(ETH_P_IP)) {
        return parse_ipv4(p, size, end, tpid, w);
    } else if (type == bpf_htons(ETH_P_IPV6)) {
        return parse_ipv6(p, size, end, tpid, w);
    } else if (type == bpf_htons(ETH_P_ARP) || type == bpf_htons(ETH_P_RARP)) {
        return parse_arp(p, size, end, w);
    } else if (type == bpf_htons(ETH_P_MPLS_UC)
               || type == bpf_htons(ETH_P_MPLS_MC)
               || type == bpf_htons(ETH_P_NSH)) {
        return PUNT;
    }
    return PARSED;
}

#endif /* AFXDP_BPF_PARSE_H */
