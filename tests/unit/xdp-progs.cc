// Test helpers: small XDP programs (see xdp-progs.hh).
#include "xdp-progs.hh"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cstdlib>
#include <unistd.h>

namespace afxdp_test {

int
attach_xdp_insns(int ifindex, const char *name, const bpf_insn *insns,
                 size_t n, uint32_t flags)
{
    int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, name, "GPL", insns, n, nullptr);
    if (fd < 0) {
        return fd;
    }
    int err = bpf_xdp_attach(ifindex, fd, flags, nullptr);
    if (err) {
        close(fd);
        return err;
    }
    return fd;
}

int
attach_xdp_pass(int ifindex, uint32_t flags)
{
    const bpf_insn insns[] = {
        {BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_PASS},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    return attach_xdp_insns(ifindex, "xdp_pass_test", insns, 2, flags);
}

int
run_ethtool(const std::string &args)
{
    std::string cmd = "ethtool " + args + " >/dev/null 2>&1";
    return std::system(cmd.c_str());
}

}  // namespace afxdp_test
