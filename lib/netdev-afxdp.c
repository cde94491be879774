/*
 * ovs-afxdp: the AF_XDP netdev functions, over the C++ core in lib/afxdp/.
 *
 * This file is the shim OVS builds in place of its own netdev-afxdp.c.  It
 * looks options up (the core's afxdp_port_config_parse() decides them),
 * calls the core, translates errors, builds dp_packet batches and logs
 * through vlog.  Every socket, ring and frame lives in the
 * core; nothing here touches a ring.
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
#include <linux/if_xdp.h>
#include <net/if.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>

#include "afxdp.h"
#include "afxdp-flows.h"
#include "afxdp-offload.h"
#include "afxdp-report.h"
#include "connectivity.h"
#include "coverage.h"
#include "dp-packet.h"
#include "fatal-signal.h"
#include "netnsid.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/hmap.h"
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

/* What a port has that struct netdev_linux has no field for. */
struct afxdp_port {
    struct hmap_node node;          /* In 'afxdp_ports', by netdev. */
    struct netdev *netdev;
    struct afxdp_dev *core;         /* NULL while not running. */
    struct afxdp_flows *flows;      /* Its offloaded flows, from construct
                                     * to destruct: attached to 'core'
                                     * while it runs with offload. */
    bool configured;                /* set_config has succeeded once. */
    /* Everything the options decide, as the core's policy parsed them.
     * Ours on every OVS version: OVS 3.7 removed use-need-wakeup and the
     * netdev_linux fields that held it, so none of them is kept there. */
    struct afxdp_port_config requested;  /* From the latest options. */
    struct afxdp_port_config applied;    /* At the last open attempt. */
    int ifindex;                    /* Interface at the last open attempt
                                     * (negative errno if it had none). */
    bool configured_once;           /* An open was attempted. */
    bool offload_applied;           /* Flow offload was on at that open. */
    bool rx_hash;                   /* The open gave the driver's RX hash
                                     * (afxdp_dev_info.rx_hash). */
    char *open_error;               /* Why the last open failed, or NULL. */
    int open_errno;                 /* Its errno, or 0. */
    char *config_error;             /* Last rejected option, or NULL. */
};

static void afxdp_flows_changed(void *netdev);

static struct ovs_mutex afxdp_ports_mutex = OVS_MUTEX_INITIALIZER;
static struct hmap afxdp_ports OVS_GUARDED_BY(afxdp_ports_mutex)
    = HMAP_INITIALIZER(&afxdp_ports);

static struct afxdp_port *
afxdp_port_lookup(const struct netdev *netdev)
    OVS_REQUIRES(afxdp_ports_mutex)
{
    struct afxdp_port *port;

    HMAP_FOR_EACH_WITH_HASH (port, node, hash_pointer(netdev, 0),
                             &afxdp_ports) {
        if (port->netdev == netdev) {
            return port;
        }
    }
    return NULL;
}

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
    struct afxdp_port_config cfg;
    struct afxdp_port *port;
    bool changed = false;
    char err[512];
    int error;

    error = afxdp_port_config_parse(netdev_get_name(netdev),
                                    afxdp_smap_lookup, args, &cfg, err,
                                    sizeof err);
    /* Before our lock: netdev-linux takes dev->mutex for it. */
    afxdp_namespace_is_ours(netdev);
    int ifindex = netdev_get_ifindex(netdev);

    ovs_mutex_lock(&afxdp_ports_mutex);
    port = afxdp_port_lookup(netdev);
    if (error) {
        VLOG_ERR("%s", err);
        if (port && port->configured) {
            /* A running port keeps its settings: OVS would otherwise delete
             * it.  The status column says what was rejected. */
            VLOG_ERR("%s: keeping the previous configuration.",
                     netdev_get_name(netdev));
            free(port->config_error);
            port->config_error = xstrdup(err);
            ovs_mutex_unlock(&afxdp_ports_mutex);
            return 0;
        }
        ovs_mutex_unlock(&afxdp_ports_mutex);
        *errp = xstrdup(err);
        return EINVAL;
    }
    if (port) {
        port->configured = true;
        free(port->config_error);
        port->config_error = NULL;
        changed = afxdp_port_config_needs_reopen(&port->requested, &cfg)
                  /* The interface went away or came back (the bridge calls
                   * us when interfaces change): reopen on the interface
                   * that has the name now. */
                  || (port->configured_once && port->ifindex != ifindex);
        port->requested = cfg;
    }
    ovs_mutex_unlock(&afxdp_ports_mutex);

    if (changed) {
        netdev_request_reconfigure(netdev);
    }
    return 0;
}

int
netdev_afxdp_get_config(const struct netdev *netdev, struct smap *args)
{
    struct afxdp_port_config applied;
    const char *in_use = "unspecified";
    const char *mode = "unspecified";
    struct afxdp_port *port;

    afxdp_port_config_default(&applied);
    ovs_mutex_lock(&afxdp_ports_mutex);
    port = afxdp_port_lookup(netdev);
    if (port && port->configured_once) {
        applied = port->applied;
        mode = afxdp_mode_name(applied.mode);
    }
    if (port && port->core) {
        struct afxdp_dev_info info;

        afxdp_dev_get_info(port->core, &info);
        in_use = afxdp_mode_name(info.mode_in_use);
    }
    ovs_mutex_unlock(&afxdp_ports_mutex);

    /* The keys OVS's C port reported up to 3.6, on every version: the
     * option is still ours where upstream removed it. */
    smap_add_format(args, "n_rxq", "%d", netdev_n_rxq(netdev));
    smap_add(args, "xdp-mode", mode);
    smap_add(args, "xdp-mode-in-use", in_use);
    smap_add(args, "use-need-wakeup",
             applied.use_need_wakeup ? "true" : "false");
    return 0;
}

/* afxdp_pair_func into an smap. */
static void
afxdp_smap_add(void *smap, const char *key, const char *value)
{
    smap_add(smap, key, value);
}

/* Why OVS has offload off for 'port', as afxdp-report.h asks; NULL if on
 * when the port opened. */
static const char *
afxdp_offload_off(const struct afxdp_port *port)
{
    const char *why = NULL;

    if (!port->offload_applied) {
        netdev_offload_afxdp_enabled(&why);
    }
    return why;
}

int
netdev_afxdp_get_status(const struct netdev *netdev, struct smap *smap)
{
    struct afxdp_port *port;

    /* The driver and the rest that every Linux device reports.  OVS 3.3+
     * points the class here; for older ones configure applies
     * ovs-patches/netdev-linux-afxdp-get-status.patch, which does what
     * upstream did.  Its error (the interface is gone) is not ours: the
     * status must still say why the port is down. */
    netdev_linux_get_status(netdev, smap);

    ovs_mutex_lock(&afxdp_ports_mutex);
    port = afxdp_port_lookup(netdev);
    if (port && port->core) {
        afxdp_dev_status(port->core, afxdp_offload_off(port),
                         afxdp_smap_add, smap);
    } else if (port && port->open_error) {
        smap_add(smap, "afxdp_error", port->open_error);
    }
    if (port && port->config_error) {
        smap_add(smap, "config_error", port->config_error);
    }
    ovs_mutex_unlock(&afxdp_ports_mutex);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Lifecycle.                                                         */
/* ------------------------------------------------------------------ */

/* A port joined or left UMEM 'umem_id': the status of the other ports on
 * it (umem_shared_by, umem_total_frames) changed too, and the bridge
 * rereads a port's status only when the port says so. */
static void
afxdp_umem_peers_changed(const struct netdev *netdev, uint32_t umem_id)
    OVS_REQUIRES(afxdp_ports_mutex)
{
    struct afxdp_port *peer;

    HMAP_FOR_EACH (peer, node, &afxdp_ports) {
        struct afxdp_dev_info info;

        if (peer->netdev == netdev || !peer->core) {
            continue;
        }
        afxdp_dev_get_info(peer->core, &info);
        if (info.umem_id == umem_id) {
            netdev_afxdp_status_changed(peer->netdev);
        }
    }
}

/* A port refused because another port of ours had interface 'ifindex'
 * (EBUSY) opens once that one lets it go: the other was a port on its way
 * out (a type change, a rename), or a second port on one interface whose
 * first port has now gone. */
static void
afxdp_wake_waiters(int ifindex)
    OVS_REQUIRES(afxdp_ports_mutex)
{
    struct afxdp_port *port;

    HMAP_FOR_EACH (port, node, &afxdp_ports) {
        if (!port->core && port->open_errno == EBUSY
            && port->ifindex == ifindex) {
            VLOG_INFO("%s: the port that had the interface let it go: "
                      "opening it.", netdev_get_name(port->netdev));
            netdev_request_reconfigure(port->netdev);
        }
    }
}

/* Closes the port's sockets and detaches our XDP program.  Frames OVS
 * still holds stay valid until freed. */
static void
afxdp_port_close(struct netdev_linux *dev, struct afxdp_port *port)
    OVS_REQUIRES(dev->mutex, afxdp_ports_mutex)
{
    int n_txq = netdev_n_txq(&dev->up);

    if (dev->xsks) {
        for (int i = 0; i < netdev_n_rxq(&dev->up); i++) {
            free(dev->xsks[i]);
        }
        free(dev->xsks);
        dev->xsks = NULL;
    }
    if (port && port->core) {
        struct afxdp_dev_info info;

        /* Its flows' XDP counts end as read now. */
        afxdp_flows_detach(port->flows);
        afxdp_dev_get_info(port->core, &info);
        VLOG_INFO("%s: Removing xdp program.", netdev_get_name(&dev->up));
        afxdp_dev_close(port->core);
        port->core = NULL;
        afxdp_umem_peers_changed(&dev->up, info.umem_id);
        afxdp_wake_waiters(port->ifindex);
    }
    if (dev->tx_locks) {
        for (int i = 0; i < n_txq; i++) {
            ovs_spin_destroy(&dev->tx_locks[i].lock);
        }
        free_cacheline(dev->tx_locks);
        dev->tx_locks = NULL;
    }
}

/* Opens the port's sockets on interface 'ifindex', its UMEM on NUMA node
 * 'numa_node' (-1: anywhere). */
static int
afxdp_port_open(struct netdev_linux *dev, struct afxdp_port *port,
                int ifindex, int numa_node)
    OVS_REQUIRES(dev->mutex, afxdp_ports_mutex)
{
    struct netdev *netdev = &dev->up;
    struct afxdp_dev_config cfg = {
        .ifname = netdev_get_name(netdev),
        .port = port->applied,
        .numa_node = numa_node,
        .frame_meta_size = afxdp_frame_meta_size(),
        /* afxdp-nonpmd ports are polled by the main thread, which sleeps
         * between polls: what it receives must be kicked at once. */
        .busy_polled = netdev_is_pmd(netdev),
        .frame_meta_init = afxdp_pool_init_packets,
        .offload = netdev_offload_afxdp_enabled(NULL),
    };
    struct afxdp_dev_info info;
    char err[512];
    int error;

    free(port->open_error);
    port->open_error = NULL;
    port->open_errno = 0;
    port->ifindex = ifindex;
    port->configured_once = true;
    port->offload_applied = cfg.offload;
    error = afxdp_dev_open(&cfg, &port->core, err, sizeof err);
    if (error) {
        VLOG_ERR("%s", err);
        port->open_error = xstrdup(err);
        port->open_errno = error;
        return error;
    }

    afxdp_dev_get_info(port->core, &info);
    port->rx_hash = info.rx_hash;
    afxdp_umem_peers_changed(netdev, info.umem_id);
    unsigned have = afxdp_device_rx_queues(netdev_get_name(netdev));
    if (have > info.n_queues) {
        VLOG_WARN("%s: the device has %u RX queues but n_rxq is %u: what "
                  "it steers to the others goes to the kernel's stack, not "
                  "to OVS.", netdev_get_name(netdev), have, info.n_queues);
    }
    netdev->n_rxq = info.n_queues;
    netdev->n_txq = info.n_queues;
    dev->xsks = xcalloc(info.n_queues, sizeof *dev->xsks);
    for (unsigned i = 0; i < info.n_queues; i++) {
        struct xsk_socket_info *xsk = xmalloc(sizeof *xsk);

        xsk->queue = afxdp_dev_queue(port->core, i);
        xsk->pool = afxdp_queue_pool(xsk->queue);
        xsk->in_place = afxdp_queue_sends_in_place(xsk->queue);
        dev->xsks[i] = xsk;
    }
    dev->tx_locks = xzalloc_cacheline(info.n_queues * sizeof *dev->tx_locks);
    for (unsigned i = 0; i < info.n_queues; i++) {
        ovs_spin_init(&dev->tx_locks[i].lock);
    }
    return 0;
}

int
netdev_afxdp_reconfigure(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct afxdp_port *port;
    /* Before our locks: netdev-linux takes dev->mutex for both (an
     * error-checking mutex: taking it twice aborts). */
    int ifindex = netdev_get_ifindex(netdev);
    int mtu = 0;
    int numa_node = -1;

    netdev_get_mtu(netdev, &mtu);
    if (ovs_numa_get_n_numas() > 1) {
        int numa_id = netdev_get_numa_id(netdev);

        numa_node = numa_id == NETDEV_NUMA_UNSPEC ? -1 : numa_id;
    }

    ovs_mutex_lock(&afxdp_ports_mutex);
    ovs_mutex_lock(&dev->mutex);
    port = afxdp_port_lookup(netdev);

    if (port->ifindex == ifindex && dev->xsks
        && !afxdp_port_config_needs_reopen(&port->applied,
                                           &port->requested)
        && port->offload_applied == netdev_offload_afxdp_enabled(NULL)
        && afxdp_dev_takes_mtu(port->core, mtu)) {
        goto out;
    }

    afxdp_port_close(dev, port);

    port->applied = port->requested;
    VLOG_INFO("%s: Setting XDP mode to %s.", netdev_get_name(netdev),
              afxdp_mode_name(port->applied.mode));

    if (afxdp_port_open(dev, port, ifindex, numa_node)) {
        /* An error here would make OVS's datapath remove the port, and the
         * bridge add it back, failing again, forever.  The port stays in
         * the datapath without sockets (receiving nothing, dropping what
         * it is given to send), says why in its status, and tries again
         * when its configuration changes. */
        VLOG_ERR("%s: AF_XDP device reconfiguration failed: the port is "
                 "down until its configuration changes.",
                 netdev_get_name(netdev));
        netdev->n_rxq = port->applied.n_queues;
        netdev->n_txq = port->applied.n_queues;
    }
    if (port->core && port->offload_applied) {
        /* New maps: the flows OVS offloaded go in again. */
        afxdp_flows_attach(port->flows, port->core);
    }
    netdev_afxdp_status_changed(netdev);
out:
    ovs_mutex_unlock(&dev->mutex);
    ovs_mutex_unlock(&afxdp_ports_mutex);
    return 0;
}

int
netdev_afxdp_construct(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    struct afxdp_port *port;
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

    port = xzalloc(sizeof *port);
    port->netdev = netdev;
    port->flows = afxdp_flows_create(netdev_get_name(netdev),
                                     afxdp_flows_changed, netdev);
    if (!port->flows) {
        out_of_memory();
    }
    afxdp_port_config_default(&port->requested);
    port->applied = port->requested;
    ovs_mutex_lock(&afxdp_ports_mutex);
    hmap_insert(&afxdp_ports, &port->node, hash_pointer(netdev, 0));
    ovs_mutex_unlock(&afxdp_ports_mutex);

    netdev_request_reconfigure(netdev);
    return 0;
}

void
netdev_afxdp_destruct(struct netdev *netdev)
{
    struct netdev_linux *dev = netdev_linux_cast(netdev);
    int ifindex = netdev_get_ifindex(netdev);
    struct afxdp_port *port, *other;

    ovs_mutex_lock(&afxdp_ports_mutex);
    ovs_mutex_lock(&dev->mutex);
    port = afxdp_port_lookup(netdev);
    afxdp_port_close(dev, port);
    if (port) {
        hmap_remove(&afxdp_ports, &port->node);
        afxdp_flows_destroy(port->flows);
        /* No more redirects to it, whatever the other ports' flows still
         * say until OVS deletes them. */
        HMAP_FOR_EACH (other, node, &afxdp_ports) {
            afxdp_flows_target_gone(other->flows, ifindex);
        }
        free(port->open_error);
        free(port->config_error);
        free(port);
    }
    ovs_mutex_unlock(&dev->mutex);
    ovs_mutex_unlock(&afxdp_ports_mutex);
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
    const char *why = "";
    unsigned max_mtu = afxdp_max_mtu(&why);

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
    ovs_mutex_lock(&afxdp_ports_mutex);
    struct afxdp_port *port = afxdp_port_lookup(netdev);
    if (port && port->core
        && port->ifindex == ifindex       /* Not gone or renamed. */
        && afxdp_dev_prog_lost(port->core)) {
        netdev_afxdp_status_changed(netdev);
    }
    ovs_mutex_unlock(&afxdp_ports_mutex);

    ovs_mutex_lock(&dev->mutex);
    error = get_stats_via_netlink(netdev, &dev_stats);
    if (error) {
        VLOG_WARN_RL(&rl, "%s: Error getting AF_XDP statistics.",
                     netdev_get_name(netdev));
    } else {
        /* The kernel counts what reached the device and what left it. */
        *stats = dev_stats;
        for (int i = 0; dev->xsks && i < netdev_n_rxq(netdev); i++) {
            struct afxdp_queue_stats qs;

            /* The backstop for coalesced kicks: a PMD thread that owed
             * one and then stopped polling (its queues moved away) leaves
             * it to us. */
            afxdp_queue_kick_owed(dev->xsks[i]->queue);
            afxdp_queue_get_stats(dev->xsks[i]->queue, &qs);
            stats->tx_dropped += qs.tx_dropped_ring_full
                                 + qs.tx_dropped_no_frames
                                 + qs.tx_dropped_too_long;
        }
    }
    ovs_mutex_unlock(&dev->mutex);
    return error;
}

/* afxdp_counter_func into OVS's custom statistics. */
static void
afxdp_custom_stat(void *stats_, const char *name, uint64_t value)
{
    struct netdev_custom_stats *stats = stats_;

    ovs_strlcpy(stats->counters[stats->size].name, name,
                NETDEV_CUSTOM_STATS_NAME_SIZE);
    stats->counters[stats->size++].value = value;
}

int
netdev_afxdp_get_custom_stats(const struct netdev *netdev,
                              struct netdev_custom_stats *custom_stats)
{
    struct afxdp_port *port;

    custom_stats->size = 0;
    ovs_mutex_lock(&afxdp_ports_mutex);
    port = afxdp_port_lookup(netdev);
    custom_stats->counters = xcalloc(MAX(netdev_n_rxq(netdev), 1)
                                     * AFXDP_DEV_COUNTERS_PER_QUEUE,
                                     sizeof *custom_stats->counters);
    if (port && port->core) {
        afxdp_dev_counters(port->core, afxdp_custom_stat, custom_stats);
    }
    ovs_mutex_unlock(&afxdp_ports_mutex);
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
    struct afxdp_port *port;
    bool was_open;

    ovs_mutex_lock(&afxdp_ports_mutex);
    ovs_mutex_lock(&dev->mutex);
    port = afxdp_port_lookup(netdev);
    was_open = port && port->core;
    if (was_open) {
        afxdp_port_close(dev, port);
    }
    ovs_mutex_unlock(&dev->mutex);
    ovs_mutex_unlock(&afxdp_ports_mutex);
    if (was_open) {
        /* Should a datapath take it again, it opens again. */
        netdev_request_reconfigure(netdev);
    }
}

void
netdev_afxdp_offload_changed(struct netdev *netdev)
{
    struct afxdp_port *port;
    bool reopen;

    ovs_mutex_lock(&afxdp_ports_mutex);
    port = afxdp_port_lookup(netdev);
    reopen = port && port->configured_once
             && port->offload_applied != netdev_offload_afxdp_enabled(NULL);
    ovs_mutex_unlock(&afxdp_ports_mutex);
    if (reopen) {
        netdev_request_reconfigure(netdev);
    }
}

struct afxdp_flows *
netdev_afxdp_flows(const struct netdev *netdev)
{
    struct afxdp_port *port;

    ovs_mutex_lock(&afxdp_ports_mutex);
    port = afxdp_port_lookup(netdev);
    ovs_mutex_unlock(&afxdp_ports_mutex);
    /* Lives as long as the netdev, which the caller holds. */
    return port ? port->flows : NULL;
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

/* afxdp_flows_changed_func for a port's flows. */
static void
afxdp_flows_changed(void *netdev)
{
    netdev_afxdp_status_changed(netdev);
}

/* ------------------------------------------------------------------ */
/* ovs-appctl afxdp/show [PORT].                                      */
/* ------------------------------------------------------------------ */

/* Where the frames of UMEM 'umem_id' are, over every port that uses it. */
static void
afxdp_count_umem_frames(uint32_t umem_id, struct afxdp_umem_frames *u)
    OVS_REQUIRES(afxdp_ports_mutex)
{
    struct afxdp_port *port;

    memset(u, 0, sizeof *u);
    u->umem_id = umem_id;
    HMAP_FOR_EACH (port, node, &afxdp_ports) {
        if (port->core) {
            afxdp_umem_frames_add(u, port->core);
        }
    }
}

/* afxdp_pair_func into a ds: the text. */
static void
afxdp_ds_put(void *s, const char *key OVS_UNUSED, const char *text)
{
    ds_put_cstr(s, text);
}

static void
afxdp_show_port(struct ds *s, struct afxdp_port *port)
    OVS_REQUIRES(afxdp_ports_mutex)
{
    struct afxdp_umem_frames u;
    struct afxdp_dev_info info;

    ds_put_format(s, "%s:\n", netdev_get_name(port->netdev));
    if (!port->core) {
        ds_put_format(s, "  not running: %s\n",
                      port->open_error ? port->open_error
                                       : "not configured yet");
        return;
    }
    afxdp_dev_get_info(port->core, &info);
    afxdp_count_umem_frames(info.umem_id, &u);
    afxdp_dev_show(port->core, afxdp_offload_off(port), &u, afxdp_ds_put, s);
}

static void
afxdp_unixctl_show(struct unixctl_conn *conn, int argc, const char *argv[],
                   void *aux OVS_UNUSED)
{
    struct ds s = DS_EMPTY_INITIALIZER;
    struct afxdp_port *port;
    bool found = false;

    ovs_mutex_lock(&afxdp_ports_mutex);
    HMAP_FOR_EACH (port, node, &afxdp_ports) {
        if (argc > 1 && strcmp(argv[1], netdev_get_name(port->netdev))) {
            continue;
        }
        found = true;
        afxdp_show_port(&s, port);
    }
    if (argc < 2) {
        ds_put_format(&s, "closed UMEMs waiting for frames held by OVS: %u\n",
                      afxdp_retired_pools());
    }
    ovs_mutex_unlock(&afxdp_ports_mutex);

    if (argc > 1 && !found) {
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
    struct afxdp_port *port;
    char *reply = NULL;

    ovs_mutex_lock(&afxdp_ports_mutex);
    HMAP_FOR_EACH (port, node, &afxdp_ports) {
        if (port->core && !strcmp(argv[1], netdev_get_name(port->netdev))) {
            struct afxdp_dev_info info;

            afxdp_dev_get_info(port->core, &info);
            afxdp_count_umem_frames(info.umem_id, &u);
            reply = xasprintf("umem_id=%"PRIu32" total=%"PRIu32
                              " free=%"PRIu32" in_kernel=%"PRIu64
                              " kept=%"PRIu64" in_ovs=%"PRIu32"\n",
                              u.umem_id, u.total, u.free, u.in_kernel,
                              u.kept, u.in_ovs);
            break;
        }
    }
    ovs_mutex_unlock(&afxdp_ports_mutex);

    if (reply) {
        unixctl_command_reply(conn, reply);
    } else {
        unixctl_command_reply_error(conn, "no such running afxdp port");
    }
    free(reply);
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
