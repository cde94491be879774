/* The XDP fast path's program (Documentation/xdp-fast-path.rst): it
 * parses a packet, looks its megaflow up, acts and counts.  Its parts
 * are in bpf/, one job each:
 *
 *   packet.h   bounds, loads, where each header's fields lie
 *   key.h      the flow key in whole words
 *   parse.h    parse_key(): the key as OVS's miniflow_extract() fills it
 *   kernel.h   hints and kfuncs the core lets it use
 *   maps.h     the maps (fastpath-maps.h says what each holds)
 *   count.h    counters and a flow's statistics
 *   lookup.h   the exact-match cache, then the megaflows mask by mask
 *   csum.h     checksums as OVS updates them, SCTP's CRC32c
 *   rewrite.h  a flow's rewrites on a redirected packet
 *   socket.h   up to OVS through the AF_XDP socket, with a mark
 *   handoff.h  redirects XDP cannot send whole, left to TC
 *
 * This file holds the programs the core loads: ovs_afxdp_fast (and
 * ovs_afxdp_fasth, the same with packet hints), the watcher of failed
 * redirects and the clock of the hits' times.  A packet it cannot parse,
 * or that no flow matches, goes to the socket as the plain program sends
 * it.  The unit tests' programs are in fastpath-test.bpf.c, an object of
 * their own that ovs-vswitchd does not carry.
 *
 * Built with clang's BPF target, freestanding: afxdp.h's types come from
 * clang's own <stdint.h>. */

#include "bpf/count.h"
#include "bpf/handoff.h"
#include "bpf/kernel.h"
#include "bpf/lookup.h"
#include "bpf/maps.h"
#include "bpf/parse.h"
#include "bpf/partial.h"
#include "bpf/rewrite.h"
#include "bpf/socket.h"

/* The tag the driver stripped, if it says it did (the RX VLAN hint). */
static __always_inline void
read_stripped_tag(struct xdp_md *ctx, struct stripped_tag *tag)
{
    __be16 proto = 0;
    __u16 tci = 0;
    if (!bpf_xdp_metadata_rx_vlan_tag(ctx, &proto, &tci)) {
        tag->present = 1;
        tag->tpid = proto;
        tag->tci = bpf_htons(tci);
    }
}

/* Whether a redirect hit may be left to the port's TC program
 * (bpf/handoff.h): the program is attached, and the flow changes nothing
 * that the skb's GSO or checksum offsets depend on (only MAC addresses),
 * on a packet with no tag.  The target's peer then receives it whole. */
static __always_inline int
tc_may_take(const struct afxdp_fp_config *cfg,
            const struct afxdp_fp_action *a, const struct stripped_tag *tag,
            const struct afxdp_flow_key *key)
{
    return cfg->tc_handoff && !tag->present && !key->vlan_tci
           && a->vlan_op == AFXDP_FP_VLAN_NONE && !a->set_ip && !a->set_l4;
}

/* A hit of a flow that redirects: the redirect, with the flow's rewrites,
 * or to OVS untouched where XDP may not.  The packet is 'len' bytes from
 * 'data' ('end': its first buffer's end), 'ovs_len' as OVS counts it. */
static __always_inline int
redirect(struct xdp_md *ctx, const int hinted, const void *data,
         const void *end, const struct afxdp_fp_config *cfg,
         const struct afxdp_fp_action *a, struct stripped_tag *tag,
         struct afxdp_flow_key *key, int parsed, __u32 len, __u32 ovs_len)
{
    /* The IP header follows a tag in the frame, not one the driver
     * stripped. */
    const __u32 l3 = key->vlan_tci && !tag->present ? TAGGED_HLEN
                                                    : ETH_HLEN;
    const int ipv6 = key->dl_type == bpf_htons(ETH_P_IPV6);
    /* Not every driver transmits a packet of several buffers, and none
     * finishes a checksum XDP hands it partial. */
    const int several = len != (__u32) (end - data);
    const int partial = (fp_hints & AFXDP_FP_LOCAL_SENDERS)
                        && parsed == PARSED_IP
                        && l4_csum_partial((__u8 *) data + l3, end, ipv6);
    if ((several || partial) && tc_may_take(cfg, a, tag, key)
        && !target_failing(cfg, a->ifindex)
        && bpf_map_lookup_elem(&fp_ports, &a->ifindex)) {
        if (a->set_eth && fp_rewrite(ctx, a, tag, l3, ipv6)) {
            count(AFXDP_FP_rewrite_failed);
            return to_socket(ctx, hinted, tag, key, 0, 0);
        }
        leave_to_tc(ctx->ingress_ifindex, a->ifindex, len);
        count_hit(a, ovs_len, key->tcp_flags);
        count(AFXDP_FP_to_tc);
        return XDP_PASS;
    }
    /* A packet the target may not take goes to OVS untouched: one not
     * in fp_ports, or of several buffers.  The redirect itself happens
     * after we return. */
    if (several) {
        count(AFXDP_FP_multi_buffer);
        return to_socket(ctx, hinted, tag, key, 0, 0);
    }
    if (target_failing(cfg, a->ifindex)
        || bpf_redirect_map(&fp_ports, a->ifindex, XDP_PASS)
           != XDP_REDIRECT) {
        count(AFXDP_FP_redirect_failed);
        return to_socket(ctx, hinted, tag, key, 0, 0);
    }
    /* OVS writes the IP fields where the header would be in any
     * packet, which the match said has one: one it takes for none
     * (too short, a wrong length) is left to it. */
    if ((a->set_ip || a->set_l4) && parsed != PARSED_IP) {
        count(AFXDP_FP_ip_unparsed);
        return to_socket(ctx, hinted, tag, key, 0, 0);
    }
    if (partial) {
        count(AFXDP_FP_csum_partial);
        return to_socket(ctx, hinted, tag, key, 0, 0);
    }
    if ((tag->present || a->vlan_op || a->set_eth || a->set_ip
         || a->set_l4)
        && fp_rewrite(ctx, a, tag, l3, ipv6)) {
        count(AFXDP_FP_rewrite_failed);
        return to_socket(ctx, hinted, tag, key, 0, 0);
    }
    count_hit(a, ovs_len, key->tcp_flags);
    count(AFXDP_FP_redirected);
    return XDP_REDIRECT;
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
        read_stripped_tag(ctx, &tag);
    }
    __u32 zero = 0;
    const struct afxdp_fp_config *cfg = bpf_map_lookup_elem(&fp_config,
                                                            &zero);
    if (cfg && cfg->tc_handoff) {
        /* No note but this packet's, whatever becomes of it: one left
         * by a packet that never reached TC must not meet the next. */
        leave_to_tc(0, 0, 0);
    }
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
    const __u32 ovs_len = len + (tag.present ? VLAN_HLEN : 0);
    if (a->verdict == AFXDP_FP_DROP) {
        count_hit(a, ovs_len, key.tcp_flags);
        count(AFXDP_FP_dropped);
        return XDP_DROP;
    }
    if (a->verdict == AFXDP_FP_REDIRECT) {
        return redirect(ctx, hinted, data, end, cfg, a, &tag, &key, parsed,
                        len, ovs_len);
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

/* The port's TC ingress program, in generic mode: the redirects the XDP
 * program left to it (bpf/handoff.h); every other packet goes on to the
 * kernel's stack as XDP passed it. */
SEC("tc")
int
ovs_afxdp_tc(struct __sk_buff *skb)
{
    return take_from_xdp(skb);
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

char LICENSE[] SEC("license") = "Dual BSD/GPL";
