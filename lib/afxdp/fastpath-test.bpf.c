/* The unit tests' programs (tests/unit/test-fastpath-parse.cc) and the
 * parser's for OVS's own test of it (afxdp_fast_path_parse(), used by
 * tests/test-afxdp-xlate.c): the fast path's parts run alone, through
 * BPF_PROG_TEST_RUN.  An object of its own, so that the program
 * ovs-vswitchd loads carries none of them. */

#include "bpf/csum.h"
#include "bpf/kernel.h"
#include "bpf/parse.h"

/* For the unit tests: each packet's result and key, in slot 0. */
struct parse_result {
    __u32 verdict;     /* PARSED, PUNT or PARSED_IP. */
    __u32 pad;
    struct afxdp_flow_key key;
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct parse_result);
} parse_out SEC(".maps");

SEC("xdp.frags")
int
afxdp_parse_test(struct xdp_md *ctx)
{
    const void *data = (const void *) (long) ctx->data;
    const void *end = (const void *) (long) ctx->data_end;
    __u32 zero = 0;
    struct parse_result *r = bpf_map_lookup_elem(&parse_out, &zero);
    if (!r) {
        return XDP_ABORTED;
    }
    struct stripped_tag none = {0, 0, 0};
    r->verdict = parse_key(data, end, packet_len(ctx, data, end), &none,
                           &r->key);
    return XDP_PASS;
}

/* For the unit tests: crc32c_delta() of the word in the packet's first 4
 * bytes (first byte lowest) for the length in its next 2 (the same
 * order), written over its bytes 8 to 11 (the same order). */
SEC("xdp")
int
afxdp_crc32c_test(struct xdp_md *ctx)
{
    __u8 *p = (__u8 *) (long) ctx->data;
    const void *end = (const void *) (long) ctx->data_end;

    if (!HAVE(p, 12, end)) {
        return XDP_ABORTED;
    }
    const __u32 r = crc32c_delta(load_le32(p), p[4] | (__u32) p[5] << 8);
    p[8] = r;
    p[9] = r >> 8;
    p[10] = r >> 16;
    p[11] = r >> 24;
    return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
