/* The fast path's maps, as the core finds them by name: what each holds
 * and who writes it is in fastpath-maps.h, shared with the core. */

#ifndef AFXDP_BPF_MAPS_H
#define AFXDP_BPF_MAPS_H 1

#include "fastpath-maps.h"
#include "packet.h"

/* The fast path's maps: fastpath-maps.h says what each holds. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct afxdp_fp_config);
} fp_config SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, AFXDP_FP_MAX_MASKS);
    __type(key, __u32);
    __type(value, struct afxdp_fp_mask);
} fp_masks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, AFXDP_FP_MAX_FLOWS);
    __type(key, struct afxdp_fp_flow_key);
    __type(value, struct afxdp_fp_flow);
} fp_flows SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, AFXDP_FP_EMC_SIZE);
    __type(key, __u32);
    __type(value, struct afxdp_fp_emc_entry);
} fp_emc SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, AFXDP_FP_MAX_FLOWS);
    __type(key, __u32);
    __type(value, struct afxdp_fp_stats);
} fp_stats SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct afxdp_fp_clock);
} fp_clock SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
    __uint(max_entries, 256);
    __type(key, __u32);
    __type(value, struct bpf_devmap_val);
} fp_ports SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, AFXDP_FP_N_COUNTERS);
    __type(key, __u32);
    __type(value, __u64);
} fp_counters SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 256);
    __type(key, __u32);
    __type(value, __u64);
} fp_failing SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct afxdp_fp_handoff);
} fp_handoff SEC(".maps");

/* The plain program's map, reused by the core (bpf_map__reuse_fd). */
struct {
    __uint(type, BPF_MAP_TYPE_XSKMAP);
    __uint(max_entries, 64);
    __type(key, __u32);
    __type(value, __u32);
} xsks SEC(".maps");

#endif /* AFXDP_BPF_MAPS_H */
