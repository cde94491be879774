// What an AF_XDP queue tells about itself: our counters, the kernel's
// XDP_STATISTICS, where its frames are, its rings' wakeup flags, and
// whether the driver really runs in zero-copy mode.
#include "queue.hh"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>

using namespace afxdp;

afxdp_queue_stats
afxdp_queue::stats() const noexcept
{
    afxdp_queue_stats s = stats_;
    s.tx_kicks_late = kicker_ ? kicker_->late_kicks() : 0;
    s.tx_kick_errors += kicker_ ? kicker_->late_kick_errors() : 0;
    return s;
}

bool
afxdp_queue::zero_copy_confirmed() const noexcept
{
    if (compat::kSockoptXdpOptions < 0) {
        return false;
    }
    xdp_options opts = {};
    socklen_t len = sizeof opts;
    if (getsockopt(fd(), SOL_XDP, compat::kSockoptXdpOptions, &opts, &len)) {
        return false;
    }
    return opts.flags & compat::kXdpOptionsZeroCopy;
}

int
afxdp_queue::xdp_stats(afxdp_xdp_stats *out) const noexcept
{
    xdp_statistics st = {};
    socklen_t len = sizeof st;
    *out = {};
    if (getsockopt(fd(), SOL_XDP, XDP_STATISTICS, &st, &len)) {
        return -errno;
    }
    // Older kernels fill in fewer counters; n_valid says how many.
    uint64_t raw[6] = {};
    std::memcpy(raw, &st, len < sizeof raw ? len : sizeof raw);
    out->rx_dropped = raw[0];
    out->rx_invalid_descs = raw[1];
    out->tx_invalid_descs = raw[2];
    out->rx_ring_full = raw[3];
    out->rx_fill_ring_empty_descs = raw[4];
    out->tx_ring_empty_descs = raw[5];
    out->n_valid = unsigned(len / sizeof(uint64_t));
    return 0;
}

void
afxdp_queue::frame_counts(afxdp_frame_counts *c) noexcept
{
    c->total = pool_->n_frames();
    c->free = pool_->free_count();
    c->fill = in_kernel_rx_;
    c->tx = in_kernel_tx_;
    c->tx_kept = n_kept_.load(std::memory_order_relaxed);
    c->in_app = pool_->in_app();
    c->rx_ring = rx_.backlog();
    c->fill_ring = c->fill - c->rx_ring;
}

void
afxdp_queue::wakeup_flags(bool *fill, bool *tx) const noexcept
{
    *fill = !need_wakeup_ || fill_.needs_wakeup(compat::kRingNeedWakeup);
    *tx = !need_wakeup_ || tx_.needs_wakeup(compat::kRingNeedWakeup);
}
