// An interface opened for AF_XDP: our XDP program attached in one mode and
// one queue object per RX queue.  This is struct afxdp_dev.
#ifndef AFXDP_DEVICE_HH
#define AFXDP_DEVICE_HH

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "afxdp.h"
#include "afxdp-offload.h"
#include "fastpath.hh"
#include "queue.hh"
#include "result.hh"
#include "targets.hh"
#include "xdp_prog.hh"

struct afxdp_dev {
public:
    // The failure's reason names the interface.
    static afxdp::Result<std::unique_ptr<afxdp_dev>, afxdp::Failure> open(
        const afxdp_dev_config &) noexcept;

    afxdp_queue *queue(unsigned qid) noexcept
    {
        return qid < n_queues_ ? queues_[qid].get() : nullptr;
    }
    void info(afxdp_dev_info *) const noexcept;
    // The largest MTU its queues take, as open.
    unsigned max_mtu() const noexcept
    {
        return n_queues_ && queues_[0]->multi_buffer_in_use()
               ? AFXDP_MAX_MTU_MULTI_BUFFER : AFXDP_MAX_MTU_ONE_FRAME;
    }
    bool prog_attached() const noexcept
    {
        return attachment_.still_attached();
    }
    // afxdp-report.h's afxdp_dev_prog_lost().
    bool prog_lost() noexcept;
    const char *name() const noexcept { return name_.c_str(); }

    // The fast path (afxdp-offload.h's afxdp_dev_flow_put() and the rest;
    // 0 or a negative errno).  Called from any thread: OVS puts flows from
    // its offload thread and reads them from the main one.
    // With 'counts', the flow's count is kept whole across the put: read a
    // last time and ended if the put takes the flow out of the maps, ended
    // if it starts a new one.
    int flow_put(const uint32_t ufid[4], const afxdp_flow_match &,
                 const afxdp_flow_action *, size_t n_actions, uint32_t mark,
                 afxdp_offload_refusal *refusal,
                 afxdp_flow_counts *counts = nullptr) noexcept;
    // With 'counts', what XDP counted that OVS was not told is counted.
    int flow_del(const uint32_t ufid[4],
                 afxdp_flow_counts *counts = nullptr) noexcept;
    int flow_stats(const uint32_t ufid[4], afxdp_flow_stats *) const noexcept;
    int fast_path_target(int ifindex, bool add) noexcept;
    bool fast_path_target_lost(int ifindex, uint64_t *lost) const noexcept;
    void fast_path_stats(afxdp_fast_path_stats *) const noexcept;

    // The redirect targets of its flows (targets.hh), put flow by flow;
    // afxdp.h's afxdp_dev_targets_*().
    void targets_run() noexcept;
    void targets_drop(int ifindex) noexcept;
    const afxdp::RedirectTargets &targets() const noexcept
    {
        return targets_;
    }
    // Whether a target's state changed since the last call.
    bool take_status_changed() noexcept
    {
        return status_changed_.exchange(false);
    }

private:
    // Takes the flow out of the fast path's maps, its count read a last
    // time and ended in 'counts' (if any).  Under fast_path_mutex_.
    int flow_leave(const afxdp::FlowTable::Ufid &,
                   afxdp_flow_counts *counts) noexcept;
    // The fast path's devmap, as the targets change it.
    class TargetDevmap;
    afxdp_dev() = default;

    // An interface is open at most once per process: a second port on it
    // would steal the first one's XDP program.  Released on destruction,
    // after the program is detached.
    class Claim {
    public:
        Claim() = default;
        Claim(const Claim &) = delete;
        Claim &operator=(const Claim &) = delete;
        ~Claim();
        bool take(int ifindex) noexcept;   // False if already taken.

    private:
        int ifindex_ = 0;
    };

    // open()'s steps after the checks, the pool and the program: each
    // mode the options allow, best first, until one works; then what the
    // one that worked leaves unsaid.
    afxdp::Failure open_in_modes(const afxdp_dev_config &) noexcept;
    void opened(const afxdp_dev_config &, afxdp_xdp_mode) noexcept;
    const char *segment_reason() const noexcept;
    // Tries one mode: attach, then every queue.
    afxdp::QueueFailure try_mode(const afxdp_dev_config &, afxdp_xdp_mode)
        noexcept;
    // try_mode(), and again with a pool of its own if the kernel refused to
    // register the shared one (saying so).
    afxdp::QueueFailure try_mode_sharing(const afxdp_dev_config &,
                                         afxdp_xdp_mode) noexcept;
    // The program for 'mode': with packet hints where the options, the
    // mode, the kernel and the driver allow them, else the plain one.
    // Says why not in hash_why_ and vlan_why_.
    const afxdp::XskProgram &program_for(const afxdp_dev_config &,
                                         afxdp_xdp_mode) noexcept;
    // The program with hints failed 'why': drop it and say so.
    void without_hints(const afxdp_dev_config &, const char *why) noexcept;
    const afxdp::XskProgram &attached_program() const noexcept
    {
        return hinted_prog_.loaded() ? hinted_prog_ : prog_;
    }
    // Loads the fast path with the hints of 'prog' (the program of the
    // mode tried, which it stands in for): true if loaded, else why in
    // fast_path_why_.
    bool load_fast_path(const afxdp_dev_config &,
                        const afxdp::XskProgram &prog) noexcept;
    // The fast path failed 'why': go on without it, and say so once.
    void attach_fast_path_tc(const afxdp_dev_config &,
                             afxdp_xdp_mode) noexcept;
    void without_fast_path(const afxdp_dev_config &, const char *why)
        noexcept;

    // The device's reference to its frames' pool, given back after the
    // queues have returned what their rings held.
    class PoolRef {
    public:
        PoolRef() = default;
        PoolRef(const PoolRef &) = delete;
        PoolRef &operator=(const PoolRef &) = delete;
        ~PoolRef() { reset(); }
        void reset(afxdp_pool *p = nullptr, uint32_t demand = 0) noexcept;
        afxdp_pool *get() const noexcept { return pool_; }

    private:
        afxdp_pool *pool_ = nullptr;
        uint32_t demand_ = 0;
    };

    // Takes a pool: shared if 'share'.
    afxdp::Failure take_pool(const afxdp_dev_config &, bool share) noexcept;

    // Destroyed bottom-up: the queues (sockets) first, then the pool
    // reference, the attachment, the program, and the claim on the
    // interface.
    Claim claim_;
    afxdp::XskProgram prog_;          // Plain: runs in any mode.
    afxdp::XskProgram hinted_prog_;   // With hints, if attached.
    afxdp::FastPath fast_path_;       // Attached instead, if loaded.
    afxdp::XdpAttachment attachment_;
    PoolRef pool_;
    std::unique_ptr<afxdp_queue> queues_[AFXDP_MAX_QUEUES];
    unsigned n_queues_ = 0;
    std::string name_;              // The interface's, as opened.
    int ifindex_ = 0;
    bool prog_lost_said_ = false;
    afxdp_xdp_mode mode_ = AFXDP_MODE_BEST_EFFORT;
    bool need_wakeup_requested_ = false;
    bool coalesce_requested_ = false;
    unsigned ring_size_ = 0;
    unsigned mtu_ = 0;              // The interface's, at open.
    bool csum_finish_ = false;      // Its queues finish partial checksums
                                    // (a veth or tap: l4csum.hh).
    unsigned n_frames_ = 0;
    // Why sharing was asked and is not so.
    char share_reason_[afxdp::kWhyLen] = "";
    afxdp::HintSupport hint_support_;   // Of kernel and driver, asked
    bool hint_support_asked_ = false;   // at the first native mode tried.
    const char *hash_why_ = "";     // Why the RX hash is not asked for.
    const char *vlan_why_ = "";     // Why the VLAN tag is not put back.
    // The program with hints did not load or attach: why.
    char hints_failed_[afxdp::kWhyLen] = "";
    bool fast_path_requested_ = false;  // Offload on, port opted in.
    bool fast_path_active_ = false;     // fast_path_'s program attached.
    char fast_path_why_[afxdp::kWhyLen] = "";   // Requested, not active.
    char fast_path_tc_why_[afxdp::kWhyLen] = "";   // Active, no TC half.
    uint32_t attached_id_ = 0;          // The program attached.
    mutable std::mutex fast_path_mutex_;   // fast_path_'s table and the
    uint64_t refused_[AFXDP_REFUSED_N] = {};   // counters below.
    uint64_t put_failed_ = 0;
    uint64_t untold_packets_ = 0, untold_bytes_ = 0;
    afxdp::RedirectTargets targets_;
    std::atomic<bool> status_changed_{false};
};

#endif  // AFXDP_DEVICE_HH
