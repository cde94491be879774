#include "hints.hh"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <unistd.h>

#include "compat.hh"
#include "netdev_nl.hh"

namespace afxdp {
namespace {

// The kfuncs' BTF ids in vmlinux, looked up once: parsing the kernel's
// BTF takes tens of milliseconds.
struct Kfuncs {
    uint32_t hash = 0;
    uint32_t vlan = 0;
    uint32_t cast_to_kern_ctx = 0;
};

Kfuncs
kernel_kfuncs() noexcept
{
    static std::once_flag once;
    static Kfuncs k;
    std::call_once(once, [] {
        // Without it libbpf would warn; no BTF means no kfuncs to call.
        if (access("/sys/kernel/btf/vmlinux", R_OK)) {
            return;
        }
        btf *vmlinux = btf__load_vmlinux_btf();
        if (libbpf_get_error(vmlinux)) {
            return;
        }
        int id = btf__find_by_name_kind(vmlinux, "bpf_xdp_metadata_rx_hash",
                                        BTF_KIND_FUNC);
        k.hash = id > 0 ? uint32_t(id) : 0;
        id = btf__find_by_name_kind(vmlinux, "bpf_xdp_metadata_rx_vlan_tag",
                                    BTF_KIND_FUNC);
        k.vlan = id > 0 ? uint32_t(id) : 0;
        id = btf__find_by_name_kind(vmlinux, "bpf_cast_to_kern_ctx",
                                    BTF_KIND_FUNC);
        k.cast_to_kern_ctx = id > 0 ? uint32_t(id) : 0;
        btf__free(vmlinux);
    });
    return k;
}

}  // namespace

bool
buffer_flags_readable() noexcept
{
    return kernel_kfuncs().cast_to_kern_ctx
           && (compat::have_capability(CAP_SYS_ADMIN)
               || compat::have_capability(compat::kCapPerfmon));
}

const char kNoXdpMetaWhy[] = "this kernel lets no XDP program write "
                             "metadata in front of a packet "
                             "(bpf_xdp_adjust_meta)";

bool
xdp_meta_writable() noexcept
{
    // A program that calls the helper, loaded: libbpf's own probe takes
    // the verifier's newer wording of a refusal ("cannot use helper") for
    // a yes.
    static const bool writable = [] {
        const bpf_insn probe[] = {
            {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 0},
            {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_xdp_adjust_meta},
            {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS},
            {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
        };
        int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, nullptr, "GPL", probe,
                               sizeof probe / sizeof probe[0], nullptr);
        if (fd < 0) {
            return false;
        }
        close(fd);
        return true;
    }();
    return writable;
}

HintSupport
rx_hint_support(int ifindex) noexcept
{
    HintSupport s;
    if (!xdp_meta_writable()) {
        // Hints reach the socket only as metadata.
        s.hash_why = s.vlan_why = kNoXdpMetaWhy;
        return s;
    }
    Kfuncs k = kernel_kfuncs();
    s.hash_kfunc = k.hash;
    s.vlan_kfunc = k.vlan;
    uint64_t features = 0;
    int err = netdev_dev_attr(ifindex, kNetdevAttrRxMetadata, &features);
    if (!k.hash) {
        s.hash_why = "the kernel has no XDP RX hash kfunc (Linux 6.3)";
    } else if (!err && !(features & kNetdevRxMetadataHash)) {
        s.hash_why = "the driver does not give XDP programs an RX hash";
    } else {
        s.hints |= kHintHash;
    }
    if (!k.vlan) {
        s.vlan_why = "the kernel has no XDP RX VLAN tag kfunc (Linux 6.8)";
    } else if (err) {
        s.vlan_why = "the kernel does not say whether the driver gives XDP "
                     "programs the VLAN tag";
    } else if (!(features & kNetdevRxMetadataVlanTag)) {
        s.vlan_why = "the driver does not give XDP programs the VLAN tag";
    } else {
        s.hints |= kHintVlan;
    }
    return s;
}

}  // namespace afxdp
