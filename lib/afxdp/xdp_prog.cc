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
#include "hints.hh"
#include "log.hh"

namespace afxdp {
namespace {

// A program under construction: instructions, and jumps to patch once
// their target is known.
class ProgramText {
public:
    static constexpr size_t kMax = 128;

    void add(bpf_insn i) noexcept
    {
        if (n_ < kMax) {
            insns_[n_] = i;
        }
        n_++;
    }
    // A conditional jump ('op': BPF_JEQ, ...) comparing 'dst' with 'imm',
    // or with register 'src' when 'src' >= 0; returns it for patch().
    size_t jump_if(uint8_t op, uint8_t dst, int32_t imm, int src = -1)
        noexcept
    {
        add({uint8_t(BPF_JMP | op | (src >= 0 ? BPF_X : BPF_K)), dst,
             uint8_t(src >= 0 ? src : 0), 0, src >= 0 ? 0 : imm});
        return n_ - 1;
    }
    // The same on the low 32 bits of 'dst' only: for what a kfunc returns
    // as int, whose upper half the verifier does not promise.
    size_t jump32_if(uint8_t op, uint8_t dst, int32_t imm) noexcept
    {
        add({uint8_t(BPF_JMP32 | op | BPF_K), dst, 0, 0, imm});
        return n_ - 1;
    }
    size_t jump() noexcept
    {
        add({BPF_JMP | BPF_JA, 0, 0, 0, 0});
        return n_ - 1;
    }
    // Makes jump 'at' land on the next instruction added.
    void patch(size_t at) noexcept
    {
        if (at < kMax) {
            insns_[at].off = int16_t(n_ - at - 1);
        }
    }
    bool ok() const noexcept { return n_ <= kMax; }
    const bpf_insn *insns() const noexcept { return insns_; }
    size_t size() const noexcept { return n_; }

private:
    bpf_insn insns_[kMax] = {};
    size_t n_ = 0;
};

// The instructions we use, by name.
constexpr bpf_insn
mov(uint8_t dst, uint8_t src) noexcept
{
    return {BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0};
}
// dst OP= imm, on 64 bits ('op': BPF_MOV, BPF_ADD, BPF_OR, BPF_AND).
constexpr bpf_insn
alu_imm(uint8_t op, uint8_t dst, int32_t imm) noexcept
{
    return {uint8_t(BPF_ALU64 | op | BPF_K), dst, 0, 0, imm};
}
// dst = *(size *)(src + off); 'size': BPF_W, BPF_H, BPF_DW.
constexpr bpf_insn
load(uint8_t size, uint8_t dst, uint8_t src, int16_t off) noexcept
{
    return {uint8_t(BPF_LDX | BPF_MEM | size), dst, src, off, 0};
}
// *(size *)(dst + off) = src.
constexpr bpf_insn
store(uint8_t size, uint8_t dst, int16_t off, uint8_t src) noexcept
{
    return {uint8_t(BPF_STX | BPF_MEM | size), dst, src, off, 0};
}
constexpr bpf_insn
store_imm(uint8_t size, uint8_t dst, int16_t off, int32_t imm) noexcept
{
    return {uint8_t(BPF_ST | BPF_MEM | size), dst, 0, off, imm};
}
constexpr bpf_insn
to_be16(uint8_t dst) noexcept
{
    return {BPF_ALU | BPF_END | BPF_TO_BE, dst, 0, 0, 16};
}
constexpr bpf_insn
call(int32_t helper) noexcept
{
    return {BPF_JMP | BPF_CALL, 0, 0, 0, helper};
}
constexpr bpf_insn
call_kfunc(uint32_t btf_id) noexcept
{
    return {BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0,
            int32_t(btf_id)};
}
constexpr bpf_insn
exit_insn() noexcept
{
    return {BPF_JMP | BPF_EXIT, 0, 0, 0, 0};
}

constexpr int16_t kCtxData = offsetof(xdp_md, data);
constexpr int16_t kCtxDataEnd = offsetof(xdp_md, data_end);
constexpr int16_t kCtxDataMeta = offsetof(xdp_md, data_meta);
constexpr int16_t kCtxQueue = offsetof(xdp_md, rx_queue_index);
constexpr int kEthAddrs = 12;    // Destination and source MAC.
constexpr int kEthHeader = 14;
constexpr int kVlanHeader = 4;
// XDP_RSS_L4 of the kernel's enum xdp_rss_hash_type (include/net/xdp.h,
// not uapi): the hash covers the L4 ports.
constexpr int32_t kRssL4 = 1 << 3;

// Calls kfunc(ctx, fp+out1, fp+out2), r6 being ctx, with the 8-byte
// stack slot that holds both outputs (it starts at the lower) zeroed; returns the jump to
// patch, taken when the kfunc fails (returns nonzero).
size_t
call_kfunc_into_stack(ProgramText &t, uint32_t kfunc, int16_t out1,
                      int16_t out2) noexcept
{
    const int16_t slot = out1 < out2 ? out1 : out2;   // 8-byte aligned.
    t.add(store_imm(BPF_DW, 10, slot, 0));
    t.add(mov(1, 6));
    t.add(mov(2, 10));
    t.add(alu_imm(BPF_ADD, 2, out1));
    t.add(mov(3, 10));
    t.add(alu_imm(BPF_ADD, 3, out2));
    t.add(call_kfunc(kfunc));
    return t.jump32_if(BPF_JNE, 0, 0);
}

// The VLAN tag the driver stripped, put back into the frame after the MAC
// addresses (r6: ctx; r7: the metadata flags).
void
put_back_vlan_tag(ProgramText &t, uint32_t kfunc) noexcept
{
    // Only a frame with an Ethernet header can take it.
    t.add(load(BPF_W, 2, 6, kCtxData));
    t.add(load(BPF_W, 3, 6, kCtxDataEnd));
    t.add(alu_imm(BPF_ADD, 2, kEthHeader));
    size_t runt = t.jump_if(BPF_JGT, 2, 0, 3);
    // bpf_xdp_metadata_rx_vlan_tag(ctx, &proto at fp-6, &tci at fp-8).
    size_t untagged = call_kfunc_into_stack(t, kfunc, -6, -8);
    // Room for the tag in front, then the MACs move into it.
    t.add(mov(1, 6));
    t.add(alu_imm(BPF_MOV, 2, -kVlanHeader));
    t.add(call(BPF_FUNC_xdp_adjust_head));
    size_t no_room = t.jump_if(BPF_JNE, 0, 0);
    t.add(load(BPF_W, 2, 6, kCtxData));
    t.add(load(BPF_W, 3, 6, kCtxDataEnd));
    t.add(mov(4, 2));
    t.add(alu_imm(BPF_ADD, 4, kEthHeader + kVlanHeader));
    size_t short_frame = t.jump_if(BPF_JGT, 4, 0, 3);
    for (int16_t off = 0; off < kEthAddrs; off += 2) {
        t.add(load(BPF_H, 4, 2, int16_t(off + kVlanHeader)));
        t.add(store(BPF_H, 2, off, 4));
    }
    t.add(load(BPF_H, 4, 10, -6));           // TPID, already big-endian.
    t.add(store(BPF_H, 2, kEthAddrs, 4));
    t.add(load(BPF_H, 4, 10, -8));           // TCI, in host order.
    t.add(to_be16(4));
    t.add(store(BPF_H, 2, kEthAddrs + 2, 4));
    t.add(alu_imm(BPF_OR, 7, int32_t(kMetaVlanRestored)));
    size_t done = t.jump();
    // Never taken (the frame had its 14 bytes), but the verifier needs the
    // check: give the 4 bytes back rather than leave them in front.
    t.patch(short_frame);
    t.add(mov(1, 6));
    t.add(alu_imm(BPF_MOV, 2, kVlanHeader));
    t.add(call(BPF_FUNC_xdp_adjust_head));
    t.patch(no_room);
    t.add(alu_imm(BPF_OR, 7, int32_t(kMetaVlanLost)));
    t.patch(runt);
    t.patch(untagged);
    t.patch(done);
}

// The driver's RSS hash into r8, with kMetaHash in r7, if it has one over
// the L4 ports: OVS's select groups (dp_hash) take the packet's hash as
// it is, and one over the addresses alone would put every flow between
// two hosts into one bucket.  Without it OVS computes its own.
void
read_hash(ProgramText &t, uint32_t kfunc) noexcept
{
    // bpf_xdp_metadata_rx_hash(ctx, &hash at fp-16, &type at fp-12).
    size_t none = call_kfunc_into_stack(t, kfunc, -16, -12);
    t.add(load(BPF_W, 4, 10, -12));
    t.add(alu_imm(BPF_AND, 4, kRssL4));
    size_t not_l4 = t.jump_if(BPF_JEQ, 4, 0);
    t.add(load(BPF_W, 8, 10, -16));
    t.add(alu_imm(BPF_OR, 7, int32_t(kMetaHash)));
    t.patch(none);
    t.patch(not_l4);
}

// Drops whatever metadata is already in front of the packet (r6: ctx): a
// frame that came to veth as an XDP frame keeps its own (bounced by
// XDP_TX on the peer, or redirected in by another program).  Ours must end
// right at the packet, where the socket reads it, and no one else's may
// reach the socket.  At most 32 bytes, a multiple of 4 (the kernel's
// rules): moving its start by 32, 16, 8 and 4, each where it fits, leaves
// none.
void
drop_foreign_meta(ProgramText &t) noexcept
{
    t.add(load(BPF_W, 2, 6, kCtxDataMeta));
    t.add(load(BPF_W, 3, 6, kCtxData));
    size_t none = t.jump_if(BPF_JGE, 2, 0, 3);   // Also: none possible.
    for (int32_t step = 32; step >= 4; step /= 2) {
        t.add(mov(1, 6));
        t.add(alu_imm(BPF_MOV, 2, step));
        t.add(call(BPF_FUNC_xdp_adjust_meta));
    }
    t.patch(none);
}

// Writes the RxMeta (r8: hash, r7: flags) in front of the packet.
void
write_meta(ProgramText &t) noexcept
{
    drop_foreign_meta(t);
    t.add(mov(1, 6));
    t.add(alu_imm(BPF_MOV, 2, -int32_t(sizeof(RxMeta))));
    t.add(call(BPF_FUNC_xdp_adjust_meta));
    size_t no_meta = t.jump_if(BPF_JNE, 0, 0);
    t.add(load(BPF_W, 2, 6, kCtxDataMeta));
    t.add(load(BPF_W, 3, 6, kCtxData));
    t.add(mov(4, 2));
    t.add(alu_imm(BPF_ADD, 4, sizeof(RxMeta)));
    size_t too_short = t.jump_if(BPF_JGT, 4, 0, 3);
    t.add(store(BPF_W, 2, offsetof(RxMeta, hash), 8));
    t.add(store(BPF_W, 2, offsetof(RxMeta, flags), 7));
    t.patch(no_meta);
    t.patch(too_short);
}

// What to load: the plain program, or one bound to a device that asks its
// driver for hints first.
struct ProgramSpec {
    int map_fd;
    uint32_t prog_flags;      // kProgHasFrags, kProgDevBoundOnly.
    int ifindex;              // Device-bound: the device; else 0.
    unsigned hints;           // RxHint bits.
    const HintSupport *kfuncs;
};

// r0 = bpf_redirect_map(&xskmap, ctx->rx_queue_index, XDP_PASS): to the
// queue's socket, or to the kernel stack when the queue has none.  r1: ctx.
void
redirect_to_socket(ProgramText &t, int map_fd) noexcept
{
    t.add(load(BPF_W, 2, 1, kCtxQueue));
    t.add({BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd});
    t.add({0, 0, 0, 0, 0});
    t.add(alu_imm(BPF_MOV, 3, XDP_PASS));
    t.add(call(BPF_FUNC_redirect_map));
}

// The plain program is the redirect alone, five instructions.  With hints
// the redirect is decided first, and only a packet bound for a socket
// takes them: one passed to the kernel must reach it as the driver gave
// it, its VLAN tag still beside the frame, not also back in it.  The
// redirect happens once the program returns, so the packet may change
// after the call.  Registers kept across calls: r6 ctx, r7 the RxMeta
// flags, r8 its hash, r9 the verdict.
void
build(ProgramText &t, const ProgramSpec &spec) noexcept
{
    if (!spec.hints) {
        redirect_to_socket(t, spec.map_fd);
        t.add(exit_insn());
        return;
    }
    t.add(mov(6, 1));
    redirect_to_socket(t, spec.map_fd);
    t.add(mov(9, 0));
    size_t passed = t.jump_if(BPF_JNE, 9, XDP_REDIRECT);
    t.add(alu_imm(BPF_MOV, 7, int32_t(kMetaMagic)));
    t.add(alu_imm(BPF_MOV, 8, 0));
    if (spec.hints & kHintVlan) {
        put_back_vlan_tag(t, spec.kfuncs->vlan_kfunc);
    }
    if (spec.hints & kHintHash) {
        read_hash(t, spec.kfuncs->hash_kfunc);
    }
    write_meta(t);
    t.patch(passed);
    t.add(mov(0, 9));
    t.add(exit_insn());
}

// Returns the program's fd, or -errno.  -EINVAL with kProgHasFrags in the
// flags is returned quietly: a kernel that does not know the flag, and the
// caller tries without.
int
load_program(const ProgramSpec &spec) noexcept
{
    ProgramText t;
    build(t, spec);
    if (!t.ok()) {
        log(AFXDP_LOG_ERR, "our XDP program outgrew its %zu instructions",
            ProgramText::kMax);
        return -E2BIG;
    }
    static char verifier_log[4096];
    LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = spec.prog_flags,
                .prog_ifindex = uint32_t(spec.ifindex), .log_level = 0);
    int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, kProgName, "GPL", t.insns(),
                           t.size(), &opts);
    if (fd == -EINVAL && (spec.prog_flags & compat::kProgHasFrags)
        && !spec.hints) {
        return fd;
    }
    if (fd < 0) {
        // Load again with the verifier's log, to say why.
        int err = fd;
        opts.log_buf = verifier_log;
        opts.log_size = sizeof verifier_log;
        opts.log_level = 1;
        int fd2 = bpf_prog_load(BPF_PROG_TYPE_XDP, kProgName, "GPL",
                                t.insns(), t.size(), &opts);
        if (fd2 >= 0) {
            close(fd2);
        }
        log(spec.hints ? AFXDP_LOG_INFO : AFXDP_LOG_ERR,
            "loading the XDP program%s failed: %s%s%s",
            spec.hints ? " with packet hints" : "", std::strerror(-err),
            verifier_log[0] ? "; verifier: " : "", verifier_log);
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
    for (const char *ours : {kProgName, kFastProgName, kFastHintsProgName}) {
        if (!std::strcmp(info.name, ours)) {
            return true;
        }
    }
    return false;
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
    // The program reads nothing past the first buffer, so it can take
    // packets of several (multi-buffer).  A kernel before 5.18 rejects the
    // flag; then packets stay one buffer each.
    ProgramSpec spec = {map, compat::kProgHasFrags, 0, 0, nullptr};
    int prog = load_program(spec);
    p.has_frags_ = prog >= 0;
    if (prog == -EINVAL) {
        spec.prog_flags = 0;
        prog = load_program(spec);
    }
    if (prog < 0) {
        return Result<XskProgram>::failure(prog);
    }
    p.prog_ = Fd(prog);
    p.id_ = prog_id_of_fd(prog);
    return p;
}

Result<XskProgram>
XskProgram::with_hints(int ifindex, const HintSupport &support) const
    noexcept
{
    XskProgram p;
    int map = fcntl(map_.get(), F_DUPFD_CLOEXEC, 0);
    if (map < 0) {
        return Result<XskProgram>::failure(-errno);
    }
    p.map_ = Fd(map);
    ProgramSpec spec = {map,
                        compat::kProgDevBoundOnly
                        | (has_frags_ ? compat::kProgHasFrags : 0),
                        ifindex, support.hints, &support};
    int prog = load_program(spec);
    if (prog < 0) {
        return Result<XskProgram>::failure(prog);
    }
    p.prog_ = Fd(prog);
    p.id_ = prog_id_of_fd(prog);
    p.has_frags_ = has_frags_;
    p.hints_ = support.hints;
    return p;
}

int
XskProgram::add_socket(unsigned qid, int sock_fd) const noexcept
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

Result<XdpAttachment, Failure>
XdpAttachment::attach(int ifindex, const char *ifname, int prog_fd,
                      uint32_t prog_id, uint32_t xdp_flags) noexcept
{
    using R = Result<XdpAttachment, Failure>;
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
                return R::failure(fail(-EBUSY, "%s already has XDP program "
                                       "'%s' (id %u) attached; not "
                                       "replacing a program that is not "
                                       "ours", ifname, name, ids[i]));
            }
            // This process holds a claim on every interface it has open,
            // so a program of ours found here was left by another one.
            log(AFXDP_LOG_INFO, "%s: removing XDP program %u left by an "
                "earlier ovs-vswitchd", ifname, ids[i]);
            detach_exact(ifindex, modes[i], ids[i]);
        }
    }
    int err = bpf_xdp_attach(ifindex, prog_fd,
                             xdp_flags | XDP_FLAGS_UPDATE_IF_NOEXIST, nullptr);
    if (err) {
        return R::failure(fail(err, "attaching the XDP program to %s "
                               "failed: %s", ifname, std::strerror(-err)));
    }
    XdpAttachment a;
    a.ifindex_ = ifindex;
    a.xdp_flags_ = xdp_flags;
    a.prog_ = Fd(fcntl(prog_fd, F_DUPFD_CLOEXEC, 0));
    a.prog_id_ = prog_id;
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
