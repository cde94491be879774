// Our XDP program and its attachment to an interface.
//
// The program is five instructions: redirect each packet to the AF_XDP
// socket of its RX queue through an XSKMAP, or pass it to the kernel stack
// when that queue has no socket.  A variant bound to one device also asks
// its driver for packet hints (hints.hh) for what goes to a socket.  We
// load it ourselves (no dispatcher, no object file) so that attaching it
// never needs libxdp's multi-program dispatcher, which many kernels
// refuse, and so that a program of ours left behind by a killed process
// can be recognised by its name.
#ifndef AFXDP_XDP_PROG_HH
#define AFXDP_XDP_PROG_HH

#include <cstdint>

#include "fd.hh"
#include "hints.hh"
#include "result.hh"

namespace afxdp {

// Our programs' names (<= 15 characters): the plain one, and the fast
// path's (fastpath.hh) without and with packet hints.  A program by one
// of these names left attached by a killed process is ours to replace.
inline constexpr char kProgName[] = "ovs_afxdp_xsk";
inline constexpr char kFastProgName[] = "ovs_afxdp_fast";
inline constexpr char kFastHintsProgName[] = "ovs_afxdp_fasth";
// The fast path's watcher of its redirects (a tracing program), and the
// clock its hits' times are read with.
inline constexpr char kWatchProgName[] = "afxdp_fp_watch";
inline constexpr char kTcProgName[] = "ovs_afxdp_tc";
inline constexpr char kClockProgName[] = "afxdp_fp_clock";

// The loaded program and its socket map; freed when the last fd closes.
class XskProgram {
public:
    static Result<XskProgram> load(unsigned max_queues) noexcept;
    // The same program with the hints of 'support', bound to the device
    // 'ifindex' (so attachable in its driver mode only), sharing this
    // program's socket map.
    Result<XskProgram> with_hints(int ifindex, const HintSupport &support)
        const noexcept;

    bool loaded() const noexcept { return bool(prog_); }
    int prog_fd() const noexcept { return prog_.get(); }
    uint32_t id() const noexcept { return id_; }
    // Loaded as able to take packets of several buffers (multi-buffer).
    bool has_frags() const noexcept { return has_frags_; }
    // RxHint bits it asks for; with any, each packet it redirects has an
    // RxMeta in front of it.
    unsigned hints() const noexcept { return hints_; }

    // Steers queue 'qid' to the AF_XDP socket 'sock_fd'.
    int add_socket(unsigned qid, int sock_fd) const noexcept;
    // The socket map, for another program to share (the fast path's).
    int map_fd() const noexcept { return map_.get(); }

private:
    Fd map_;          // BPF_MAP_TYPE_XSKMAP, queue id -> socket.
    Fd prog_;         // The XDP program.
    uint32_t id_ = 0; // Kernel program id.
    bool has_frags_ = false;
    unsigned hints_ = 0;
};

// The program attached to one interface in one mode.  Detaches on
// destruction, but only if the program attached there is still ours.
class XdpAttachment {
public:
    XdpAttachment() = default;
    XdpAttachment(const XdpAttachment &) = delete;
    XdpAttachment &operator=(const XdpAttachment &) = delete;
    XdpAttachment(XdpAttachment &&o) noexcept { swap(o); }
    XdpAttachment &operator=(XdpAttachment &&o) noexcept
    {
        swap(o);
        return *this;
    }
    ~XdpAttachment();

    // Attaches the program 'prog_fd' (kernel id 'prog_id') with
    // 'xdp_flags' (XDP_FLAGS_SKB_MODE or _DRV_MODE).  A program of ours
    // left by an earlier process is replaced; anyone else's is left alone
    // and the failure says so.
    static Result<XdpAttachment, Failure> attach(int ifindex,
                                                 const char *ifname,
                                                 int prog_fd, uint32_t prog_id,
                                                 uint32_t xdp_flags) noexcept;

    // True while our program is the one attached in our mode: another
    // process may detach or replace it at any time, and nothing tells us.
    bool still_attached() const noexcept;

private:
    void swap(XdpAttachment &o) noexcept;

    int ifindex_ = 0;
    uint32_t xdp_flags_ = 0;
    uint32_t prog_id_ = 0;
    Fd prog_;   // A duplicate of the program fd, to detach exactly it.
};

// Detaches any program of ours (by name) from 'ifindex', in either mode.
// Returns 0 if one was detached, -ENOENT if there was none of ours.
int remove_our_program(int ifindex) noexcept;

}  // namespace afxdp

#endif  // AFXDP_XDP_PROG_HH
