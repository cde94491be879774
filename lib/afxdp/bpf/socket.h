/* Up to OVS: a packet handed to the queue's AF_XDP socket, with the
 * metadata OVS reads in front of it (hints.hh): its hash, a stripped tag
 * put back, and a flow's mark where the fast path found the flow but
 * left its actions to OVS. */

#ifndef AFXDP_BPF_SOCKET_H
#define AFXDP_BPF_SOCKET_H 1

#include "count.h"
#include "kernel.h"
#include "maps.h"
#include "rewrite.h"

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

#endif /* AFXDP_BPF_SOCKET_H */
