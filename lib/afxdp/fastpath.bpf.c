/* The XDP fast path's program (Documentation/xdp-fast-path.rst): it
 * parses a packet, looks its megaflow up, acts and counts.
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
 * A VLAN tag the driver stripped into the packet's metadata is not in
 * the frame: the fast path asks for it (the RX VLAN hint) and gives it to
 * the parser, or the key would say untagged where OVS sees the tag.
 *
 * ovs_afxdp_fast (and ovs_afxdp_fasth, the same with packet hints) is
 * the fast path itself: the parser, then a lookup of the key in the
 * exact-match cache and, on a miss there, in the offloaded megaflows
 * (fastpath-maps.h), then what the
 * flow says: drop, rewrite and redirect to another interface, or up to
 * OVS through the AF_XDP socket with the flow's mark in front of the
 * packet.  A packet it cannot parse, or that no flow matches, goes to the
 * socket as the plain program sends it.  afxdp_parse_test stores each
 * packet's key for the unit tests (tests/unit/test-fastpath.cc).
 *
 * Built with clang's BPF target, freestanding: afxdp.h's types come from
 * clang's own <stdint.h>. */

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "afxdp.h"
#include "crc32c-zeros.h"
#include "fastpath-maps.h"

#define PARSED 0
#define PUNT 1
#define PARSED_IP 2     /* PARSED, and an IP header OVS's sanity check
                         * passes (its fields are the key's) lies at the
                         * packet's L3 offset. */

/* OVS's FLOW_NW_FRAG_ANY and _LATER. */
#define NW_FRAG_ANY 1
#define NW_FRAG_LATER 2

#define VLAN_CFI 0x1000

/* Whether 'n' bytes from 'p' lie inside the packet. */
#define HAVE(P, N, END) ((const __u8 *) (P) + (N) <= (const __u8 *) (END))

/* Packet loads through typed pointers, as XDP programs read struct
 * ethhdr and iphdr: clang then loads a halfword or word at once, where a
 * memcpy from a pointer of unknown alignment is split into bytes (a
 * third of the parser's instructions).  The verifier and JIT take
 * unaligned packet loads where the CPU does; elsewhere the headers lie
 * aligned behind the kernel's NET_IP_ALIGN, which the verifier assumes. */
static __always_inline __u16
load16(const __u8 *p)
{
    return *(const __u16 *) p;
}

static __always_inline __u32
load32(const __u8 *p)
{
    return *(const __u32 *) p;
}

/* The key is written in whole 64-bit words after it is zeroed, each
 * once (word 9, TCP flags and the tag's TPID, twice on TCP's way, the
 * second time with the TPID again).  The lookup reads it back as words
 * straight away (the hash, the cache's compare), and a word load that
 * meets narrower stores to its bytes still in flight gets nothing
 * forwarded from them: it waits until they reach the cache, a stall in
 * every packet's path where the parser wrote fields of one to six
 * bytes.  A word is built in a register from
 * the packet's loads, each placed where its field lies: KEY_AT() shifts a
 * value holding a field's bytes in memory order (a load from the packet,
 * or a field's own type) to the field's bytes within its word, on either
 * byte order. */
typedef __u64 __attribute__((may_alias)) key_word;   /* Aliases the key. */

#define KEY_OFF(FIELD) __builtin_offsetof(struct afxdp_flow_key, FIELD)
#define KEY_SIZE(FIELD) sizeof(((struct afxdp_flow_key *) 0)->FIELD)
#define KEY_WORD(FIELD) (KEY_OFF(FIELD) / 8)
#define KEY_SHIFT(OFF, SIZE)                                            \
    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 8 * ((OFF) % 8)        \
                                               : 64 - 8 * ((OFF) % 8 + (SIZE)))
/* 'SIZE' bytes at byte 'OFF' of the key, in that byte's word. */
#define KEY_BYTES(OFF, SIZE, V) ((__u64) (V) << KEY_SHIFT(OFF, SIZE))
/* A whole field (which lies in one word) in its word. */
#define KEY_AT(FIELD, V) KEY_BYTES(KEY_OFF(FIELD), KEY_SIZE(FIELD), V)

/* The words the parser builds, field by field: each field that one word
 * holds whole, in that word; and where the three that straddle two
 * words (dl_src, arp_sha, and nw_src and nw_dst, of two each) begin. */
#define KEY_IN_WORD(FIELD, N)                                           \
    _Static_assert(KEY_OFF(FIELD) / 8 == (N)                            \
                   && (KEY_OFF(FIELD) + KEY_SIZE(FIELD) - 1) / 8 == (N), \
                   #FIELD " is not in word " #N " of the key")
KEY_IN_WORD(dl_dst, 0);
KEY_IN_WORD(dl_type, 1);
KEY_IN_WORD(vlan_tci, 1);
KEY_IN_WORD(ipv6_label, 6);
KEY_IN_WORD(nw_proto, 6);
KEY_IN_WORD(nw_tos, 6);
KEY_IN_WORD(nw_ttl, 6);
KEY_IN_WORD(nw_frag, 6);
KEY_IN_WORD(tp_src, 7);
KEY_IN_WORD(tp_dst, 7);
KEY_IN_WORD(arp_tha, 8);
KEY_IN_WORD(tcp_flags, 9);
KEY_IN_WORD(vlan_tpid, 9);
_Static_assert(KEY_OFF(dl_src) == 6 && KEY_OFF(nw_src) == 16
               && KEY_OFF(nw_dst) == 32 && KEY_OFF(arp_sha) == 60
               && KEY_OFF(arp_tha) == 66
               && sizeof(struct afxdp_flow_key) == 80,
               "the parser's words follow struct afxdp_flow_key");

/* Four bytes of the packet (two halfword loads: an Ethernet header's
 * bytes lie at even offsets) at byte 'OFF' of the key. */
#define KEY_4(OFF, P) (KEY_BYTES(OFF, 2, load16(P))                     \
                       | KEY_BYTES((OFF) + 2, 2, load16((P) + 2)))

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
        if (size >= 20 && HAVE(l4, 20, end)) {
            __u32 hdr_len = (l4[12] >> 4) * 4;
            if (hdr_len >= 20 && size >= hdr_len) {
                w[KEY_WORD(tp_src)] = KEY_AT(tp_src, load16(l4))
                                      | KEY_AT(tp_dst, load16(l4 + 2));
                /* TCP_FLAGS_BE16: the low 12 bits of the offset word. */
                w[KEY_WORD(tcp_flags)]
                    = KEY_AT(tcp_flags,
                             load16(l4 + 12) & bpf_htons(0x0fff))
                      | KEY_AT(vlan_tpid, tpid);
            }
        } else if (size >= 20) {
            return PUNT;
        }
        return PARSED;
    case IPPROTO_UDP:
    case IPPROTO_SCTP: {
        __u32 need = proto == IPPROTO_UDP ? 8 : 12;
        if (size >= need) {
            if (!HAVE(l4, 4, end)) {
                return PUNT;
            }
            w[KEY_WORD(tp_src)] = KEY_AT(tp_src, load16(l4))
                                  | KEY_AT(tp_dst, load16(l4 + 2));
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
            w[KEY_WORD(tp_src)] = KEY_AT(tp_src, bpf_htons(l4[0]))
                                  | KEY_AT(tp_dst, bpf_htons(l4[1]));
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
            w[KEY_WORD(tp_src)] = KEY_AT(tp_src, bpf_htons(l4[0]))
                                  | KEY_AT(tp_dst, bpf_htons(l4[1]));
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
    if (size < 20) {
        return PARSED;
    }
    if (!HAVE(nh, 20, end)) {
        return PUNT;
    }
    __u32 ihl = (nh[0] & 0x0f) * 4;
    __u32 tot_len = bpf_ntohs(load16(nh + 2));
    if (ihl < 20 || size < ihl || tot_len > size || ihl > tot_len
        || size - tot_len > 0xffff) {
        return PARSED;
    }
    if (ihl != 20) {
        return PUNT;   /* Options: OVS skips them; we do not, yet. */
    }
    w[KEY_WORD(nw_src)] = KEY_BYTES(KEY_OFF(nw_src), 4, load32(nh + 12));
    w[KEY_WORD(nw_dst)] = KEY_BYTES(KEY_OFF(nw_dst), 4, load32(nh + 16));
    __u8 nw_frag = 0;
    __u16 frag = bpf_ntohs(load16(nh + 6));
    if (frag & 0x3fff) {            /* MF or an offset. */
        nw_frag = NW_FRAG_ANY;
        if (frag & 0x1fff) {
            nw_frag |= NW_FRAG_LATER;
        }
    }
    w[KEY_WORD(nw_proto)] = KEY_AT(nw_proto, nh[9]) | KEY_AT(nw_tos, nh[1])
                            | KEY_AT(nw_ttl, nh[8])
                            | KEY_AT(nw_frag, nw_frag);
    if (nw_frag & NW_FRAG_LATER) {
        return PARSED_IP;           /* No L4 header in a later fragment. */
    }
    return parse_l4(nh + 20, tot_len - 20, end, nh[9], tpid, w) == PUNT
           ? PUNT : PARSED_IP;
}

static __always_inline int
is_ipv6_ext_header(__u8 nxt)
{
    /* The headers OVS's parse_ipv6_ext_hdrs__() walks past. */
    return nxt == 0 || nxt == 43 || nxt == 44 || nxt == 60 || nxt == 51
           || nxt == 50 || nxt == 135 || nxt == 139 || nxt == 140;
}

static __always_inline int
parse_ipv6(const __u8 *nh, __u32 size, const void *end, __u16 tpid,
           key_word *w)
{
    /* OVS's ipv6_sanity_check(): a header, and a payload length that
     * fits. */
    if (size < 40) {
        return PARSED;
    }
    if (!HAVE(nh, 40, end)) {
        return PUNT;
    }
    __u32 plen = bpf_ntohs(load16(nh + 4));
    if (plen + 40 > size || size - (plen + 40) > 0xffff) {
        return PARSED;
    }
    __u32 flow = bpf_ntohl(load32(nh));
    if (is_ipv6_ext_header(nh[6])) {
        return PUNT;
    }
    /* The two addresses, from byte 8 of the header: the key's words 2
     * to 5. */
#pragma unroll
    for (int i = 0; i < 4; i++) {
        w[KEY_WORD(nw_src) + i] = KEY_BYTES(0, 4, load32(nh + 8 + 8 * i))
                                  | KEY_BYTES(4, 4, load32(nh + 12 + 8 * i));
    }
    w[KEY_WORD(nw_proto)] = KEY_AT(ipv6_label, bpf_htonl(flow & 0x000fffff))
                            | KEY_AT(nw_tos, (flow >> 20) & 0xff)
                            | KEY_AT(nw_ttl, nh[7])
                            | KEY_AT(nw_proto, nh[6]);
    return parse_l4(nh + 40, plen, end, nh[6], tpid, w) == PUNT
           ? PUNT : PARSED_IP;
}

static __always_inline int
parse_arp(const __u8 *arp, __u32 size, const void *end, key_word *w)
{
    if (size < 28) {
        return PARSED;
    }
    if (!HAVE(arp, 28, end)) {
        return PUNT;
    }
    if (load16(arp) != bpf_htons(1) || load16(arp + 2) != bpf_htons(ETH_P_IP)
        || arp[4] != 6 || arp[5] != 4) {
        return PARSED;
    }
    __u16 op = bpf_ntohs(load16(arp + 6));
    if (op <= 0xff) {
        w[KEY_WORD(nw_proto)] = KEY_AT(nw_proto, op);
    }
    /* SHA (8), SPA (14), THA (18), TPA (24); arp_sha straddles words 7
     * and 8. */
    w[KEY_WORD(nw_src)] = KEY_BYTES(KEY_OFF(nw_src), 4, load32(arp + 14));
    w[KEY_WORD(nw_dst)] = KEY_BYTES(KEY_OFF(nw_dst), 4, load32(arp + 24));
    w[7] = KEY_4(KEY_OFF(arp_sha), arp + 8);
    w[8] = KEY_BYTES(64, 2, load16(arp + 12))
           | KEY_BYTES(KEY_OFF(arp_tha), 2, load16(arp + 18))
           | KEY_4(KEY_OFF(arp_tha) + 2, arp + 20);
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
    if (!HAVE(p, 14, end)) {
        return PUNT;   /* OVS extracts nothing at all: not worth a key. */
    }
    /* dl_dst and dl_src are the frame's first twelve bytes. */
    w[0] = KEY_4(0, p) | KEY_4(4, p + 4);
    __u64 w1 = KEY_4(8, p + 8);
    __u16 type = load16(p + 12), tpid = 0, tci = 0;
    p += 14;
    if (tag->present) {
        tpid = tag->tpid;
        tci = tag->tci | bpf_htons(VLAN_CFI);
        if (type == bpf_htons(ETH_P_8021Q)
            || type == bpf_htons(ETH_P_8021AD)) {
            return PUNT;   /* A second tag: the key holds one. */
        }
    } else if (type == bpf_htons(ETH_P_8021Q)
               || type == bpf_htons(ETH_P_8021AD)) {
        if (!HAVE(p, 4, end)) {
            return PUNT;
        }
        tpid = type;
        tci = load16(p) | bpf_htons(VLAN_CFI);
        type = load16(p + 2);
        p += 4;
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

/* What the core lets this program ask the kernel for (AFXDP_FP_HINT_*
 * and AFXDP_FP_BUFF_FLAGS), set before loading only where the kernel has
 * it; a program with a hint is bound to the device.  Constant to the
 * verifier, which drops the code for the others. */
const volatile __u32 fp_hints SEC(".rodata.hints") = 0;

/* The kfuncs (Linux 6.3 and 6.8), and bpf_cast_to_kern_ctx() below.
 * Weak: on a kernel without one, libbpf leaves its calls unresolved and
 * the verifier drops them as dead code, fp_hints saying so.  Their
 * addresses are never tested: before Linux 6.4 the verifier refuses a
 * program that takes the address of a kfunc the kernel has. */
enum xdp_rss_hash_type { AFXDP_RSS_L4 = 1 << 3 };   /* The kernel's bit. */
extern int bpf_xdp_metadata_rx_hash(const struct xdp_md *ctx, __u32 *hash,
                                    enum xdp_rss_hash_type *rss_type)
    __ksym __weak;
extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx,
                                        __be16 *vlan_proto, __u16 *vlan_tci)
    __ksym __weak;

/* The kernel's buffer behind the program's context (Linux 6.2): the
 * verifier turns the call into a register move, and lets a program read
 * through it only if its loader has CAP_PERFMON (or CAP_SYS_ADMIN): the
 * core asks for it (AFXDP_FP_BUFF_FLAGS) only then.  Only the one field
 * read is declared; libbpf relocates it to the running kernel's layout. */
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym __weak;

struct xdp_buff {
    __u32 flags;
} __attribute__((preserve_access_index));

enum xdp_buff_flags {
    XDP_FLAGS_HAS_FRAGS = 1,
};

/* The packet's whole length, as bpf_xdp_get_buff_len() says it: the
 * first buffer's, unless the buffer has fragments.  The helper's call
 * (and its return, through the kernel's return thunk where it mitigates
 * SRSO) cost a fifth of a redirected packet's time in the program here,
 * so the buffer's flag is read instead where the kernel lets us. */
static __always_inline __u32
packet_len(struct xdp_md *ctx, const void *data, const void *end)
{
    if ((fp_hints & AFXDP_FP_BUFF_FLAGS)
        && bpf_core_field_exists(struct xdp_buff, flags)
        && bpf_core_enum_value_exists(enum xdp_buff_flags,
                                      XDP_FLAGS_HAS_FRAGS)) {
        const struct xdp_buff *xdp = bpf_cast_to_kern_ctx(ctx);
        __u32 has_frags = bpf_core_enum_value(enum xdp_buff_flags,
                                              XDP_FLAGS_HAS_FRAGS);
        if (!(xdp->flags & has_frags)) {
            return (__u32) (end - data);
        }
    }
    return bpf_xdp_get_buff_len(ctx);
}

/* The fast path's maps: fastpath-maps.h says what each holds. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct afxdp_fp_config);
} fp_config SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, AFXDP_FP_MAX_MASKS);
    __type(key, __u32);
    __type(value, struct afxdp_fp_mask);
} fp_masks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, AFXDP_FP_MAX_FLOWS);
    __type(key, struct afxdp_fp_flow_key);
    __type(value, struct afxdp_fp_flow);
} fp_flows SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, AFXDP_FP_EMC_SIZE);
    __type(key, __u32);
    __type(value, struct afxdp_fp_emc_entry);
} fp_emc SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, AFXDP_FP_MAX_FLOWS);
    __type(key, __u32);
    __type(value, struct afxdp_fp_stats);
} fp_stats SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct afxdp_fp_clock);
} fp_clock SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
    __uint(max_entries, 256);
    __type(key, __u32);
    __type(value, struct bpf_devmap_val);
} fp_ports SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, AFXDP_FP_N_COUNTERS);
    __type(key, __u32);
    __type(value, __u64);
} fp_counters SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 256);
    __type(key, __u32);
    __type(value, __u64);
} fp_failing SEC(".maps");

/* The plain program's map, reused by the core (bpf_map__reuse_fd). */
struct {
    __uint(type, BPF_MAP_TYPE_XSKMAP);
    __uint(max_entries, 64);
    __type(key, __u32);
    __type(value, __u32);
} xsks SEC(".maps");

static __always_inline void
count(__u32 counter)
{
    __u64 *c = bpf_map_lookup_elem(&fp_counters, &counter);
    if (c) {
        *c += 1;   /* Per CPU: no other writer. */
    }
}

/* Whether the watcher saw the kernel refuse this port's redirects to
 * 'ifindex' since the core last put it in fp_ports. */
static __always_inline int
target_failing(const struct afxdp_fp_config *cfg, __u32 ifindex)
{
    return cfg && cfg->targets_failing
           && bpf_map_lookup_elem(&fp_failing, &ifindex);
}

/* The kernel's tick rate, from its configuration (libbpf reads it from
 * /proc/config.gz or /boot/config-*): 0 where it finds neither. */
extern const int CONFIG_HZ __kconfig __weak;

/* The time of a hit, as cheaply as the kernel has one, for a time OVS
 * shows in milliseconds: jiffies, one load, where the tick rate is known
 * (the core turns them into CLOCK_MONOTONIC with afxdp_fp_clock's
 * reading); else the coarse clock, a timekeeper read that costs 13 ns a
 * packet here (the precise clock, a paravirtual clock read in a VM, a
 * sixth of the program's time). */
static __always_inline __u64
hit_time(void)
{
    return CONFIG_HZ > 0 ? bpf_jiffies64() : bpf_ktime_get_coarse_ns();
}

/* A packet the flow's actions were carried out on in XDP, for OVS's
 * statistics of the flow: 'len' as OVS counts it (a stripped tag
 * included), and its TCP flags (0 if it is no TCP segment).  A packet
 * that goes up to OVS is not counted: OVS counts it. */
static __always_inline void
count_hit(const struct afxdp_fp_action *a, __u32 len, __be16 tcp_flags)
{
    __u32 slot = a->stats_slot;
    struct afxdp_fp_stats *st = bpf_map_lookup_elem(&fp_stats, &slot);
    if (st) {
        st->packets++;
        st->bytes += len;
        st->used = hit_time();
        st->tcp_flags |= tcp_flags;
    }
}

/* The stripped tag back into the frame, after the MAC addresses: 0, or
 * -1 with the frame as it was. */
static __always_inline int
put_back_tag(struct xdp_md *ctx, const struct stripped_tag *tag)
{
    if (bpf_xdp_adjust_head(ctx, -4)) {
        return -1;
    }
    __u8 *p = (__u8 *) (long) ctx->data;
    void *end = (void *) (long) ctx->data_end;
    if (!HAVE(p, 18, end)) {
        bpf_xdp_adjust_head(ctx, 4);
        return -1;
    }
    __builtin_memmove(p, p + 4, 12);
    __builtin_memcpy(p + 12, &tag->tpid, 2);
    __builtin_memcpy(p + 14, &tag->tci, 2);
    return 0;
}

/* One 32-bit word into a hash: MurmurHash3's steps. */
static __always_inline __u32
hash_word(__u32 h, __u32 w)
{
    w *= 0xcc9e2d51;
    w = (w << 15) | (w >> 17);
    w *= 0x1b873593;
    h ^= w;
    h = (h << 13) | (h >> 19);
    return h * 5 + 0xe6546b64;
}

/* The fast path's own hash of a packet the driver gave none: over what
 * every packet of one connection shares (addresses, protocol, L4 ports
 * or ICMP type and code), as a NIC's RSS hash is.  dpif-netdev then uses
 * it as it uses the driver's, for all of the flow's packets alike, and
 * so can take a marked packet by its mark with no hash of its own to
 * compute (see to_socket()). */
static __always_inline __u32
key_hash(const struct afxdp_flow_key *key)
{
    const __u32 *src = (const __u32 *) key->nw_src;
    const __u32 *dst = (const __u32 *) key->nw_dst;
    __u32 h = 0;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        h = hash_word(h, src[i]);
        h = hash_word(h, dst[i]);
    }
    h = hash_word(h, key->nw_proto);
    h = hash_word(h, ((__u32) key->tp_src << 16) | key->tp_dst);
    h ^= 40;
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    return h ^ (h >> 16);
}

/* Drops whatever metadata is already in front of the packet: a frame that
 * came to veth as an XDP frame keeps its own (bounced by XDP_TX on the
 * peer, or redirected in by another program).  Ours must end right at
 * the packet, where the socket reads it, and no one else's may reach the
 * socket.  At most 32 bytes, a multiple of 4 (the kernel's rules): moving
 * its start by 32, 16, 8 and 4, each where it fits, leaves none. */
static __always_inline void
drop_foreign_meta(struct xdp_md *ctx)
{
    if ((void *) (long) ctx->data_meta >= (void *) (long) ctx->data) {
        return;   /* None, or the driver has no metadata at all. */
    }
    bpf_xdp_adjust_meta(ctx, 32);
    bpf_xdp_adjust_meta(ctx, 16);
    bpf_xdp_adjust_meta(ctx, 8);
    bpf_xdp_adjust_meta(ctx, 4);
}

/* Up to OVS through the queue's socket (to the kernel's stack if the
 * queue has none, as the plain program does), with 'mark' in front of the
 * packet if 'marked'.  A packet for the socket also gets what the plain
 * program with hints gives it: its stripped tag back in the frame, and
 * the driver's hash, or, with none and a 'key' (NULL for a packet the
 * parser punted), key_hash(): every packet of a flow then comes with a
 * hash, and a mark is worth taking whatever the driver gives.  One for
 * the stack stays as the driver gave it.
 *
 * Every packet for the socket gets metadata, marked or not: a frame's
 * headroom may hold an earlier packet's (one the kernel copied in and
 * could not deliver, its RX ring full), which OVS would otherwise take
 * for this one's, mark included.  Where the driver cannot carry metadata
 * at all (bpf_xdp_adjust_meta() fails), the socket cleared the flags
 * before it gave the frame (forget_rx_meta() in hints.hh). */
static __always_inline int
to_socket(struct xdp_md *ctx, const int hinted,
          const struct stripped_tag *tag, const struct afxdp_flow_key *key,
          int marked, __u32 mark)
{
    int verdict = bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
    if (verdict != XDP_REDIRECT) {
        return verdict;
    }
    /* The redirect happens after we return: the changes go with it. */
    __u32 flags = AFXDP_META_MAGIC, hash = 0;
    if (tag->present) {
        flags |= put_back_tag(ctx, tag) ? AFXDP_META_VLAN_LOST
                                        : AFXDP_META_VLAN_RESTORED;
    }
    if (fp_hints & AFXDP_FP_NO_META) {
        return verdict;   /* The verifier drops the rest. */
    }
    if (hinted && (fp_hints & AFXDP_FP_HINT_HASH)) {
        enum xdp_rss_hash_type type = 0;
        if (!bpf_xdp_metadata_rx_hash(ctx, &hash, &type)
            && (type & AFXDP_RSS_L4)) {
            flags |= AFXDP_META_HASH;
        } else {
            hash = 0;
        }
    }
    if (!(flags & AFXDP_META_HASH) && key) {
        hash = key_hash(key);
        flags |= AFXDP_META_HASH;
    }
    drop_foreign_meta(ctx);
    /* A flow's mark says OVS may skip the parse; not for a frame that
     * lost the tag the flow matched (no room to put it back: OVS then
     * parses the untagged frame it gets). */
    if (marked && !(flags & AFXDP_META_VLAN_LOST)) {
        if (bpf_xdp_adjust_meta(ctx, -12)) {
            return verdict;   /* No room: OVS classifies it itself. */
        }
        __u32 *meta = (__u32 *) (long) ctx->data_meta;
        if ((void *) (meta + 3) > (void *) (long) ctx->data) {
            return verdict;
        }
        meta[0] = mark;
        meta[1] = hash;
        meta[2] = flags | AFXDP_META_MARK;
        count(AFXDP_FP_marked);
    } else {
        if (bpf_xdp_adjust_meta(ctx, -8)) {
            return verdict;
        }
        __u32 *meta = (__u32 *) (long) ctx->data_meta;
        if ((void *) (meta + 2) > (void *) (long) ctx->data) {
            return verdict;
        }
        meta[0] = hash;
        meta[1] = flags;
    }
    return verdict;
}

static __always_inline int
keys_equal(const struct afxdp_flow_key *a, const struct afxdp_flow_key *b)
{
    const __u64 *x = (const __u64 *) a, *y = (const __u64 *) b;
    __u64 diff = 0;
#pragma unroll
    for (int i = 0; i < AFXDP_FP_KEY_WORDS; i++) {
        diff |= x[i] ^ y[i];
    }
    return !diff;
}

/* One word of a map entry, loaded once: the value checked is the value
 * used (a plain load the compiler may repeat, and the core may have
 * rewritten the word in between). */
#define LOAD_ONCE(P) (*(const volatile __u64 *) (P))

enum lookup_result {
    FOUND,
    NOT_FOUND,
    CHANGING,            /* Met an entry the core was rewriting. */
};

/* The flow whose mask and masked key the packet's key meets first, in
 * slot order: its action into the cache entry 'e', emptied first, whose
 * key holds each masked key meanwhile (on the stack it would take the
 * program past the kernel's 512 bytes with clang 19).  Each word of the
 * mask and of the flow is loaded once and summed into the entry's check
 * as it is used; a check that fails, or a flow put under another mask
 * than the one the key was masked with, means the core is changing them
 * (see fastpath-maps.h): CHANGING, and the packet goes to OVS.
 *
 * A function of its own, not inlined (a global function, which the
 * verifier checks once): inlined, its loops over the slots were checked
 * again for each way through the parser, near the verifier's million
 * instructions.  Only a packet the cache does not answer calls it. */
__attribute__((noinline)) enum lookup_result
lookup_masks(const struct afxdp_flow_key *key,
             const struct afxdp_fp_config *cfg,
             struct afxdp_fp_emc_entry *e)
{
    if (!key || !cfg || !e) {
        return NOT_FOUND;   /* Cannot be: the verifier asks all the same. */
    }
    struct afxdp_fp_flow_tail *out = &e->flow;
    __u32 n = cfg->mask_slots;
    struct afxdp_fp_flow_key fk;
    const __u64 *k = (const __u64 *) key;
    __u64 *mkw = (__u64 *) &e->key;
    __u64 *tail = (__u64 *) out;

    /* Per CPU: no reader until it is whole.  An exchange, which every
     * JIT makes a full barrier (x86 xchg, arm64 swpal): the slots below
     * are read after the generation lookup() read, on a CPU that may
     * reorder loads too.  Else a flow read before the core changed the
     * maps could be cached under the generation written after. */
    __atomic_exchange_n(&e->generation, 0, __ATOMIC_SEQ_CST);
    fk.pad = 0;
    /* 64 bits: spilled to the stack, a 32-bit counter loses its value to
     * the verifier, which then sees the loop as endless. */
    for (__u64 slot = 0; slot < AFXDP_FP_MAX_MASKS; slot++) {
        if (slot >= n) {
            break;
        }
        __u32 index = slot;
        const struct afxdp_fp_mask *m = bpf_map_lookup_elem(&fp_masks,
                                                            &index);
        if (!m) {
            continue;
        }
        const __u64 *mw = (const __u64 *) m;
        /* in_use and the generation: the word after the mask. */
        union {
            __u64 word;
            struct {
                __u32 in_use;
                __u32 generation;
            };
        } use;
        use.word = LOAD_ONCE(&mw[AFXDP_FP_KEY_WORDS]);
        if (!use.in_use) {
            continue;
        }
        __u64 mcheck = AFXDP_FP_CHECK_SEED
                       + use.word * AFXDP_FP_HASH_MUL(AFXDP_FP_KEY_WORDS);
#pragma unroll
        for (int i = 0; i < AFXDP_FP_KEY_WORDS; i++) {
            __u64 w = LOAD_ONCE(&mw[i]);
            mkw[i] = k[i] & w;
            mcheck += w * AFXDP_FP_HASH_MUL(i);
        }
        fk.mask_slot = slot;
        fk.hash = afxdp_fp_key_hash(&e->key);
        const struct afxdp_fp_flow *f = bpf_map_lookup_elem(&fp_flows, &fk);
        if (!f) {
            continue;
        }
        const __u64 *fw = (const __u64 *) f;
        __u64 fcheck = AFXDP_FP_CHECK_SEED, diff = 0;
        /* Loops, not unrolled: unrolled, the seventeen words' products spill
         * and clang 19 takes the program past the kernel's 512 bytes of
         * stack (424 so, with clang 14 312).  Only a packet the slots
         * answer, not in the cache, runs them. */
#pragma nounroll
        for (int i = 0; i < AFXDP_FP_KEY_WORDS; i++) {
            __u64 w = LOAD_ONCE(&fw[i]);
            diff |= w ^ mkw[i];
            fcheck += w * AFXDP_FP_HASH_MUL(i);
        }
#pragma nounroll
        for (int i = AFXDP_FP_KEY_WORDS; i < AFXDP_FP_FLOW_WORDS; i++) {
            __u64 w = LOAD_ONCE(&fw[i]);
            tail[i - AFXDP_FP_KEY_WORDS] = w;
            fcheck += w * AFXDP_FP_HASH_MUL(i);
        }
        if (afxdp_fp_check_mix(fcheck) != LOAD_ONCE(&f->check)
            || afxdp_fp_check_mix(mcheck) != LOAD_ONCE(&m->check)) {
            return CHANGING;
        }
        if (diff) {
            continue;   /* Another key of the same hash. */
        }
        if (out->mask_generation != use.generation) {
            return CHANGING;
        }
        return FOUND;
    }
    return NOT_FOUND;
}

/* The flow the packet's key meets: from this CPU's exact-match cache if
 * it was found there under the maps' present generation, else from the
 * mask slots, copied into the cache.  The generation is read before the
 * slots are: an entry found in maps that change meanwhile is cached
 * under the old one, and never trusted.  NULL if none, with 'changing'
 * set if that is because the core was changing what the packet met. */
static __always_inline const struct afxdp_fp_action *
lookup(const struct afxdp_flow_key *key, const struct afxdp_fp_config *cfg,
       int *changing)
{
    const __u64 generation = LOAD_ONCE(&cfg->generation);
    /* The sum's top bits, which depend on every bit of the key (a
     * product's bit n on the word's bits up to n): a multiply shorter
     * than the whole hash on the way to the entry's first load. */
    __u32 index = afxdp_fp_key_sum(key) >> (64 - AFXDP_FP_EMC_BITS);
    struct afxdp_fp_emc_entry *e = bpf_map_lookup_elem(&fp_emc, &index);
    if (!e) {
        return 0;   /* Cannot be: the index is in range. */
    }
    if (generation && e->generation == generation
        && keys_equal(&e->key, key)) {
        return &e->flow.action;
    }
    /* The flow is copied straight into the entry, and only a flow found
     * whole makes it whole again. */
    enum lookup_result r = lookup_masks(key, cfg, e);
    if (r != FOUND) {
        *changing = r == CHANGING;
        return 0;
    }
    e->key = *key;
    e->generation = generation;
    count(AFXDP_FP_cache_filled);
    return &e->flow.action;
}

/* OVS's set_eth on one address: value | (old & ~mask). */
static __always_inline void
set_addr(__u8 *p, const __u8 *value, const __u8 *mask)
{
#pragma unroll
    for (int i = 0; i < 6; i++) {
        p[i] = value[i] | (p[i] & ~mask[i]);
    }
}

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
    if (!HAVE(nh, ipv6 ? 40 : 20, end)) {
        return 0;
    }
    *size = ipv6 ? bpf_ntohs(load16(nh + 4))
                 : bpf_ntohs(load16(nh + 2)) - 20;
    return nh + (ipv6 ? 40 : 20);
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
    const __u8 proto = nh[ipv6 ? 6 : 9];
    const __u32 need = proto == IPPROTO_TCP ? 20
                       : proto == IPPROTO_UDP ? 8
                       : proto == IPPROTO_ICMPV6 && ipv6 ? 4 : 0;
    if (!need || size < need) {
        return 0;
    }
    if (!HAVE(l4, need, end)) {
        return -1;
    }
    *csum = l4 + (proto == IPPROTO_TCP ? 16 : proto == IPPROTO_UDP ? 6 : 2);
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
        if (!HAVE(nh, 20, end)) {
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
        __u16 csum = load16(nh + 10);
        if (src_mask) {
            __u32 old = load32(nh + 12);
            __u32 new = *(const __u32 *) a->nw_src | (old & ~src_mask);
            if (new != old) {
                csum = set_ipv4_addr(nh + 12, old, new, csum, l4csum, udp);
            }
        }
        if (dst_mask) {
            __u32 old = load32(nh + 16);
            __u32 new = *(const __u32 *) a->nw_dst | (old & ~dst_mask);
            if (new != old) {
                csum = set_ipv4_addr(nh + 16, old, new, csum, l4csum, udp);
            }
        }
        if (a->nw_tos_mask) {
            __u8 old = nh[1];
            __u8 new = a->nw_tos | (old & ~a->nw_tos_mask);
            if (new != old) {
                csum = recalc_csum16(csum, bpf_htons(old), bpf_htons(new));
                nh[1] = new;
            }
        }
        if (a->nw_ttl_mask) {
            __u8 old = nh[8];
            __u8 new = a->nw_ttl | (old & ~a->nw_ttl_mask);
            if (new != old) {
                csum = recalc_csum16(csum, bpf_htons((__u16) old << 8),
                                     bpf_htons((__u16) new << 8));
                nh[8] = new;
            }
        }
        *(__u16 *) (nh + 10) = csum;
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
    set_ipv6_addr(nh + 8, a->nw_src, a->nw_src_mask, l4csum, udp);
    set_ipv6_addr(nh + 24, a->nw_dst, a->nw_dst_mask, l4csum, udp);
    __u32 flow = bpf_ntohl(load32(nh));
    __u8 tc = a->nw_tos | ((__u8) (flow >> 20) & ~a->nw_tos_mask);
    __u32 label = bpf_ntohl(a->ipv6_label)
                  | (flow & 0xfffff & ~bpf_ntohl(a->ipv6_label_mask));
    *(__u32 *) nh = bpf_htonl((flow & 0xf0000000) | ((__u32) tc << 20)
                              | label);
    nh[7] = a->nw_ttl | (nh[7] & ~a->nw_ttl_mask);
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

/* 4 bytes at 'p' as a word with the first in the low byte, whatever the
 * machine's order. */
static __always_inline __u32
load_le32(const __u8 *p)
{
    return p[0] | (__u32) p[1] << 8 | (__u32) p[2] << 16
           | (__u32) p[3] << 24;
}

/* The flow's set of SCTP ports on the header at 'l4' of 'l4_size' bytes
 * (packet_set_sctp_port() where OVS sees 12 bytes of it), the checksum
 * changed as OVS changes it (see crc32c_delta()).  0, or -1 with the
 * packet as it was. */
static __always_inline int
rewrite_sctp(__u8 *l4, __u32 l4_size, const void *end,
             const struct afxdp_fp_action *a)
{
    if (l4_size < 12) {
        return 0;
    }
    if (!HAVE(l4, 12, end)) {
        return -1;
    }
    const __u32 before = load_le32(l4);
    set_port(l4, a->tp_src, a->tp_src_mask, 0);
    set_port(l4 + 2, a->tp_dst, a->tp_dst_mask, 0);
    const __u32 d = before ^ load_le32(l4);
    if (d) {
        const __u32 csum = load_le32(l4 + 8) ^ crc32c_delta(d, l4_size);
        l4[8] = csum;
        l4[9] = csum >> 8;
        l4[10] = csum >> 16;
        l4[11] = csum >> 24;
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
        if (l4_size < 20) {
            return 0;
        }
        if (!HAVE(l4, 20, end)) {
            return -1;
        }
        __u32 hdr_len = (l4[12] >> 4) * 4;
        if (hdr_len < 20 || hdr_len > l4_size) {
            return 0;
        }
        __u16 csum = load16(l4 + 16);
        set_port(l4, a->tp_src, a->tp_src_mask, &csum);
        set_port(l4 + 2, a->tp_dst, a->tp_dst_mask, &csum);
        *(__u16 *) (l4 + 16) = csum;
        return 0;
    }
    if (l4_size < 8) {
        return 0;
    }
    if (!HAVE(l4, 8, end)) {
        return -1;
    }
    __u16 csum = load16(l4 + 6);
    if (!csum) {
        set_port(l4, a->tp_src, a->tp_src_mask, 0);
        set_port(l4 + 2, a->tp_dst, a->tp_dst_mask, 0);
        return 0;
    }
    set_port(l4, a->tp_src, a->tp_src_mask, &csum);
    set_port(l4 + 2, a->tp_dst, a->tp_dst_mask, &csum);
    *(__u16 *) (l4 + 6) = csum ? csum : 0xffff;
    return 0;
}

/* The flow's VLAN, IP, L4 and Ethernet rewrites: 0, or -1 with the
 * packet as it was.  The IP header (IPv6 if 'ipv6') is at 'l3' (past a
 * tag in the frame) before a push or pop moves it.  The match pinned the tag down, so a pop or
 * replace finds one and a push finds none.  A tag the driver stripped
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
        if (!HAVE(p, 18, end)) {
            return -1;
        }
        __builtin_memmove(p + 4, p, 12);
        if (bpf_xdp_adjust_head(ctx, 4)) {
            return -1;   /* Cannot fail: the frame had its 18 bytes. */
        }
    } else if (push) {
        struct stripped_tag t = {1, tpid, tci};
        if (put_back_tag(ctx, &t)) {
            return -1;
        }
    } else if (replace) {
        if (!HAVE(p, 18, end)) {
            return -1;
        }
        __builtin_memcpy(p + 12, &tpid, 2);
        __builtin_memcpy(p + 14, &tci, 2);
    }
    p = (__u8 *) (long) ctx->data;
    end = (void *) (long) ctx->data_end;
    /* Cannot fail: the parser found the whole header in the frame, which
     * a push or pop only moved. */
    l3 = l3 + (push ? 4 : 0) - (pop ? 4 : 0);
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
    if (!HAVE(p, 12, end)) {
        return -1;
    }
    set_addr(p, a->eth_dst, a->eth_dst_mask);
    set_addr(p + 6, a->eth_src, a->eth_src_mask);
    return 0;
}

/* The fast path; 'hinted' is constant in each of the two programs. */
static __always_inline int
fast_path(struct xdp_md *ctx, const int hinted)
{
    const void *data = (const void *) (long) ctx->data;
    const void *end = (const void *) (long) ctx->data_end;
    __u32 len = packet_len(ctx, data, end);
    struct afxdp_flow_key key __attribute__((aligned(8)));
    struct stripped_tag tag = {0, 0, 0};

    if (hinted && (fp_hints & AFXDP_FP_HINT_VLAN)) {
        __be16 proto = 0;
        __u16 tci = 0;
        if (!bpf_xdp_metadata_rx_vlan_tag(ctx, &proto, &tci)) {
            tag.present = 1;
            tag.tpid = proto;
            tag.tci = bpf_htons(tci);
        }
    }
    __u32 zero = 0;
    const struct afxdp_fp_config *cfg = bpf_map_lookup_elem(&fp_config,
                                                            &zero);
    if (cfg && ctx->rx_queue_index >= cfg->n_queues) {
        /* Not OVS's packet (a NIC with more queues than the port polls):
         * the plain program would give it to the kernel, with no socket
         * on its queue, and so do we.  A megaflow is what OVS decided for
         * the packets it receives, not for these. */
        count(AFXDP_FP_unpolled);
        return XDP_PASS;
    }
    const int parsed = parse_key(data, end, len, &tag, &key);
    if (parsed == PUNT) {
        count(AFXDP_FP_punted);
        return to_socket(ctx, hinted, &tag, 0, 0, 0);
    }
    int changing = 0;
    const struct afxdp_fp_action *a = cfg ? lookup(&key, cfg, &changing)
                                          : 0;
    if (!a) {
        count(changing ? AFXDP_FP_changing : AFXDP_FP_missed);
        return to_socket(ctx, hinted, &tag, &key, 0, 0);
    }
    /* OVS's length of the packet: with the tag it sees. */
    const __u32 ovs_len = len + (tag.present ? 4 : 0);
    if (a->verdict == AFXDP_FP_DROP) {
        count_hit(a, ovs_len, key.tcp_flags);
        count(AFXDP_FP_dropped);
        return XDP_DROP;
    }
    if (a->verdict == AFXDP_FP_REDIRECT) {
        /* A packet the target may not take goes to OVS untouched: one not
         * in fp_ports, or of several buffers (not every driver transmits
         * those).  The redirect itself happens after we return. */
        if (len != (__u32) (end - data)) {
            count(AFXDP_FP_multi_buffer);
            return to_socket(ctx, hinted, &tag, &key, 0, 0);
        }
        if (target_failing(cfg, a->ifindex)
            || bpf_redirect_map(&fp_ports, a->ifindex, XDP_PASS)
               != XDP_REDIRECT) {
            count(AFXDP_FP_redirect_failed);
            return to_socket(ctx, hinted, &tag, &key, 0, 0);
        }
        /* OVS writes the IP fields where the header would be in any
         * packet, which the match said has one: one it takes for none
         * (too short, a wrong length) is left to it. */
        if ((a->set_ip || a->set_l4) && parsed != PARSED_IP) {
            count(AFXDP_FP_ip_unparsed);
            return to_socket(ctx, hinted, &tag, &key, 0, 0);
        }
        /* The IP header follows a tag in the frame, not one the driver
         * stripped. */
        const __u32 l3 = key.vlan_tci && !tag.present ? 18 : 14;
        if ((tag.present || a->vlan_op || a->set_eth || a->set_ip
             || a->set_l4)
            && fp_rewrite(ctx, a, &tag, l3,
                          key.dl_type == bpf_htons(ETH_P_IPV6))) {
            count(AFXDP_FP_rewrite_failed);
            return to_socket(ctx, hinted, &tag, &key, 0, 0);
        }
        count_hit(a, ovs_len, key.tcp_flags);
        count(AFXDP_FP_redirected);
        return XDP_REDIRECT;
    }
    return to_socket(ctx, hinted, &tag, &key, 1, a->mark);
}

/* The fast path with no packet hints: runs in any mode.  The kernel
 * refuses a program that names a hint kfunc unless it is bound to one
 * device, even where the call is never made: hence two programs. */
SEC("xdp.frags")
int
ovs_afxdp_fast(struct xdp_md *ctx)
{
    return fast_path(ctx, 0);
}

/* The fast path with the hints fp_hints names, bound to one device and
 * run in its driver (native) mode. */
SEC("xdp.frags")
int
ovs_afxdp_fasth(struct xdp_md *ctx)
{
    return fast_path(ctx, 1);
}

/* The watcher: the kernel sends redirected frames in bulks after the
 * program has returned, and a target that cannot take them (a veth whose
 * peer has just lost its XDP program and GRO) fails the whole bulk.  The
 * core learns that from the kernel only at its next check; this program,
 * attached to the tracepoint of every such send, takes the target out of
 * this port's redirects at the first failed bulk: the next packets for it
 * go to OVS.  Only the struct's one field read is declared: libbpf
 * relocates it to the running kernel's layout (CO-RE). */
struct net_device {
    int ifindex;
} __attribute__((preserve_access_index));

SEC("tp_btf/xdp_devmap_xmit")
int
afxdp_fp_watch(__u64 *ctx)
{
    const struct net_device *from = (const struct net_device *) ctx[0];
    const struct net_device *to = (const struct net_device *) ctx[1];
    int drops = (int) ctx[3];
    int err = (int) ctx[4];
    __u32 zero = 0;

    if (!err || drops <= 0) {
        return 0;   /* Sent, or a full queue's drops: not a dead target. */
    }
    struct afxdp_fp_config *cfg = bpf_map_lookup_elem(&fp_config, &zero);
    if (!cfg || from->ifindex != (int) cfg->in_ifindex) {
        return 0;   /* Another port's redirect. */
    }
    __u32 target = to->ifindex;
    __u64 *lost = bpf_map_lookup_elem(&fp_failing, &target);
    if (lost) {
        __sync_fetch_and_add(lost, drops);
    } else {
        __u64 n = drops;
        bpf_map_update_elem(&fp_failing, &target, &n, BPF_ANY);
    }
    cfg->targets_failing = 1;
    __u32 counter = AFXDP_FP_redirect_lost;
    __u64 *c = bpf_map_lookup_elem(&fp_counters, &counter);
    if (c) {
        __sync_fetch_and_add(c, drops);
    }
    return 0;
}

/* The clock the hits' times are read with (hit_time()): run by the core
 * (BPF_PROG_TEST_RUN) when it reads a flow's statistics. */
SEC("xdp")
int
afxdp_fp_clock(struct xdp_md *ctx)
{
    __u32 zero = 0;
    struct afxdp_fp_clock *c = bpf_map_lookup_elem(&fp_clock, &zero);
    if (c) {
        c->jiffies = bpf_jiffies64();
        c->monotonic_ns = bpf_ktime_get_ns();
        c->hz = CONFIG_HZ > 0 ? CONFIG_HZ : 0;
    }
    return XDP_PASS;
}

/* For the unit tests: each packet's result and key, in slot 0. */
struct parse_result {
    __u32 verdict;     /* PARSED, PUNT or PARSED_IP. */
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
    struct stripped_tag none = {0, 0, 0};
    r->verdict = parse_key(data, end, packet_len(ctx, data, end), &none,
                           &r->key);
    return XDP_PASS;
}

/* For the unit tests: crc32c_delta() of the word in the packet's first 4
 * bytes (first byte lowest) for the length in its next 2 (the same
 * order), written over its bytes 8 to 11 (the same order). */
SEC("xdp")
int
afxdp_crc32c_test(struct xdp_md *ctx)
{
    __u8 *p = (__u8 *) (long) ctx->data;
    const void *end = (const void *) (long) ctx->data_end;

    if (!HAVE(p, 12, end)) {
        return XDP_ABORTED;
    }
    const __u32 r = crc32c_delta(load_le32(p), p[4] | (__u32) p[5] << 8);
    p[8] = r;
    p[9] = r >> 8;
    p[10] = r >> 16;
    p[11] = r >> 24;
    return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
