/*
 * ovs-afxdp: the AF_XDP netdev functions OVS's netdev-linux.c wires into
 * netdev_afxdp_class and netdev_afxdp_nonpmd_class.  The declarations of
 * every OVS version's header of this name (3.1 to main): OVS 3.3+ calls
 * netdev_afxdp_get_status() itself, older ones through
 * ovs-patches/netdev-linux-afxdp-get-status.patch, and only older ones
 * call netdev_afxdp_init() (it also runs from construct).
 * The implementation is lib/netdev-afxdp.c, over the C++ core in lib/afxdp/.
 */
#ifndef NETDEV_AFXDP_H
#define NETDEV_AFXDP_H 1

#ifdef HAVE_AF_XDP

#include <stdint.h>
#include <stdbool.h>

/* XDP modes as OVS names them in struct netdev_linux. */
enum afxdp_mode {
    OVS_AF_XDP_MODE_UNSPEC,        /* Not configured yet. */
    OVS_AF_XDP_MODE_BEST_EFFORT,   /* Best of the three below. */
    OVS_AF_XDP_MODE_NATIVE_ZC,
    OVS_AF_XDP_MODE_NATIVE,
    OVS_AF_XDP_MODE_GENERIC,
    OVS_AF_XDP_MODE_MAX,
};

struct dp_packet;
struct dp_packet_batch;
struct netdev;
struct netdev_afxdp_tx_lock;
struct netdev_custom_stats;
struct netdev_rxq;
struct netdev_stats;
struct smap;
struct xsk_socket_info;

int netdev_afxdp_rxq_construct(struct netdev_rxq *rxq_);
void netdev_afxdp_rxq_destruct(struct netdev_rxq *rxq_);
int netdev_afxdp_init(void);
int netdev_afxdp_construct(struct netdev *netdev_);
void netdev_afxdp_destruct(struct netdev *netdev_);
int netdev_afxdp_verify_mtu_size(const struct netdev *netdev, int mtu);

int netdev_afxdp_rxq_recv(struct netdev_rxq *rxq_,
                          struct dp_packet_batch *batch,
                          int *qfill);
int netdev_afxdp_batch_send(struct netdev *netdev_, int qid,
                            struct dp_packet_batch *batch,
                            bool concurrent_txq);
int netdev_afxdp_set_config(struct netdev *netdev, const struct smap *args,
                            char **errp);
int netdev_afxdp_get_config(const struct netdev *netdev, struct smap *args);
int netdev_afxdp_get_status(const struct netdev *netdev, struct smap *smap);
int netdev_afxdp_get_stats(const struct netdev *netdev_,
                           struct netdev_stats *stats);
int netdev_afxdp_get_custom_stats(const struct netdev *netdev,
                                  struct netdev_custom_stats *custom_stats);

void free_afxdp_buf(struct dp_packet *p);
/* Frees every packet of 'batch' and empties it, AF_XDP frames a run per
 * UMEM at a time (one lock per run, not per packet).  dp-packet.h's
 * dp_packet_delete_batch() calls it for a batch that starts with an AF_XDP
 * packet: the drop action's path. */
void free_afxdp_batch(struct dp_packet_batch *batch);
int netdev_afxdp_reconfigure(struct netdev *netdev);
void signal_remove_xdp(struct netdev *netdev);

#else /* !HAVE_AF_XDP */

#include "openvswitch/compiler.h"

struct dp_packet;

static inline void
free_afxdp_buf(struct dp_packet *p OVS_UNUSED)
{
    /* Nothing. */
}

#endif /* HAVE_AF_XDP */
#endif /* netdev-afxdp.h */
