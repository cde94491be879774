/*
 * ovs-afxdp: the differences between the Open vSwitch versions the shim
 * builds into (3.1 to main), in one place.  configure decides each from
 * the OVS tree's own files (netdev-afxdp-ovs.h); what a patch to OVS
 * settles instead is chosen there too (ovs-patches/).
 *
 * Settled without a macro, on every version:
 *   - OVS 3.3 removed the class's .init: netdev_afxdp_construct() runs our
 *     netdev_afxdp_init() once, whether OVS calls it or not.
 *   - OVS 3.7 removed use-need-wakeup and its netdev_linux fields: ours
 *     live in the shim's own per-port struct.
 *   - OVS main's send() may get more than NETDEV_MAX_BURST packets: the
 *     shim sends and frees them a burst at a time.
 */
#ifndef NETDEV_AFXDP_COMPAT_H
#define NETDEV_AFXDP_COMPAT_H 1

#include "dp-packet.h"
#include "netdev-afxdp-ovs.h"

/* Empties 'batch', whose packets were freed or sent, keeping its storage:
 * on OVS main dp_packet_batch_init() would drop (and leak) a grown array. */
static inline void
afxdp_batch_clear(struct dp_packet_batch *batch)
{
#if OVS_AFXDP_BATCH_RESET
    dp_packet_batch_reset(batch);
#else
    dp_packet_batch_init(batch);
#endif
}

/* Writes a packet from 'flow' into 'packet', with good checksums: OVS 3.5
 * added flow_compose()'s 'bad_csum'.  Used by tests/test-afxdp-xlate.c;
 * a macro, so that files without flow.h need not include it. */
#if OVS_AFXDP_FLOW_COMPOSE_CSUM
#define afxdp_flow_compose(PACKET, FLOW) \
    flow_compose(PACKET, FLOW, NULL, 0, false)
#else
#define afxdp_flow_compose(PACKET, FLOW) flow_compose(PACKET, FLOW, NULL, 0)
#endif

/* What dpif-netdev was told last, by the offload's flow_get, for the copy
 * of a megaflow whose mega_ufid 'ufid' is (netdev flow API, OVS 3.1 to
 * 3.6, which asks with a pointer to the copy's own): the copy keeps it in
 * its last_stats (configure turns that API off for an OVS without them).
 * The offload's counts are told to each copy once through it
 * (afxdp_flow_counts).  A macro, so that files without the flow API need
 * not include dpif-netdev's private header. */
#if OVS_AFXDP_NETDEV_FLOW_API
#define afxdp_ovs_flow_told(UFID, TOLD)                                     \
    do {                                                                    \
        struct dp_netdev_flow *flow_ =                                      \
            CONTAINER_OF(CONST_CAST(ovs_u128 *, UFID),                      \
                         struct dp_netdev_flow, mega_ufid);                 \
        unsigned long long n_;                                              \
        long long used_;                                                    \
        uint16_t flags_;                                                    \
                                                                            \
        atomic_read_relaxed(&flow_->last_stats.packet_count, &n_);          \
        (TOLD)->n_packets = n_;                                             \
        atomic_read_relaxed(&flow_->last_stats.byte_count, &n_);            \
        (TOLD)->n_bytes = n_;                                               \
        atomic_read_relaxed(&flow_->last_stats.used, &used_);               \
        (TOLD)->used_msec = used_;                                          \
        atomic_read_relaxed(&flow_->last_stats.tcp_flags, &flags_);         \
        (TOLD)->tcp_flags = flags_;                                         \
    } while (0)
#endif

#endif /* netdev-afxdp-compat.h */
