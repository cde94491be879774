/*
 * ovs-afxdp: dp_packets over UMEM frames (see netdev-afxdp-pool.h).
 */
#include <config.h>

#include "netdev-afxdp-pool.h"

#include "afxdp.h"
#include "coverage.h"
#include "dp-packet.h"
#include "netdev-afxdp.h"
#include "netdev-afxdp-compat.h"
#include "util.h"

/* Batches OVS deleted whole (dp_packet_delete_batch(): the drop action),
 * each giving its frames back with one lock per UMEM run. */
COVERAGE_DEFINE(afxdp_batch_delete);

/* OVS's type name for the pool a packet came from is 'struct umem_pool';
 * ours is 'struct afxdp_pool'.  These two casts are the only place the
 * names meet. */
static inline struct afxdp_pool *
pool_of(const struct dp_packet_afxdp *xpacket)
{
    return (struct afxdp_pool *) xpacket->mpool;
}

static inline struct umem_pool *
as_umem_pool(struct afxdp_pool *pool)
{
    return (struct umem_pool *) pool;
}

size_t
afxdp_frame_meta_size(void)
{
    return sizeof(struct dp_packet_afxdp);
}

void
afxdp_pool_init_packets(struct afxdp_pool *pool, unsigned n_frames)
{
    for (unsigned i = 0; i < n_frames; i++) {
        struct dp_packet_afxdp *xpacket = afxdp_pool_frame_meta(pool, i);

        xpacket->mpool = as_umem_pool(pool);
        xpacket->packet.source = DPBUF_AFXDP;
    }
}

struct dp_packet *
afxdp_packet_from_frame(struct afxdp_pool *pool,
                        const struct afxdp_rx_frame *frame)
{
    struct dp_packet_afxdp *xpacket = frame->meta;
    struct dp_packet *packet = &xpacket->packet;

    if (OVS_UNLIKELY(frame->n_frames > 1)) {
        /* A packet of several frames (multi-buffer): OVS's packets are one
         * buffer, so it gets one of its own, with our headroom. */
        packet = dp_packet_new_with_headroom(frame->len,
                                             AFXDP_FRAME_HEADROOM);
        afxdp_rx_gather(pool, frame, dp_packet_data(packet));
        dp_packet_set_size(packet, frame->len);
    } else {
        /* The packet may grow into the UMEM headroom in front of it
         * (tunnel push), and up to the end of its frame. */
        dp_packet_use_afxdp(packet, frame->data,
                            AFXDP_FRAME_SIZE - AFXDP_XDP_HEADROOM,
                            AFXDP_FRAME_HEADROOM);
        dp_packet_set_size(packet, frame->len);
    }
    if (frame->has_rx_hash) {
        /* The driver's hash, or the fast path's own: dpif-netdev
         * need not compute one. */
        dp_packet_set_rss_hash(packet, frame->rx_hash);
#if OVS_AFXDP_NETDEV_FLOW_API || OVS_AFXDP_DPIF_OFFLOAD
        if (frame->has_flow_mark) {
            /* Partial offload: dpif-netdev takes the flow by its mark,
             * with no parse and no lookup.  Only with a hash: see
             * netdev_afxdp_flows(). */
            dp_packet_set_flow_mark(packet, frame->flow_mark);
        }
#endif
    }
    return packet;
}

void
free_afxdp_buf(struct dp_packet *p)
{
    struct dp_packet_afxdp *xpacket = CONTAINER_OF(p, struct dp_packet_afxdp,
                                                   packet);
    afxdp_pool_put(pool_of(xpacket), dp_packet_base(p));
}

void
free_afxdp_batch(struct dp_packet_batch *batch)
{
    COVERAGE_INC(afxdp_batch_delete);
    afxdp_free_batch(batch, NULL);
}

const struct afxdp_pool *
afxdp_packet_pool(const struct dp_packet *packet)
{
    if (packet->source != DPBUF_AFXDP) {
        return NULL;
    }
    return pool_of(CONTAINER_OF(packet, struct dp_packet_afxdp, packet));
}

void
afxdp_free_batch(struct dp_packet_batch *batch,
                 const struct afxdp_pool *sent)
{
    const void *run[NETDEV_MAX_BURST];
    struct afxdp_pool *run_pool = NULL;
    size_t n_run = 0;
    struct dp_packet *packet;

    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        if (packet->source != DPBUF_AFXDP) {
            dp_packet_delete(packet);
            continue;
        }
        struct dp_packet_afxdp *xpacket
            = CONTAINER_OF(packet, struct dp_packet_afxdp, packet);
        if (pool_of(xpacket) == sent) {
            continue;
        }
        /* A new pool, or a run as long as a burst (OVS's main branch has
         * batches longer than that). */
        if ((pool_of(xpacket) != run_pool || n_run == ARRAY_SIZE(run))
            && n_run) {
            afxdp_pool_put_n(run_pool, run, n_run);
            n_run = 0;
        }
        run_pool = pool_of(xpacket);
        run[n_run++] = dp_packet_base(packet);
    }
    if (n_run) {
        afxdp_pool_put_n(run_pool, run, n_run);
    }
    afxdp_batch_clear(batch);
}
