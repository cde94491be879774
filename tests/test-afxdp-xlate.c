/*
 * ovs-afxdp: the XDP fast path's translation of OVS megaflows, with no
 * datapath, no device and no root: `ovstest test-afxdp-xlate`.
 *
 *   ovstest test-afxdp-xlate [PORT...] < FLOWS
 *
 * Each PORT is NUMBER=NAME:IFINDEX[:afxdp], a datapath port an output may
 * name (":afxdp": one of ours, which takes redirects).  Each line of FLOWS
 * is a datapath flow as ovs-appctl dpctl/dump-flows writes it, "MATCH,
 * actions:ACTIONS"; OVS's own parsers make it a struct match and netlink
 * actions, as dpif-netdev hands them to our offload provider.  For each,
 * one line: what lib/netdev-offload-afxdp.c and the core make of it
 * (afxdp_flow_describe()).  Empty lines and lines starting with '#' are
 * copied as they are, so the output reads against the input.
 *
 *   ovstest test-afxdp-xlate --random N [SEED]
 *
 * checks the match translation on N random megaflows against a random
 * packet each: OVS's verdict (the packet's flow, as flow_extract() makes
 * it from the bytes flow_compose() wrote, equal to the megaflow's under
 * its mask, over all of struct flow) must be XDP's (the packet's key
 * equal to the flow's key under the key's mask), wherever the shim takes
 * the flow.  Half the megaflows are the packet's own with one bit of a
 * maskable field flipped.  It prints how many the shim refused, and of
 * the rest the near misses, the hits a bit away, and other packets' hits
 * and misses; at the first disagreement it prints both and exits 1.
 *
 *   ovstest test-afxdp-xlate --parse N [SEED]
 *
 * runs the XDP program's parser (the kernel's test run; root) and OVS's
 * flow_extract() on N random packets, a third cut short and a third with
 * a byte changed: wherever the parser takes a packet, its key must be the
 * one the shim makes of OVS's flow.
 *
 * tests/afxdp-offload.at runs all three.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp-packet.h"
#include "flow.h"
#include "netdev-afxdp-compat.h"
#include "netdev-offload-afxdp.h"
#include "odp-util.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/match.h"
#include "openvswitch/ofpbuf.h"
#include "ovstest.h"
#include "packets.h"
#include "random.h"
#include "util.h"

#if OVS_AFXDP_NETDEV_FLOW_API || OVS_AFXDP_DPIF_OFFLOAD

struct test_port {
    odp_port_t number;
    struct netdev_offload_afxdp_port port;
    char *arg;                  /* A copy that 'port.name' points into. */
};

struct test_ports {
    struct test_port *ports;
    size_t n;
};

static bool
test_port_find(const void *ports_, odp_port_t number,
               struct netdev_offload_afxdp_port *p)
{
    const struct test_ports *ports = ports_;

    for (size_t i = 0; i < ports->n; i++) {
        if (ports->ports[i].number == number) {
            *p = ports->ports[i].port;
            return true;
        }
    }
    return false;
}

/* NUMBER=NAME:IFINDEX[:afxdp]. */
static void
test_port_parse(const char *arg, struct test_port *tp)
{
    char *copy = xstrdup(arg), *save = NULL;
    char *number = strtok_r(copy, "=", &save);
    char *name = strtok_r(NULL, ":", &save);
    char *ifindex = strtok_r(NULL, ":", &save);
    char *kind = strtok_r(NULL, ":", &save);

    if (!number || !name || !ifindex || (kind && strcmp(kind, "afxdp"))) {
        ovs_fatal(0, "%s: a port is NUMBER=NAME:IFINDEX[:afxdp]", arg);
    }
    tp->number = u32_to_odp(atoi(number));
    tp->port.name = name;
    tp->arg = copy;
    tp->port.ifindex = atoi(ifindex);
    tp->port.afxdp = kind != NULL;
}

/* One flow line: its translation, or why OVS's parsers refused it. */
static void
test_flow(const char *line, const struct test_ports *ports, struct ds *out)
{
    const char *sep = strstr(line, "actions:");
    struct ofpbuf key, mask, actions;
    struct afxdp_flow_action xa[16];
    struct afxdp_flow_match xm;
    struct match match;
    char *match_s, *error = NULL;
    char buf[1024];
    size_t n;

    if (!sep) {
        ds_put_format(out, "error: no \"actions:\" in the line\n");
        return;
    }
    match_s = xmemdup0(line, sep - line);
    ofpbuf_init(&key, 0);
    ofpbuf_init(&mask, 0);
    ofpbuf_init(&actions, 0);
    if (odp_flow_from_string(match_s, NULL, &key, &mask, &error)) {
        ds_put_format(out, "error: match: %s\n", error);
        goto out;
    }
    if (odp_actions_from_string(sep + strlen("actions:"), NULL, &actions)) {
        ds_put_format(out, "error: actions do not parse\n");
        goto out;
    }
    /* dpif-netdev takes no flow whose key or mask fits less than
     * perfectly (an L4 key without its IP protocol, say): neither do we. */
    match_init_catchall(&match);
    if (odp_flow_key_to_flow(key.data, key.size, &match.flow, &error)) {
        ds_put_format(out, "error: key: %s\n",
                      error ? error : "does not fit exactly");
        goto out;
    }
    if (odp_flow_key_to_mask(mask.data, mask.size, &match.wc, &match.flow,
                             &error)) {
        ds_put_format(out, "error: mask: %s\n",
                      error ? error : "does not fit exactly");
        goto out;
    }

    netdev_offload_afxdp_match(&match, &xm);
    n = netdev_offload_afxdp_actions(actions.data, actions.size,
                                     test_port_find, ports,
                                     xa, ARRAY_SIZE(xa));
    afxdp_flow_describe(&xm, xa, n, buf, sizeof buf);
    ds_put_format(out, "%s\n", buf);

out:
    free(error);
    free(match_s);
    ofpbuf_uninit(&key);
    ofpbuf_uninit(&mask);
    ofpbuf_uninit(&actions);
}

/* --random: packets and megaflows. */

static uint32_t
pick(uint32_t n)
{
    return random_uint32() % n;
}

/* A packet's flow before flow_compose(): Ethernet with none or one VLAN
 * tag; IPv4 (TCP, UDP, ICMP, IGMP, GRE), IPv6 (TCP, UDP, ICMPv6 echo) or
 * ARP; values from small sets, so that random megaflows match them. */
static void
random_packet_flow(struct flow *f)
{
    static const uint8_t macs[][6] = {
        { 0x50, 0x54, 0, 0, 0, 1 }, { 0x50, 0x54, 0, 0, 0, 2 },
        { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
    };
    static const uint8_t ip4_protos[] = { IPPROTO_TCP, IPPROTO_UDP,
                                          IPPROTO_ICMP, IPPROTO_IGMP, 47 };
    static const uint8_t ip6_protos[] = { IPPROTO_TCP, IPPROTO_UDP,
                                          IPPROTO_ICMPV6 };
    static const uint16_t ports[] = { 80, 443, 1234 };
    static const uint8_t frags[] = { 0, 0, 0, FLOW_NW_FRAG_ANY,
                                     FLOW_NW_FRAG_ANY | FLOW_NW_FRAG_LATER };

    memset(f, 0, sizeof *f);
    f->in_port.odp_port = u32_to_odp(1);
    f->packet_type = htonl(PT_ETH);
    memcpy(&f->dl_src, macs[pick(2)], ETH_ADDR_LEN);
    memcpy(&f->dl_dst, macs[pick(3)], ETH_ADDR_LEN);
    if (pick(3) == 0) {
        f->vlans[0].tpid = htons(pick(4) ? ETH_TYPE_VLAN_8021Q
                                         : ETH_TYPE_VLAN_8021AD);
        f->vlans[0].tci = htons(VLAN_CFI | (pick(3) << 13) | (1 + pick(2)));
    }
    switch (pick(3)) {
    case 0:
        f->dl_type = htons(ETH_TYPE_IP);
        f->nw_src = htonl(0x0a000001 + pick(2));
        f->nw_dst = htonl(0x0a000001 + pick(3) * 0x100);
        f->nw_proto = ip4_protos[pick(ARRAY_SIZE(ip4_protos))];
        f->nw_frag = frags[pick(ARRAY_SIZE(frags))];
        break;
    case 1:
        f->dl_type = htons(ETH_TYPE_IPV6);
        f->ipv6_src.s6_addr[0] = 0xfd;
        f->ipv6_src.s6_addr[15] = 1 + pick(2);
        f->ipv6_dst.s6_addr[0] = 0xfd;
        f->ipv6_dst.s6_addr[1] = pick(2);
        f->ipv6_dst.s6_addr[15] = 1 + pick(2);
        f->ipv6_label = htonl(pick(2));
        f->nw_proto = ip6_protos[pick(ARRAY_SIZE(ip6_protos))];
        break;
    default:
        f->dl_type = htons(ETH_TYPE_ARP);
        f->nw_src = htonl(0x0a000001 + pick(2));
        f->nw_dst = htonl(0x0a000001 + pick(2));
        f->nw_proto = 1 + pick(2);
        memcpy(&f->arp_sha, macs[pick(2)], ETH_ADDR_LEN);
        memcpy(&f->arp_tha, macs[pick(3)], ETH_ADDR_LEN);
        return;
    }
    f->nw_ttl = pick(2) ? 64 : 1;
    f->nw_tos = pick(2) ? 0 : 0x10;
    if (f->nw_proto == IPPROTO_TCP || f->nw_proto == IPPROTO_UDP) {
        f->tp_src = htons(ports[pick(ARRAY_SIZE(ports))]);
        f->tp_dst = htons(ports[pick(ARRAY_SIZE(ports))]);
        if (f->nw_proto == IPPROTO_TCP) {
            f->tcp_flags = htons(pick(2) ? TCP_SYN : TCP_ACK);
        }
    } else if (f->nw_proto == IPPROTO_ICMP) {
        f->tp_src = htons(pick(2) ? ICMP4_ECHO_REQUEST : ICMP4_ECHO_REPLY);
    } else if (f->nw_proto == IPPROTO_ICMPV6) {
        f->tp_src = htons(pick(2) ? ICMP6_ECHO_REQUEST : ICMP6_ECHO_REPLY);
    } else if (f->nw_proto == IPPROTO_IGMP) {
        f->tp_src = htons(0x16);
        f->igmp_group_ip4 = htonl(0xe0000001 + pick(2));
    }
}

/* What OVS's datapath sees of the packet 'f' describes: its bytes, parsed
 * again. */
static void
packet_flow(const struct flow *f, struct flow *seen)
{
    struct dp_packet *packet = dp_packet_new(0);

    afxdp_flow_compose(packet, f);
    pkt_metadata_init(&packet->md, f->in_port.odp_port);
    flow_extract(packet, seen);
    dp_packet_delete(packet);
}

/* The fields of struct flow a megaflow's mask may touch. */
#define FIELD(F) { offsetof(struct flow, F), sizeof ((struct flow *) 0)->F }
static const struct { size_t ofs, len; } fields[] = {
    FIELD(dl_dst), FIELD(dl_src), FIELD(vlans[0]), FIELD(vlans[1]),
    FIELD(nw_src), FIELD(nw_dst), FIELD(ipv6_src), FIELD(ipv6_dst),
    FIELD(ipv6_label), FIELD(nw_proto), FIELD(nw_tos), FIELD(nw_ttl),
    FIELD(nw_frag), FIELD(tp_src), FIELD(tp_dst), FIELD(arp_sha),
    FIELD(arp_tha), FIELD(tcp_flags), FIELD(igmp_group_ip4),
    FIELD(nd_target), FIELD(mpls_lse[0]), FIELD(recirc_id),
    FIELD(pkt_mark),
};
#undef FIELD

/* Each of 'fields' masked whole, not at all, or at random; dl_type is
 * almost always exact, as OVS makes it. */
static void
random_mask(struct flow_wildcards *wc)
{
    uint8_t *mask = (uint8_t *) &wc->masks;

    flow_wildcards_init_catchall(wc);
    for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
        uint32_t how = pick(8);

        for (size_t j = 0; j < fields[i].len; j++) {
            mask[fields[i].ofs + j] = how < 4 ? 0
                                      : how < 7 ? 0xff : random_uint8();
        }
    }
    wc->masks.dl_type = pick(16) ? OVS_BE16_MAX : 0;
    wc->masks.in_port.odp_port = u32_to_odp(UINT32_MAX);
}

static bool
flow_hit(const struct flow *packet, const struct match *m)
{
    const uint8_t *p = (const uint8_t *) packet;
    const uint8_t *f = (const uint8_t *) &m->flow;
    const uint8_t *w = (const uint8_t *) &m->wc.masks;

    for (size_t i = 0; i < sizeof *packet; i++) {
        if ((p[i] ^ f[i]) & w[i]) {
            return false;
        }
    }
    return true;
}

static bool
key_hit(const struct afxdp_flow_key *packet, const struct afxdp_flow_match *m)
{
    const uint8_t *p = (const uint8_t *) packet;
    const uint8_t *k = (const uint8_t *) &m->key;
    const uint8_t *w = (const uint8_t *) &m->mask;

    for (size_t i = 0; i < sizeof *packet; i++) {
        if ((p[i] ^ k[i]) & w[i]) {
            return false;
        }
    }
    return true;
}

/* Checks the match translation on 'n' random megaflows against packets:
 * half of them another packet's flow, half the packet's own with one bit
 * of a field a mask may touch flipped (a near miss where the mask covers
 * that bit, a hit where it does not).  Says how many of each kind. */
static void
test_random(int n, uint32_t seed)
{
    int refused = 0, near_misses = 0, near_hits = 0, hits = 0, misses = 0;

    random_set_seed(seed);
    for (int i = 0; i < n; i++) {
        struct flow packet, other, megaflow;
        struct flow_wildcards wc;
        struct afxdp_flow_match xm, xp;
        struct match match, exact;

        random_packet_flow(&other);
        packet_flow(&other, &packet);
        /* The megaflow, under a random mask. */
        bool near = pick(2);
        if (!near) {
            random_packet_flow(&other);
            packet_flow(&other, &megaflow);
        } else {
            size_t f = pick(ARRAY_SIZE(fields));

            megaflow = packet;
            ((uint8_t *) &megaflow)[fields[f].ofs + pick(fields[f].len)]
                ^= 1 << pick(8);
        }
        random_mask(&wc);
        match_init(&match, &megaflow, &wc);
        netdev_offload_afxdp_match(&match, &xm);
        if (xm.unparsed_field) {
            refused++;
            continue;
        }

        /* The packet's key: its flow's fields where the key has them, as
         * the XDP program's parser fills them
         * (tests/unit/test-fastpath-parse.cc checks the parser against
         * OVS's). */
        memset(&wc.masks, 0xff, sizeof wc.masks);
        match_init(&exact, &packet, &wc);
        netdev_offload_afxdp_match(&exact, &xp);

        bool ovs = flow_hit(&packet, &match);
        if (ovs != key_hit(&xp.key, &xm)) {
            struct ds s = DS_EMPTY_INITIALIZER;
            char buf[1024];

            ds_put_format(&s, "flow %d of seed %"PRIu32": OVS %s, XDP %s\n",
                          i, seed, ovs ? "hits" : "misses",
                          ovs ? "misses" : "hits");
            ds_put_cstr(&s, "packet: ");
            flow_format(&s, &packet, NULL);
            ds_put_cstr(&s, "\nmegaflow: ");
            match_format(&match, NULL, &s, OFP_DEFAULT_PRIORITY);
            afxdp_flow_describe(&xm, NULL, 0, buf, sizeof buf);
            ds_put_format(&s, "\nin XDP: %s\n", buf);
            fputs(ds_cstr(&s), stdout);
            ds_destroy(&s);
            exit(1);
        }
        if (near) {
            *(ovs ? &near_hits : &near_misses) += 1;
        } else {
            *(ovs ? &hits : &misses) += 1;
        }
    }
    printf("%d megaflows: %d refused, %d taken: %d near misses, %d hits a "
           "bit away, %d / %d other packets' hits / misses, as in OVS\n",
           n, refused, n - refused, near_misses, near_hits, hits, misses);
}

/* --parse: the XDP program's parser, run by the kernel, against OVS's
 * flow_extract() (miniflow_extract()) on the same bytes: random packets,
 * a third cut short (to an Ethernet header at least) and a third with a
 * byte changed past the Ethernet addresses.  Wherever the parser takes a packet, its key must be the one
 * the shim makes of OVS's flow. */
static void
test_parse(int n, uint32_t seed)
{
    int parsed = 0, punted = 0;

    random_set_seed(seed);
    for (int i = 0; i < n; i++) {
        struct dp_packet *packet = dp_packet_new(0);
        struct afxdp_flow_match xm;
        struct afxdp_flow_key key;
        struct flow_wildcards wc;
        struct flow f, seen;
        struct match exact;

        random_packet_flow(&f);
        afxdp_flow_compose(packet, &f);
        switch (pick(3)) {
        case 0:
            /* Not below an Ethernet header: no driver hands XDP less. */
            dp_packet_set_size(packet, ETH_HEADER_LEN
                               + pick(dp_packet_size(packet)
                                      - ETH_HEADER_LEN + 1));
            break;
        case 1:
            if (dp_packet_size(packet) > 12) {
                uint8_t *b = dp_packet_data(packet);

                b[12 + pick(dp_packet_size(packet) - 12)] = random_uint8();
            }
            break;
        }
        int verdict = afxdp_fast_path_parse(dp_packet_data(packet),
                                            dp_packet_size(packet), &key);
        if (verdict < 0) {
            ovs_fatal(-verdict, "running the XDP parser");
        }
        if (verdict) {
            punted++;
            dp_packet_delete(packet);
            continue;
        }
        parsed++;
        pkt_metadata_init(&packet->md, f.in_port.odp_port);
        flow_extract(packet, &seen);
        memset(&wc.masks, 0xff, sizeof wc.masks);
        match_init(&exact, &seen, &wc);
        netdev_offload_afxdp_match(&exact, &xm);
        if (memcmp(&key, &xm.key, sizeof key)) {
            struct ds d = DS_EMPTY_INITIALIZER;

            ds_put_format(&d, "packet %d of seed %"PRIu32": the XDP parser's "
                          "key is not OVS's\n", i, seed);
            ds_put_hex_dump(&d, dp_packet_data(packet),
                            dp_packet_size(packet), 0, false);
            ds_put_cstr(&d, "OVS: ");
            flow_format(&d, &seen, NULL);
            ds_put_cstr(&d, "\nXDP key / OVS's key, by byte:\n");
            ds_put_hex_dump(&d, &key, sizeof key, 0, false);
            ds_put_hex_dump(&d, &xm.key, sizeof xm.key, 0, false);
            fputs(ds_cstr(&d), stdout);
            ds_destroy(&d);
            exit(1);
        }
        dp_packet_delete(packet);
    }
    printf("%d packets: %d parsed, keys as flow_extract()'s; %d punted\n",
           n, parsed, punted);
}

static void
test_afxdp_xlate_main(int argc, char *argv[])
{
    struct test_ports ports = { xcalloc(MAX(argc, 1), sizeof *ports.ports),
                                0 };
    struct ds line = DS_EMPTY_INITIALIZER, out = DS_EMPTY_INITIALIZER;

    if (argc > 1 && !strcmp(argv[1], "--random")) {
        if (argc < 3 || argc > 4) {
            ovs_fatal(0, "usage: test-afxdp-xlate --random N [SEED]");
        }
        test_random(atoi(argv[2]), argc > 3 ? strtoul(argv[3], NULL, 0) : 1);
        free(ports.ports);
        return;
    }
    if (argc > 1 && !strcmp(argv[1], "--parse")) {
        if (argc < 3 || argc > 4) {
            ovs_fatal(0, "usage: test-afxdp-xlate --parse N [SEED]");
        }
        test_parse(atoi(argv[2]), argc > 3 ? strtoul(argv[3], NULL, 0) : 1);
        free(ports.ports);
        return;
    }
    for (int i = 1; i < argc; i++) {
        test_port_parse(argv[i], &ports.ports[ports.n++]);
    }
    while (!ds_get_line(&line, stdin)) {
        const char *s = ds_cstr(&line);

        ds_clear(&out);
        if (!s[strspn(s, " ")] || s[strspn(s, " ")] == '#') {
            ds_put_format(&out, "%s\n", s);
        } else {
            test_flow(s, &ports, &out);
        }
        fputs(ds_cstr(&out), stdout);
    }
    ds_destroy(&line);
    ds_destroy(&out);
    for (size_t i = 0; i < ports.n; i++) {
        free(ports.ports[i].arg);
    }
    free(ports.ports);
}

#else  /* No flow offload API our provider implements. */

static void
test_afxdp_xlate_main(int argc OVS_UNUSED, char *argv[] OVS_UNUSED)
{
    ovs_fatal(0, "this OVS has no flow offload API the fast path uses");
}

#endif

OVSTEST_REGISTER("test-afxdp-xlate", test_afxdp_xlate_main);
