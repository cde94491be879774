/* What the program asks of the running kernel beyond its helpers: the
 * hints the core lets it use (fp_hints), the kfuncs behind them, and the
 * packet's whole length read from the kernel's buffer. */

#ifndef AFXDP_BPF_KERNEL_H
#define AFXDP_BPF_KERNEL_H 1

#include <bpf/bpf_core_read.h>
#include "fastpath-maps.h"
#include "packet.h"

/* What the core lets this program ask the kernel for (AFXDP_FP_HINT_*
 * and AFXDP_FP_BUFF_FLAGS), set before loading only where the kernel has
 * it; a program with a hint is bound to the device.  Constant to the
 * verifier, which drops the code for the others. */
const volatile __u32 fp_hints SEC(".rodata.hints") = 0;

/* The kfuncs (Linux 6.3 and 6.8), and bpf_cast_to_kern_ctx() below.
 * Weak: on a kernel without one, libbpf leaves its calls unresolved and
 * the verifier drops them as dead code, fp_hints saying so.  Their
 * addresses are never tested: before Linux 6.4 the verifier refuses a
 * program that takes the address of a kfunc the kernel has. */
enum xdp_rss_hash_type { AFXDP_RSS_L4 = 1 << 3 };   /* The kernel's bit. */
extern int bpf_xdp_metadata_rx_hash(const struct xdp_md *ctx, __u32 *hash,
                                    enum xdp_rss_hash_type *rss_type)
    __ksym __weak;
extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx,
                                        __be16 *vlan_proto, __u16 *vlan_tci)
    __ksym __weak;

/* The kernel's buffer behind the program's context (Linux 6.2): the
 * verifier turns the call into a register move, and lets a program read
 * through it only if its loader has CAP_PERFMON (or CAP_SYS_ADMIN): the
 * core asks for it (AFXDP_FP_BUFF_FLAGS) only then.  Only the one field
 * read is declared; libbpf relocates it to the running kernel's layout. */
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym __weak;

struct xdp_buff {
    __u32 flags;
} __attribute__((preserve_access_index));

enum xdp_buff_flags {
    XDP_FLAGS_HAS_FRAGS = 1,
};

/* The packet's whole length, as bpf_xdp_get_buff_len() says it: the
 * first buffer's, unless the buffer has fragments.  The helper's call
 * (and its return, through the kernel's return thunk where it mitigates
 * SRSO) cost a fifth of a redirected packet's time in the program here,
 * so the buffer's flag is read instead where the kernel lets us. */
static __always_inline __u32
packet_len(struct xdp_md *ctx, const void *data, const void *end)
{
    if ((fp_hints & AFXDP_FP_BUFF_FLAGS)
        && bpf_core_field_exists(struct xdp_buff, flags)
        && bpf_core_enum_value_exists(enum xdp_buff_flags,
                                      XDP_FLAGS_HAS_FRAGS)) {
        const struct xdp_buff *xdp = bpf_cast_to_kern_ctx(ctx);
        __u32 has_frags = bpf_core_enum_value(enum xdp_buff_flags,
                                              XDP_FLAGS_HAS_FRAGS);
        if (!(xdp->flags & has_frags)) {
            return (__u32) (end - data);
        }
    }
    return bpf_xdp_get_buff_len(ctx);
}

#endif /* AFXDP_BPF_KERNEL_H */
