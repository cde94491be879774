// The interfaces a port's offloaded flows redirect to, and whether each
// takes XDP frames now (afxdp-offload.h's afxdp_dev_targets_*()).  A
// target is in the port's devmap exactly while the kernel says it takes
// redirects: asked when a flow first names it, again when a flow to one
// that took none is put (at most every kRecheckOnPutMs: a flow put just
// after its target's peer got an XDP program is redirected from its first
// packets), and every target at most every kCheckEveryMs as OVS reads its
// flows (a veth's peer may lose its XDP program at any time).
#ifndef AFXDP_TARGETS_HH
#define AFXDP_TARGETS_HH

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "afxdp-offload.h"
#include "result.hh"

namespace afxdp {

class RedirectTargets {
public:
    static constexpr int64_t kCheckEveryMs = 100;
    static constexpr int64_t kRecheckOnPutMs = 10;
    // The watcher's losses are said at most this often.
    static constexpr int64_t kLostLogEveryMs = 30000;

    // What a target's state changes in the port's fast path: its devmap,
    // and the watcher that takes a target out at the first bulk the
    // kernel fails to send there.
    class Devmap {
    public:
        virtual int add(int ifindex) noexcept = 0;        // 0 or -errno.
        virtual void remove(int ifindex) noexcept = 0;
        virtual bool lost(int ifindex, uint64_t *lost) noexcept = 0;

    protected:
        ~Devmap() = default;
    };

    // 'port' names the input port in messages.
    void set_port(const char *port) { port_ = port ? port : ""; }
    // The port's XDP program runs in generic mode: its redirects are the
    // kernel's packets, sent as any packet is (generic_xdp_tx()), and its
    // TC half's too, so any interface takes them, not only one whose
    // driver takes XDP frames.  Every target is asked again.
    void set_generic(bool generic) noexcept;

    // The targets of a flow's outputs (those with output.xdp_target) join
    // the port's and are asked of the kernel; one that took no frames is
    // asked again.  Each of these returns whether a target's state
    // changed (the port's status then changed).
    bool add(Devmap &, const afxdp_flow_action *, size_t n, int64_t now_ms)
        noexcept;
    // Every target asked again, if kCheckEveryMs passed since the last
    // time.
    bool run(Devmap &, int64_t now_ms) noexcept;
    // 'ifindex''s port is gone: out of the devmap and the targets,
    // whatever flows still say until OVS deletes them.
    bool drop(Devmap &, int ifindex) noexcept;

    // Whether flows may redirect to 'ifindex' now.
    bool on(int ifindex) const noexcept;
    // "p1 on, p2 off: why", "" if none, cut to 'size' (NUL included).
    void describe(char *buf, size_t size) const noexcept;

private:
    struct Target {
        int ifindex;
        std::string name;         // Its port's, which names its interface.
        bool ok = false;          // In the devmap.
        std::string why;          // If not, why.
        int64_t checked_ms = 0;
    };
    bool check(Devmap &, Target &, int64_t now_ms) noexcept;

    std::string port_;
    bool generic_ = false;
    mutable std::mutex mutex_;
    std::vector<Target> targets_;
    bool ran_ = false;
    int64_t ran_ms_ = 0;
    bool lost_logged_ = false;
    int64_t lost_logged_ms_ = 0;
};

// CLOCK_MONOTONIC in milliseconds.
int64_t monotonic_ms() noexcept;

}  // namespace afxdp

#endif  // AFXDP_TARGETS_HH
