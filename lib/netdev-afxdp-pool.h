/*
 * ovs-afxdp: how OVS's dp_packets sit on top of UMEM frames.
 *
 * Every frame of a queue's UMEM has one struct dp_packet_afxdp in the
 * frame metadata area the core keeps for us.  Its 'mpool' member (declared
 * by dp-packet.h as 'struct umem_pool *') points to the core's
 * 'struct afxdp_pool' that owns the frame, so that freeing the packet from
 * any thread gives the frame back to the right pool.
 */
#ifndef NETDEV_AFXDP_POOL_H
#define NETDEV_AFXDP_POOL_H 1

#ifdef HAVE_AF_XDP

#include <stddef.h>

struct afxdp_pool;
struct afxdp_rx_frame;
struct dp_packet;
struct dp_packet_batch;
struct umem_pool;

/* The metadata bytes the shim needs per frame. */
size_t afxdp_frame_meta_size(void);

/* Prepares the dp_packet of every frame of 'pool' ('n_frames' frames). */
void afxdp_pool_init_packets(struct afxdp_pool *pool, unsigned n_frames);

/* The dp_packet for a packet just received on a queue of 'pool': the
 * frame's metadata, or for a packet of several frames (see struct
 * afxdp_rx_frame) a copy, its frames given back. */
struct dp_packet *afxdp_packet_from_frame(struct afxdp_pool *pool,
                                          const struct afxdp_rx_frame *);

/* The pool whose frame holds 'packet', or NULL if it is not in a UMEM. */
const struct afxdp_pool *afxdp_packet_pool(const struct dp_packet *);

/* Frees every packet of 'batch', giving AF_XDP frames back to their pools a
 * run at a time, and empties the batch.  Packets in frames of 'sent' (may
 * be NULL) are skipped: a send took them in place. */
void afxdp_free_batch(struct dp_packet_batch *batch,
                      const struct afxdp_pool *sent);

#endif /* HAVE_AF_XDP */
#endif /* netdev-afxdp-pool.h */
