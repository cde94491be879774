/*
 * ovs-afxdp core: the C API of flow offload, the XDP fast path that
 * executes OVS's megaflows (Documentation/xdp-fast-path.rst): the key and
 * match it takes, the actions it executes, what it refuses and counts,
 * and the calls on a device (struct afxdp_dev, afxdp.h) that put, read
 * and delete its flows and follow the targets they redirect to.
 * Conventions as in afxdp.h.  A port's registry (afxdp-flows.h) makes
 * these calls for OVS's offload shim, which only translates; the BPF
 * program (fastpath.bpf.c) reads the types too.
 */
#ifndef AFXDP_OFFLOAD_H
#define AFXDP_OFFLOAD_H 1

#include "afxdp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The packet fields our XDP program parses, laid out as it stores them:
 * a megaflow's match is one of these for the values and one for the
 * mask.  Values are as OVS's struct flow holds them (multi-byte fields
 * in network byte order), and a field the packet does not have is zero,
 * as OVS's flow extraction leaves it: so a masked compare here decides
 * exactly what OVS's classifier decides on the same fields.  80 bytes, no
 * holes: the program hashes and compares it whole. */
struct afxdp_flow_key {
    uint8_t dl_dst[6];
    uint8_t dl_src[6];
    uint16_t dl_type;        /* After the VLAN tag, if any. */
    uint16_t vlan_tci;       /* OVS's convention: 0x1000 (CFI) set if the
                              * packet has a tag; 0 if none. */
    uint8_t nw_src[16];      /* IPv4 and ARP SPA: first 4 bytes. IPv6. */
    uint8_t nw_dst[16];      /* IPv4 and ARP TPA: first 4 bytes. IPv6. */
    uint32_t ipv6_label;
    uint8_t nw_proto;        /* ARP: the opcode's low byte. */
    uint8_t nw_tos;          /* DSCP and ECN. */
    uint8_t nw_ttl;          /* TTL, or IPv6 hop limit. */
    uint8_t nw_frag;         /* OVS's FLOW_NW_FRAG_ANY (1), _LATER (2). */
    uint16_t tp_src;         /* TCP/UDP/SCTP port; ICMP type. */
    uint16_t tp_dst;         /* TCP/UDP/SCTP port; ICMP code. */
    uint8_t arp_sha[6];
    uint8_t arp_tha[6];
    uint16_t tcp_flags;
    uint16_t vlan_tpid;      /* The tag's TPID (0x8100, 0x88a8); 0 if
                              * none.  OVS's vlans[0].tpid. */
    uint8_t pad[4];          /* Zero in key and mask. */
};

/* A megaflow's match.  in_port is the device the flow is put on. */
struct afxdp_flow_match {
    struct afxdp_flow_key key;
    struct afxdp_flow_key mask;
    /* The first field of the megaflow's mask that afxdp_flow_key cannot
     * hold (tunnel, conntrack, metadata, MPLS, a second VLAN, ...), named
     * for the operator; NULL if none.  Such a flow is not offloaded. */
    const char *unparsed_field;
};

enum afxdp_flow_action_type {
    AFXDP_ACTION_OUTPUT,     /* To 'output'. */
    AFXDP_ACTION_DROP,       /* OVS's explicit drop: must come last. */
    AFXDP_ACTION_PUSH_VLAN,  /* 'push_vlan'. */
    AFXDP_ACTION_POP_VLAN,
    AFXDP_ACTION_SET_ETH,    /* 'set_eth': masked Ethernet addresses. */
    AFXDP_ACTION_SET_IP,     /* A masked set of IPv4 addresses, TOS and
                              * TTL, or of IPv6 traffic class and hop
                              * limit. */
    AFXDP_ACTION_SET_L4,     /* A masked set of TCP or UDP ports. */
    AFXDP_ACTION_OTHER,      /* Anything else: 'other' names it. */
};

struct afxdp_flow_action {
    enum afxdp_flow_action_type type;
    union {
        struct {
            int ifindex;          /* The target interface. */
            bool xdp_target;      /* It is an afxdp port that takes XDP
                                   * redirects now (see afxdp_dev_info). */
            const char *name;     /* For messages. */
        } output;
        struct {
            uint16_t tpid;        /* 0x8100 or 0x88a8, host order. */
            uint16_t tci;         /* Host order; CFI (0x1000) as OVS sets
                                   * it, ignored. */
        } push_vlan;
        struct {
            uint8_t src[6], src_mask[6];
            uint8_t dst[6], dst_mask[6];
        } set_eth;
        /* OVS's masked set of ipv4(src,dst,tos,ttl) or
         * ipv6(src,dst,label,tclass,hlimit), the other fields neither set
         * nor masked (a shim makes anything else OTHER).  As OVS executes
         * them (odp-execute.c): IPv4 writes the source as src | (old &
         * ~src_mask) only where src_mask is nonzero and the address
         * changes, updating the header's checksum and a TCP or UDP
         * checksum behind it, then the destination, the TOS and the TTL
         * the same way (the last two with the header's checksum only).
         * IPv6 computes every field as value | (old & ~mask) whatever the
         * masks; it writes the source, then the destination, only if it
         * changes, updating the TCP, UDP or ICMPv6 checksum behind the
         * header, then the traffic class, the label and the hop limit. */
        struct {
            uint8_t version;      /* 4 or 6. */
            uint8_t tos, tos_mask;   /* IPv6: the traffic class. */
            uint8_t ttl, ttl_mask;   /* IPv6: the hop limit. */
            uint32_t src, src_mask;  /* IPv4, network byte order. */
            uint32_t dst, dst_mask;  /* IPv4, network byte order. */
            uint8_t src6[16], src6_mask[16];   /* IPv6. */
            uint8_t dst6[16], dst6_mask[16];   /* IPv6. */
            uint32_t label, label_mask;   /* IPv6, network byte order: the
                                           * low 20 bits. */
        } set_ip;
        /* OVS's masked set of tcp(src,dst), udp(src,dst) or
         * sctp(src,dst): each port as value | (old & ~mask), the L4
         * checksum updated for each port that changes (a UDP checksum of
         * 0 left 0, one that becomes 0 written 0xffff; SCTP's CRC32c
         * changed by as much as the packet's, a wrong one staying
         * wrong), where the packet has an L4 header OVS's checks pass. */
        struct {
            uint8_t proto;        /* 6 (TCP), 17 (UDP) or 132 (SCTP). */
            uint16_t src, src_mask;  /* Network byte order. */
            uint16_t dst, dst_mask;  /* Network byte order. */
        } set_l4;
        const char *other;        /* "ct", "recirc", "userspace", ... */
    };
};

/* Why a megaflow is not executed in XDP, each counted per port.  With
 * 'match_field' the flow goes to userspace as if there were no fast path;
 * with every other reason it is partially offloaded: the XDP program
 * still finds it and hands its mark to OVS with the packet. */
#define AFXDP_OFFLOAD_REFUSALS                                              \
    /* The match uses a field our XDP program does not parse. */            \
    AFXDP_REFUSAL(match_field, "match on a field XDP does not parse")       \
    /* An action XDP cannot execute exactly: conntrack, recirculation,      \
     * meters, sampling, userspace, tunnels, setting other fields. */        \
    AFXDP_REFUSAL(action, "an action XDP cannot execute")                   \
    /* More than one output (a flood, a mirror): XDP sends a packet to one  \
     * place. */                                                            \
    AFXDP_REFUSAL(several_outputs, "more than one output")                  \
    /* Output to a port that is not an afxdp port taking XDP redirects. */  \
    AFXDP_REFUSAL(output_target, "output to a port XDP cannot redirect to") \
    /* A VLAN push or pop where the match leaves open whether the packet    \
     * is tagged, or that would make two tags. */                           \
    AFXDP_REFUSAL(vlan, "VLAN push or pop on a tag the match leaves open")  \
    /* Actions after a drop. */                                             \
    AFXDP_REFUSAL(after_drop, "actions after a drop")

enum afxdp_offload_refusal {
#define AFXDP_REFUSAL(NAME, TEXT) AFXDP_REFUSED_##NAME,
    AFXDP_OFFLOAD_REFUSALS
#undef AFXDP_REFUSAL
    AFXDP_REFUSED_N
};

/* The refusal's counter name ("match_field") and its sentence. */
const char *afxdp_offload_refusal_name(enum afxdp_offload_refusal)
    AFXDP_NOEXCEPT;
const char *afxdp_offload_refusal_text(enum afxdp_offload_refusal)
    AFXDP_NOEXCEPT;

/* What the fast path would make of a megaflow, with no device: one line
 * into 'buf' ('size' bytes, NUL-terminated, cut if longer) with the
 * fields its masked key holds and what XDP does, for example
 *   "dl_type=0x800 nw_dst=10.0.0.2 -> redirect(ifindex=5,pop_vlan)"
 *   "dl_type=0x800 -> ovs(action: ct)"          (partial offload)
 *   "-> userspace(match_field: ct_state)"       (not put at all)
 * and returns the refusal, AFXDP_REFUSED_N if XDP executes it whole.  For
 * tests of a shim's translation and for diagnostics. */
enum afxdp_offload_refusal afxdp_flow_describe(
    const struct afxdp_flow_match *, const struct afxdp_flow_action *,
    size_t n_actions, char *buf, size_t size) AFXDP_NOEXCEPT;

/* The fast path's XDP parser run by the kernel on one packet's 'len'
 * bytes (BPF_PROG_TEST_RUN of its afxdp_parse_test program, loaded once
 * per process), for tests that hold it against OVS's own parser: 0 and
 * the packet's key in '*key' where it parsed the packet, 1 where it
 * punts the packet to OVS (a second VLAN tag, MPLS, ...), or a negative
 * errno (no program in this build, not root). */
int afxdp_fast_path_parse(const void *packet, size_t len,
                          struct afxdp_flow_key *key) AFXDP_NOEXCEPT;

/* What the fast path's XDP program did with each packet: exactly one of
 * these per packet, except that a packet handed to OVS with its flow's
 * mark counts as 'marked' only if a socket took it, and 'tc_redirected'
 * and 'tc_failed' count again what 'to_tc'
 * counted.  A hit XDP does not
 * carry out goes to OVS untouched, counted as the reason, and OVS then
 * does what the flow says. */
#define AFXDP_FP_COUNTERS                                                   \
    AFXDP_FP_COUNTER(unpolled,                                            \
                     "packets of a receive queue OVS does not poll, to "    \
                     "the kernel's stack as without the fast path")         \
    AFXDP_FP_COUNTER(punted,                                              \
                     "packets the parser cannot describe, to OVS")          \
    AFXDP_FP_COUNTER(missed, "packets no offloaded flow matched, to OVS")   \
    AFXDP_FP_COUNTER(changing,                                            \
                     "packets that met a flow or mask while the core "      \
                     "rewrote it, to OVS")                                  \
    AFXDP_FP_COUNTER(redirected,                                          \
                     "packets a flow redirected to another interface")      \
    AFXDP_FP_COUNTER(dropped, "packets a flow dropped")                     \
    AFXDP_FP_COUNTER(marked, "packets to OVS with their flow's mark")       \
    AFXDP_FP_COUNTER(redirect_failed,                                     \
                     "hits whose target takes no redirect, to OVS")         \
    AFXDP_FP_COUNTER(multi_buffer,                                        \
                     "redirect hits of several buffers, to OVS")            \
    AFXDP_FP_COUNTER(rewrite_failed,                                      \
                     "hits with no room for a VLAN tag, to OVS")           \
    AFXDP_FP_COUNTER(ip_unparsed,                                         \
                     "hits whose flow sets IP fields, of a packet whose IP " \
                     "header OVS's parser takes as none, to OVS")           \
    AFXDP_FP_COUNTER(csum_partial,                                        \
                     "redirect hits whose TCP or UDP checksum a sender on " \
                     "this host left for its device to finish, to OVS "     \
                     "(which finishes it)")                                 \
    AFXDP_FP_COUNTER(to_tc,                                               \
                     "redirect hits XDP cannot send whole (a GSO packet, "  \
                     "a partial checksum), passed on to the port's TC "     \
                     "program as the kernel's packet (generic mode)")       \
    AFXDP_FP_COUNTER(tc_redirected,                                       \
                     "of those, packets the TC program redirected (any "    \
                     "fewer were lost, the TC program gone)")               \
    AFXDP_FP_COUNTER(tc_failed,                                           \
                     "of those, packets the TC program could not "          \
                     "redirect, dropped")                                   \
    AFXDP_FP_COUNTER(redirect_lost,                                       \
                     "redirected frames the target's driver refused, lost " \
                     "(the target then taken out of XDP)")                  \
    AFXDP_FP_COUNTER(cache_filled,                                        \
                     "packets whose flow was found in the mask slots, not " \
                     "in the exact-match cache, and cached")

enum afxdp_fp_counter {
#define AFXDP_FP_COUNTER(NAME, TEXT) AFXDP_FP_##NAME,
    AFXDP_FP_COUNTERS
#undef AFXDP_FP_COUNTER
    AFXDP_FP_N_COUNTERS
};

/* True if this build has the fast path's XDP program (configure found a
 * clang that compiles BPF programs); if not, a device opened with offload
 * runs without it and says so. */
bool afxdp_fast_path_built(void) AFXDP_NOEXCEPT;

/* A device's XDP fast path. */
struct afxdp_fast_path_stats {
    bool requested;              /* Offload on, and the port opted in. */
    bool active;                 /* Its program is the one attached. */
    const char *reason;          /* Requested and not active: why; else "". */
    bool marks;                  /* Active, and the packets of a flow XDP
                                  * cannot execute whole reach OVS with
                                  * its mark (partial offload); if not,
                                  * such a flow is not put at all. */
    const char *marks_reason;    /* Active without marks: why; else "". */
    bool tc;                     /* Active, with its TC program on the
                                  * port's ingress (generic mode): the
                                  * redirects of GSO packets and partial
                                  * checksums go whole. */
    const char *tc_reason;       /* Active without it: why; else "". */
    unsigned flows;              /* Megaflows in the program's maps. */
    unsigned masks;              /* Their distinct masks (at most 32). */
    uint64_t packets[AFXDP_FP_N_COUNTERS];  /* The program's counters. */
    uint64_t refused[AFXDP_REFUSED_N];      /* Puts not fully offloaded,
                                             * by reason. */
    uint64_t put_failed;         /* Puts the maps had no room for, or that
                                  * the kernel refused. */
    /* Counted by XDP after OVS's last read of a flow it then deleted. */
    uint64_t untold_packets;
    uint64_t untold_bytes;
};
void afxdp_dev_get_fast_path(const struct afxdp_dev *,
                             struct afxdp_fast_path_stats *) AFXDP_NOEXCEPT;

/* Puts (or replaces) the megaflow OVS knows by 'ufid' into the device's
 * fast path: the device is its in_port.  'refusal' gets why XDP does not
 * execute it whole (AFXDP_REFUSED_N if it does).  Returns:
 *   0           in the program's maps: executed in XDP, or, with a
 *               refusal, found there and handed to OVS with 'mark'
 *               (partial offload);
 *   EOPNOTSUPP  not in the maps: the fast path is not active, or the
 *               match needs a field XDP does not parse (match_field);
 *   ENOSPC      the maps are full (32 masks, 16384 flows);
 *   EEXIST      another flow has the same mask and masked key;
 *   else        the kernel's error.
 * On any error the flow (and any it replaced) is not in the maps. */
int afxdp_dev_flow_put(struct afxdp_dev *, const uint32_t ufid[4],
                       const struct afxdp_flow_match *,
                       const struct afxdp_flow_action *, size_t n_actions,
                       uint32_t mark, enum afxdp_offload_refusal *refusal)
    AFXDP_NOEXCEPT;

struct afxdp_flow_counts;
/* The same, for a flow whose counts OVS is told through 'counts': XDP's
 * count of the flow stays whole across the put.  A put that takes the
 * flow out of the maps reads its count a last time and ends it; a put
 * that starts a new count (the flow was not in the maps) ends the old. */
int afxdp_dev_flow_put_counted(struct afxdp_dev *, const uint32_t ufid[4],
                               const struct afxdp_flow_match *,
                               const struct afxdp_flow_action *,
                               size_t n_actions, uint32_t mark,
                               enum afxdp_offload_refusal *refusal,
                               struct afxdp_flow_counts *) AFXDP_NOEXCEPT;

/* Takes the flow out of the fast path: 0, or ENOENT. */
int afxdp_dev_flow_del(struct afxdp_dev *, const uint32_t ufid[4])
    AFXDP_NOEXCEPT;
/* The same, for a flow whose counts OVS was told through 'counts' (read a
 * last time here): what XDP counted after OVS's last read, which OVS
 * never asks for, is counted in the device's afxdp_fast_path_stats. */
int afxdp_dev_flow_del_counted(struct afxdp_dev *, const uint32_t ufid[4],
                               struct afxdp_flow_counts *) AFXDP_NOEXCEPT;

/* What XDP did for a flow since it was put: packets and bytes it dropped
 * or redirected (those it handed to OVS, OVS counts), when, and the TCP
 * flags they carried. */
struct afxdp_flow_stats {
    uint64_t n_packets;
    uint64_t n_bytes;
    long long used_msec;     /* CLOCK_MONOTONIC milliseconds (OVS's
                              * time_msec()) of the last; 0 if none. */
    uint16_t tcp_flags;      /* Of all of them, or'ed, in host order, as
                              * OVS's dpif_flow_stats has them (its
                              * fin_timeout action acts on a FIN or RST
                              * among them). */
};
int afxdp_dev_flow_stats(const struct afxdp_dev *, const uint32_t ufid[4],
                         struct afxdp_flow_stats *) AFXDP_NOEXCEPT;

/* One offloaded megaflow's counts as OVS reads them, kept by the port's
 * registry for each flow (zeroed when it is first put).  The rule: every packet
 * XDP executed for the megaflow is told to OVS exactly once, whatever
 * puts, deletes, reopens and copies come (flow_counts.cc):
 *   - XDP counts a flow from when it is put into the maps until they
 *     close: a flow put again keeps its count.  Only when its maps close
 *     (the port reopens) does that count end, read a last time, and join
 *     'ended'; the flow's next count starts at zero.
 *   - OVS keeps one copy of a megaflow per PMD thread that installed it,
 *     asks for the offload's counts once per copy, and adds what a copy is
 *     told to that copy's own count, each a running total.  A copy is told
 *     what it was told last plus what XDP counted since any copy was last
 *     told: each copy's figure only grows, and the copies' figures add up
 *     to XDP's count.
 * 'used_msec' and 'tcp_flags' go to every copy alike. */
struct afxdp_flow_counts {
    struct afxdp_flow_stats ended;    /* XDP's counts that ended. */
    struct afxdp_flow_stats running;  /* The count running now, as last
                                       * read. */
    /* Of ended + running, what the copies were told. */
    uint64_t told_packets;
    uint64_t told_bytes;
};

/* XDP's running count read now ('now', as afxdp_dev_flow_stats() gave).
 * A count lower than the last read is a new one: the old one ended. */
void afxdp_flow_counts_read(struct afxdp_flow_counts *,
                            const struct afxdp_flow_stats *now)
    AFXDP_NOEXCEPT;
/* The running count ended (its maps closed), as last read. */
void afxdp_flow_counts_end(struct afxdp_flow_counts *) AFXDP_NOEXCEPT;
/* What a copy of the megaflow is told now: '*told' comes in as what it
 * was told last (zeros for a new copy) and goes out as what to tell it.
 * 'is_copy' false: a reader that is no copy, told no packets. */
void afxdp_flow_counts_tell(struct afxdp_flow_counts *, bool is_copy,
                            struct afxdp_flow_stats *told) AFXDP_NOEXCEPT;
/* What XDP counted that no copy was told: packets after OVS's last read
 * of a megaflow it deletes (its API asks for no final count). */
void afxdp_flow_counts_untold(const struct afxdp_flow_counts *,
                              uint64_t *packets, uint64_t *bytes)
    AFXDP_NOEXCEPT;

/* Whether packets the fast path redirects to interface 'ifindex' get out
 * now: it is still the interface named 'ifname' (an index a deleted
 * interface freed may go to the next one made or moved in; NULL: any),
 * and its driver transmits XDP frames (a veth only while its peer has an
 * XDP program or GRO on; some other drivers only with an XDP program
 * attached in native mode).  False with the reason in 'why' (also where
 * the kernel cannot say, before Linux 6.3).  Asks the kernel each time:
 * the answers change with the interface and its peer. */
bool afxdp_xdp_target_ok(int ifindex, const char *ifname, char *why,
                         size_t whylen) AFXDP_NOEXCEPT;

/* Lets the device's flows redirect to interface 'ifindex' (add), or no
 * longer (a flow's packets for it then go to OVS).  Add only a target
 * afxdp_xdp_target_ok() accepts: a redirect the driver refuses is lost.
 * 0, or an errno. */
int afxdp_dev_fast_path_target(struct afxdp_dev *, int ifindex, bool add)
    AFXDP_NOEXCEPT;

/* Whether the device's fast path took 'ifindex' out of its redirects by
 * itself since it was last added: the kernel failed to send a bulk of
 * them there (a veth whose peer lost its XDP program and GRO), before any
 * check could say so.  '*lost': the frames lost so.  The caller asks the
 * kernel again (afxdp_xdp_target_ok()) and adds it back, or leaves it
 * out. */
bool afxdp_dev_fast_path_target_lost(const struct afxdp_dev *, int ifindex,
                                     uint64_t *lost) AFXDP_NOEXCEPT;

/* The interfaces the device's flows redirect to, each in its fast path's
 * redirects exactly while the kernel says it takes XDP frames: asked when
 * a put flow first names it (its output.xdp_target set), again when a
 * flow to one that took none is put (at most every 10 ms), and every
 * target at most every 100 ms by afxdp_dev_targets_run(), which a caller
 * makes as it reads its flows (OVS's revalidators: a veth's peer may lose
 * its XDP program at any time).  A target the watcher took out is put
 * back there if the kernel takes it again. */
void afxdp_dev_targets_run(struct afxdp_dev *) AFXDP_NOEXCEPT;
/* 'ifindex''s port is gone: out of the device's targets and redirects,
 * whatever its flows still say. */
void afxdp_dev_targets_drop(struct afxdp_dev *, int ifindex) AFXDP_NOEXCEPT;
/* Whether the device's flows redirect to 'ifindex' now. */
bool afxdp_dev_target_on(const struct afxdp_dev *, int ifindex)
    AFXDP_NOEXCEPT;
/* "p1 on, p2 off: why": each target, its state and why it is off; "" if
 * none.  Cut to 'size' bytes, NUL included: AFXDP_TARGETS_DESCRIBED holds
 * a few. */
#define AFXDP_TARGETS_DESCRIBED 1024
void afxdp_dev_targets_describe(const struct afxdp_dev *, char *buf,
                                size_t size) AFXDP_NOEXCEPT;
/* Whether a target's state changed (and with it what the two above say)
 * since the last call: the caller then shows the port's status again. */
bool afxdp_dev_status_changed(struct afxdp_dev *) AFXDP_NOEXCEPT;

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* afxdp-offload.h */
