/*
 * ovs-afxdp: OVS's flow offload for afxdp ports: megaflows dpif-netdev
 * offloads become flows of the port's XDP fast path
 * (Documentation/xdp-fast-path.rst).  Through whichever API the OVS built
 * has: the netdev flow API (3.1 to 3.6, "linux_afxdp") or a dpif-offload
 * provider class (3.7 on, "afxdp", listed in OVS's table of classes by
 * ovs-patches/dpif-offload-afxdp-class.patch).
 *
 * Here only what is OVS's: struct match and the netlink actions become the
 * core's afxdp_flow_match and afxdp_flow_action, and the core decides
 * what XDP can execute (lib/afxdp/flow.cc).  Each flow OVS gave is kept
 * (match, actions, mark), so that a port reopened with empty maps gets its
 * flows again.  The core follows the targets flows redirect to.
 */
#include <config.h>

#include "netdev-offload-afxdp.h"
#include "netdev-afxdp-compat.h"

#include <errno.h>
#include <string.h>

#include "openvswitch/dynamic-string.h"
#include "openvswitch/hmap.h"
#include "openvswitch/thread.h"
#include "openvswitch/vlog.h"
#include "util.h"

#if OVS_AFXDP_NETDEV_FLOW_API || OVS_AFXDP_DPIF_OFFLOAD

#include "dp-packet.h"
#include "dpif.h"
#include "hash.h"
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
#include "timeval.h"
#include "uuid.h"

VLOG_DEFINE_THIS_MODULE(netdev_offload_afxdp);

static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 20);


/* A megaflow OVS offloaded to one of our ports, as OVS gave it. */
struct offloaded_flow {
    struct hmap_node node;         /* In 'flows', by ufid. */
    const struct netdev *netdev;   /* The in_port. */
    ovs_u128 ufid;
    struct match match;
    struct nlattr *actions;        /* Netlink actions, 'actions_len'. */
    size_t actions_len;
    uint32_t mark;                 /* The flow's mark: dpif-netdev's (3.1
                                    * to 3.6), or ours (3.7 on). */
    bool in_maps;                  /* The core took the last put. */
    bool full;                     /* XDP executes it whole... */
    int target;                    /* ...redirecting to this ifindex (0:
                                    * none, a drop), if it takes XDP
                                    * frames now (the core says). */
    enum afxdp_offload_refusal refusal;   /* If not. */
    /* XDP's counts, told to OVS's copies of the megaflow each once. */
    struct afxdp_flow_counts counts;
#if OVS_AFXDP_DPIF_OFFLOAD
    const struct dpif_offload *offload;  /* Ours, of the in_port's dpif. */
    struct hmap_node mark_node;    /* In 'marks', by 'mark'. */
    /* dpif-netdev's flow of each PMD thread that put this megaflow (each
     * has one of its own), for the packets that come with the mark. */
    struct pmd_ref {
        unsigned pmd_id;
        void *flow_reference;
        const ovs_u128 *ufid;      /* The copy's own mega_ufid, which OVS
                                    * asks for its counts with. */
        struct afxdp_flow_stats told;   /* What that copy was told. */
    } *refs OVS_GUARDED_BY(refs_mutex);
    size_t n_refs OVS_GUARDED_BY(refs_mutex);
#endif
};

/* Lock order: 'offload_mutex', then netdev-afxdp.c's. */
static struct ovs_mutex offload_mutex = OVS_MUTEX_INITIALIZER;
#if OVS_AFXDP_DPIF_OFFLOAD
/* A leaf too: PMD threads take it for each packet that has a mark. */
static struct ovs_mutex refs_mutex = OVS_MUTEX_INITIALIZER;
static struct hmap marks OVS_GUARDED_BY(refs_mutex)
    = HMAP_INITIALIZER(&marks);
#endif
static struct hmap flows OVS_GUARDED_BY(offload_mutex)
    = HMAP_INITIALIZER(&flows);

static struct offloaded_flow *
flow_find(const struct netdev *netdev, const ovs_u128 *ufid)
    OVS_REQUIRES(offload_mutex)
{
    struct offloaded_flow *f;

    HMAP_FOR_EACH_WITH_HASH (f, node, hash_bytes(ufid, sizeof *ufid, 0),
                             &flows) {
        if (f->netdev == netdev && ovs_u128_equals(f->ufid, *ufid)) {
            return f;
        }
    }
    return NULL;
}

static void
flow_free(struct offloaded_flow *f)
    OVS_REQUIRES(offload_mutex)
{
    hmap_remove(&flows, &f->node);
    free(f->actions);
    free(f);
}

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
/* Flows into the core.                                               */
/* ------------------------------------------------------------------ */

/* At most this many actions are looked at: more than a few cannot be
 * executed in XDP anyway (one output, a VLAN change, Ethernet rewrites). */
#define MAX_ACTIONS 16

static struct netdev *output_netdev(const struct offloaded_flow *,
                                    odp_port_t);

/* netdev_offload_afxdp_port_func for the outputs of flow 'f_': the
 * datapath's port, if it is one the in_port's datapath knows. */
static bool
flow_output_port(const void *f_, odp_port_t port_no,
                 struct netdev_offload_afxdp_port *p)
{
    struct netdev *out = output_netdev(f_, port_no);

    if (!out) {
        return false;
    }
    p->ifindex = netdev_get_ifindex(out);
    p->name = netdev_get_name(out);   /* Lives as long as the port. */
    p->afxdp = netdev_afxdp_is_afxdp(out);
    netdev_close(out);
    return true;
}

/* Puts 'f' into its port's fast path.  Returns 0 (executed whole, or
 * partially offloaded: its packets reach OVS with its mark) or an errno.
 * Its count stays whole either way (the core reads it a last time if the
 * put takes it out of the maps). */
static int
flow_install(struct offloaded_flow *f)
    OVS_REQUIRES(offload_mutex)
{
    struct afxdp_flow_action actions[MAX_ACTIONS];
    struct afxdp_flow_match m;
    size_t n;
    int error;

    netdev_offload_afxdp_match(&f->match, &m);
    n = netdev_offload_afxdp_actions(f->actions, f->actions_len,
                                     flow_output_port, f,
                                     actions, ARRAY_SIZE(actions));
    error = netdev_afxdp_flow_put(f->netdev, &f->ufid, &m, actions, n,
                                  f->mark, &f->refusal, &f->counts);
    f->in_maps = !error;
    f->full = !error && f->refusal == AFXDP_REFUSED_N;
    f->target = 0;
    for (size_t i = 0; f->full && i < n; i++) {
        if (actions[i].type == AFXDP_ACTION_OUTPUT) {
            f->target = actions[i].output.ifindex;
        }
    }
    if (error == EOPNOTSUPP && m.unparsed_field) {
        VLOG_DBG_RL(&rl, "%s: flow "UUID_FMT" stays in userspace: it "
                    "matches on %s.", netdev_get_name(f->netdev),
                    UUID_ARGS((struct uuid *) &f->ufid), m.unparsed_field);
    } else if (error && error != EOPNOTSUPP) {
        VLOG_WARN_RL(&rl, "%s: flow "UUID_FMT" not offloaded to XDP: %s.",
                     netdev_get_name(f->netdev),
                     UUID_ARGS((struct uuid *) &f->ufid),
                     ovs_strerror(error));
    }
    return error;
}

/* Reads XDP's count of 'f' now. */
static void
flow_read_xdp(struct offloaded_flow *f)
    OVS_REQUIRES(offload_mutex)
{
    struct afxdp_flow_stats now;

    if (!netdev_afxdp_flow_stats(f->netdev, &f->ufid, &now)) {
        afxdp_flow_counts_read(&f->counts, &now);
    }
}

/* What one of OVS's copies of 'f' ('is_copy' false: a reader that is no
 * copy) is told now, into 'stats': '*told' comes in as what it was told
 * last, and goes out as what it is told. */
static void
flow_tell(struct offloaded_flow *f, bool is_copy,
          struct afxdp_flow_stats *told, struct dpif_flow_stats *stats)
    OVS_REQUIRES(offload_mutex)
{
    flow_read_xdp(f);
    afxdp_flow_counts_tell(&f->counts, is_copy, told);
    memset(stats, 0, sizeof *stats);
    stats->n_packets = told->n_packets;
    stats->n_bytes = told->n_bytes;
    stats->used = told->used_msec;
    stats->tcp_flags = told->tcp_flags;
}

/* 'f' leaves the fast path: what XDP counted after OVS's last read of it
 * is counted on its port (afxdp/show), as OVS asks for no final count. */
static void
flow_del_from_core(struct offloaded_flow *f)
    OVS_REQUIRES(offload_mutex)
{
    netdev_afxdp_flow_del(f->netdev, &f->ufid, &f->counts);
}

/* Finds or makes the flow of 'netdev' known by 'ufid' and gives it the
 * match and actions of the put; '*is_new' says which.  A flow already
 * there keeps its counts. */
static struct offloaded_flow *
flow_update(const struct netdev *netdev, const ovs_u128 *ufid,
            const struct match *match, const struct nlattr *actions,
            size_t actions_len, bool *is_new)
    OVS_REQUIRES(offload_mutex)
{
    struct offloaded_flow *f = flow_find(netdev, ufid);

    *is_new = !f;
    if (!f) {
        f = xzalloc(sizeof *f);
        f->netdev = netdev;
        f->ufid = *ufid;
        hmap_insert(&flows, &f->node, hash_bytes(ufid, sizeof *ufid, 0));
    } else {
        /* Its XDP count goes on (a flow put again keeps it). */
        free(f->actions);
    }
    f->match = *match;
    f->actions = xmemdup(actions, actions_len);
    f->actions_len = actions_len;
    return f;
}

static void flow_tell_copy(struct offloaded_flow *, const ovs_u128 *ufid,
                           struct dpif_flow_stats *)
    OVS_REQUIRES(offload_mutex);

/* The counts and state of the flow of 'netdev' known by 'ufid' for OVS's
 * copy of the megaflow whose mega_ufid 'ufid' points to: false if there is
 * none. */
static bool
flow_stats(const struct netdev *netdev, const ovs_u128 *ufid,
           struct dpif_flow_stats *stats, struct dpif_flow_attrs *attrs)
{
    struct offloaded_flow *f;

    ovs_mutex_lock(&offload_mutex);
    f = flow_find(netdev, ufid);
    if (f) {
        flow_tell_copy(f, ufid, stats);
        /* dpctl shows "offloaded:yes, dp:xdp", or "offloaded:partial"
         * where the packets still reach OVS, with their mark (if the port
         * uses marks: see netdev_afxdp_takes_marks()); a flow whose
         * target takes no XDP frames now is not offloaded at all: its
         * packets reach OVS untouched. */
        if (f->full
            && (!f->target || netdev_afxdp_target_on(netdev, f->target))) {
            attrs->offloaded = true;
            attrs->dp_layer = "xdp";
        } else {
            attrs->offloaded = f->in_maps && !f->full
                               && netdev_afxdp_takes_marks(netdev);
            attrs->dp_layer = "ovs";
        }
    }
    ovs_mutex_unlock(&offload_mutex);
    return f != NULL;
}

static void flow_forget(struct offloaded_flow *)
    OVS_REQUIRES(offload_mutex);

/* Deletes every flow of 'netdev', from the core's maps too if 'in_core'
 * (not for a port being destroyed). */
static void
flows_flush(const struct netdev *netdev, bool in_core)
    OVS_REQUIRES(offload_mutex)
{
    struct offloaded_flow *f;

    HMAP_FOR_EACH_SAFE (f, node, &flows) {
        if (f->netdev == netdev) {
            if (in_core) {
                flow_del_from_core(f);
            }
            flow_forget(f);
        }
    }
}

#if OVS_AFXDP_NETDEV_FLOW_API
/* ------------------------------------------------------------------ */
/* OVS 3.1 to 3.6: the netdev flow API.                               */
/* ------------------------------------------------------------------ */

static struct netdev *
output_netdev(const struct offloaded_flow *f, odp_port_t port_no)
{
    return netdev_ports_get(port_no, netdev_get_dpif_type(f->netdev));
}

static void
flow_forget(struct offloaded_flow *f)
    OVS_REQUIRES(offload_mutex)
{
    flow_free(f);
}

/* OVS asks with a pointer to the copy's own mega_ufid, whose last_stats
 * hold what it was told last. */
static void
flow_tell_copy(struct offloaded_flow *f, const ovs_u128 *ufid,
               struct dpif_flow_stats *stats)
    OVS_REQUIRES(offload_mutex)
{
    struct afxdp_flow_stats told;

    afxdp_ovs_flow_told(ufid, &told);
    flow_tell(f, true, &told, stats);
}

static int
afxdp_flow_put(struct netdev *netdev, struct match *match,
               struct nlattr *actions, size_t actions_len,
               const ovs_u128 *ufid, struct offload_info *info,
               struct dpif_flow_stats *stats)
{
    struct offloaded_flow *f;
    bool is_new;
    int error;

    ovs_mutex_lock(&offload_mutex);
    f = flow_update(netdev, ufid, match, actions, actions_len, &is_new);
    f->mark = info->flow_mark;
    error = flow_install(f);
    if (error && is_new) {
        /* Not in the maps: OVS keeps the flow in userspace. */
        flow_free(f);
    } else if (error) {
        /* Put again with what XDP cannot take (the core took the older
         * version out): XDP's count so far stays the flow's, as OVS has
         * been told it.  An error would have dpif-netdev delete the
         * offload, and with it that count, from the flow's statistics
         * (the next revalidator round would see them go back, and the
         * flow's deletion take them off its rule a second time). */
        error = 0;
    }
    ovs_mutex_unlock(&offload_mutex);

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
    return flow_stats(netdev, ufid, stats, attrs) ? 0 : ENOENT;
}

static int
afxdp_flow_del(struct netdev *netdev, const ovs_u128 *ufid,
               struct dpif_flow_stats *stats)
{
    struct offloaded_flow *f;
    int error = 0;

    ovs_mutex_lock(&offload_mutex);
    f = flow_find(netdev, ufid);
    if (f) {
        if (stats) {
            /* dpif-netdev asks for none; another caller is no copy. */
            struct afxdp_flow_stats told = { 0 };

            flow_tell(f, false, &told, stats);
        }
        flow_del_from_core(f);
        flow_free(f);
    } else {
        error = ENOENT;
    }
    ovs_mutex_unlock(&offload_mutex);
    return error;
}

static int
afxdp_flow_flush(struct netdev *netdev)
{
    ovs_mutex_lock(&offload_mutex);
    flows_flush(netdev, true);
    ovs_mutex_unlock(&offload_mutex);
    return 0;
}

static int
afxdp_flow_get_n_flows(struct netdev *netdev, uint64_t *n_flows)
{
    struct offloaded_flow *f;

    memset(n_flows, 0, netdev_offload_thread_nb() * sizeof *n_flows);
    ovs_mutex_lock(&offload_mutex);
    HMAP_FOR_EACH (f, node, &flows) {
        if (f->netdev == netdev && f->in_maps) {
            n_flows[netdev_offload_ufid_to_thread_id(f->ufid)]++;
        }
    }
    ovs_mutex_unlock(&offload_mutex);
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
    uint32_t last_mark;                       /* The mark given last
                                               * (see mark_alloc()). */
    dpif_offload_flow_unreference_cb *unref;  /* dpif-netdev's, for the
                                               * flow references we let
                                               * go of ourselves. */
    struct ovsthread_once once_enable;        /* hw-offload turned on. */
};

struct afxdp_offload_port {
    struct dpif_offload_port pm_port;
};

static struct afxdp_offload *
afxdp_offload_cast(const struct dpif_offload *offload)
{
    return CONTAINER_OF(offload, struct afxdp_offload, up);
}

static struct netdev *
output_netdev(const struct offloaded_flow *f, odp_port_t port_no)
{
    struct dpif_offload_port *port
        = dpif_offload_port_mgr_find_by_odp_port(f->offload, port_no);

    /* Only our ports are ours to know; only they take redirects. */
    return port ? netdev_ref(port->netdev) : NULL;
}

/* Drops 'f', its mark, and the flow references it held (telling
 * dpif-netdev). */
static void
flow_forget(struct offloaded_flow *f)
    OVS_REQUIRES(offload_mutex)
{
    struct afxdp_offload *o = afxdp_offload_cast(f->offload);

    ovs_mutex_lock(&refs_mutex);
    hmap_remove(&marks, &f->mark_node);
    for (size_t i = 0; i < f->n_refs; i++) {
        if (o->unref) {
            o->unref(f->refs[i].pmd_id, f->refs[i].flow_reference);
        }
    }
    free(f->refs);
    f->refs = NULL;
    f->n_refs = 0;
    ovs_mutex_unlock(&refs_mutex);
    flow_free(f);
}

/* Is 'mark' one of a flow's? */
static bool
mark_in_use(uint32_t mark)
    OVS_REQUIRES(offload_mutex)
{
    struct offloaded_flow *f;
    bool found = false;

    ovs_mutex_lock(&refs_mutex);
    HMAP_FOR_EACH_WITH_HASH (f, mark_node, hash_int(mark, 0), &marks) {
        if (f->mark == mark) {
            found = true;
            break;
        }
    }
    ovs_mutex_unlock(&refs_mutex);
    return found;
}

/* A mark for a new flow: the one after the last given, round the range
 * 1 .. UINT32_MAX - 1, skipping those in use.  Not the one freed last: a
 * packet XDP marked for a flow just deleted may still wait in a socket's
 * RX ring, and would be taken for the next flow given that mark.  Given
 * in order, a mark comes back only after four billion others.  False if
 * every mark is in use. */
static bool
mark_alloc(struct afxdp_offload *o, uint32_t *mark)
    OVS_REQUIRES(offload_mutex)
{
    for (uint32_t tries = 0; tries < UINT32_MAX - 1; tries++) {
        o->last_mark = o->last_mark >= UINT32_MAX - 1 ? 1 : o->last_mark + 1;
        if (!mark_in_use(o->last_mark)) {
            *mark = o->last_mark;
            return true;
        }
    }
    return false;
}

/* Makes 'ref' the flow reference of PMD 'pmd_id' for 'f', its copy of
 * the megaflow known by its own mega_ufid 'ufid', returning the reference
 * it replaces, if any.  A copy put again keeps what it was told; one that
 * replaces another starts from nothing. */
static void *
flow_set_ref(struct offloaded_flow *f, unsigned pmd_id, void *ref,
             const ovs_u128 *ufid)
    OVS_REQUIRES(offload_mutex)
{
    void *old = NULL;
    size_t i;

    ovs_mutex_lock(&refs_mutex);
    for (i = 0; i < f->n_refs && f->refs[i].pmd_id != pmd_id; i++) {
        continue;
    }
    if (i < f->n_refs) {
        old = f->refs[i].flow_reference;
        if (old != ref) {
            memset(&f->refs[i].told, 0, sizeof f->refs[i].told);
        }
    } else {
        f->refs = xrealloc(f->refs, (f->n_refs + 1) * sizeof *f->refs);
        memset(&f->refs[f->n_refs], 0, sizeof f->refs[f->n_refs]);
        f->refs[f->n_refs++].pmd_id = pmd_id;
    }
    f->refs[i].flow_reference = ref;
    f->refs[i].ufid = ufid;
    ovs_mutex_unlock(&refs_mutex);
    return old;
}

/* OVS asks with a pointer to the copy's own mega_ufid, as it put it: what
 * that copy was told is in its reference.  Any other reader is no copy. */
static void
flow_tell_copy(struct offloaded_flow *f, const ovs_u128 *ufid,
               struct dpif_flow_stats *stats)
    OVS_REQUIRES(offload_mutex)
{
    struct afxdp_flow_stats told = { 0 };
    bool copy = false;
    size_t i;

    /* The refs change only under 'offload_mutex', which we hold. */
    ovs_mutex_lock(&refs_mutex);
    for (i = 0; i < f->n_refs && f->refs[i].ufid != ufid; i++) {
        continue;
    }
    if (i < f->n_refs) {
        told = f->refs[i].told;
        copy = true;
    }
    ovs_mutex_unlock(&refs_mutex);
    flow_tell(f, copy, &told, stats);
    if (copy) {
        ovs_mutex_lock(&refs_mutex);
        f->refs[i].told = told;
        ovs_mutex_unlock(&refs_mutex);
    }
}

static int
afxdp_offload_flow_put(const struct dpif_offload *offload,
                       struct netdev *netdev, struct dpif_offload_flow_put *put,
                       void **previous_flow_reference)
{
    struct afxdp_offload *o = afxdp_offload_cast(offload);
    struct offloaded_flow *f;
    bool is_new, same;
    int error = 0;

    *previous_flow_reference = NULL;
    ovs_mutex_lock(&offload_mutex);
    f = flow_find(netdev, put->ufid);
    /* Each PMD thread puts the megaflow it installed: the first put goes
     * into the maps, the others only add their reference, unless the
     * actions changed (a revalidator's modification) or the flow is out
     * of the maps (its last put failed: try again).  The match is the
     * same: the ufid is its hash.  (Each PMD's struct match has its own
     * bytes outside the mask.) */
    same = f && f->in_maps && f->actions_len == put->actions_len
           && !memcmp(f->actions, put->actions, put->actions_len);
    if (!same) {
        f = flow_update(netdev, put->ufid, put->match, put->actions,
                        put->actions_len, &is_new);
        if (is_new) {
            f->offload = offload;
            if (!mark_alloc(o, &f->mark)) {
                flow_free(f);
                error = ENOSPC;
                goto out;
            }
            ovs_mutex_lock(&refs_mutex);
            hmap_insert(&marks, &f->mark_node, hash_int(f->mark, 0));
            ovs_mutex_unlock(&refs_mutex);
        }
        error = flow_install(f);
        if (error && is_new) {
            /* Not in the maps: OVS keeps the flow in userspace, on every
             * PMD. */
            flow_forget(f);
            goto out;
        }
        /* Put again with what XDP cannot take: out of the maps, its count
         * so far stays (see afxdp_flow_put() for 3.1 to 3.6). */
        error = 0;
    }
    *previous_flow_reference = flow_set_ref(f, put->pmd_id,
                                            put->flow_reference, put->ufid);
out:
    ovs_mutex_unlock(&offload_mutex);
    if (put->stats) {
        memset(put->stats, 0, sizeof *put->stats);
    }
    return error;
}

static int
afxdp_offload_flow_del(const struct dpif_offload *offload OVS_UNUSED,
                       struct netdev *netdev, struct dpif_offload_flow_del *del)
{
    struct offloaded_flow *f;
    bool held = false, last = false;

    ovs_mutex_lock(&offload_mutex);
    f = flow_find(netdev, del->ufid);
    if (f) {
        ovs_mutex_lock(&refs_mutex);
        for (size_t i = 0; i < f->n_refs; i++) {
            if (f->refs[i].pmd_id == del->pmd_id
                && f->refs[i].flow_reference == del->flow_reference) {
                f->refs[i] = f->refs[--f->n_refs];
                held = true;
                break;
            }
        }
        last = !f->n_refs;
        ovs_mutex_unlock(&refs_mutex);
    }
    if (del->stats) {
        memset(del->stats, 0, sizeof *del->stats);
    }
    if (held && last) {
        /* No PMD has the megaflow any more: out of XDP. */
        if (del->stats) {
            /* dpif-netdev asks for none; another caller is no copy. */
            struct afxdp_flow_stats told = { 0 };

            flow_tell(f, false, &told, del->stats);
        }
        flow_del_from_core(f);
        flow_forget(f);
    }
    ovs_mutex_unlock(&offload_mutex);
    return held ? 0 : ENOENT;
}

static bool
afxdp_offload_flow_stats(const struct dpif_offload *offload OVS_UNUSED,
                         struct netdev *netdev, const ovs_u128 *ufid,
                         struct dpif_flow_stats *stats,
                         struct dpif_flow_attrs *attrs)
{
    attrs->dp_extra_info = NULL;
    return flow_stats(netdev, ufid, stats, attrs);
}

static int
afxdp_offload_hw_post_process(const struct dpif_offload *offload OVS_UNUSED,
                              struct netdev *netdev, unsigned pmd_id,
                              struct dp_packet *packet, void **flow_reference)
{
    struct offloaded_flow *f;
    uint32_t mark;

    *flow_reference = NULL;
    if (!dp_packet_has_flow_mark(packet, &mark)) {
        return 0;
    }
    /* dpif-netdev holds every reference we have until it is deleted here
     * and past the RCU grace period after. */
    ovs_mutex_lock(&refs_mutex);
    HMAP_FOR_EACH_WITH_HASH (f, mark_node, hash_int(mark, 0), &marks) {
        if (f->mark == mark && f->netdev == netdev) {
            for (size_t i = 0; i < f->n_refs; i++) {
                if (f->refs[i].pmd_id == pmd_id) {
                    *flow_reference = f->refs[i].flow_reference;
                    break;
                }
            }
            break;
        }
    }
    ovs_mutex_unlock(&refs_mutex);
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
        ovs_mutex_lock(&offload_mutex);
        flows_flush(port->netdev, true);
        ovs_mutex_unlock(&offload_mutex);
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

    ovs_mutex_lock(&offload_mutex);
    DPIF_OFFLOAD_PORT_FOR_EACH (port, offload) {
        flows_flush(port->netdev, true);
    }
    ovs_mutex_unlock(&offload_mutex);
    return 0;
}

static uint64_t
afxdp_offload_flow_count(const struct dpif_offload *offload)
{
    struct offloaded_flow *f;
    uint64_t n = 0;

    ovs_mutex_lock(&offload_mutex);
    HMAP_FOR_EACH (f, node, &flows) {
        n += f->offload == offload && f->in_maps;
    }
    ovs_mutex_unlock(&offload_mutex);
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

/* ------------------------------------------------------------------ */
/* For netdev-afxdp.c.                                                */
/* ------------------------------------------------------------------ */

void
netdev_offload_afxdp_port_opened(struct netdev *netdev)
{
    struct offloaded_flow *f;
    size_t n = 0, failed = 0;

    /* The new core's maps and targets are empty. */
    ovs_mutex_lock(&offload_mutex);
    HMAP_FOR_EACH (f, node, &flows) {
        if (f->netdev != netdev) {
            continue;
        }
        /* Its XDP count ended with the old maps (read a last time by
         * netdev_offload_afxdp_port_closing()); the new one starts at
         * zero. */
        afxdp_flow_counts_end(&f->counts);
        n++;
        if (flow_install(f)) {
            /* OVS still takes it as offloaded: its packets go through
             * OVS without a mark, which is always right. */
            failed++;
        }
    }
    ovs_mutex_unlock(&offload_mutex);
    if (n) {
        VLOG_INFO("%s: put %"PRIuSIZE" offloaded flows into the new XDP "
                  "fast path (%"PRIuSIZE" failed).", netdev_get_name(netdev),
                  n, failed);
    }
}

void
netdev_offload_afxdp_port_closing(const struct netdev *netdev)
{
    struct offloaded_flow *f;

    ovs_mutex_lock(&offload_mutex);
    HMAP_FOR_EACH (f, node, &flows) {
        if (f->netdev == netdev) {
            flow_read_xdp(f);
        }
    }
    ovs_mutex_unlock(&offload_mutex);
}

void
netdev_offload_afxdp_port_destroyed(const struct netdev *netdev)
{
    ovs_mutex_lock(&offload_mutex);
    flows_flush(netdev, false);
    /* Its port leaves: no more redirects to it, whatever the flows still
     * say until OVS deletes them. */
    netdev_afxdp_targets_drop(netdev);
    ovs_mutex_unlock(&offload_mutex);
}

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

void
netdev_offload_afxdp_port_opened(struct netdev *netdev OVS_UNUSED)
{
}

void
netdev_offload_afxdp_port_closing(const struct netdev *netdev OVS_UNUSED)
{
}

void
netdev_offload_afxdp_port_destroyed(const struct netdev *netdev OVS_UNUSED)
{
}

#endif
