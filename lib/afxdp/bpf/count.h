/* Counting: the fast path's per-CPU counters (AFXDP_FP_*) and a flow's
 * statistics for OVS (packets, bytes, last use, TCP flags). */

#ifndef AFXDP_BPF_COUNT_H
#define AFXDP_BPF_COUNT_H 1

#include "kernel.h"
#include "maps.h"

static __always_inline void
count(__u32 counter)
{
    __u64 *c = bpf_map_lookup_elem(&fp_counters, &counter);
    if (c) {
        *c += 1;   /* Per CPU: no other writer. */
    }
}

/* Whether the watcher saw the kernel refuse this port's redirects to
 * 'ifindex' since the core last put it in fp_ports. */
static __always_inline int
target_failing(const struct afxdp_fp_config *cfg, __u32 ifindex)
{
    return cfg && cfg->targets_failing
           && bpf_map_lookup_elem(&fp_failing, &ifindex);
}

/* The kernel's tick rate, from its configuration (libbpf reads it from
 * /proc/config.gz or /boot/config-*): 0 where it finds neither. */
extern const int CONFIG_HZ __kconfig __weak;

/* The time of a hit, as cheaply as the kernel has one, for a time OVS
 * shows in milliseconds: jiffies, one load, where the tick rate is known
 * (the core turns them into CLOCK_MONOTONIC with afxdp_fp_clock's
 * reading); else the coarse clock, a timekeeper read that costs 13 ns a
 * packet here (the precise clock, a paravirtual clock read in a VM, a
 * sixth of the program's time). */
static __always_inline __u64
hit_time(void)
{
    return CONFIG_HZ > 0 ? bpf_jiffies64() : bpf_ktime_get_coarse_ns();
}

/* A packet the flow's actions were carried out on in XDP, for OVS's
 * statistics of the flow: 'len' as OVS counts it (a stripped tag
 * included), and its TCP flags (0 if it is no TCP segment).  A packet
 * that goes up to OVS is not counted: OVS counts it. */
static __always_inline void
count_hit(const struct afxdp_fp_action *a, __u32 len, __be16 tcp_flags)
{
    __u32 slot = a->stats_slot;
    struct afxdp_fp_stats *st = bpf_map_lookup_elem(&fp_stats, &slot);
    if (st) {
        st->packets++;
        st->bytes += len;
        st->used = hit_time();
        st->tcp_flags |= tcp_flags;
    }
}

#endif /* AFXDP_BPF_COUNT_H */
