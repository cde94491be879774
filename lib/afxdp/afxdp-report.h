/*
 * ovs-afxdp core: what a port shows its operator (report.cc): the keys of
 * its status (ovs-vsctl get interface X status), the text of
 * ovs-appctl afxdp/show, its per-queue counters (custom statistics) and
 * where its UMEM's frames are.  Each from one list in the core, so that
 * a shim only hands the lines on.  Conventions as in afxdp.h.
 */
#ifndef AFXDP_REPORT_H
#define AFXDP_REPORT_H 1

#include "afxdp.h"
#include "afxdp-offload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One key and its value ('aux' is the caller's). */
typedef void afxdp_pair_func(void *aux, const char *key, const char *value);

/* The status of a running device, key by key in a fixed order: its XDP
 * mode, need_wakeup, rings, UMEM, coalescing, multi-buffer, hints, program
 * and fast path, each reason key only where there is a reason.
 * 'offload_off': why OVS has flow offload off (the shim knows), NULL if
 * it has it on. */
void afxdp_dev_status(struct afxdp_dev *, const char *offload_off,
                      afxdp_pair_func *, void *aux) AFXDP_NOEXCEPT;

/* Where the frames of one UMEM are, over every queue of every device that
 * shares it: free + in_kernel + kept + in_ovs = total. */
struct afxdp_umem_frames {
    uint32_t umem_id;
    uint32_t total;
    uint32_t free;                  /* In the UMEM's pool. */
    uint64_t in_kernel;             /* In fill, RX, TX or completion rings. */
    uint64_t kept;                  /* Kept by queues for their next sends. */
    uint32_t in_ovs;                /* Held by the caller as packets. */
};
/* Adds the device's queues to '*u' if it uses UMEM u->umem_id (set it,
 * zero the rest, then add every device). */
void afxdp_umem_frames_add(struct afxdp_umem_frames *u,
                           struct afxdp_dev *) AFXDP_NOEXCEPT;

/* afxdp/show's text of a running device, after the line with its name:
 * lines indented by two spaces, each ending in a newline, handed to the
 * callback at once ('key' is NULL).  'umem': its UMEM's frames, counted
 * over every device (afxdp_umem_frames_add()). */
void afxdp_dev_show(struct afxdp_dev *, const char *offload_off,
                    const struct afxdp_umem_frames *umem,
                    afxdp_pair_func *, void *aux) AFXDP_NOEXCEPT;

/* Each queue's counters, "xsk_queue_N_NAME" and its value: the queue's
 * (AFXDP_QUEUE_STATS), then the kernel's (AFXDP_XDP_STATS, those it
 * gives).  At most AFXDP_DEV_COUNTERS_PER_QUEUE per queue. */
#define AFXDP_STAT(NAME) + 1
enum { AFXDP_DEV_COUNTERS_PER_QUEUE = 0 AFXDP_QUEUE_STATS AFXDP_XDP_STATS };
#undef AFXDP_STAT
typedef void afxdp_counter_func(void *aux, const char *name, uint64_t value);
void afxdp_dev_counters(struct afxdp_dev *, afxdp_counter_func *, void *aux)
    AFXDP_NOEXCEPT;

/* True the first time it finds the device's XDP program no longer
 * attached (another process detached or replaced it), which it logs as a
 * warning with what the operator can do; false before and after.  Asks
 * the kernel: for a caller that looks every few seconds. */
bool afxdp_dev_prog_lost(struct afxdp_dev *) AFXDP_NOEXCEPT;

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* afxdp-report.h */
