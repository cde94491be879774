/*
 * ovs-afxdp: OVS's flow offload for afxdp ports, the XDP fast path
 * (Documentation/xdp-fast-path.rst).
 *
 * lib/netdev-offload-afxdp.c provides the flow offload API of the OVS it
 * is built into: the netdev flow API (OVS 3.1 to 3.6), or a dpif-offload
 * provider class (3.7 on).  It translates each megaflow dpif-netdev
 * offloads (struct match and netlink actions) for the core, keeps what it
 * was given so that a port reopened gets its flows again, and follows the
 * redirect targets.  lib/netdev-afxdp.c owns the ports and their cores;
 * the two talk through the calls below.
 */
#ifndef NETDEV_OFFLOAD_AFXDP_H
#define NETDEV_OFFLOAD_AFXDP_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* 'netdev' opened with the fast path, its maps empty: puts again every
 * flow OVS gave it.  Called with no lock held. */
void netdev_offload_afxdp_port_opened(struct netdev *netdev);

/* 'netdev' is about to reopen (its maps to close): reads XDP's counts of
 * its flows a last time, for netdev_offload_afxdp_port_opened() to end.
 * Called with no lock held. */
void netdev_offload_afxdp_port_closing(const struct netdev *netdev);

/* 'netdev' is being destroyed: forgets its flows and withdraws it as a
 * redirect target from every other port. */
void netdev_offload_afxdp_port_destroyed(const struct netdev *netdev);

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

/* --- lib/netdev-afxdp.c, for netdev-offload-afxdp.c.  Each returns
 * EOPNOTSUPP if 'netdev' is not an afxdp port running the fast path. --- */

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

/* True if 'netdev' hands OVS the marks of partially offloaded flows: if
 * it runs the fast path.  dpif-netdev computes no hash for a packet it
 * takes by its mark, and one computed later (the hash action, select
 * groups) would differ from the one its other packets got; so a mark goes
 * to OVS only with a hash, and the fast path gives every packet it parses
 * one: the driver's RX hash or, where the driver has none (generic mode,
 * XDP frames on veth), its own over the packet's 5-tuple. */
bool netdev_afxdp_takes_marks(const struct netdev *netdev);

/* afxdp_dev_flow_put_counted(), _del_counted(), _stats() (with
 * afxdp_dev_targets_run() first: the core checks the targets as OVS reads
 * its flows) and afxdp_dev_target_on() on the port's core.  A change of a
 * target's state changes the port's status. */
int netdev_afxdp_flow_put(const struct netdev *netdev, const ovs_u128 *ufid,
                          const struct afxdp_flow_match *match,
                          const struct afxdp_flow_action *actions,
                          size_t n_actions, uint32_t mark,
                          enum afxdp_offload_refusal *refusal,
                          struct afxdp_flow_counts *counts);
int netdev_afxdp_flow_del(const struct netdev *netdev, const ovs_u128 *ufid,
                          struct afxdp_flow_counts *counts);
int netdev_afxdp_flow_stats(const struct netdev *netdev, const ovs_u128 *ufid,
                            struct afxdp_flow_stats *stats);
bool netdev_afxdp_target_on(const struct netdev *netdev, int ifindex);
/* afxdp_dev_targets_drop() of 'gone''s interface on every other port. */
void netdev_afxdp_targets_drop(const struct netdev *gone);

/* Something 'netdev''s status shows changed: the bridge reads it again.
 * From any thread. */
void netdev_afxdp_status_changed(const struct netdev *netdev);

#endif /* netdev-offload-afxdp.h */
