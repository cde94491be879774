#include "xdp_prog.hh"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if_link.h>

#include "compat.hh"
#include "log.hh"

namespace afxdp {
namespace {

// Instructions, spelled out: r2 = ctx->rx_queue_index; r1 = &xskmap;
// r3 = XDP_PASS (the action when the map has no socket for the queue);
// return bpf_redirect_map(r1, r2, r3).  'prog_flags': kProgHasFrags or 0.
int
load_program(int map_fd, uint32_t prog_flags) noexcept
{
    const bpf_insn insns[] = {
        {BPF_LDX | BPF_MEM | BPF_W, 2, 1,
         int16_t(offsetof(xdp_md, rx_queue_index)), 0},
        {BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd},
        {0, 0, 0, 0, 0},
        {BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, XDP_PASS},
        {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    static char verifier_log[4096];
    LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = prog_flags,
                .log_level = 0);
    int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, kProgName, "GPL", insns,
                           sizeof insns / sizeof insns[0], &opts);
    if (fd == -EINVAL && prog_flags) {
        // A kernel that does not know the flag: the caller tries without.
        return fd;
    }
    if (fd < 0) {
        // Load again with the verifier's log, to say why.
        int err = fd;
        opts.log_buf = verifier_log;
        opts.log_size = sizeof verifier_log;
        opts.log_level = 1;
        int fd2 = bpf_prog_load(BPF_PROG_TYPE_XDP, kProgName, "GPL", insns,
                                sizeof insns / sizeof insns[0], &opts);
        if (fd2 >= 0) {
            close(fd2);
        }
        log(AFXDP_LOG_ERR, "loading the XDP program failed: %s%s%s",
            std::strerror(-err), verifier_log[0] ? "; verifier: " : "",
            verifier_log);
        return err;
    }
    return fd;
}

uint32_t
prog_id_of_fd(int fd) noexcept
{
    bpf_prog_info info = {};
    uint32_t len = sizeof info;
    return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

// True if program 'id' is one of ours (by name).  Fills 'name'.
bool
is_our_program(uint32_t id, char *name, size_t namelen) noexcept
{
    Fd fd(bpf_prog_get_fd_by_id(id));
    if (!fd) {
        std::snprintf(name, namelen, "?");
        return false;
    }
    bpf_prog_info info = {};
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd.get(), &info, &len)) {
        std::snprintf(name, namelen, "?");
        return false;
    }
    std::snprintf(name, namelen, "%s", info.name);
    return !std::strcmp(info.name, kProgName);
}

// Detaches program 'id' from 'ifindex' in the mode given by 'mode_flag',
// and only if it is still that program.
int
detach_exact(int ifindex, uint32_t mode_flag, uint32_t id) noexcept
{
    Fd fd(bpf_prog_get_fd_by_id(id));
    if (!fd) {
        return -errno;
    }
    LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = fd.get());
    return bpf_xdp_detach(ifindex, mode_flag | XDP_FLAGS_REPLACE, &opts);
}

}  // namespace

Result<XskProgram>
XskProgram::load(unsigned max_queues) noexcept
{
    XskProgram p;
    LIBBPF_OPTS(bpf_map_create_opts, mopts);
    int map = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "ovs_afxdp_xsks",
                             sizeof(uint32_t), sizeof(int), max_queues,
                             &mopts);
    if (map < 0) {
        log(AFXDP_LOG_ERR, "creating the XSKMAP failed: %s",
            std::strerror(-map));
        return Result<XskProgram>::failure(map);
    }
    p.map_ = Fd(map);
    // The program only redirects: it reads nothing past the first
    // buffer, so it can take packets of several (multi-buffer).  A kernel
    // before 5.18 rejects the flag; then packets stay one buffer each.
    int prog = load_program(map, compat::kProgHasFrags);
    p.has_frags_ = prog >= 0;
    if (prog == -EINVAL) {
        prog = load_program(map, 0);
    }
    if (prog < 0) {
        return Result<XskProgram>::failure(prog);
    }
    p.prog_ = Fd(prog);
    p.id_ = prog_id_of_fd(prog);
    return p;
}

int
XskProgram::add_socket(unsigned qid, int sock_fd) noexcept
{
    uint32_t key = qid;
    int value = sock_fd;
    return bpf_map_update_elem(map_.get(), &key, &value, BPF_ANY);
}

void
XdpAttachment::swap(XdpAttachment &o) noexcept
{
    std::swap(ifindex_, o.ifindex_);
    std::swap(xdp_flags_, o.xdp_flags_);
    std::swap(prog_id_, o.prog_id_);
    std::swap(prog_, o.prog_);
}

bool
XdpAttachment::still_attached() const noexcept
{
    LIBBPF_OPTS(bpf_xdp_query_opts, q);
    if (!prog_ || bpf_xdp_query(ifindex_, 0, &q)) {
        return false;
    }
    uint32_t id = xdp_flags_ & XDP_FLAGS_SKB_MODE ? q.skb_prog_id
                                                  : q.drv_prog_id;
    return id && id == prog_id_;
}

XdpAttachment::~XdpAttachment()
{
    if (!prog_) {
        return;
    }
    // Look first: detaching with XDP_FLAGS_REPLACE when another program
    // took our place fails, and libbpf logs that failure as a warning.
    if (!still_attached()) {
        log(AFXDP_LOG_INFO, "ifindex %d: our XDP program %u is no longer "
            "attached (the interface is gone, or another process detached "
            "or replaced it); nothing to detach", ifindex_, prog_id_);
        return;
    }
    LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = prog_.get());
    int err = bpf_xdp_detach(ifindex_, xdp_flags_ | XDP_FLAGS_REPLACE, &opts);
    if (err && err != -ENODEV && err != -EEXIST) {
        // -EEXIST: someone replaced our program just now; theirs stays.
        log(AFXDP_LOG_WARN, "detaching the XDP program from ifindex %d "
            "failed: %s", ifindex_, std::strerror(-err));
    }
}

Result<XdpAttachment>
XdpAttachment::attach(int ifindex, const char *ifname, const XskProgram &prog,
                      uint32_t xdp_flags, char *why, size_t whylen) noexcept
{
    using R = Result<XdpAttachment>;
    // Look first: attaching over a program makes libbpf log a warning.
    LIBBPF_OPTS(bpf_xdp_query_opts, q);
    if (!bpf_xdp_query(ifindex, 0, &q) && q.prog_id) {
        const uint32_t ids[2] = {q.skb_prog_id, q.drv_prog_id};
        const uint32_t modes[2] = {XDP_FLAGS_SKB_MODE, XDP_FLAGS_DRV_MODE};
        char name[BPF_OBJ_NAME_LEN + 1] = "";

        for (int i = 0; i < 2; i++) {
            if (!ids[i]) {
                continue;
            }
            if (!is_our_program(ids[i], name, sizeof name)) {
                std::snprintf(why, whylen, "%s already has XDP program '%s' "
                              "(id %u) attached; not replacing a program "
                              "that is not ours", ifname, name, ids[i]);
                return R::failure(-EBUSY);
            }
            // This process holds a claim on every interface it has open,
            // so a program of ours found here was left by another one.
            log(AFXDP_LOG_INFO, "%s: removing XDP program %u left by an "
                "earlier ovs-vswitchd", ifname, ids[i]);
            detach_exact(ifindex, modes[i], ids[i]);
        }
    }
    int err = bpf_xdp_attach(ifindex, prog.prog_fd(),
                             xdp_flags | XDP_FLAGS_UPDATE_IF_NOEXIST, nullptr);
    if (err) {
        std::snprintf(why, whylen, "attaching the XDP program to %s failed: "
                      "%s", ifname, std::strerror(-err));
        return R::failure(err);
    }
    XdpAttachment a;
    a.ifindex_ = ifindex;
    a.xdp_flags_ = xdp_flags;
    a.prog_ = Fd(fcntl(prog.prog_fd(), F_DUPFD_CLOEXEC, 0));
    a.prog_id_ = prog.id();
    return a;
}

int
remove_our_program(int ifindex) noexcept
{
    LIBBPF_OPTS(bpf_xdp_query_opts, q);
    if (bpf_xdp_query(ifindex, 0, &q)) {
        return -ENOENT;
    }
    char name[BPF_OBJ_NAME_LEN + 1];
    int found = -ENOENT;
    if (q.skb_prog_id && is_our_program(q.skb_prog_id, name, sizeof name)) {
        found = detach_exact(ifindex, XDP_FLAGS_SKB_MODE, q.skb_prog_id);
    }
    if (q.drv_prog_id && is_our_program(q.drv_prog_id, name, sizeof name)) {
        found = detach_exact(ifindex, XDP_FLAGS_DRV_MODE, q.drv_prog_id);
    }
    return found;
}

}  // namespace afxdp
