/*
 * ovs-afxdp: a megaflow as OVS gives it to an offload provider (struct
 * match, netlink datapath actions) translated into the core's
 * afxdp_flow_match and afxdp_flow_action (afxdp-offload.h), which the
 * core then judges (lib/afxdp/translate.cc).  For netdev-offload-afxdp.c, and
 * for tests/test-afxdp-xlate.c, which needs no datapath.
 */
#include <config.h>

#include "netdev-offload-afxdp.h"
#include "netdev-afxdp-compat.h"

#if OVS_AFXDP_NETDEV_FLOW_API || OVS_AFXDP_DPIF_OFFLOAD

#include <errno.h>
#include <string.h>

#include "netlink.h"
#include "odp-netlink.h"
#include "openvswitch/match.h"
#include "openvswitch/meta-flow.h"
#include "packets.h"
#include "util.h"

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

#endif
