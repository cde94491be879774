#include "tc-vlan.hh"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstring>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <net/if.h>
#include <unistd.h>

namespace afxdp_test {
namespace {

std::string
failed(const char *what, int err)
{
    return std::string(what) + ": " + std::strerror(err < 0 ? -err : err);
}

// Loads a tc program of two calls: 'helper' (with r2 and r3 as given)
// then "pass" (TC_ACT_OK).  Returns the fd or -errno.
int
load(const char *name, int helper, int32_t r2, int32_t r3)
{
    const bpf_insn insns[] = {
        {BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, r2},
        {BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, r3},
        {BPF_JMP | BPF_CALL, 0, 0, 0, helper},
        {BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, TC_ACT_OK},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    return bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, name, "GPL", insns,
                         sizeof insns / sizeof insns[0], nullptr);
}

std::string
attach(int ifindex, bpf_tc_attach_point where, int prog_fd)
{
    LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = where);
    LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = prog_fd);
    int err = bpf_tc_attach(&hook, &opts);
    return err ? failed("attaching the tc program", err) : "";
}

}  // namespace

std::string
tc_vlan_attach(const char *ifname, uint16_t tci, uint16_t tpid)
{
    int ifindex = int(if_nametoindex(ifname));
    if (!ifindex) {
        return failed(ifname, errno);
    }
    // bpf_skb_vlan_push(skb, vlan_proto (big-endian), vlan_tci).
    int push = load("vlan_push", BPF_FUNC_skb_vlan_push,
                    int32_t(htons(tpid)), tci);
    if (push < 0) {
        return failed("loading the VLAN push program", push);
    }
    int pop = load("vlan_pop", BPF_FUNC_skb_vlan_pop, 0, 0);
    if (pop < 0) {
        close(push);
        return failed("loading the VLAN pop program", pop);
    }
    // One clsact qdisc for both directions.
    LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
                .attach_point = bpf_tc_attach_point(BPF_TC_INGRESS
                                                    | BPF_TC_EGRESS));
    int e = bpf_tc_hook_create(&hook);
    std::string err = e ? failed("creating the clsact qdisc", e) : "";
    if (err.empty()) {
        err = attach(ifindex, BPF_TC_EGRESS, push);
    }
    if (err.empty()) {
        err = attach(ifindex, BPF_TC_INGRESS, pop);
    }
    // tc holds the programs now.
    close(push);
    close(pop);
    if (!err.empty()) {
        tc_vlan_detach(ifname);
    }
    return err;
}

std::string
tc_vlan_detach(const char *ifname)
{
    int ifindex = int(if_nametoindex(ifname));
    if (!ifindex) {
        return failed(ifname, errno);
    }
    LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
                .attach_point = bpf_tc_attach_point(BPF_TC_INGRESS
                                                    | BPF_TC_EGRESS));
    int err = bpf_tc_hook_destroy(&hook);
    return err && err != -ENOENT ? failed("removing the clsact qdisc", err)
                                 : "";
}

}  // namespace afxdp_test
