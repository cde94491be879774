// The device's XDP fast path: its flows, their counts, and the targets
// they redirect to (afxdp-offload.h's offload API; the program and maps
// are fastpath.hh's, the translation flow.hh's).
#include "device.hh"

#include <cerrno>
#include <cstring>
#include <mutex>

#include "flow.hh"
#include "hints.hh"

namespace {

// A flow's counts as the C API gives them.
afxdp_flow_stats
stats_for_ovs(const afxdp::FastPathFlowStats &st) noexcept
{
    afxdp_flow_stats out = {};
    out.n_packets = st.packets;
    out.n_bytes = st.bytes;
    // Both CLOCK_MONOTONIC.
    out.used_msec = (long long) (st.used_ns / 1000000);
    out.tcp_flags = st.tcp_flags;
    return out;
}

}  // namespace

class afxdp_dev::TargetDevmap final : public afxdp::RedirectTargets::Devmap {
public:
    explicit TargetDevmap(afxdp_dev &dev) : dev_(dev) {}
    int add(int ifindex) noexcept override
    {
        return dev_.fast_path_target(ifindex, true);
    }
    void remove(int ifindex) noexcept override
    {
        dev_.fast_path_target(ifindex, false);
    }
    bool lost(int ifindex, uint64_t *lost) noexcept override
    {
        return dev_.fast_path_target_lost(ifindex, lost);
    }

private:
    afxdp_dev &dev_;
};

void
afxdp_dev::targets_run() noexcept
{
    TargetDevmap devmap(*this);
    if (targets_.run(devmap, afxdp::monotonic_ms())) {
        status_changed_ = true;
    }
}

void
afxdp_dev::targets_drop(int ifindex) noexcept
{
    TargetDevmap devmap(*this);
    if (targets_.drop(devmap, ifindex)) {
        status_changed_ = true;
    }
}

int
afxdp_dev::flow_put(const uint32_t ufid[4], const afxdp_flow_match &match,
                    const afxdp_flow_action *actions, size_t n_actions,
                    uint32_t mark, afxdp_offload_refusal *refusal,
                    afxdp_flow_counts *counts) noexcept
{
    const afxdp::FlowTable::Ufid id = {ufid[0], ufid[1], ufid[2], ufid[3]};
    afxdp::Translation t = afxdp::translate(match, actions, n_actions, mark);
    *refusal = t.refusal;
    if (fast_path_active_) {
        // Its targets first: translate() took a target only as it was
        // named, whether or not it takes XDP frames now.
        TargetDevmap devmap(*this);
        if (targets_.add(devmap, actions, n_actions, afxdp::monotonic_ms())) {
            status_changed_ = true;
        }
    }
    std::lock_guard<std::mutex> g(fast_path_mutex_);
    if (!fast_path_active_) {
        return -EOPNOTSUPP;
    }
    if (!t.full()) {
        refused_[t.refusal]++;
    }
    // A flow OVS changes into one XDP cannot hold must leave the maps: its
    // old actions are no longer OVS's.
    // Nor one whose packets must reach OVS with its mark, where the
    // program cannot write one (a miss is as right, and cheaper).
    if (!t.offloadable() || (!t.full() && !fast_path_.writes_meta())) {
        flow_leave(id, counts);
        return -EOPNOTSUPP;
    }
    afxdp::FastPathFlowStats st;
    if (counts && fast_path_.flow_stats(id, &st)) {
        // Not in the maps (never, or it left them: a refused put, a map
        // change the kernel refused): its new count starts at zero.
        afxdp_flow_counts_end(counts);
    }
    int err = fast_path_.put(id, t.flow);
    if (err) {
        put_failed_++;
        flow_leave(id, counts);
        return err;
    }
    return 0;
}

int
afxdp_dev::flow_leave(const afxdp::FlowTable::Ufid &id,
                      afxdp_flow_counts *counts) noexcept
{
    afxdp::FastPathFlowStats st;
    if (counts && !fast_path_.flow_stats(id, &st)) {
        const afxdp_flow_stats now = stats_for_ovs(st);
        afxdp_flow_counts_read(counts, &now);
    }
    int err = fast_path_.del(id);
    if (counts) {
        afxdp_flow_counts_end(counts);
    }
    return err;
}

int
afxdp_dev::flow_del(const uint32_t ufid[4], afxdp_flow_counts *counts)
    noexcept
{
    const afxdp::FlowTable::Ufid id = {ufid[0], ufid[1], ufid[2], ufid[3]};
    std::lock_guard<std::mutex> g(fast_path_mutex_);
    afxdp::FastPathFlowStats st;
    if (counts && !fast_path_.flow_stats(id, &st)) {
        const afxdp_flow_stats now = stats_for_ovs(st);
        afxdp_flow_counts_read(counts, &now);
        uint64_t packets, bytes;
        afxdp_flow_counts_untold(counts, &packets, &bytes);
        untold_packets_ += packets;
        untold_bytes_ += bytes;
    }
    return fast_path_.del(id);
}

int
afxdp_dev::flow_stats(const uint32_t ufid[4], afxdp_flow_stats *out) const
    noexcept
{
    const afxdp::FlowTable::Ufid id = {ufid[0], ufid[1], ufid[2], ufid[3]};
    afxdp::FastPathFlowStats st;
    std::lock_guard<std::mutex> g(fast_path_mutex_);
    int err = fast_path_.flow_stats(id, &st);
    if (err) {
        return err;
    }
    *out = stats_for_ovs(st);
    return 0;
}

int
afxdp_dev::fast_path_target(int ifindex, bool add) noexcept
{
    std::lock_guard<std::mutex> g(fast_path_mutex_);
    if (!fast_path_active_) {
        return -EOPNOTSUPP;
    }
    int err = add ? fast_path_.add_target(ifindex)
                  : fast_path_.del_target(ifindex);
    return err == -ENOENT && !add ? 0 : err;
}

bool
afxdp_dev::fast_path_target_lost(int ifindex, uint64_t *lost) const noexcept
{
    std::lock_guard<std::mutex> g(fast_path_mutex_);
    *lost = 0;
    return fast_path_active_ && fast_path_.target_lost(ifindex, lost);
}

void
afxdp_dev::fast_path_stats(afxdp_fast_path_stats *out) const noexcept
{
    *out = {};
    out->requested = fast_path_requested_;
    out->active = fast_path_active_;
    out->reason = fast_path_requested_ && !fast_path_active_
                  ? fast_path_why_ : "";
    std::lock_guard<std::mutex> g(fast_path_mutex_);
    if (!fast_path_active_) {
        return;
    }
    out->marks = fast_path_.writes_meta();
    out->marks_reason = out->marks ? "" : afxdp::kNoXdpMetaWhy;
    out->tc = fast_path_.tc_attached();
    out->tc_reason = out->tc ? "" : fast_path_tc_why_;
    out->flows = unsigned(fast_path_.flows().n_flows());
    out->masks = unsigned(fast_path_.flows().n_masks());
    fast_path_.counters(out->packets);
    std::memcpy(out->refused, refused_, sizeof refused_);
    out->put_failed = put_failed_;
    out->untold_packets = untold_packets_;
    out->untold_bytes = untold_bytes_;
}
