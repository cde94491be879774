/*
 * ovs-afxdp core: the C API of a port's offloaded flows, the megaflows OVS
 * offloaded to it, kept from the port's creation to its destruction
 * whatever devices it opens in between (registry.hh).  Each flow is kept
 * as translated (afxdp-offload.h's match and actions, their strings
 * copied), with where it runs, its mark, the counts OVS was told, and the
 * copies OVS's PMD threads put of it, so that:
 *   - a device the port opens with offload gets every flow again, and
 *     one it closes has its counts read a last time;
 *   - every packet XDP executed is told to OVS once (afxdp_flow_counts),
 *     across puts, deletes, reopens and copies;
 *   - OVS 3.7's marks are given here, and a marked packet finds its PMD
 *     thread's flow.
 * Conventions as in afxdp.h: errno results, no exceptions; every call may
 * come from any thread.  lib/netdev-offload-afxdp.c calls it, with what
 * it translated from OVS's types; lib/netdev-afxdp.c makes one per port
 * and tells it the port's devices.
 */
#ifndef AFXDP_FLOWS_H
#define AFXDP_FLOWS_H 1

#include "afxdp-offload.h"

#ifdef __cplusplus
extern "C" {
#endif

struct afxdp_flows;

/* Told, without the registry's locks held, that the port's status (its
 * redirect targets) changed: the caller shows it again. */
typedef void afxdp_flows_changed_func(void *aux);

/* A registry for the port named 'port' (for messages; copied). */
struct afxdp_flows *afxdp_flows_create(const char *port,
                                       afxdp_flows_changed_func *,
                                       void *aux) AFXDP_NOEXCEPT;
/* Forgets every flow (the references of their copies let go of) and
 * frees the registry. */
void afxdp_flows_destroy(struct afxdp_flows *) AFXDP_NOEXCEPT;

/* The port opened 'dev' with offload: every flow goes into its fast path
 * again, its XDP count starting at zero.  Says how many in the log. */
void afxdp_flows_attach(struct afxdp_flows *, struct afxdp_dev *)
    AFXDP_NOEXCEPT;
/* The port is about to close its device: each flow's XDP count is read a
 * last time and ends.  Until the next attach nothing runs in XDP. */
void afxdp_flows_detach(struct afxdp_flows *) AFXDP_NOEXCEPT;

/* Lets go of a flow reference of OVS's: dpif-netdev's callback (3.7 on). */
typedef void afxdp_flow_unref_func(unsigned pmd_id, void *reference);

/* One of OVS's copies of a megaflow, as a PMD thread put it (OVS 3.7 on,
 * where each PMD thread that installs a megaflow puts it). */
struct afxdp_flow_copy {
    unsigned pmd_id;
    void *reference;                /* OVS's flow, for the packets that
                                     * come with the mark. */
    const void *token;              /* What OVS asks for this copy's counts
                                     * with (its mega_ufid's address). */
    afxdp_flow_unref_func *unref;   /* For a reference the registry lets
                                     * go of itself (NULL: none). */
};

/* Puts the megaflow OVS knows by 'ufid': its match and actions are kept
 * (their strings copied) and put into the attached device's fast path.
 *   'mark'  the caller's for the flow (OVS 3.1 to 3.6 give one); 0 has
 *           the registry give a new flow one of its own: the one after
 *           the last given, never one in use nor the one freed last (a
 *           packet with it may still wait in a socket's ring);
 *   'copy'  NULL: one put per megaflow, each put put.  Else the copy
 *           that puts it: a flow already in the maps with the same
 *           actions only gains the copy, and '*previous' gets the
 *           reference the copy had (to let go of), NULL if none.
 * Returns 0 if the flow is kept: in the maps (executed in XDP, or its
 * packets handed to OVS with its mark), or put again with what XDP
 * cannot take (it left the maps; its count so far stays, as OVS has
 * been told it).  Else the flow is not kept, OVS keeps it in userspace:
 *   EOPNOTSUPP  no device with a fast path attached, or the match needs
 *               a field XDP does not parse (match_field);
 *   ENOSPC      the maps are full, or no mark is free;
 *   else        as afxdp_dev_flow_put().
 * 'refusal' (may be NULL) gets why XDP does not execute it whole. */
int afxdp_flows_put(struct afxdp_flows *, const uint32_t ufid[4],
                    const struct afxdp_flow_match *,
                    const struct afxdp_flow_action *, size_t n_actions,
                    uint32_t mark, const struct afxdp_flow_copy *copy,
                    void **previous,
                    enum afxdp_offload_refusal *refusal) AFXDP_NOEXCEPT;

/* Deletes the flow known by 'ufid' ('copy' NULL), or only 'copy' of it
 * (its pmd_id and reference), the flow going with its last copy.  A flow
 * deleted is taken out of the maps; what XDP counted after OVS's last
 * read is counted on the port (afxdp_fast_path_stats' untold).  'stats'
 * (may be NULL) gets what a reader that is no copy is told (no packets).
 * 0, or ENOENT. */
int afxdp_flows_del(struct afxdp_flows *, const uint32_t ufid[4],
                    const struct afxdp_flow_copy *copy,
                    struct afxdp_flow_stats *stats) AFXDP_NOEXCEPT;

/* Deletes every flow, as afxdp_flows_del() does, and lets go of their
 * copies' references. */
void afxdp_flows_flush(struct afxdp_flows *) AFXDP_NOEXCEPT;

/* Where a flow's packets are handled now. */
enum afxdp_flow_where {
    AFXDP_FLOW_IN_OVS,       /* Not in XDP: OVS handles them as if there
                              * were no fast path. */
    AFXDP_FLOW_PARTIAL,      /* Found in XDP, handed to OVS with the mark. */
    AFXDP_FLOW_IN_XDP,       /* Executed in XDP, its target taking XDP
                              * frames now. */
};

/* What OVS's copy 'token' of the flow is told now ('stats') and where the
 * flow runs.  'told': what that copy was told last, where the caller
 * keeps it (OVS 3.1 to 3.6 keep it in the copy), else NULL: a copy put
 * with that token is told from what the registry kept, any other reader
 * is no copy and told no packets.  Checks the redirect targets (at most
 * every 100 ms).  0, or ENOENT. */
int afxdp_flows_stats(struct afxdp_flows *, const uint32_t ufid[4],
                      const void *token, const struct afxdp_flow_stats *told,
                      struct afxdp_flow_stats *stats,
                      enum afxdp_flow_where *where) AFXDP_NOEXCEPT;

/* The reference PMD 'pmd_id' put for the flow with 'mark', NULL if none.
 * For each packet that comes with a mark: takes only a leaf lock. */
void *afxdp_flows_marked(struct afxdp_flows *, uint32_t mark,
                         unsigned pmd_id) AFXDP_NOEXCEPT;

/* The flows in the maps, each given to 'cb' (may be NULL): how many. */
typedef void afxdp_flows_each_func(const uint32_t ufid[4], void *aux);
size_t afxdp_flows_in_maps(struct afxdp_flows *, afxdp_flows_each_func *cb,
                           void *aux) AFXDP_NOEXCEPT;

/* Interface 'ifindex''s port is gone: no redirects to it from this port,
 * whatever its flows still say until OVS deletes them. */
void afxdp_flows_target_gone(struct afxdp_flows *, int ifindex)
    AFXDP_NOEXCEPT;

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* afxdp-flows.h */
