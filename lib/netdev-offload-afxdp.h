/*
 * ovs-afxdp: OVS's flow offload for afxdp ports, the XDP fast path
 * (Documentation/xdp-fast-path.rst).
 *
 * lib/netdev-offload-afxdp.c provides the flow offload API of the OVS it
 * is built into: the netdev flow API (OVS 3.1 to 3.6), or a dpif-offload
 * provider class (3.7 on).  It translates each megaflow dpif-netdev
 * offloads (struct match and netlink actions) for the core's registry of
 * the port's flows (afxdp-flows.h), which keeps them across the port's
 * reopens, counts them and follows their redirect targets.
 * lib/netdev-afxdp.c owns the ports, their cores and registries; the two
 * talk through the calls below.
 */
#ifndef NETDEV_OFFLOAD_AFXDP_H
#define NETDEV_OFFLOAD_AFXDP_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "afxdp-flows.h"
#include "afxdp-offload.h"
#include "openvswitch/types.h"

struct ds;
struct match;
struct netdev;
struct nlattr;
struct smap;

/* --- lib/netdev-offload-afxdp.c, for netdev-afxdp.c. --- */

/* Registers our flow API with OVS; once, before the first port joins a
 * datapath. */
void netdev_offload_afxdp_register(void);

/* True if OVS has flow offload on (other_config:hw-offload) and this OVS
 * has the API our provider implements: ports then open with the fast
 * path.  False with the reason in '*why' (may be NULL). */
bool netdev_offload_afxdp_enabled(const char **why);

/* The translation of a megaflow for the core, which decides what XDP
 * executes (afxdp_flow_describe() shows what it made of one).  Also for
 * tests/test-afxdp-xlate.c, which needs no datapath.  Built only for an
 * OVS with a flow offload API our provider implements. */

/* 'match' as the core's: the fields the key holds; a mask on any other
 * field that is not zero on every packet the XDP program looks up names
 * that field in 'm->unparsed_field', and so does a mask on network fields
 * without an exact eth_type. */
void netdev_offload_afxdp_match(const struct match *match,
                                struct afxdp_flow_match *m);

/* A datapath port that an output action names. */
struct netdev_offload_afxdp_port {
    int ifindex;
    const char *name;        /* Must outlive the translated actions. */
    bool afxdp;              /* One of our ports (it may take redirects). */
};
/* Fills '*p' for datapath port 'port_no'; false if there is none. */
typedef bool netdev_offload_afxdp_port_func(const void *aux,
                                            odp_port_t port_no,
                                            struct netdev_offload_afxdp_port *p);

/* Netlink datapath actions 'actions' ('len' bytes) as the core's, into
 * 'out' (room for 'max'); returns how many.  An action the core has no
 * type for is AFXDP_ACTION_OTHER with its name; more actions than room
 * makes the last one OTHER, which keeps the flow out of XDP. */
size_t netdev_offload_afxdp_actions(const struct nlattr *actions, size_t len,
                                    netdev_offload_afxdp_port_func *port,
                                    const void *aux,
                                    struct afxdp_flow_action *out,
                                    size_t max);

/* --- lib/netdev-afxdp.c, for netdev-offload-afxdp.c. --- */

/* True if 'netdev' is one of our ports (type afxdp or afxdp-nonpmd). */
bool netdev_afxdp_is_afxdp(const struct netdev *netdev);

/* OVS turned offload on for 'netdev': reopens it with the fast path if
 * it runs without. */
void netdev_afxdp_offload_changed(struct netdev *netdev);
/* The datapath has removed 'netdev' (OVS 3.7 and later tell its offload
 * provider, which holds the netdev until an RCU grace period has passed):
 * its sockets and program go now, so that a port replacing it on the same
 * interface (a type change) can open at once. */
void netdev_afxdp_datapath_released(struct netdev *netdev);

/* The registry of 'netdev''s offloaded flows, as long as the netdev
 * lives; NULL if it is not one of our ports.  A flow found there
 * partially offloaded hands OVS its mark with each packet, always with a
 * hash: dpif-netdev computes none for a packet it takes by its mark, and
 * one computed later (the hash action, select groups) would differ from
 * the one its other packets got; so the fast path gives every packet it
 * parses one, the driver's RX hash or, where the driver has none
 * (generic mode, XDP frames on veth), its own over the 5-tuple. */
struct afxdp_flows *netdev_afxdp_flows(const struct netdev *netdev);

/* Something 'netdev''s status shows changed: the bridge reads it again.
 * From any thread. */
void netdev_afxdp_status_changed(const struct netdev *netdev);

#endif /* netdev-offload-afxdp.h */
