/* Redirects XDP leaves to TC: a GSO packet, or one whose TCP or UDP
 * checksum a sender on this host left partial, that a flow sends to
 * another interface.
 *
 * In generic mode XDP sees the kernel's packet (an skb), copied into an
 * xdp_buff.  Its redirect sends the bytes as a frame no longer than the
 * target's MTU: a GSO packet of 64 KiB fails there, and a partial
 * checksum reaches the receiver unfinished.  The skb itself still knows
 * both (its GSO size, CHECKSUM_PARTIAL).  So the XDP program passes such
 * a packet to the kernel with a note of where its flow sends it, and the
 * port's TC ingress program, which the kernel runs next on the same CPU
 * for the same skb, redirects the skb whole, as a Linux bridge forwards
 * it: the target's peer receives it with GSO and checksum intact.
 *
 * The kernel (Linux 6.18) gives the TC program such a packet from its IP
 * header: generic XDP's copy of the skb (skb_pp_cow_data()) keeps the MAC
 * header's offset but not its length, so TC's ingress hook pushes nothing
 * back.  The TC program then puts the Ethernet header back in front,
 * from where the MAC header lies, before it redirects. */

#ifndef AFXDP_BPF_HANDOFF_H
#define AFXDP_BPF_HANDOFF_H 1

#include <linux/pkt_cls.h>

#include "count.h"
#include "maps.h"

/* XDP: the note for the TC program about this packet ('len' bytes from
 * its Ethernet header, in on 'in_ifindex'), or none (target 0). */
static __always_inline void
leave_to_tc(__u32 in_ifindex, __u32 target, __u32 len)
{
    __u32 zero = 0;
    struct afxdp_fp_handoff *h = bpf_map_lookup_elem(&fp_handoff, &zero);
    if (h) {
        h->armed = target != 0;
        h->in_ifindex = in_ifindex;
        h->target = target;
        h->len = len;
    }
}

/* TC: the redirect XDP left for this skb, or TC_ACT_OK (to the kernel's
 * stack) where it left none. */
static __always_inline int
take_from_xdp(struct __sk_buff *skb)
{
    __u32 zero = 0;
    struct afxdp_fp_handoff *h = bpf_map_lookup_elem(&fp_handoff, &zero);
    if (!h || !h->armed || h->in_ifindex != skb->ingress_ifindex) {
        return TC_ACT_OK;
    }
    h->armed = 0;
    if (skb->len + ETH_HLEN == h->len) {
        /* From its IP header (above): the Ethernet header put back. */
        __u8 eth[ETH_HLEN];
        if (bpf_skb_load_bytes_relative(skb, 0, eth, ETH_HLEN,
                                        BPF_HDR_START_MAC)
            || bpf_skb_change_head(skb, ETH_HLEN, 0)
            || bpf_skb_store_bytes(skb, 0, eth, ETH_HLEN, 0)) {
            count(AFXDP_FP_tc_failed);
            return TC_ACT_SHOT;
        }
    } else if (skb->len != h->len) {
        count(AFXDP_FP_tc_failed);
        return TC_ACT_SHOT;     /* Not the packet XDP passed. */
    }
    count(AFXDP_FP_tc_redirected);
    return bpf_redirect(h->target, 0);
}

#endif /* AFXDP_BPF_HANDOFF_H */
