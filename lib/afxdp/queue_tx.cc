// The send side of an AF_XDP queue: reap completions, put bursts on the
// TX ring (in place or copied), and kick the kernel, now or a moment
// later (kick.hh).
#include "queue.hh"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/socket.h>

using namespace afxdp;

namespace {

// Without multi-buffer, packets copied into one frame at most this long
// (what the MTU limit of one frame allows).
constexpr uint32_t kMaxTxLen = kFrameSize - AFXDP_FRAME_HEADROOM
                               - AFXDP_XDP_HEADROOM;
// In copy mode the kernel transmits at most TX_BATCH_SIZE frames per
// sendto(): 16 in older kernels, 32 in newer ones, unless
// XDP_MAX_TX_SKB_BUDGET (6.17) sets it.  Counting how many retries a full
// ring may need, we assume the smaller.
constexpr uint32_t kKernelTxBatch = 16;
// Bounds on retrying a full TX ring within one send() call.
constexpr int kTxReserveTries = 4;
// With multi-buffer, a packet longer than one frame is copied into as many
// whole frames as it needs, up to 16 (the kernel's copy mode takes 17).
constexpr uint32_t kMaxMultiTxLen = AFXDP_MAX_MULTI_BUFFER_PACKET;
constexpr uint32_t kMaxPacketFrames = (kMaxMultiTxLen + kFrameSize - 1)
                                      / kFrameSize;

}  // namespace

// One burst on its way to the TX ring: what becomes of each packet.
struct afxdp_queue::Burst {
    static constexpr uint32_t kDropped = UINT32_MAX;
    uint32_t n = 0;               // Packets in the burst.
    // Per packet, in order: the frame it goes out in (its own, sent in
    // place, or a free one it is copied into), or kDropped.
    uint32_t frame[kBurst];
    bool in_place[kBurst];        // Per packet: frame[] is its own.
    uint32_t copies[kBurst];      // The packets to copy, in order.
    uint32_t n_copy = 0;          // Entries in copies[].
    uint32_t n_copy_frames = 0;   // The first so many of copies[] got a
                                  // frame; the rest are dropped.
    uint32_t n_in_place = 0;      // Packets sent in place.
    uint32_t dropped = 0;         // Packets dropped, for whatever reason.
};

size_t
afxdp_queue::send(const afxdp_tx_packet *pkts, size_t n, unsigned *events,
                  int *error) noexcept
{
    size_t dropped = 0;
    if (in_kernel_tx_) {
        reap_completions(events);
    }
    // Packets longer than a frame need several at once: each is sent on
    // its own, between bursts of the others, in order.
    auto multi_frame = [this](const afxdp_tx_packet &p) {
        return multi_buffer_ && p.len > kFrameSize && p.len <= kMaxMultiTxLen
               && !(p.pool == pool_ && in_place_);
    };
    while (n > 0) {
        uint32_t limit = n < kBurst ? uint32_t(n) : kBurst;
        uint32_t k = 0;
        while (k < limit && !multi_frame(pkts[k])) {
            k++;
        }
        if (k) {
            dropped += send_burst(pkts, k, events, error);
        } else {
            dropped += !send_multi_frame(pkts[0], events, error);
            k = 1;
        }
        pkts += k;
        n -= k;
    }
    if (tx_.pending()) {
        kick_or_defer(events, error);
    }
    return dropped;
}

size_t
afxdp_queue::send_burst(const afxdp_tx_packet *pkts, uint32_t n,
                        unsigned *events, int *error) noexcept
{
    Burst b;
    sort_burst(pkts, n, &b);
    take_copy_frames(&b, events);
    uint32_t first;
    uint32_t slots = reserve_burst(&b, &first, events, error);
    write_burst(pkts, b, first);
    tx_.submit();
    in_kernel_tx_ += slots;
    stats_.tx_packets += slots;
    stats_.tx_batches += slots > 0;
    if (b.dropped) {
        *events |= AFXDP_EV_TX_DROP;
    }
    return b.dropped;
}

// Decides for each packet: sent in place (a frame of our pool, if this
// queue sends in place), copied, or dropped as too long.
void
afxdp_queue::sort_burst(const afxdp_tx_packet *pkts, uint32_t n,
                        Burst *b) noexcept
{
    uint8_t *area = pool_->area();
    b->n = n;
    for (uint32_t i = 0; i < n; i++) {
        const afxdp_tx_packet &p = pkts[i];
        b->in_place[i] = false;
        b->frame[i] = Burst::kDropped;
        if (p.pool == pool_ && in_place_) {
            // A frame of ours lent to the caller: it may have moved its
            // data within the frame (a pushed header) but never out of it.
            uint64_t off = uint64_t(static_cast<const uint8_t *>(p.data)
                                    - area);
            if (p.len && (off & (kFrameSize - 1)) + p.len <= kFrameSize) {
                b->in_place[i] = true;
                b->frame[i] = uint32_t(off >> kFrameShift);
                b->n_in_place++;
                continue;
            }
            // Cannot happen with OVS's dp_packets; give the frame back.
            uint32_t f = uint32_t(off >> kFrameShift);
            pool_->put_app_frames(&f, 1);
            stats_.tx_dropped_too_long++;
            b->dropped++;
        } else if (p.len <= kMaxTxLen
                   || (multi_buffer_ && p.len <= kFrameSize)) {
            // With multi-buffer the MTU is no longer one frame's: a copy
            // may fill its whole frame (a frame to send needs no
            // headroom).
            b->copies[b->n_copy++] = i;
        } else {
            stats_.tx_dropped_too_long++;
            b->dropped++;
        }
    }
}

// Frames to copy into: those this queue kept (already tagged as ours),
// then the pool's; if both run short, what completions give back.  The
// packets left without one are dropped.
void
afxdp_queue::take_copy_frames(Burst *b, unsigned *events) noexcept
{
    uint32_t want = b->n_copy;
    uint32_t got[kBurst];
    uint32_t have = take_frames(want, got, events);
    stats_.tx_dropped_no_frames += want - have;
    b->dropped += want - have;
    for (uint32_t k = 0; k < have; k++) {
        b->frame[b->copies[k]] = got[k];
    }
    b->n_copy_frames = have;
}

// Up to 'n' frames to copy into, in '*out': those this queue kept, then the
// pool's, then what completions give back.  Returns how many.
uint32_t
afxdp_queue::take_frames(uint32_t n, uint32_t *out, unsigned *events)
    noexcept
{
    uint32_t have = take_kept(n, out);
    if (have < n) {
        have += pool_->get(n - have, out + have, FrameState::kTx);
    }
    if (have < n) {
        reap_completions(events);
        have += take_kept(n - have, out + have);
        have += pool_->get(n - have, out + have, FrameState::kTx);
    }
    return have;
}

// Gives back frames taken for copies that will not be sent.
void
afxdp_queue::untake_frames(const uint32_t *frames, uint32_t n) noexcept
{
    for (uint32_t i = 0; i < n; i++) {
        // It may be one we kept, tagged as ours.
        pool_->set_owner(frames[i], 0);
    }
    pool_->put_from_kernel(frames, n, FrameState::kTx);
}

// Copies a packet longer than one frame into as many as it needs, all
// marked "continues" but the last, and queues them.  All or nothing: a
// packet short of frames or of ring slots is dropped.  Returns whether it
// was queued.
bool
afxdp_queue::send_multi_frame(const afxdp_tx_packet &p, unsigned *events,
                              int *error) noexcept
{
    uint32_t k = (p.len + kFrameSize - 1) / kFrameSize;
    uint32_t frames[kMaxPacketFrames];
    uint32_t have = take_frames(k, frames, events);
    uint32_t first = 0, slots = 0;
    if (have == k) {
        slots = reserve_tx(k, &first, events, error);
    }
    if (slots < k) {
        tx_.cancel(slots);
        untake_frames(frames, have);
        if (have < k) {
            stats_.tx_dropped_no_frames++;
        } else {
            stats_.tx_dropped_ring_full++;
        }
        stats_.tx_multi_dropped++;
        *events |= AFXDP_EV_TX_DROP;
        return false;
    }
    uint8_t *area = pool_->area();
    const uint8_t *data = static_cast<const uint8_t *>(p.data);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t off = i * kFrameSize;
        uint32_t len = std::min(kFrameSize, p.len - off);
        uint64_t addr = uint64_t(frames[i]) << kFrameShift;
        std::memcpy(area + addr, data + off, len);
        pool_->set_owner(frames[i], slot_);
        xdp_desc &d = tx_.at(first + i);
        d.addr = addr;
        d.len = len;
        d.options = i + 1 < k ? compat::kDescContinues : 0;
    }
    tx_.submit();
    in_kernel_tx_ += k;
    stats_.tx_packets++;
    stats_.tx_multi_frame++;
    stats_.tx_batches++;
    return true;
}

// Reserves a TX slot for every packet that has a frame.  If the ring
// stays full, drops the last packets (their frames go back) and returns
// the slots reserved from '*first' on.
uint32_t
afxdp_queue::reserve_burst(Burst *b, uint32_t *first, unsigned *events,
                           int *error) noexcept
{
    uint32_t want = b->n_in_place + b->n_copy_frames;
    uint32_t slots = reserve_tx(want, first, events, error);
    uint32_t excess = want - slots;
    stats_.tx_dropped_ring_full += excess;
    b->dropped += excess;
    for (uint32_t i = b->n; i-- > 0 && excess;) {
        uint32_t &f = b->frame[i];
        if (f == Burst::kDropped) {
            continue;
        }
        if (b->in_place[i]) {
            pool_->put_app_frames(&f, 1);
        } else {
            untake_frames(&f, 1);
        }
        f = Burst::kDropped;
        excess--;
    }
    return slots;
}

// Copies what is to be copied and writes the descriptors from slot
// 'first' on (not yet submitted).
void
afxdp_queue::write_burst(const afxdp_tx_packet *pkts, const Burst &b,
                         uint32_t first) noexcept
{
    uint8_t *area = pool_->area();
    uint32_t slot = first, sent_in_place = 0;
    uint32_t taken[kBurst];
    // The packets to copy were received a burst ago on another core, so
    // their lines are elsewhere: fetch the next packet to copy while this
    // one is copied.
    uint32_t next_copy = 0;
    auto prefetch_next_copy = [&]() {
        if (next_copy < b.n_copy_frames) {
            const afxdp_tx_packet &p = pkts[b.copies[next_copy++]];
            const uint8_t *d = static_cast<const uint8_t *>(p.data);
            for (uint32_t off = 0; off < p.len; off += kCacheLine) {
                __builtin_prefetch(d + off, 0, 3);
            }
        }
    };
    prefetch_next_copy();
    for (uint32_t i = 0; i < b.n; i++) {
        uint32_t f = b.frame[i];
        if (f == Burst::kDropped) {
            continue;
        }
        uint64_t addr;
        if (b.in_place[i]) {
            addr = uint64_t(static_cast<const uint8_t *>(pkts[i].data)
                            - area);
            taken[sent_in_place++] = f;
        } else {
            prefetch_next_copy();
            addr = uint64_t(f) << kFrameShift;
            std::memcpy(area + addr, pkts[i].data, pkts[i].len);
        }
        pool_->set_owner(f, slot_);
        xdp_desc &d = tx_.at(slot++);
        d.addr = addr;
        d.len = pkts[i].len;
        d.options = 0;
    }
    // One count for the burst, not a locked instruction per packet.
    pool_->take_from_app(taken, sent_in_place);
    stats_.tx_in_place += sent_in_place;
}

uint32_t
afxdp_queue::reserve_tx(uint32_t n, uint32_t *first, unsigned *events,
                        int *error) noexcept
{
    uint32_t got = tx_.reserve(n, first);
    if (got == n) {
        return got;
    }
    // Not enough room: give back nothing, make room, try again.  A full
    // ring is usually a moment's backlog, not a reason to drop the batch.
    stats_.tx_ring_full++;
    *events |= AFXDP_EV_TX_RING_FULL;
    for (int t = 0; t < kTxReserveTries && got < n; t++) {
        // The slots reserved so far are not written yet, so nothing is
        // submitted here: the kick drains what was already published.
        kick_tx(events, error);
        reap_completions(events);
        uint32_t more_first;
        got += tx_.reserve(n - got, &more_first);
    }
    return got;
}

void
afxdp_queue::reap_completions(unsigned *events) noexcept
{
    uint32_t first;
    uint32_t n = comp_.peek(comp_.size(), &first);
    if (n == 0) {
        *events |= AFXDP_EV_CQ_EMPTY;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        tx_scratch_[i] = uint32_t(comp_.at(first + i) >> kFrameShift);
    }
    comp_.release();
    in_kernel_tx_ -= n;
    stats_.tx_completions += n;

    // Keep the last completed (the warmest) for our next copies; the rest
    // go back to the pool, untagged.
    uint32_t n_kept = n_kept_.load(std::memory_order_relaxed);
    uint32_t keep = std::min(n, kept_max_ - n_kept);
    uint32_t give = n - keep;
    pool_->keep(tx_scratch_.get() + give, keep);
    std::memcpy(&kept_[n_kept], tx_scratch_.get() + give,
                keep * sizeof kept_[0]);
    n_kept_.store(n_kept + keep, std::memory_order_relaxed);
    if (give) {
        for (uint32_t i = 0; i < give; i++) {
            pool_->set_owner(tx_scratch_[i], 0);
        }
        pool_->put_from_kernel(tx_scratch_.get(), give, FrameState::kTx);
    }
}

uint32_t
afxdp_queue::take_kept(uint32_t n, uint32_t *out) noexcept
{
    uint32_t n_kept = n_kept_.load(std::memory_order_relaxed);
    uint32_t k = std::min(n, n_kept);
    n_kept -= k;
    std::memcpy(out, &kept_[n_kept], k * sizeof *out);
    n_kept_.store(n_kept, std::memory_order_relaxed);
    pool_->unkeep(out, k);
    stats_.tx_frames_reused += k;
    return k;
}

void
afxdp_queue::kick_tx(unsigned *events, int *error) noexcept
{
    if (need_wakeup_ && !tx_.needs_wakeup(compat::kRingNeedWakeup)) {
        stats_.tx_kicks_skipped++;
        return;
    }
    // Zero-copy drivers transmit asynchronously after one kick.  Copy mode
    // transmits synchronously, a bounded batch per call, so keep kicking
    // until the ring drains.
    uint32_t max_kicks = zero_copy_mode_ ? 1
                         : tx_.pending() / kKernelTxBatch + 2;
    for (uint32_t k = 0; k < max_kicks; k++) {
        if (k == 0) {
            stats_.tx_kicks++;
        } else {
            stats_.tx_kick_retries++;
        }
        if (sendto(fd(), nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0) {
            int e = errno;
            if (e == EBUSY) {
                // Another sender is in the kernel's TX path for this
                // socket; it will drain our entries too.
                break;
            }
            if (e != EAGAIN && e != ENOBUFS) {
                // ENETDOWN: link down, frames wait in the ring for it to
                // come up.  ENXIO: the device or queue is gone.
                stats_.tx_kick_errors++;
                *events |= AFXDP_EV_TX_KICK_ERR;
                *error = e;
                break;
            }
            // EAGAIN/ENOBUFS: no room in the completion ring or no skb
            // right now; reap and try again.
        }
        reap_completions(events);
        if (tx_.pending() == 0) {
            break;
        }
        if (need_wakeup_ && !tx_.needs_wakeup(compat::kRingNeedWakeup)) {
            break;
        }
    }
}

void
afxdp_queue::kick_or_defer(unsigned *events, int *error) noexcept
{
    if (kicker_) {
        bool room = tx_.pending() < kCoalescedBursts * kBurst;
        bool kernel_wants = !need_wakeup_
                            || tx_.needs_wakeup(compat::kRingNeedWakeup);
        if (defer_kick(kicker_, room, kernel_wants)) {
            stats_.tx_kicks_deferred++;
            return;
        }
        kicker_->paid();
    }
    kick_tx(events, error);
}

void
afxdp_queue::kick_if_owed() noexcept
{
    if (kicker_ && kicker_->owed()) {
        kicker_->kick_late();
    }
}
