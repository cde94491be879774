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
 * tests/afxdp-offload.at runs it.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netdev-afxdp-ovs.h"
#include "netdev-offload-afxdp.h"
#include "odp-util.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/match.h"
#include "openvswitch/ofpbuf.h"
#include "ovstest.h"
#include "util.h"

#if OVS_AFXDP_NETDEV_FLOW_API || OVS_AFXDP_DPIF_OFFLOAD

struct test_port {
    odp_port_t number;
    struct netdev_offload_afxdp_port port;
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
    tp->port.name = name;           /* 'copy' lives as long as the run. */
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

static void
test_afxdp_xlate_main(int argc, char *argv[])
{
    struct test_ports ports = { xcalloc(MAX(argc, 1), sizeof *ports.ports),
                                0 };
    struct ds line = DS_EMPTY_INITIALIZER, out = DS_EMPTY_INITIALIZER;

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
