// Test helpers: small XDP programs attached to an interface, and ethtool.
#ifndef AFXDP_TESTS_XDP_PROGS_HH
#define AFXDP_TESTS_XDP_PROGS_HH

#include <cstddef>
#include <cstdint>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <string>

namespace afxdp_test {

// Loads the XDP program 'insns' as 'name' and attaches it to 'ifindex' as
// 'flags' say.  Returns its fd, or -errno.
int attach_xdp_insns(int ifindex, const char *name, const bpf_insn *insns,
                     size_t n, uint32_t flags);

// A program that passes every packet, natively on 'ifindex' (or as
// 'flags' say): what makes a veth's peer take XDP frames.  Returns its
// fd, or -errno.
int attach_xdp_pass(int ifindex, uint32_t flags = XDP_FLAGS_DRV_MODE);

// Runs `ethtool ARGS` quietly; its exit status (nonzero where there is
// no ethtool).
int run_ethtool(const std::string &args);

}  // namespace afxdp_test

#endif  // AFXDP_TESTS_XDP_PROGS_HH
