// The receive side of an AF_XDP queue: refill the fill ring, take a burst
// from the RX ring, wake the kernel when it asks.
#include "queue.hh"

#include <cerrno>
#include <poll.h>

using namespace afxdp;

namespace {

// Fill the fill ring only when at least this many slots are free, so a
// refill is never a syscall-free trickle of one or two frames.
constexpr uint32_t kRefillMin = 32;
// How much of each received frame's metadata to prefetch: what OVS's
// dp_packet_use_afxdp() and pkt_metadata_init() write.
constexpr size_t kMetaPrefetchBytes = 256;

}  // namespace

void
afxdp_queue::refill(unsigned *events) noexcept
{
    uint32_t room = fill_.free_slots(kRefillMin);
    if (room < kRefillMin) {
        return;
    }
    if (room == fill_.size() && filled_) {
        // The kernel has taken every frame we gave it: it has nothing left
        // to receive into.
        stats_.fill_ring_empty++;
        *events |= AFXDP_EV_FILL_EMPTY;
    }
    uint32_t n = pool_->get(room, rx_scratch_.get(), FrameState::kFill);
    if (n == 0) {
        stats_.fill_no_frames++;
        *events |= AFXDP_EV_FILL_SHORT;
        return;
    }
    uint32_t first;
    fill_.reserve(n, &first);   // 'room' slots are known to be free.
    for (uint32_t i = 0; i < n; i++) {
        fill_.at(first + i) = uint64_t(rx_scratch_[i]) << kFrameShift;
        pool_->set_owner(rx_scratch_[i], slot_);
    }
    fill_.submit();
    in_kernel_rx_ += n;
    filled_ = true;
}

void
afxdp_queue::rx_wakeup_if_needed(unsigned *events, int *error) noexcept
{
    if (!need_wakeup_ || !fill_.needs_wakeup(compat::kRingNeedWakeup)) {
        return;
    }
    // Timeout 0: we only want the kernel to run its RX path, not to wait.
    pollfd pfd = {fd(), POLLIN, 0};
    stats_.rx_wakeups++;
    *events |= AFXDP_EV_RX_WAKEUP;
    if (poll(&pfd, 1, 0) < 0) {
        stats_.rx_wakeup_errors++;
        *events |= AFXDP_EV_RX_WAKEUP_ERR;
        *error = errno;
    }
}

size_t
afxdp_queue::recv(afxdp_rx_frame *out, size_t max, int *qfill,
                  unsigned *events, int *error) noexcept
{
    refill(events);

    uint32_t first;
    uint32_t n = rx_.peek(uint32_t(max), &first);
    settle_owed_kicks(this, n, busy_polled_);
    if (n == 0) {
        if (qfill) {
            *qfill = 0;
        }
        rx_wakeup_if_needed(events, error);
        return 0;
    }
    uint8_t *area = pool_->area();
    // The caller writes each frame's metadata next (OVS: a dp_packet
    // header).  Frames come back around the rings only after thousands of
    // other packets, so those lines are cold: start fetching all of them
    // now, for the whole burst, rather than one miss at a time.
    const size_t prefetch_bytes = pool_->meta_size() < kMetaPrefetchBytes
                                  ? pool_->meta_size() : kMetaPrefetchBytes;
    for (uint32_t i = 0; i < n; i++) {
        const xdp_desc &d = rx_.at(first + i);
        uint32_t index = uint32_t(d.addr >> kFrameShift);
        uint8_t *meta = static_cast<uint8_t *>(pool_->meta(index));
        for (size_t off = 0; off < prefetch_bytes; off += kCacheLine) {
            __builtin_prefetch(meta + off, 1, 3);
        }
        // And the packet's first line, which the caller parses next (OVS:
        // miniflow_extract), written moments ago by another core.
        __builtin_prefetch(area + d.addr, 0, 3);
        out[i].data = area + d.addr;
        out[i].len = d.len;
        out[i].index = index;
        out[i].meta = meta;
        pool_->set_owner(index, 0);
    }
    rx_.release();
    in_kernel_rx_ -= n;
    if (kFrameDebug) {
        for (uint32_t i = 0; i < n; i++) {
            pool_->lend(&out[i].index, 1);
        }
    } else {
        pool_->lend(nullptr, n);
    }
    stats_.rx_packets += n;
    if (qfill) {
        // A fresh read of the kernel's index: a cache miss, so only when
        // asked (OVS asks when PMD performance metrics are on).
        *qfill = int(rx_.backlog());
    }
    return n;
}
