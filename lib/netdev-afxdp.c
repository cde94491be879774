/*
 * ovs-afxdp: the AF_XDP netdev functions, over the C++ core in lib/afxdp/.
 *
 * This file is the shim OVS builds in place of its own netdev-afxdp.c.
 * Each netdev has a port in the core (afxdp-port.h), which decides
 * everything: its options, when to reopen, what a failure leaves, what it
 * shows.  Here OVS's calls are handed on: options and status as smaps,
 * the queues of an open port as the netdev's, dp_packet batches to and
 * from the core's frames, coverage counters and vlog.  Every socket, ring
 * and frame lives in the core; nothing here touches a ring.
 */
#include <config.h>

#include "netdev-linux-private.h"
#include "netdev-linux.h"
#include "netdev-afxdp.h"
#include "netdev-afxdp-compat.h"
#include "netdev-afxdp-pool.h"
#include "netdev-offload-afxdp.h"

#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>

#include "afxdp.h"
#include "afxdp-flows.h"
#include "afxdp-offload.h"
#include "afxdp-port.h"
#include "afxdp-report.h"
#include "connectivity.h"
#include "coverage.h"
#include "dp-packet.h"
#include "netnsid.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/thread.h"
#include "openvswitch/vlog.h"
#include "ovs-numa.h"
#include "packets.h"
#include "seq.h"
#include "smap.h"
#include "socket-util.h"
#include "unixctl.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(netdev_afxdp);

/* Rare events on the packet path, counted per thread by OVS. */
COVERAGE_DEFINE(afxdp_cq_empty);      /* Completion ring had nothing. */
COVERAGE_DEFINE(afxdp_fq_full);       /* No free frame to refill with. */
COVERAGE_DEFINE(afxdp_fill_empty);    /* Fill ring found empty. */
COVERAGE_DEFINE(afxdp_tx_full);       /* TX ring had no room at first. */
COVERAGE_DEFINE(afxdp_tx_drop);       /* A send dropped packets. */
COVERAGE_DEFINE(afxdp_rx_wakeup);     /* poll() to wake the kernel's RX. */
COVERAGE_DEFINE(afxdp_tx_large_batch); /* send() got more than a burst. */

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);

/* Per-queue handle in netdev_linux's 'xsks' array (the type is opaque to
 * the rest of OVS). */
struct xsk_socket_info {
    struct afxdp_queue *queue;    /* The core's queue. */
    struct afxdp_pool *pool;      /* Its frames. */
    bool in_place;                /* It sends frames of 'pool' in place. */
};

struct netdev_afxdp_tx_lock {
    /* One cache line each, so PMDs on different TX queues never share. */
    PADDED_MEMBERS(CACHE_LINE_SIZE,
        struct ovs_spin lock;
    );
};

static void
core_log(enum afxdp_log_level level, const char *msg)
{
    static const enum vlog_level levels[] = {
        [AFXDP_LOG_DBG] = VLL_DBG,
        [AFXDP_LOG_INFO] = VLL_INFO,
        [AFXDP_LOG_WARN] = VLL_WARN,
        [AFXDP_LOG_ERR] = VLL_ERR,
    };
    VLOG(levels[level], "%s", msg);
}

/* netdev-linux takes a link notification for a device only once it knows
 * which namespace the device is in.  It asks the kernel datapath's vport
 * API, and assumes OVS's own namespace only when that API is missing.
 * Where the openvswitch module is loaded (on any Debian kernel OVS's first
 * probe loads it), a device that is no kernel vport gets ENODEV: its
 * namespace stays unknown and every notification about it is ignored, so
 * OVS sees neither its deletion nor a new one of its name nor its link
 * going down (and asks the kernel again at each notification).  Our
 * ports' sockets are bound in OVS's namespace: say so.  A deletion makes
 * it unknown again; then what notifications went unheard meanwhile is
 * read here from the kernel, as netdev-linux would have noted it. */
static void
afxdp_namespace_is_ours(const struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);

    ovs_mutex_lock(&dev->mutex);
    if (netnsid_is_unset(dev->netnsid)) {
        unsigned int flags = 0;
        struct ifreq ifr;

        netnsid_set_local(&dev->netnsid);
        if (!af_inet_ifreq_ioctl(netdev_get_name(netdev), &ifr, SIOCGIFFLAGS,
                                 "SIOCGIFFLAGS")) {
            flags = (uint16_t) ifr.ifr_flags;
        }
        if ((dev->ifi_flags ^ flags) & IFF_RUNNING) {
            dev->carrier_resets++;
        }
        dev->ifi_flags = flags;
        dev->cache_valid = 0;
        netdev_get_addrs_list_flush();
        netdev_change_seq_changed(netdev);
    }
    ovs_mutex_unlock(&dev->mutex);
}

/* ------------------------------------------------------------------ */
/* Options.                                                           */
/* ------------------------------------------------------------------ */

/* The options' lookup for the core's policy. */
static const char *
afxdp_smap_lookup(const void *args, const char *key)
{
    return smap_get(args, key);
}

int
netdev_afxdp_set_config(struct netdev *netdev, const struct smap *args,
                        char **errp)
{
    char err[512];
    int error;

    /* Before our lock: netdev-linux takes dev->mutex for it. */
    afxdp_namespace_is_ours(netdev);
    error = afxdp_port_set_options(afxdp_port_find(netdev), afxdp_smap_lookup,
                                   args, netdev_get_ifindex(netdev), err,
                                   sizeof err);
    if (error) {
        *errp = xstrdup(err);
    }
    return error;
}

/* afxdp_pair_func into an smap. */
static void
afxdp_smap_add(void *smap, const char *key, const char *value)
{
    smap_add(smap, key, value);
}

int
netdev_afxdp_get_config(const struct netdev *netdev, struct smap *args)
{
    /* The keys OVS's C port reported up to 3.6, on every version: the
     * option is still ours where upstream removed it. */
    smap_add_format(args, "n_rxq", "%d", netdev_n_rxq(netdev));
    afxdp_port_get_config(afxdp_port_find(netdev), afxdp_smap_add, args);
    return 0;
}

/* Why OVS has flow offload off, for a port that opened so. */
static const char *
afxdp_offload_off(void)
{
    const char *why = NULL;

    netdev_offload_afxdp_enabled(&why);
    return why;
}

int
netdev_afxdp_get_status(const struct netdev *netdev, struct smap *smap)
{
    /* The driver and the rest that every Linux device reports.  OVS 3.3+
     * points the class here; for older ones configure applies
     * ovs-patches/netdev-linux-afxdp-get-status.patch, which does what
     * upstream did.  Its error (the interface is gone) is not ours: the
     * status must still say why the port is down. */
    netdev_linux_get_status(netdev, smap);
    afxdp_port_status(afxdp_port_find(netdev), afxdp_offload_off(),
                      afxdp_smap_add, smap);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Lifecycle.                                                         */
/* ------------------------------------------------------------------ */

/* Lets go of the handles on the queues of the core's device. */
static void
afxdp_xsks_free(struct netdev_linux *dev)
    OVS_REQUIRES(dev->mutex)
{
    int n_txq = netdev_n_txq(&dev->up);

    if (dev->xsks) {
        for (int i = 0; i < netdev_n_rxq(&dev->up); i++) {
            free(dev->xsks[i]);
        }
        free(dev->xsks);
        dev->xsks = NULL;
    }
    if (dev->tx_locks) {
        for (int i = 0; i < n_txq; i++) {
            ovs_spin_destroy(&dev->tx_locks[i].lock);
        }
        free_cacheline(dev->tx_locks);
        dev->tx_locks = NULL;
    }
}

/* Takes handles on the queues of 'core', the port's device just open. */
static void
afxdp_xsks_take(struct netdev_linux *dev, struct afxdp_dev *core)
    OVS_REQUIRES(dev->mutex)
{
    struct afxdp_dev_info info;

    afxdp_dev_get_info(core, &info);
    dev->up.n_rxq = info.n_queues;
    dev->up.n_txq = info.n_queues;
    dev->xsks = xcalloc(info.n_queues, sizeof *dev->xsks);
    for (unsigned i = 0; i < info.n_queues; i++) {
        struct xsk_socket_info *xsk = xmalloc(sizeof *xsk);

        xsk->queue = afxdp_dev_queue(core, i);
        xsk->pool = afxdp_queue_pool(xsk->queue);
        xsk->in_place = afxdp_queue_sends_in_place(xsk->queue);
        dev->xsks[i] = xsk;
    }
    dev->tx_locks = xzalloc_cacheline(info.n_queues * sizeof *dev->tx_locks);
    for (unsigned i = 0; i < info.n_queues; i++) {
        ovs_spin_init(&dev->tx_locks[i].lock);
    }
}

int
netdev_afxdp_reconfigure(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct afxdp_port *port = afxdp_port_find(netdev);
    bool offload = netdev_offload_afxdp_enabled(NULL);
    /* Before our lock: netdev-linux takes dev->mutex for both (an
     * error-checking mutex: taking it twice aborts). */
    int ifindex = netdev_get_ifindex(netdev);
    int mtu = 0;
    int numa_node = -1;

    netdev_get_mtu(netdev, &mtu);
    if (ovs_numa_get_n_numas() > 1) {
        int numa_id = netdev_get_numa_id(netdev);

        numa_node = numa_id == NETDEV_NUMA_UNSPEC ? -1 : numa_id;
    }

    ovs_mutex_lock(&dev->mutex);
    if (!dev->xsks || afxdp_port_needs_open(port, ifindex, mtu, offload)) {
        struct afxdp_dev_config base = {
            .numa_node = numa_node,
            .frame_meta_size = afxdp_frame_meta_size(),
            /* afxdp-nonpmd ports are polled by the main thread, which
             * sleeps between polls: what it receives must be kicked at
             * once. */
            .busy_polled = netdev_is_pmd(netdev),
            .frame_meta_init = afxdp_pool_init_packets,
            .offload = offload,
        };

        afxdp_xsks_free(dev);
        if (afxdp_port_open(port, &base, ifindex)) {
            /* Down, without sockets, until its options change (an error
             * would have OVS remove the port and add it back, forever). */
            netdev->n_rxq = afxdp_port_n_queues(port);
            netdev->n_txq = netdev->n_rxq;
        } else {
            afxdp_xsks_take(dev, afxdp_port_dev(port));
        }
    }
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

/* afxdp_port_hooks for a port's netdev. */
static void
afxdp_port_status_changed(void *netdev)
{
    netdev_afxdp_status_changed(netdev);
}

static void
afxdp_port_reconfigure(void *netdev)
{
    netdev_request_reconfigure(netdev);
}

int
netdev_afxdp_construct(struct netdev *netdev)
{
    static const struct afxdp_port_hooks hooks = {
        .status_changed = afxdp_port_status_changed,
        .reconfigure = afxdp_port_reconfigure,
    };
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    int error;

    /* OVS 3.3 dropped the class's .init: the first port does it. */
    netdev_afxdp_init();

    error = netdev_linux_construct(netdev);
    if (error) {
        return error;
    }

    afxdp_namespace_is_ours(netdev);

    /* No queue may be used before the first reconfiguration. */
    netdev->n_rxq = 0;
    netdev->n_txq = 0;
    dev->xsks = NULL;
    dev->tx_locks = NULL;

    /* The core's port (afxdp-port.h) of the netdev, found by it
     * (afxdp_port_find()) as long as it lives. */
    if (!afxdp_port_create(netdev_get_name(netdev), &hooks, netdev)) {
        out_of_memory();
    }

    netdev_request_reconfigure(netdev);
    return 0;
}

void
netdev_afxdp_destruct(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    int ifindex = netdev_get_ifindex(netdev);

    ovs_mutex_lock(&dev->mutex);
    afxdp_xsks_free(dev);
    afxdp_port_destroy(afxdp_port_find(netdev), ifindex);
    ovs_mutex_unlock(&dev->mutex);
    ovs_mutex_destroy(&dev->mutex);
}

void
signal_remove_xdp(struct netdev *netdev)
{
    /* Called from OVS's fatal-signal hook, in the main thread, right before
     * the process re-raises the signal and dies.  ovs-vswitchd appends to
     * its log file asynchronously, so a warning queued now could be lost
     * with the process (CI saw it happen): flush what is queued and write
     * from here on synchronously. */
    vlog_disable_async();
    VLOG_WARN("Force removing xdp program.");
    afxdp_remove_stale_program(netdev_get_name(netdev));
}

int
netdev_afxdp_rxq_construct(struct netdev_rxq *rxq_)
{
    struct netdev_rxq_linux *rx = netdev_rxq_linux_cast(rxq_);
    struct netdev_linux *dev = netdev_linux_cast(rx->up.netdev);

    /* Sockets are made at reconfigure time, before OVS opens the rxqs, so
     * the fd is known here for afxdp-nonpmd's poll loop. */
    ovs_mutex_lock(&dev->mutex);
    rx->fd = dev->xsks && dev->xsks[rxq_->queue_id]
             ? afxdp_queue_fd(dev->xsks[rxq_->queue_id]->queue) : -1;
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

void
netdev_afxdp_rxq_destruct(struct netdev_rxq *rxq OVS_UNUSED)
{
}

int
netdev_afxdp_verify_mtu_size(const struct netdev *netdev, int mtu)
{
    /* Generic mode checks nothing of this, so we do: the core knows the
     * limit (one frame per packet, or a jumbo frame in several where the
     * kernel has multi-buffer AF_XDP). */
    char why[256];
    unsigned max_mtu = afxdp_max_mtu(why, sizeof why);

    if (mtu > AFXDP_MAX_MTU_ONE_FRAME) {
        /* The port's sockets may have been opened without multi-buffer
         * (a zero-copy driver without it): reconfiguration reopens them
         * if so, with the new MTU. */
        netdev_request_reconfigure(CONST_CAST(struct netdev *, netdev));
    }
    if (mtu > 0 && (unsigned) mtu > max_mtu) {
        /* Say why: OVS itself only reports EINVAL. */
        VLOG_WARN_RL(&rl, "%s: MTU %d is above the AF_XDP limit of %u%s%s.",
                     netdev_get_name(netdev), mtu, max_mtu,
                     why[0] ? ": " : "", why);
        return EINVAL;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Packet path.                                                       */
/* ------------------------------------------------------------------ */

/* Which coverage counter each core event moves. */
static const struct {
    unsigned event;
    void (*add)(unsigned int);
} event_counters[] = {
    {AFXDP_EV_RX_WAKEUP, afxdp_rx_wakeup_add},
    {AFXDP_EV_FILL_EMPTY, afxdp_fill_empty_add},
    {AFXDP_EV_FILL_SHORT, afxdp_fq_full_add},
    {AFXDP_EV_TX_RING_FULL, afxdp_tx_full_add},
    {AFXDP_EV_TX_DROP, afxdp_tx_drop_add},
    {AFXDP_EV_CQ_EMPTY, afxdp_cq_empty_add},
};

static void
count_events(const struct netdev *netdev, unsigned events, int error)
{
    for (size_t i = 0; i < ARRAY_SIZE(event_counters); i++) {
        if (events & event_counters[i].event) {
            event_counters[i].add(1);
        }
    }
    if (events & AFXDP_EV_RX_WAKEUP_ERR) {
        VLOG_WARN_RL(&rl, "%s: error polling rx fd: %s.",
                     netdev_get_name(netdev), ovs_strerror(error));
    }
    if (events & AFXDP_EV_TX_KICK_ERR) {
        VLOG_WARN_RL(&rl, "%s: error sending AF_XDP packet: %s.",
                     netdev_get_name(netdev), ovs_strerror(error));
    }
}

int
netdev_afxdp_rxq_recv(struct netdev_rxq *rxq_, struct dp_packet_batch *batch,
                      int *qfill)
{
    struct netdev *netdev = rxq_->netdev;
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct afxdp_rx_frame frames[NETDEV_MAX_BURST];
    struct xsk_socket_info *xsk;
    unsigned events = 0;
    int error = 0;
    size_t n;

    xsk = dev->xsks ? dev->xsks[rxq_->queue_id] : NULL;
    if (!xsk) {
        return EAGAIN;
    }

    n = afxdp_queue_recv(xsk->queue, frames, NETDEV_MAX_BURST, qfill,
                         &events, &error);
    if (OVS_UNLIKELY(events)) {
        count_events(netdev, events, error);
    }
    if (!n) {
        return EAGAIN;
    }
    for (size_t i = 0; i < n; i += frames[i].n_frames) {
        dp_packet_batch_add(batch,
                            afxdp_packet_from_frame(xsk->pool, &frames[i]));
    }
    return 0;
}

/* Sends 'n' packets of 'batch' from index 'start' (at most a burst). */
static size_t
afxdp_send_burst(struct netdev *netdev, struct xsk_socket_info *xsk,
                 struct dp_packet_batch *batch, size_t start, size_t n)
{
    struct afxdp_tx_packet pkts[NETDEV_MAX_BURST];
    unsigned events = 0;
    int error = 0;
    size_t dropped;

    for (size_t i = 0; i < n; i++) {
        const struct dp_packet *packet = batch->packets[start + i];

        pkts[i].data = dp_packet_data(packet);
        pkts[i].len = dp_packet_size(packet);
        pkts[i].pool = afxdp_packet_pool(packet);
    }
    dropped = afxdp_queue_send(xsk->queue, pkts, n, &events, &error);
    if (OVS_UNLIKELY(events)) {
        count_events(netdev, events, error);
    }
    return dropped;
}

static int
afxdp_send(struct netdev *netdev, struct xsk_socket_info *xsk,
           struct dp_packet_batch *batch)
{
    size_t size = dp_packet_batch_size(batch);
    size_t dropped = 0;

    /* OVS's main branch grows batches past NETDEV_MAX_BURST (an output
     * batch that gathered several input bursts): send them a burst at a
     * time, in order. */
    if (OVS_UNLIKELY(size > NETDEV_MAX_BURST)) {
        COVERAGE_INC(afxdp_tx_large_batch);
    }
    for (size_t start = 0; start < size; start += NETDEV_MAX_BURST) {
        dropped += afxdp_send_burst(netdev, xsk, batch, start,
                                    MIN(size - start, NETDEV_MAX_BURST));
    }
    return dropped ? ENOBUFS : 0;
}

int
netdev_afxdp_batch_send(struct netdev *netdev, int qid,
                        struct dp_packet_batch *batch, bool concurrent_txq)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct xsk_socket_info *xsk;
    int error = 0;

    if (OVS_UNLIKELY(!dev->xsks || !netdev_n_txq(netdev))) {
        afxdp_free_batch(batch, NULL);
        return 0;
    }
    qid = qid % netdev_n_txq(netdev);
    xsk = dev->xsks[qid];

    if (concurrent_txq) {
        ovs_spin_lock(&dev->tx_locks[qid].lock);
        error = afxdp_send(netdev, xsk, batch);
        ovs_spin_unlock(&dev->tx_locks[qid].lock);
    } else {
        error = afxdp_send(netdev, xsk, batch);
    }
    /* Frames of the queue's own UMEM went out in place: the send took
     * them back.  The rest were copied and are ours to free. */
    afxdp_free_batch(batch, xsk->in_place ? xsk->pool : NULL);
    return error;
}

/* ------------------------------------------------------------------ */
/* Statistics.                                                        */
/* ------------------------------------------------------------------ */

int
netdev_afxdp_get_stats(const struct netdev *netdev, struct netdev_stats *stats)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct netdev_stats dev_stats;
    int error;

    /* Nothing tells us when another process detaches or replaces our XDP
     * program; the bridge asks for statistics every few seconds, so look
     * here, say it once, and make the bridge refresh the status. */
    afxdp_namespace_is_ours(netdev);
    int ifindex = netdev_get_ifindex(netdev);
    afxdp_port_prog_lost(afxdp_port_find(netdev), ifindex);

    ovs_mutex_lock(&dev->mutex);
    error = get_stats_via_netlink(netdev, &dev_stats);
    if (error) {
        VLOG_WARN_RL(&rl, "%s: Error getting AF_XDP statistics.",
                     netdev_get_name(netdev));
    } else {
        /* The kernel counts what reached the device and what left it;
         * the core what it could not send. */
        *stats = dev_stats;
        stats->tx_dropped += afxdp_port_tx_dropped(afxdp_port_find(netdev));
    }
    ovs_mutex_unlock(&dev->mutex);
    return error;
}

/* OVS's custom statistics, filled by afxdp_custom_stat(). */
struct afxdp_custom_stats {
    struct netdev_custom_stats *stats;
    size_t room;
};

/* afxdp_counter_func into OVS's custom statistics. */
static void
afxdp_custom_stat(void *cs_, const char *name, uint64_t value)
{
    struct afxdp_custom_stats *cs = cs_;
    struct netdev_custom_stats *stats = cs->stats;

    if (stats->size < cs->room) {
        ovs_strlcpy(stats->counters[stats->size].name, name,
                    NETDEV_CUSTOM_STATS_NAME_SIZE);
        stats->counters[stats->size++].value = value;
    }
}

int
netdev_afxdp_get_custom_stats(const struct netdev *netdev,
                              struct netdev_custom_stats *custom_stats)
{
    struct afxdp_custom_stats cs = {
        .stats = custom_stats,
        .room = MAX(netdev_n_rxq(netdev), 1) * AFXDP_DEV_COUNTERS_PER_QUEUE,
    };

    custom_stats->size = 0;
    custom_stats->counters = xcalloc(cs.room, sizeof *custom_stats->counters);
    afxdp_port_counters(afxdp_port_find(netdev), afxdp_custom_stat, &cs);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Flow offload: the XDP fast path, for netdev-offload-afxdp.c.       */
/* ------------------------------------------------------------------ */

bool
netdev_afxdp_is_afxdp(const struct netdev *netdev)
{
    const char *type = netdev_get_type(netdev);

    return !strcmp(type, "afxdp") || !strcmp(type, "afxdp-nonpmd");
}

void
netdev_afxdp_datapath_released(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    bool was_open;

    ovs_mutex_lock(&dev->mutex);
    afxdp_xsks_free(dev);
    was_open = afxdp_port_close(afxdp_port_find(netdev));
    ovs_mutex_unlock(&dev->mutex);
    if (was_open) {
        /* Should a datapath take it again, it opens again. */
        netdev_request_reconfigure(netdev);
    }
}

void
netdev_afxdp_offload_changed(struct netdev *netdev)
{
    if (afxdp_port_offload_differs(afxdp_port_find(netdev),
                                   netdev_offload_afxdp_enabled(NULL))) {
        netdev_request_reconfigure(netdev);
    }
}

struct afxdp_flows *
netdev_afxdp_flows(const struct netdev *netdev)
{
    struct afxdp_port *port = afxdp_port_find(netdev);

    return port ? afxdp_port_flows(port) : NULL;
}

/* OVS's netdev_change_seq_changed() wakes the bridge (the connectivity
 * seq) before it moves the netdev's change_seq.  A bridge woken so from
 * another thread may read the old change_seq, take the status as it was,
 * and not read it again until some other change: OVS 3.7 puts flows from
 * the PMD threads, and a redirect target that came up stayed "off" in
 * status for good (one autotest run in three).  Waking the bridge again
 * after the move closes that window. */
void
netdev_afxdp_status_changed(const struct netdev *netdev)
{
    netdev_change_seq_changed(netdev);
    seq_change(connectivity_seq_get());
}

/* ------------------------------------------------------------------ */
/* ovs-appctl afxdp/show [PORT].                                      */
/* ------------------------------------------------------------------ */

/* afxdp_pair_func into a ds: the text. */
static void
afxdp_ds_put(void *s, const char *key OVS_UNUSED, const char *text)
{
    ds_put_cstr(s, text);
}

static void
afxdp_unixctl_show(struct unixctl_conn *conn, int argc, const char *argv[],
                   void *aux OVS_UNUSED)
{
    struct ds s = DS_EMPTY_INITIALIZER;

    if (afxdp_ports_show(argc > 1 ? argv[1] : NULL, afxdp_offload_off(),
                         afxdp_ds_put, &s)) {
        unixctl_command_reply_error(conn, "no such afxdp port");
    } else {
        unixctl_command_reply(conn, ds_cstr(&s));
    }
    ds_destroy(&s);
}

/* ovs-appctl afxdp/frames PORT: the port's UMEM frame counts, for scripts
 * and tests, in one line of key=value pairs whose keys never change:
 * umem_id, total, free, in_kernel, kept, in_ovs. */
static void
afxdp_unixctl_frames(struct unixctl_conn *conn, int argc OVS_UNUSED,
                     const char *argv[], void *aux OVS_UNUSED)
{
    struct afxdp_umem_frames u;

    if (afxdp_ports_frames(argv[1], &u)) {
        unixctl_command_reply_error(conn, "no such running afxdp port");
    } else {
        char *reply = xasprintf("umem_id=%"PRIu32" total=%"PRIu32
                                " free=%"PRIu32" in_kernel=%"PRIu64
                                " kept=%"PRIu64" in_ovs=%"PRIu32"\n",
                                u.umem_id, u.total, u.free, u.in_kernel,
                                u.kept, u.in_ovs);

        unixctl_command_reply(conn, reply);
        free(reply);
    }
}

int
netdev_afxdp_init(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;

    /* Called once per class (afxdp and afxdp-nonpmd). */
    if (ovsthread_once_start(&once)) {
        afxdp_set_log_handler(core_log, AFXDP_LOG_DBG);
        netdev_offload_afxdp_register();
        unixctl_command_register("afxdp/show", "[port]", 0, 1,
                                 afxdp_unixctl_show, NULL);
        unixctl_command_register("afxdp/frames", "port", 1, 1,
                                 afxdp_unixctl_frames, NULL);
        ovsthread_once_done(&once);
    }
    return 0;
}
