/*
 * ovs-afxdp: OVS's flow offload for afxdp ports: megaflows dpif-netdev
 * offloads become flows of the port's XDP fast path
 * (Documentation/xdp-fast-path.rst).  Through whichever API the OVS built
 * has: the netdev flow API (3.1 to 3.6, "linux_afxdp") or a dpif-offload
 * provider class (3.7 on, "afxdp", listed in OVS's table of classes by
 * ovs-patches/dpif-offload-afxdp-class.patch).
 *
 * Here only what is OVS's: each put, read and delete, its match and
 * actions translated (netdev-offload-afxdp-xlate.c), goes to the in_port's
 * registry (afxdp-flows.h), which keeps the
 * flows across the port's reopens, counts them for OVS's copies, gives
 * 3.7's marks and follows the targets; the core decides what XDP can
 * execute (lib/afxdp/translate.cc).
 */
#include <config.h>

#include "netdev-offload-afxdp.h"
#include "netdev-afxdp-compat.h"

#include <errno.h>
#include <string.h>

#include "openvswitch/thread.h"
#include "util.h"

#if OVS_AFXDP_NETDEV_FLOW_API || OVS_AFXDP_DPIF_OFFLOAD

#include "dp-packet.h"
#include "dpif.h"
#include "netdev.h"
#include "netdev-provider.h"
#if OVS_AFXDP_NETDEV_FLOW_API
#include "dpif-netdev-private-flow.h"
#include "netdev-offload-provider.h"
#else
#include "dpif-offload-provider.h"
#include "ovs-rcu.h"
#endif
#include "openvswitch/match.h"

/* ------------------------------------------------------------------ */
/* Flows into the port's registry.                                    */
/* ------------------------------------------------------------------ */

/* At most this many actions are looked at: more than a few cannot be
 * executed in XDP anyway (one output, a VLAN change, Ethernet rewrites). */
#define MAX_ACTIONS 16

/* The netdev of datapath port 'port_no', as the flow's datapath knows it
 * ('where': the in_port on 3.1 to 3.6, our provider on 3.7), a reference
 * taken; NULL if none. */
static struct netdev *output_netdev(const void *where, odp_port_t port_no);

/* netdev_offload_afxdp_port_func for a flow's outputs. */
static bool
flow_output_port(const void *where, odp_port_t port_no,
                 struct netdev_offload_afxdp_port *p)
{
    struct netdev *out = output_netdev(where, port_no);

    if (!out) {
        return false;
    }
    p->ifindex = netdev_get_ifindex(out);
    p->name = netdev_get_name(out);   /* The registry copies it. */
    p->afxdp = netdev_afxdp_is_afxdp(out);
    netdev_close(out);
    return true;
}

/* The put, translated, into 'flows', its in_port's registry:
 * afxdp_flows_put()'s answer. */
static int
flow_put(struct afxdp_flows *flows, const void *where, const ovs_u128 *ufid,
         const struct match *match, const struct nlattr *actions,
         size_t actions_len, uint32_t mark,
         const struct afxdp_flow_copy *copy, void **previous)
{
    struct afxdp_flow_action xlated[MAX_ACTIONS];
    struct afxdp_flow_match m;
    size_t n;

    if (!flows) {
        return EOPNOTSUPP;
    }
    netdev_offload_afxdp_match(match, &m);
    n = netdev_offload_afxdp_actions(actions, actions_len, flow_output_port,
                                     where, xlated, ARRAY_SIZE(xlated));
    return afxdp_flows_put(flows, ufid->u32, &m, xlated, n, mark, copy,
                           previous, NULL);
}

static void
stats_to_ovs(const struct afxdp_flow_stats *s, struct dpif_flow_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    stats->n_packets = s->n_packets;
    stats->n_bytes = s->n_bytes;
    stats->used = s->used_msec;
    stats->tcp_flags = s->tcp_flags;
}

/* The counts of the flow known by 'ufid' in 'flows' for OVS's copy of
 * the megaflow that 'ufid' points into ('told': what it was told last,
 * if OVS keeps that), and where it runs: false if there is none. */
static bool
flow_stats(struct afxdp_flows *flows, const ovs_u128 *ufid,
           const struct afxdp_flow_stats *told,
           struct dpif_flow_stats *stats, struct dpif_flow_attrs *attrs)
{
    enum afxdp_flow_where where;
    struct afxdp_flow_stats now;

    if (!flows
        || afxdp_flows_stats(flows, ufid->u32, ufid, told, &now, &where)) {
        return false;
    }
    stats_to_ovs(&now, stats);
    /* dpctl shows "offloaded:yes, dp:xdp", or "offloaded:partial" where
     * the packets still reach OVS, with their mark. */
    attrs->offloaded = where != AFXDP_FLOW_IN_OVS;
    attrs->dp_layer = where == AFXDP_FLOW_IN_XDP ? "xdp" : "ovs";
    return true;
}

#if OVS_AFXDP_NETDEV_FLOW_API
/* ------------------------------------------------------------------ */
/* OVS 3.1 to 3.6: the netdev flow API.                               */
/* ------------------------------------------------------------------ */

static struct netdev *
output_netdev(const void *in_port, odp_port_t port_no)
{
    return netdev_ports_get(port_no, netdev_get_dpif_type(in_port));
}

static int
afxdp_flow_put(struct netdev *netdev, struct match *match,
               struct nlattr *actions, size_t actions_len,
               const ovs_u128 *ufid, struct offload_info *info,
               struct dpif_flow_stats *stats)
{
    struct afxdp_flows *flows = netdev_afxdp_flows(netdev);
    int error = flow_put(flows, netdev, ufid, match, actions, actions_len,
                         info->flow_mark, NULL, NULL);

    if (stats) {
        memset(stats, 0, sizeof *stats);
    }
    return error;
}

static int
afxdp_flow_get(struct netdev *netdev, struct match *match OVS_UNUSED,
               struct nlattr **actions OVS_UNUSED, const ovs_u128 *ufid,
               struct dpif_flow_stats *stats, struct dpif_flow_attrs *attrs,
               struct ofpbuf *wbuffer OVS_UNUSED)
{
    /* OVS asks with a pointer to the copy's own mega_ufid, whose
     * last_stats hold what it was told last. */
    struct afxdp_flow_stats told;

    afxdp_ovs_flow_told(ufid, &told);
    return flow_stats(netdev_afxdp_flows(netdev), ufid, &told, stats, attrs)
           ? 0 : ENOENT;
}

static int
afxdp_flow_del(struct netdev *netdev, const ovs_u128 *ufid,
               struct dpif_flow_stats *stats)
{
    struct afxdp_flows *flows = netdev_afxdp_flows(netdev);
    struct afxdp_flow_stats now;
    int error;

    /* dpif-netdev asks for no stats; another caller is no copy. */
    error = flows ? afxdp_flows_del(flows, ufid->u32, NULL, &now) : ENOENT;
    if (!error && stats) {
        stats_to_ovs(&now, stats);
    }
    return error;
}

static int
afxdp_flow_flush(struct netdev *netdev)
{
    struct afxdp_flows *flows = netdev_afxdp_flows(netdev);

    if (flows) {
        afxdp_flows_flush(flows);
    }
    return 0;
}

/* afxdp_flows_each_func: counts a flow for the offload thread that has
 * it. */
static void
count_by_thread(const uint32_t ufid_[4], void *n_flows_)
{
    uint64_t *n_flows = n_flows_;
    ovs_u128 ufid;

    memcpy(&ufid, ufid_, sizeof ufid);
    n_flows[netdev_offload_ufid_to_thread_id(ufid)]++;
}

static int
afxdp_flow_get_n_flows(struct netdev *netdev, uint64_t *n_flows)
{
    struct afxdp_flows *flows = netdev_afxdp_flows(netdev);

    memset(n_flows, 0, netdev_offload_thread_nb() * sizeof *n_flows);
    if (flows) {
        afxdp_flows_in_maps(flows, count_by_thread, n_flows);
    }
    return 0;
}

static int
afxdp_init_flow_api(struct netdev *netdev)
{
    if (!netdev_afxdp_is_afxdp(netdev)) {
        return EOPNOTSUPP;
    }
    /* Offload was off when the port opened, or this is a port OVS has just
     * added: it (re)opens with the fast path. */
    netdev_afxdp_offload_changed(netdev);
    return 0;
}

static void
afxdp_uninit_flow_api(struct netdev *netdev)
{
    afxdp_flow_flush(netdev);
}

static const struct netdev_flow_api netdev_offload_afxdp = {
    .type = "linux_afxdp",
    .flow_flush = afxdp_flow_flush,
    .flow_put = afxdp_flow_put,
    .flow_get = afxdp_flow_get,
    .flow_del = afxdp_flow_del,
    .flow_get_n_flows = afxdp_flow_get_n_flows,
    .init_flow_api = afxdp_init_flow_api,
    .uninit_flow_api = afxdp_uninit_flow_api,
};

void
netdev_offload_afxdp_register(void)
{
    netdev_register_flow_api_provider(&netdev_offload_afxdp);
}

bool
netdev_offload_afxdp_enabled(const char **why)
{
    if (why) {
        *why = "other_config:hw-offload is not true";
    }
    return netdev_is_flow_api_enabled();
}

#else /* OVS_AFXDP_DPIF_OFFLOAD */
/* ------------------------------------------------------------------ */
/* OVS 3.7 on: a dpif-offload provider class.                         */
/* ------------------------------------------------------------------ */

/* Our provider on one dpif. */
struct afxdp_offload {
    struct dpif_offload up;
    dpif_offload_flow_unreference_cb *unref;  /* dpif-netdev's, for the
                                               * flow references we let
                                               * go of ourselves. */
    struct ovsthread_once once_enable;        /* hw-offload turned on. */
};

struct afxdp_offload_port {
    struct dpif_offload_port pm_port;
    struct afxdp_flows *flows;     /* Its netdev's (netdev_afxdp_flows()),
                                    * for the packets with a mark. */
};

static struct afxdp_offload *
afxdp_offload_cast(const struct dpif_offload *offload)
{
    return CONTAINER_OF(offload, struct afxdp_offload, up);
}

static struct netdev *
output_netdev(const void *offload, odp_port_t port_no)
{
    struct dpif_offload_port *port
        = dpif_offload_port_mgr_find_by_odp_port(offload, port_no);

    /* Only our ports are ours to know; only they take redirects. */
    return port ? netdev_ref(port->netdev) : NULL;
}

/* The registry of 'netdev', if it is one of our ports on 'offload' (no
 * lock taken: PMD threads ask). */
static struct afxdp_flows *
port_flows(const struct dpif_offload *offload, struct netdev *netdev)
{
    struct dpif_offload_port *port
        = dpif_offload_port_mgr_find_by_netdev(offload, netdev);

    return port ? CONTAINER_OF(port, struct afxdp_offload_port,
                               pm_port)->flows
                : NULL;
}

static int
afxdp_offload_flow_put(const struct dpif_offload *offload,
                       struct netdev *netdev, struct dpif_offload_flow_put *put,
                       void **previous_flow_reference)
{
    /* Each PMD thread puts the megaflow it installed, with its own copy's
     * reference and mega_ufid; the registry gives the marks. */
    const struct afxdp_flow_copy copy = {
        .pmd_id = put->pmd_id,
        .reference = put->flow_reference,
        .token = put->ufid,
        .unref = afxdp_offload_cast(offload)->unref,
    };
    int error = flow_put(port_flows(offload, netdev), offload, put->ufid,
                         put->match,
                         put->actions, put->actions_len, 0, &copy,
                         previous_flow_reference);

    if (put->stats) {
        memset(put->stats, 0, sizeof *put->stats);
    }
    return error;
}

static int
afxdp_offload_flow_del(const struct dpif_offload *offload,
                       struct netdev *netdev, struct dpif_offload_flow_del *del)
{
    struct afxdp_flows *flows = port_flows(offload, netdev);
    const struct afxdp_flow_copy copy = {
        .pmd_id = del->pmd_id,
        .reference = del->flow_reference,
    };
    struct afxdp_flow_stats now;
    int error;

    /* dpif-netdev asks for no stats; another caller is no copy. */
    error = flows ? afxdp_flows_del(flows, del->ufid->u32, &copy, &now)
                  : ENOENT;
    if (del->stats) {
        stats_to_ovs(&now, del->stats);
    }
    return error;
}

static bool
afxdp_offload_flow_stats(const struct dpif_offload *offload,
                         struct netdev *netdev, const ovs_u128 *ufid,
                         struct dpif_flow_stats *stats,
                         struct dpif_flow_attrs *attrs)
{
    /* What a copy was told, the registry keeps. */
    attrs->dp_extra_info = NULL;
    return flow_stats(port_flows(offload, netdev), ufid, NULL, stats, attrs);
}

static int
afxdp_offload_hw_post_process(const struct dpif_offload *offload,
                              struct netdev *netdev, unsigned pmd_id,
                              struct dp_packet *packet, void **flow_reference)
{
    struct afxdp_flows *flows;
    uint32_t mark;

    *flow_reference = NULL;
    if (!dp_packet_has_flow_mark(packet, &mark)) {
        return 0;
    }
    /* dpif-netdev holds every reference we have until it is deleted and
     * past the RCU grace period after. */
    flows = port_flows(offload, netdev);
    if (flows) {
        *flow_reference = afxdp_flows_marked(flows, mark, pmd_id);
    }
    return 0;
}

static void
afxdp_offload_enable(struct dpif_offload *offload,
                     struct dpif_offload_port *port)
{
    /* dpif-netdev asks us for the flow of a packet with a mark. */
    atomic_store_relaxed(&port->netdev->hw_info.post_process_api_supported,
                         true);
    dpif_offload_set_netdev_offload(port->netdev, offload);
    netdev_afxdp_offload_changed(port->netdev);
}

static int
afxdp_offload_open(const struct dpif_offload_class *class, struct dpif *dpif,
                   struct dpif_offload **offloadp)
{
    struct afxdp_offload *o = xzalloc(sizeof *o);

    dpif_offload_init(&o->up, class, dpif);
    o->once_enable = (struct ovsthread_once) OVSTHREAD_ONCE_INITIALIZER;
    *offloadp = &o->up;
    return 0;
}

static void
afxdp_offload_port_free(struct dpif_offload_port *port)
{
    netdev_close(port->netdev);
    free(CONTAINER_OF(port, struct afxdp_offload_port, pm_port));
}

static int
afxdp_offload_port_del(struct dpif_offload *offload, odp_port_t port_no)
{
    struct dpif_offload_port *port;

    port = dpif_offload_port_mgr_remove(offload, port_no);
    if (port) {
        afxdp_flows_flush(CONTAINER_OF(port, struct afxdp_offload_port,
                                       pm_port)->flows);
        if (dpif_offload_enabled()) {
            dpif_offload_set_netdev_offload(port->netdev, NULL);
        }
        /* dpif-netdev polls and sends on it no more, and we hold it past
         * the grace period: let the interface go now. */
        netdev_afxdp_datapath_released(port->netdev);
        ovsrcu_postpone(afxdp_offload_port_free, port);
    }
    return 0;
}

static void
afxdp_offload_close(struct dpif_offload *offload)
{
    struct afxdp_offload *o = afxdp_offload_cast(offload);
    struct dpif_offload_port *port;

    DPIF_OFFLOAD_PORT_FOR_EACH (port, offload) {
        afxdp_offload_port_del(offload, port->port_no);
    }
    ovsthread_once_destroy(&o->once_enable);
    dpif_offload_destroy(offload);
    free(o);
}

static void
afxdp_offload_set_config(struct dpif_offload *offload,
                         const struct smap *other_cfg)
{
    struct afxdp_offload *o = afxdp_offload_cast(offload);

    /* Like every provider's: hw-offload can only be turned on. */
    if (smap_get_bool(other_cfg, "hw-offload", false)
        && ovsthread_once_start(&o->once_enable)) {
        struct dpif_offload_port *port;

        DPIF_OFFLOAD_PORT_FOR_EACH (port, offload) {
            afxdp_offload_enable(offload, port);
        }
        ovsthread_once_done(&o->once_enable);
    }
}

static bool
afxdp_offload_can_offload(struct dpif_offload *offload OVS_UNUSED,
                          struct netdev *netdev)
{
    return netdev_afxdp_is_afxdp(netdev);
}

static int
afxdp_offload_port_add(struct dpif_offload *offload, struct netdev *netdev,
                       odp_port_t port_no)
{
    struct afxdp_offload_port *port = xmalloc(sizeof *port);

    port->flows = netdev_afxdp_flows(netdev);
    if (!port->flows) {
        free(port);
        return EOPNOTSUPP;
    }
    if (!dpif_offload_port_mgr_add(offload, &port->pm_port, netdev, port_no,
                                   false)) {
        free(port);
        return EEXIST;
    }
    if (dpif_offload_enabled()) {
        afxdp_offload_enable(offload, &port->pm_port);
    }
    return 0;
}

static struct netdev *
afxdp_offload_get_netdev(const struct dpif_offload *offload,
                         odp_port_t port_no)
{
    struct dpif_offload_port *port
        = dpif_offload_port_mgr_find_by_odp_port(offload, port_no);

    return port ? port->netdev : NULL;
}

static int
afxdp_offload_flow_flush(const struct dpif_offload *offload)
{
    struct dpif_offload_port *port;

    DPIF_OFFLOAD_PORT_FOR_EACH (port, offload) {
        afxdp_flows_flush(CONTAINER_OF(port, struct afxdp_offload_port,
                                       pm_port)->flows);
    }
    return 0;
}

static uint64_t
afxdp_offload_flow_count(const struct dpif_offload *offload)
{
    struct dpif_offload_port *port;
    uint64_t n = 0;

    DPIF_OFFLOAD_PORT_FOR_EACH (port, offload) {
        n += afxdp_flows_in_maps(CONTAINER_OF(port, struct afxdp_offload_port,
                                              pm_port)->flows, NULL, NULL);
    }
    return n;
}

static void
afxdp_offload_register_unref_cb(const struct dpif_offload *offload,
                                dpif_offload_flow_unreference_cb *cb)
{
    afxdp_offload_cast(offload)->unref = cb;
}

struct dpif_offload_class dpif_offload_afxdp_class = {
    .type = "afxdp",
    /* PMD threads put each megaflow as they install it. */
    .impl_type = DPIF_OFFLOAD_IMPL_FLOWS_DPIF_SYNCED,
    .supported_dpif_types = (const char *const[]) {"netdev", NULL},
    .open = afxdp_offload_open,
    .close = afxdp_offload_close,
    .set_config = afxdp_offload_set_config,
    .can_offload = afxdp_offload_can_offload,
    .port_add = afxdp_offload_port_add,
    .port_del = afxdp_offload_port_del,
    .flow_flush = afxdp_offload_flow_flush,
    .flow_count = afxdp_offload_flow_count,
    .get_netdev = afxdp_offload_get_netdev,
    .netdev_hw_post_process = afxdp_offload_hw_post_process,
    .netdev_flow_put = afxdp_offload_flow_put,
    .netdev_flow_del = afxdp_offload_flow_del,
    .netdev_flow_stats = afxdp_offload_flow_stats,
    .register_flow_unreference_cb = afxdp_offload_register_unref_cb,
};

void
netdev_offload_afxdp_register(void)
{
    /* OVS registers dpif_offload_afxdp_class from its own table. */
}

bool
netdev_offload_afxdp_enabled(const char **why)
{
    if (why) {
        *why = "other_config:hw-offload is not true";
    }
    return dpif_offload_enabled();
}

#endif /* OVS_AFXDP_DPIF_OFFLOAD */

#else /* Neither API. */

/* An OVS with neither offload API: offload stays off on our ports. */

void
netdev_offload_afxdp_register(void)
{
}

bool
netdev_offload_afxdp_enabled(const char **why)
{
    if (why) {
        *why = "this Open vSwitch has no flow offload API ovs-afxdp knows";
    }
    return false;
}

#endif
