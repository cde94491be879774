/*
 * ovs-afxdp: OVS's flow offload for afxdp ports: megaflows dpif-netdev
 * offloads become flows of the port's XDP fast path
 * (Documentation/xdp-fast-path.rst).  Through whichever API the OVS built
 * has: the netdev flow API (3.1 to 3.6, "linux_afxdp") or a dpif-offload
 * provider class (3.7 on, "afxdp", listed in OVS's table of classes by
 * ovs-patches/dpif-offload-afxdp-class.patch).
 *
 * Here only what is OVS's: struct match and the netlink actions become the
 * core's afxdp_flow_match and afxdp_flow_action, and each put, read and
 * delete goes to the in_port's registry (afxdp-flows.h), which keeps the
 * flows across the port's reopens, counts them for OVS's copies, gives
 * 3.7's marks and follows the targets; the core decides what XDP can
 * execute (lib/afxdp/flow.cc).
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
#include "netlink.h"
#include "odp-netlink.h"
#include "openvswitch/match.h"
#include "openvswitch/meta-flow.h"
#include "openvswitch/ofpbuf.h"
#include "packets.h"


/* ------------------------------------------------------------------ */
/* Match.                                                             */
/* ------------------------------------------------------------------ */

/* Fields of struct flow the key holds, as OVS stores them.  The L3
 * addresses depend on dl_type and are done apart. */
#define AFXDP_KEY_FIELDS                                                    \
    KEY_FIELD(dl_dst, dl_dst)                                               \
    KEY_FIELD(dl_src, dl_src)                                               \
    KEY_FIELD(dl_type, dl_type)                                             \
    KEY_FIELD(vlan_tci, vlans[0].tci)                                       \
    KEY_FIELD(vlan_tpid, vlans[0].tpid)                                     \
    KEY_FIELD(ipv6_label, ipv6_label)                                       \
    KEY_FIELD(nw_proto, nw_proto)                                           \
    KEY_FIELD(nw_tos, nw_tos)                                               \
    KEY_FIELD(nw_ttl, nw_ttl)                                               \
    KEY_FIELD(nw_frag, nw_frag)                                             \
    KEY_FIELD(tp_src, tp_src)                                               \
    KEY_FIELD(tp_dst, tp_dst)                                               \
    KEY_FIELD(arp_sha, arp_sha)                                             \
    KEY_FIELD(arp_tha, arp_tha)                                             \
    KEY_FIELD(tcp_flags, tcp_flags)

/* The first field of 'match' whose masked value is not zero in 'rest' (a
 * mask with the key's fields cleared): its meta-flow name. */
static const char *
unparsed_field_name(const struct match *match, const struct flow *rest)
{
    struct flow_wildcards wc = { .masks = *rest };

    for (int id = 0; id < MFF_N_IDS; id++) {
        const struct mf_field *mf = mf_from_id(id);
        union mf_value value, mask;

        if (mf_is_all_wild(mf, &wc)) {
            continue;
        }
        mf_get_value(mf, &match->flow, &value);
        mf_get_mask(mf, &wc, &mask);
        for (unsigned i = 0; i < mf->n_bytes; i++) {
            if (((const uint8_t *) &value)[i] & ((const uint8_t *) &mask)[i]) {
                return mf->name;
            }
        }
    }
    return "a datapath field";
}

/* 'match' as the core's afxdp_flow_match.  Every field of struct flow the
 * key does not hold must be masked out, or match the value it has on
 * every packet our XDP program looks up: zero.  That is so for the
 * datapath's metadata on a packet just received (recirc_id, dp_hash,
 * skb_priority, pkt_mark, conntrack, tunnel: none), packet_type
 * (Ethernet), and for what the program punts (a second VLAN tag, MPLS,
 * NSH, IPv6 neighbour discovery).  IGMP's group is the one field a packet
 * can have that the key lacks: any mask on it keeps the flow out. */
void
netdev_offload_afxdp_match(const struct match *match,
                           struct afxdp_flow_match *m)
{
    const struct flow *f = &match->flow, *mask = &match->wc.masks;
    struct flow rest = *mask;

    memset(m, 0, sizeof *m);
#define KEY_FIELD(KEY, FLOW)                                                \
    BUILD_ASSERT_DECL(sizeof m->key.KEY == sizeof f->FLOW);                 \
    memcpy(&m->key.KEY, &f->FLOW, sizeof m->key.KEY);                       \
    memcpy(&m->mask.KEY, &mask->FLOW, sizeof m->mask.KEY);                  \
    memset(&rest.FLOW, 0, sizeof rest.FLOW);
    AFXDP_KEY_FIELDS
#undef KEY_FIELD

    /* IPv6 addresses where dl_type says IPv6; IPv4's and ARP's in the
     * first four bytes otherwise (OVS's nw_src is zero for IPv6). */
    if (mask->dl_type == OVS_BE16_MAX && f->dl_type == htons(ETH_TYPE_IPV6)) {
        memcpy(m->key.nw_src, &f->ipv6_src, 16);
        memcpy(m->mask.nw_src, &mask->ipv6_src, 16);
        memcpy(m->key.nw_dst, &f->ipv6_dst, 16);
        memcpy(m->mask.nw_dst, &mask->ipv6_dst, 16);
        memset(&rest.ipv6_src, 0, sizeof rest.ipv6_src);
        memset(&rest.ipv6_dst, 0, sizeof rest.ipv6_dst);
    } else {
        memcpy(m->key.nw_src, &f->nw_src, 4);
        memcpy(m->mask.nw_src, &mask->nw_src, 4);
        memcpy(m->key.nw_dst, &f->nw_dst, 4);
        memcpy(m->mask.nw_dst, &mask->nw_dst, 4);
        rest.nw_src = rest.nw_dst = 0;
    }
    /* The device the flow is put on is its in_port. */
    memset(&rest.in_port, 0, sizeof rest.in_port);

    /* Where the key's network fields come from depends on the packet's
     * type: an IPv6 packet's addresses fill nw_src and nw_dst, where OVS
     * has them in ipv6_src and ipv6_dst and zeros in nw_src and nw_dst.
     * So a mask on any of them needs the type exact (OVS's megaflows
     * always have it so). */
    if (mask->dl_type != OVS_BE16_MAX) {
        const uint8_t *l3 = (const uint8_t *) &m->mask;
        size_t end = offsetof(struct afxdp_flow_key, vlan_tpid);
        bool masked = !ipv6_mask_is_any(&mask->ipv6_src)
                      || !ipv6_mask_is_any(&mask->ipv6_dst);

        for (size_t i = offsetof(struct afxdp_flow_key, nw_src);
             i < end && !masked; i++) {
            masked = l3[i] != 0;
        }
        if (masked) {
            m->unparsed_field = "network fields without an exact eth_type";
            return;
        }
    }

    if (rest.igmp_group_ip4) {
        m->unparsed_field = "igmp_group_ip4";
        return;
    }
    const uint8_t *value = (const uint8_t *) f;
    const uint8_t *left = (const uint8_t *) &rest;
    for (size_t i = 0; i < sizeof rest; i++) {
        if (value[i] & left[i]) {
            m->unparsed_field = unparsed_field_name(match, &rest);
            return;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Actions.                                                           */
/* ------------------------------------------------------------------ */

/* The datapath actions' names, for the refusal's detail. */
static const char *
odp_action_name(unsigned type)
{
    static const char *const names[] = {
        [OVS_ACTION_ATTR_USERSPACE] = "userspace",
        [OVS_ACTION_ATTR_SET] = "set",
        [OVS_ACTION_ATTR_SAMPLE] = "sample",
        [OVS_ACTION_ATTR_RECIRC] = "recirc",
        [OVS_ACTION_ATTR_HASH] = "hash",
        [OVS_ACTION_ATTR_PUSH_MPLS] = "push_mpls",
        [OVS_ACTION_ATTR_POP_MPLS] = "pop_mpls",
        [OVS_ACTION_ATTR_SET_MASKED] = "set",
        [OVS_ACTION_ATTR_CT] = "ct",
        [OVS_ACTION_ATTR_TRUNC] = "trunc",
        [OVS_ACTION_ATTR_PUSH_ETH] = "push_eth",
        [OVS_ACTION_ATTR_POP_ETH] = "pop_eth",
        [OVS_ACTION_ATTR_CT_CLEAR] = "ct_clear",
        [OVS_ACTION_ATTR_PUSH_NSH] = "push_nsh",
        [OVS_ACTION_ATTR_POP_NSH] = "pop_nsh",
        [OVS_ACTION_ATTR_METER] = "meter",
        [OVS_ACTION_ATTR_CLONE] = "clone",
        [OVS_ACTION_ATTR_CHECK_PKT_LEN] = "check_pkt_len",
        [OVS_ACTION_ATTR_ADD_MPLS] = "add_mpls",
        [OVS_ACTION_ATTR_TUNNEL_PUSH] = "tnl_push",
        [OVS_ACTION_ATTR_TUNNEL_POP] = "tnl_pop",
        [OVS_ACTION_ATTR_LB_OUTPUT] = "lb_output",
    };
    return type < ARRAY_SIZE(names) && names[type] ? names[type]
                                                   : "an unknown action";
}

/* An output to datapath port 'port_no'. */
static void
output_from_ovs(odp_port_t port_no, netdev_offload_afxdp_port_func *port,
                const void *aux, struct afxdp_flow_action *a)
{
    struct netdev_offload_afxdp_port out;

    if (!port(aux, port_no, &out)) {
        a->type = AFXDP_ACTION_OTHER;
        a->other = "output to a port the datapath does not know";
        return;
    }
    a->type = AFXDP_ACTION_OUTPUT;
    a->output.ifindex = out.ifindex;
    a->output.name = out.name;
    a->output.xdp_target = out.afxdp && out.ifindex > 0;
}

static void
set_ip_action(struct afxdp_flow_action *a, uint8_t version, uint8_t tos,
              uint8_t tos_mask, uint8_t ttl, uint8_t ttl_mask)
{
    a->type = AFXDP_ACTION_SET_IP;
    a->set_ip.version = version;
    a->set_ip.tos = tos;
    a->set_ip.tos_mask = tos_mask;
    a->set_ip.ttl = ttl;
    a->set_ip.ttl_mask = ttl_mask;
}

/* A masked set of IPv4's addresses, TOS and TTL or IPv6's addresses,
 * flow label, traffic class and hop limit, the fields odp-execute.c sets
 * as afxdp_flow_action's set_ip says.  (OVS ignores the protocol and
 * fragment fields of a set.) */
static void
set_ip_from_ovs(const struct nlattr *key, struct afxdp_flow_action *a)
{
    bool v4 = nl_attr_type(key) == OVS_KEY_ATTR_IPV4;
    size_t size = v4 ? sizeof(struct ovs_key_ipv4)
                     : sizeof(struct ovs_key_ipv6);

    a->type = AFXDP_ACTION_OTHER;
    if (nl_attr_get_size(key) != 2 * size) {
        a->other = "a malformed set action";
    } else if (v4) {
        const struct ovs_key_ipv4 *v = nl_attr_get(key), *m = v + 1;

        set_ip_action(a, 4, v->ipv4_tos, m->ipv4_tos, v->ipv4_ttl,
                      m->ipv4_ttl);
        a->set_ip.src = (OVS_FORCE uint32_t) v->ipv4_src;
        a->set_ip.src_mask = (OVS_FORCE uint32_t) m->ipv4_src;
        a->set_ip.dst = (OVS_FORCE uint32_t) v->ipv4_dst;
        a->set_ip.dst_mask = (OVS_FORCE uint32_t) m->ipv4_dst;
    } else {
        const struct ovs_key_ipv6 *v = nl_attr_get(key), *m = v + 1;

        set_ip_action(a, 6, v->ipv6_tclass, m->ipv6_tclass,
                      v->ipv6_hlimit, m->ipv6_hlimit);
        memcpy(a->set_ip.src6, &v->ipv6_src, 16);
        memcpy(a->set_ip.src6_mask, &m->ipv6_src, 16);
        memcpy(a->set_ip.dst6, &v->ipv6_dst, 16);
        memcpy(a->set_ip.dst6_mask, &m->ipv6_dst, 16);
        a->set_ip.label = (OVS_FORCE uint32_t) v->ipv6_label;
        a->set_ip.label_mask = (OVS_FORCE uint32_t) m->ipv6_label;
    }
}

/* A set or masked set of TCP's, UDP's or SCTP's ports, as
 * afxdp_flow_action's set_l4 says odp-execute.c makes it.  OVS sets both
 * ports with an unmasked set (its commit() drops a mask that is all ones),
 * which odp-execute.c carries out as a masked one with whole masks. */
static void
set_l4_from_ovs(const struct nlattr *key, bool masked,
                struct afxdp_flow_action *a)
{
    /* struct ovs_key_tcp, ovs_key_udp and ovs_key_sctp: the same two
     * ports. */
    const ovs_be16 *v = nl_attr_get(key), *m = masked ? v + 2 : NULL;

    BUILD_ASSERT_DECL(sizeof(struct ovs_key_tcp) == 4);
    BUILD_ASSERT_DECL(sizeof(struct ovs_key_udp) == 4);
    BUILD_ASSERT_DECL(sizeof(struct ovs_key_sctp) == 4);
    if (nl_attr_get_size(key) != (masked ? 2 : 1) * 4) {
        a->type = AFXDP_ACTION_OTHER;
        a->other = "a malformed set action";
        return;
    }
    a->type = AFXDP_ACTION_SET_L4;
    a->set_l4.proto = (nl_attr_type(key) == OVS_KEY_ATTR_TCP ? IPPROTO_TCP
                       : nl_attr_type(key) == OVS_KEY_ATTR_UDP ? IPPROTO_UDP
                       : IPPROTO_SCTP);
    a->set_l4.src = (OVS_FORCE uint16_t) v[0];
    a->set_l4.dst = (OVS_FORCE uint16_t) v[1];
    a->set_l4.src_mask = m ? (OVS_FORCE uint16_t) m[0] : 0xffff;
    a->set_l4.dst_mask = m ? (OVS_FORCE uint16_t) m[1] : 0xffff;
}

/* A set or masked set of the Ethernet addresses, or a masked set of IP
 * fields (set_ip_from_ovs()) or of TCP or UDP ports (set_l4_from_ovs());
 * anything else set is OTHER. */
static void
set_from_ovs(const struct nlattr *set, bool masked,
             struct afxdp_flow_action *a)
{
    const struct nlattr *key = nl_attr_get(set);
    const struct ovs_key_ethernet *eth, *eth_mask;

    if (nl_attr_get_size(set) < NLA_HDRLEN
        || key->nla_len < NLA_HDRLEN
        || key->nla_len > nl_attr_get_size(set)) {
        a->type = AFXDP_ACTION_OTHER;
        a->other = "a malformed set action";
        return;
    }
    if (masked && (nl_attr_type(key) == OVS_KEY_ATTR_IPV4
                   || nl_attr_type(key) == OVS_KEY_ATTR_IPV6)) {
        set_ip_from_ovs(key, a);
        return;
    }
    if (nl_attr_type(key) == OVS_KEY_ATTR_TCP
        || nl_attr_type(key) == OVS_KEY_ATTR_UDP
        || nl_attr_type(key) == OVS_KEY_ATTR_SCTP) {
        set_l4_from_ovs(key, masked, a);
        return;
    }
    if (nl_attr_type(key) != OVS_KEY_ATTR_ETHERNET
        || nl_attr_get_size(key) != (masked ? 2 : 1) * sizeof *eth) {
        a->type = AFXDP_ACTION_OTHER;
        a->other = "set of a field XDP does not set";
        return;
    }
    eth = nl_attr_get(key);
    eth_mask = masked ? eth + 1 : NULL;
    a->type = AFXDP_ACTION_SET_ETH;
    memcpy(a->set_eth.src, &eth->eth_src, 6);
    memcpy(a->set_eth.dst, &eth->eth_dst, 6);
    if (eth_mask) {
        memcpy(a->set_eth.src_mask, &eth_mask->eth_src, 6);
        memcpy(a->set_eth.dst_mask, &eth_mask->eth_dst, 6);
    } else {
        memset(a->set_eth.src_mask, 0xff, 6);
        memset(a->set_eth.dst_mask, 0xff, 6);
    }
}

size_t
netdev_offload_afxdp_actions(const struct nlattr *actions, size_t len,
                             netdev_offload_afxdp_port_func *port,
                             const void *aux,
                             struct afxdp_flow_action *out, size_t max)
{
    const struct nlattr *nla;
    size_t left, n = 0;

    if (!max) {
        return 0;
    }
    NL_ATTR_FOR_EACH (nla, left, actions, len) {
        unsigned type = nl_attr_type(nla);
        size_t size = nl_attr_get_size(nla);
        struct afxdp_flow_action *a;

        if (n == max) {
            a = &out[max - 1];
            memset(a, 0, sizeof *a);
            a->type = AFXDP_ACTION_OTHER;
            a->other = "more actions than the fast path looks at";
            return max;
        }
        a = &out[n++];
        memset(a, 0, sizeof *a);
        /* dpif-netdev's actions are well formed; a put through dpctl is
         * checked here all the same. */
        if ((type == OVS_ACTION_ATTR_OUTPUT && size != sizeof(odp_port_t))
            || (type == OVS_ACTION_ATTR_PUSH_VLAN
                && size != sizeof(struct ovs_action_push_vlan))) {
            a->type = AFXDP_ACTION_OTHER;
            a->other = "a malformed action";
            continue;
        }
        switch (type) {
        case OVS_ACTION_ATTR_OUTPUT:
            output_from_ovs(nl_attr_get_odp_port(nla), port, aux, a);
            break;
        case OVS_ACTION_ATTR_PUSH_VLAN: {
            const struct ovs_action_push_vlan *v = nl_attr_get(nla);

            a->type = AFXDP_ACTION_PUSH_VLAN;
            a->push_vlan.tpid = ntohs(v->vlan_tpid);
            a->push_vlan.tci = ntohs(v->vlan_tci);
            break;
        }
        case OVS_ACTION_ATTR_POP_VLAN:
            a->type = AFXDP_ACTION_POP_VLAN;
            break;
        case OVS_ACTION_ATTR_SET:
        case OVS_ACTION_ATTR_SET_MASKED:
            set_from_ovs(nla, type == OVS_ACTION_ATTR_SET_MASKED, a);
            break;
        case OVS_ACTION_ATTR_DROP:
            a->type = AFXDP_ACTION_DROP;
            break;
        default:
            a->type = AFXDP_ACTION_OTHER;
            a->other = odp_action_name(type);
            break;
        }
    }
    if (left) {
        /* Bytes no attribute accounts for: actions unread are actions
         * not executed. */
        struct afxdp_flow_action *a = &out[n < max ? n++ : max - 1];

        memset(a, 0, sizeof *a);
        a->type = AFXDP_ACTION_OTHER;
        a->other = "a malformed action";
    }
    return n;
}

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
