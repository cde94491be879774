/* The XDP fast path's maps, as both sides see them: the BPF program
 * (fastpath.bpf.c, built freestanding by clang) and the core that fills
 * them (fastpath.cc).  Documentation/xdp-fast-path.rst has the design.
 *
 * A packet's key (struct afxdp_flow_key) is masked with each mask in use,
 * slot by slot, and looked up under that slot's number in the flow map:
 *
 *   fp_config[0]      how many mask slots to try (the highest in use + 1),
 *                     and the generation of the maps' contents
 *   fp_emc[i]         per CPU: the exact-match cache, the flow a packet's
 *                     whole key last met, found without masks (below)
 *   fp_masks[slot]    a mask, and whether the slot is in use
 *   fp_flows          {slot, hash of key & mask} -> key & mask, and what to
 *                     do (afxdp_fp_action)
 *   fp_stats[n]       per CPU: the packets, bytes and last hit of flow n
 *   fp_clock[0]       the kernel's jiffies and CLOCK_MONOTONIC at one
 *                     moment, and its tick rate (afxdp_fp_clock writes
 *                     it when the core runs it): a hit's time from the
 *                     jiffies it was counted at
 *   fp_ports          the interfaces a flow may redirect to (a devmap)
 *   fp_counters[c]    per CPU: what the program did, AFXDP_FP_COUNTERS
 *   fp_failing        target ifindex -> frames its driver refused: the
 *                     watcher (afxdp_fp_watch) saw the kernel fail to send
 *                     this port's redirects there, and no more go there
 *   xsks              queue -> AF_XDP socket, shared with the plain program
 *   fp_handoff[0]     per CPU: the redirect the XDP program left to the
 *                     port's TC program (bpf/handoff.h) for the packet
 *                     it has just passed to the kernel
 *
 * The core changes them in an order that never shows a packet a flow
 * half made: a mask is written before any flow uses its slot and freed
 * after its last flow is gone; a flow's counters are zeroed before the
 * flow goes in; a flow's action is replaced whole (a hash map update).
 *
 * That order is not enough on its own.  A packet on another CPU may hold
 * a flow entry or a mask slot while the core rewrites it: the kernel
 * reuses a deleted or replaced hash entry at once (in its next update),
 * and an array slot is rewritten in place; either copy is plain memcpy,
 * which a reader can see half done.  So each entry carries a check (a
 * hash of its words: "An entry's check" below) that the program recomputes
 * over the very words it loaded and uses: a mix of two versions fails it,
 * and the packet goes to OVS ('changing').  And a flow carries the
 * generation of the mask it was put under, which each mask slot's entry
 * holds: a packet that masked its key with a slot's earlier mask (whole,
 * its check good) cannot meet a flow put under the slot's next one. */
#ifndef AFXDP_FASTPATH_MAPS_H
#define AFXDP_FASTPATH_MAPS_H 1

#include <stdint.h>

#include "afxdp-offload.h"

#define AFXDP_FP_MAX_MASKS 32      /* Lookups a packet may cost. */
#define AFXDP_FP_MAX_FLOWS 16384

struct afxdp_fp_config {
    uint32_t mask_slots;           /* Slots 0 .. mask_slots - 1 are tried. */
    uint32_t in_ifindex;           /* The interface the program runs on. */
    uint32_t targets_failing;      /* fp_failing may have entries: look
                                    * there before redirecting.  Set by the
                                    * watcher, cleared by the core. */
    uint32_t n_queues;             /* The receive queues OVS polls, 0 ..
                                    * n_queues - 1.  A packet on another
                                    * is not OVS's: it goes to the
                                    * kernel's stack, as without the fast
                                    * path, and no flow acts on it. */
    uint64_t generation;           /* Moves at every write of this config,
                                    * which the core makes after every
                                    * change of masks or flows: what
                                    * fp_emc learnt under another
                                    * generation is not trusted. */
    uint32_t tc_handoff;           /* The port's TC program is attached:
                                    * a redirect XDP cannot send whole
                                    * may be left to it (bpf/handoff.h). */
    uint32_t pad;                  /* Zero. */
};

/* fp_handoff's one entry per CPU.  Generic XDP and the ingress TC hook
 * run one after the other on one CPU for one packet (in
 * __netif_receive_skb_core()); the XDP program writes this and returns
 * XDP_PASS, the TC program checks that it is about the packet in hand
 * and redirects it. */
struct afxdp_fp_handoff {
    uint32_t armed;                /* Written for the packet just passed. */
    uint32_t in_ifindex;           /* Where it came in. */
    uint32_t target;               /* Where its flow sends it. */
    uint32_t len;                  /* Its length from its Ethernet header,
                                    * as XDP saw it. */
};

struct afxdp_fp_mask {
    struct afxdp_flow_key mask;
    uint32_t in_use;               /* A free slot has no flows: skipping
                                    * it saves a lookup.  (An all-zero
                                    * mask is a real one.) */
    uint32_t generation;           /* Moves when the slot's mask or use
                                    * does; never 0 once written. */
    uint64_t check;                /* The check of the words above. */
};
#define AFXDP_FP_MASK_WORDS 11     /* Checked: the mask, in_use and
                                    * generation. */

/* fp_flows is keyed by a mask slot and a hash of the masked key, not by
 * the key itself: the kernel then hashes 16 bytes a lookup, not 88 (its
 * hash of the whole key took a sixth of the fast path's time).  The entry
 * holds the whole masked key, which the program compares.  Of two keys of
 * one mask with the same hash only one can be in the map: the core
 * refuses the other (-EEXIST), whose packets then go to OVS. */
struct afxdp_fp_flow_key {
    uint32_t mask_slot;
    uint32_t pad;
    uint64_t hash;                 /* afxdp_fp_key_hash(key & mask). */
};

#define AFXDP_FP_KEY_WORDS (sizeof(struct afxdp_flow_key) / 8)

/* Each 64-bit word of the key times an odd constant of its own, summed:
 * a word's product is a bijection of the word, so keys that differ in one
 * word never give the same sum, and the products do not wait for each
 * other (a chained hash of the ten words cost the program a fifth of its
 * time in a lookup).  The same code in the program and in the core. */
#define AFXDP_FP_HASH_MUL(I) \
    (0x9e3779b97f4a7c15ull + 0x3c6ef372fe94f82aull * (I))

static inline __attribute__((always_inline)) uint64_t
afxdp_fp_key_sum(const struct afxdp_flow_key *key)
{
    /* Word by word through memcpy: the caller's words may be of another
     * 64-bit type (the program's __u64), which a uint64_t pointer must
     * not alias. */
    const unsigned char *p = (const unsigned char *) key;
    uint64_t h = 0;
    for (unsigned i = 0; i < AFXDP_FP_KEY_WORDS; i++) {
        uint64_t w;
        __builtin_memcpy(&w, p + 8 * i, 8);
        h += w * AFXDP_FP_HASH_MUL(i);
    }
    return h;
}

/* The sum mixed, so that its low bits depend on every bit of the key:
 * the flow map's hash. */
static inline __attribute__((always_inline)) uint64_t
afxdp_fp_key_hash(const struct afxdp_flow_key *key)
{
    uint64_t h = afxdp_fp_key_sum(key);
    h ^= h >> 32;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
}

enum afxdp_fp_verdict {
    AFXDP_FP_DROP,
    AFXDP_FP_REDIRECT,             /* Rewrite, then to 'ifindex'. */
    AFXDP_FP_TO_SOCKET,            /* Up to OVS with 'mark'. */
};

enum afxdp_fp_vlan_op {
    AFXDP_FP_VLAN_NONE,
    AFXDP_FP_VLAN_POP,
    AFXDP_FP_VLAN_PUSH,
    AFXDP_FP_VLAN_REPLACE,
};

struct afxdp_fp_action {
    uint8_t verdict;               /* enum afxdp_fp_verdict. */
    uint8_t vlan_op;               /* enum afxdp_fp_vlan_op. */
    uint8_t set_eth;               /* Some eth_*_mask bit is set: the
                                    * addresses are rewritten. */
    uint8_t set_ip;                /* 0, or 4 or 6: the IP header's
                                    * fields below are rewritten. */
    uint8_t set_l4;                /* 0, or 6 (TCP), 17 (UDP) or 132
                                    * (SCTP). */
    uint8_t pad0[3];               /* Zero. */
    uint16_t tpid;                 /* Network byte order, as written. */
    uint16_t tci;                  /* Network byte order, without CFI. */
    uint32_t ifindex;              /* AFXDP_FP_REDIRECT: the target. */
    uint32_t mark;                 /* AFXDP_FP_TO_SOCKET: OVS's mark. */
    uint32_t stats_slot;           /* Index into fp_stats. */
    /* Written as OVS writes set_eth: value | (old & ~mask). */
    uint8_t eth_src[6], eth_src_mask[6];
    uint8_t eth_dst[6], eth_dst_mask[6];
    /* With set_ip, as OVS writes them (afxdp_flow_action's set_ip):
     * IPv4's TOS and TTL, or IPv6's traffic class and hop limit. */
    uint8_t nw_tos, nw_tos_mask;
    uint8_t nw_ttl, nw_ttl_mask;
    uint32_t ipv6_label, ipv6_label_mask;   /* With set_ip 6: network byte
                                             * order. */
    /* With set_l4: the ports (network byte order), as afxdp_flow_action's
     * set_l4 says OVS writes them. */
    uint16_t tp_src, tp_src_mask;
    uint16_t tp_dst, tp_dst_mask;
    uint8_t pad1[4];               /* Zero. */
    /* With set_ip: its addresses, as the key holds them (IPv4 in the
     * first 4 bytes, the rest zero). */
    uint8_t nw_src[16], nw_src_mask[16];
    uint8_t nw_dst[16], nw_dst_mask[16];
};

struct afxdp_fp_flow {
    struct afxdp_flow_key key;     /* Masked: compared whole. */
    struct afxdp_fp_action action;
    uint32_t mask_generation;      /* Its slot's, when it was put. */
    uint32_t pad;                  /* Zero. */
    uint64_t check;                /* The check of the words above. */
};
#define AFXDP_FP_FLOW_WORDS 28     /* Checked: key, action, generation. */

/* What a packet takes of the flow it met: the words after the key. */
struct afxdp_fp_flow_tail {
    struct afxdp_fp_action action;
    uint32_t mask_generation;
    uint32_t pad;
};

/* An entry's check: its first N 64-bit words W(i), each times its own odd
 * constant, summed from a nonzero seed (an all-zero entry does not pass),
 * then mixed.  Two versions of an entry that differ in one word never
 * share a check; the program sums the words as it loads them, so only a
 * multiply and an add a word. */
#define AFXDP_FP_CHECK_SEED 0x6a09e667f3bcc908ull

static inline __attribute__((always_inline)) uint64_t
afxdp_fp_check_mix(uint64_t h)
{
    h ^= h >> 32;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 29;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 32);
}

/* The check of an entry's first 'n_words' words, as the core writes it.
 * (The program sums the same products inline, word by word as it loads
 * them, and mixes the sum with afxdp_fp_check_mix().) */
static inline uint64_t
afxdp_fp_entry_check(const void *entry, unsigned n_words)
{
    const unsigned char *p = (const unsigned char *) entry;
    uint64_t h = AFXDP_FP_CHECK_SEED;
    for (unsigned i = 0; i < n_words; i++) {
        uint64_t w;
        __builtin_memcpy(&w, p + 8 * i, 8);
        h += w * AFXDP_FP_HASH_MUL(i);
    }
    return afxdp_fp_check_mix(h);
}

/* The exact-match cache, per CPU and direct-mapped by the top
 * AFXDP_FP_EMC_BITS of afxdp_fp_key_sum() of a packet's whole key (the
 * flow map's mix would add a multiply to every packet's way to its
 * entry; the top bits need none): the flow that key met
 * in the mask slots, copied, for as long as fp_config's generation is
 * the one it was found under.  A packet of a flow seen before then costs
 * one hash and one compare, not a masked lookup per mask slot.  Per CPU,
 * an entry has one writer, the program on that CPU. */
#define AFXDP_FP_EMC_BITS 9
#define AFXDP_FP_EMC_SIZE (1u << AFXDP_FP_EMC_BITS)

struct afxdp_fp_emc_entry {
    uint64_t generation;           /* fp_config's when the flow was
                                    * found; 0: empty. */
    struct afxdp_flow_key key;     /* A packet's, unmasked. */
    struct afxdp_fp_flow_tail flow;  /* The flow it met: its action, as
                                      * the program copied and checked
                                      * it from the flow map.  What a hit
                                      * reads of it (verdict to
                                      * stats_slot) shares the key's
                                      * cache lines. */
};

struct afxdp_fp_stats {
    uint64_t packets;
    uint64_t bytes;                /* Whole packets, as OVS counts them. */
    uint64_t used;                 /* The last hit: jiffies, or with no
                                    * tick rate in fp_clock, the coarse
                                    * CLOCK_MONOTONIC in ns. */
    uint16_t tcp_flags;            /* The TCP flags of every hit, or'ed, as
                                    * the key holds them (network order):
                                    * OVS shortens a rule's timeouts on a
                                    * FIN or RST (fin_timeout) from them. */
    uint16_t pad[3];
};

struct afxdp_fp_clock {
    uint64_t jiffies;
    uint64_t monotonic_ns;         /* CLOCK_MONOTONIC with 'jiffies'. */
    uint32_t hz;                   /* Ticks a second; 0: unknown, hits
                                    * carry ns. */
    uint32_t pad;
};

/* fp_counters: AFXDP_FP_COUNTERS, in afxdp.h. */

/* What the core lets the fast path's program ask the kernel for (its
 * fp_hints, set before it is loaded): the packet hints, which bind the
 * program to the device, and the buffer's flags. */
#define AFXDP_FP_HINT_HASH (1u << 0)
#define AFXDP_FP_HINT_VLAN (1u << 1)
#define AFXDP_FP_BUFF_FLAGS (1u << 2)  /* bpf_cast_to_kern_ctx() (Linux
                                        * 6.2) and a read through it
                                        * (CAP_PERFMON). */
#define AFXDP_FP_NO_META (1u << 3)     /* The kernel lets no XDP program
                                        * write metadata: packets reach
                                        * the socket bare, unmarked. */
#define AFXDP_FP_LOCAL_SENDERS (1u << 4)  /* A veth or tap: a sender on
                                           * this host may leave TCP and
                                           * UDP checksums partial
                                           * (bpf/partial.h). */

/* What a program of ours leaves in front of a packet it gives the socket
 * (its XDP metadata), last word nearest the packet: [mark] hash flags.
 * The mark is there only with AFXDP_META_MARK. */
#define AFXDP_META_MAGIC 0x0afd0000u
#define AFXDP_META_MAGIC_MASK 0xffff0000u
#define AFXDP_META_HASH (1u << 0)            /* 'hash' is valid: the
                                              * driver's or, from the fast
                                              * path, its own. */
#define AFXDP_META_VLAN_RESTORED (1u << 1)   /* Stripped tag put back. */
#define AFXDP_META_VLAN_LOST (1u << 2)       /* Tag stripped, no room. */
#define AFXDP_META_MARK (1u << 3)            /* A flow's mark in front. */

#endif /* fastpath-maps.h */
