/*
 * ovs-afxdp core: one port of ours as OVS sees it, from its creation to
 * its destruction (port.cc): its options, the device it opens with them,
 * its offloaded flows (afxdp-flows.h), and the policy around them: keep
 * the last good options when new ones are wrong, when to reopen, what a
 * failed open leaves, and what other ports learn when it opens or closes
 * (their shared UMEM, an interface it let go of, a redirect target gone).
 * lib/netdev-afxdp.c makes one per netdev and hands OVS's calls on.
 * Conventions as in afxdp.h.
 */
#ifndef AFXDP_PORT_H
#define AFXDP_PORT_H 1

#include "afxdp.h"
#include "afxdp-flows.h"
#include "afxdp-report.h"

#ifdef __cplusplus
extern "C" {
#endif

struct afxdp_port;

/* What a port asks of its embedder ('aux' as given at creation).  Called
 * with the core's port lock held: they must not call the core back. */
struct afxdp_port_hooks {
    void (*status_changed)(void *aux);   /* Read its status again. */
    void (*reconfigure)(void *aux);      /* Reopen it when you can
                                          * (afxdp_port_open()). */
};

/* A port named 'name' (its interface's), with the default options; 'aux'
 * is the embedder's object it belongs to (one port each). */
struct afxdp_port *afxdp_port_create(const char *name,
                                     const struct afxdp_port_hooks *,
                                     void *aux) AFXDP_NOEXCEPT;
/* Closes it, forgets its flows, and takes its interface 'ifindex' out of
 * every other port's redirects. */
void afxdp_port_destroy(struct afxdp_port *, int ifindex) AFXDP_NOEXCEPT;
/* The port created for 'aux', NULL if none (not one of ours, or
 * destroyed).  Takes only a leaf lock: safe from any thread, and from
 * the hooks. */
struct afxdp_port *afxdp_port_find(const void *aux) AFXDP_NOEXCEPT;

/* The options of OVS's set_config, read with 'lookup', for the port whose
 * interface now has index 'ifindex' (a negative errno if none).  Taken:
 * 0, and the port asks to reconfigure if they change what it opened, or
 * its interface changed.  Wrong: logged; a port configured before keeps
 * its options and its status says what was rejected (0); else EINVAL,
 * with why in 'err'. */
int afxdp_port_set_options(struct afxdp_port *, afxdp_option_lookup *,
                           const void *args, int ifindex, char *err,
                           size_t errlen) AFXDP_NOEXCEPT;

/* Whether OVS's reconfiguration must (re)open the port: it is not open,
 * or its interface ('ifindex'), its options, flow offload ('offload') or
 * an MTU it does not take ('mtu') changed. */
bool afxdp_port_needs_open(const struct afxdp_port *, int ifindex,
                           unsigned mtu, bool offload) AFXDP_NOEXCEPT;
/* Closes what is open and opens the port with its latest options on
 * interface 'ifindex' ('base' gives the rest; its ifname and port options
 * are the port's).  Its flows go into the new device's fast path.  On
 * failure (an errno) the port stays down, says why in its status and
 * log, and opens again when its options change. */
int afxdp_port_open(struct afxdp_port *, const struct afxdp_dev_config *base,
                    int ifindex) AFXDP_NOEXCEPT;
/* Closes it (its flows' XDP counts read a last time); true if it was open.
 * A port another port waits for (EBUSY) is asked to reconfigure. */
bool afxdp_port_close(struct afxdp_port *) AFXDP_NOEXCEPT;

/* Its device while open, else NULL. */
struct afxdp_dev *afxdp_port_dev(struct afxdp_port *) AFXDP_NOEXCEPT;
/* The queues its options ask for (OVS's n_rxq while it is down). */
unsigned afxdp_port_n_queues(const struct afxdp_port *) AFXDP_NOEXCEPT;
/* Its offloaded flows, as long as it lives. */
struct afxdp_flows *afxdp_port_flows(struct afxdp_port *) AFXDP_NOEXCEPT;

/* OVS has flow offload on ('offload') now: true if the port opened with
 * the other setting, and must reopen. */
bool afxdp_port_offload_differs(const struct afxdp_port *, bool offload)
    AFXDP_NOEXCEPT;

/* afxdp_dev_prog_lost() of its device, if it is open on interface
 * 'ifindex' still (not gone or renamed); the port's status then says so. */
bool afxdp_port_prog_lost(struct afxdp_port *, int ifindex) AFXDP_NOEXCEPT;

/* Its status keys: the device's (afxdp_dev_status()) while open, else why
 * it is down (afxdp_error); then a rejected option (config_error).
 * 'offload_off': why OVS has offload off, NULL if on. */
void afxdp_port_status(struct afxdp_port *, const char *offload_off,
                       afxdp_pair_func *, void *aux) AFXDP_NOEXCEPT;
/* What its queues dropped on sending while open (ring full, no frames,
 * too long), each owed kick made first: the backstop for coalesced kicks,
 * where a thread that owed one stopped polling (its queues moved away).
 * For a caller that asks every few seconds. */
uint64_t afxdp_port_tx_dropped(struct afxdp_port *) AFXDP_NOEXCEPT;
/* afxdp_dev_counters() of its device while open. */
void afxdp_port_counters(struct afxdp_port *, afxdp_counter_func *,
                         void *aux) AFXDP_NOEXCEPT;
/* The keys of OVS's get_config as OVS's C port had them up to 3.6:
 * xdp-mode, xdp-mode-in-use, use-need-wakeup (n_rxq is OVS's). */
void afxdp_port_get_config(struct afxdp_port *, afxdp_pair_func *,
                           void *aux) AFXDP_NOEXCEPT;

/* afxdp/show: the text of the port named 'name' (NULL: every port, then
 * the closed UMEMs still waiting for frames), handed to the callback
 * ('key' NULL) port by port.  ENOENT if there is no such port.
 * 'offload_off' as above. */
int afxdp_ports_show(const char *name, const char *offload_off,
                     afxdp_pair_func *, void *aux) AFXDP_NOEXCEPT;
/* afxdp/frames: where the frames of the UMEM of the running port named
 * 'name' are, over every port: 0, or ENOENT. */
int afxdp_ports_frames(const char *name, struct afxdp_umem_frames *)
    AFXDP_NOEXCEPT;

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* afxdp-port.h */
