// The receive side of an AF_XDP queue: refill the fill ring, take a burst
// from the RX ring, wake the kernel when it asks.
#include "queue.hh"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <poll.h>

#include "hints.hh"
#include "l4csum.hh"

using namespace afxdp;

namespace {

// Fill the fill ring only when at least this many slots are free, so a
// refill is never a syscall-free trickle of one or two frames.
constexpr uint32_t kRefillMin = 32;
// An Ethernet header: a packet longer than the MTU and this may be one to
// cut (the tags it may carry are counted by plan_tcp_cut()).
constexpr uint32_t kEthHeaderLen = 14;
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
    // Where the socket reads metadata, only the kernel's may be found.
    uint8_t *area = rx_meta_ ? pool_->area() : nullptr;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t addr = uint64_t(rx_scratch_[i]) << kFrameShift;
        fill_.at(first + i) = addr;
        pool_->set_owner(rx_scratch_[i], slot_);
        if (area) {
            forget_rx_meta(area + addr);
        }
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

// After the whole burst's lines were asked for, so that their misses
// overlap.  Only a packet's first frame has the metadata.
void
afxdp_queue::read_meta(afxdp_rx_frame *out, uint32_t n) noexcept
{
    uint32_t hashed = 0, restored = 0, lost = 0, marked = 0, stale = 0;
    const uint8_t *area = pool_->area();
    for (uint32_t i = 0; i < n; i += out[i].n_frames) {
        const uint8_t *data = static_cast<const uint8_t *>(out[i].data);
        uint32_t off = uint32_t(data - area) & (kFrameSize - 1);
        if (off != kRxDataOffset && off != kRxTaggedDataOffset) {
            continue;   // Not where refill() cleared the way for it.
        }
        const uint8_t *at = data - sizeof(RxMeta);
        RxMeta m;
        std::memcpy(&m, at, sizeof m);
        if ((m.flags & kMetaMagicMask) != kMetaMagic) {
            continue;   // The driver took no metadata for this one.
        }
        // The frame goes back to the kernel through refill(), which
        // clears this again (forget_rx_meta()).
        if (m.flags & kMetaHash) {
            out[i].rx_hash = m.hash;
            out[i].has_rx_hash = true;
            hashed++;
        }
        if (m.flags & kMetaMark) {
            // The fast path's wire mark, the word before the RxMeta: OVS's
            // mark only while it is still its flow's (marks.hh).
            uint32_t wire;
            std::memcpy(&wire, at - sizeof(uint32_t), sizeof(uint32_t));
            if (marks_ && marks_->find(wire, &out[i].flow_mark)) {
                out[i].has_flow_mark = true;
                marked++;
            } else {
                stale++;
            }
        }
        restored += (m.flags & kMetaVlanRestored) != 0;
        lost += (m.flags & kMetaVlanLost) != 0;
    }
    stats_.rx_hash += hashed;
    stats_.rx_vlan_restored += restored;
    stats_.rx_vlan_lost += lost;
    stats_.rx_flow_marks += marked;
    stats_.rx_flow_marks_stale += stale;
}

// How many of the 'n' entries peeked from 'first' (at most 'max') are
// whole packets: a packet's frames come one descriptor each, all but the
// last marked "continues", and the kernel may publish them, or our 'max'
// cut them, across two calls.  The tail of a packet not yet whole goes
// back for the next call; a packet of more frames than 'max' can never be
// returned, and is dropped: '*first' moves past the frames dropped.
uint32_t
afxdp_queue::whole_packets(uint32_t *first, uint32_t n, uint32_t max)
    noexcept
{
    uint32_t dropped = 0;
    if (rx_dropping_) {
        // The rest of a packet dropped in an earlier call.
        dropped = drop_rx_frames(*first, n);
    } else if (n == max
               && rx_.at(*first + n - 1).options & compat::kDescContinues) {
        // Possibly one packet longer than 'max'.
        uint32_t k = 0;
        while (k < n && rx_.at(*first + k).options & compat::kDescContinues) {
            k++;
        }
        if (k == n) {
            stats_.rx_dropped_too_many_frames++;
            rx_dropping_ = true;
            dropped = drop_rx_frames(*first, n);
        }
    }
    *first += dropped;
    n -= dropped;
    uint32_t whole = n;
    while (whole && rx_.at(*first + whole - 1).options
                    & compat::kDescContinues) {
        whole--;
    }
    rx_.unpeek(n - whole);
    if (dropped && !whole) {
        rx_.release();
    }
    return whole;
}

// Gives back to the pool the frames of a packet being dropped, from
// 'first' on, up to and including its last frame; returns how many.
uint32_t
afxdp_queue::drop_rx_frames(uint32_t first, uint32_t n) noexcept
{
    uint32_t k = 0;
    while (k < n && rx_dropping_) {
        const xdp_desc &d = rx_.at(first + k);
        rx_scratch_[k++] = uint32_t(d.addr >> kFrameShift);
        rx_dropping_ = d.options & compat::kDescContinues;
    }
    for (uint32_t i = 0; i < k; i++) {
        pool_->set_owner(rx_scratch_[i], 0);
    }
    pool_->put_from_kernel(rx_scratch_.get(), k, FrameState::kFill);
    in_kernel_rx_ -= k;
    return k;
}

// What the received frames in 'out' need before the caller has them: the
// metadata our program put in front of them read, checksums finished,
// and the frames lent out.
void
afxdp_queue::hand_over(afxdp_rx_frame *out, uint32_t n) noexcept
{
    if (rx_meta_) {
        read_meta(out, n);
    }
    if (csum_finish_) {
        finish_csums(out, n);
    }
    if (kFrameDebug) {
        for (uint32_t i = 0; i < n; i++) {
            pool_->lend(&out[i].index, 1);
        }
    } else {
        pool_->lend(nullptr, n);
    }
}

// The TCP and UDP checksums of the packets in 'out' that a sender on this
// host left partial, finished (l4csum.hh), the bytes of a packet of
// several frames taken where they lie.
void
afxdp_queue::finish_csums(afxdp_rx_frame *out, uint32_t n) noexcept
{
    constexpr uint32_t kMaxParts = 32;
    for (uint32_t i = 0; i < n;) {
        const uint32_t k = out[i].n_frames ? out[i].n_frames : 1;
        bool done = false;
        if (k == 1) {
            done = afxdp::finish_partial_l4_csum(
                static_cast<uint8_t *>(out[i].data), out[i].len);
        } else if (k <= kMaxParts && i + k <= n) {
            // The head's 'len' is the whole packet's; each continuing
            // entry's, its own frame's part.
            afxdp::PacketPart parts[kMaxParts];
            size_t rest = 0;
            for (uint32_t j = 1; j < k; j++) {
                parts[j] = {static_cast<uint8_t *>(out[i + j].data),
                            out[i + j].len};
                rest += out[i + j].len;
            }
            parts[0] = {static_cast<uint8_t *>(out[i].data),
                        out[i].len - rest};
            done = afxdp::finish_partial_l4_csum(parts, k);
        }
        stats_.rx_csum_finished += done;
        i += k;
    }
}

// The packet of entries 'head' to 'end' - 1 if it is TCP longer than
// the MTU admits: copied out whole to be cut (emit_segments()), and its
// frames given back.
bool
afxdp_queue::take_oversize(afxdp_rx_frame *out, uint32_t head, uint32_t end)
    noexcept
{
    const uint32_t len = out[head].len;
    if (len > kSegBufSize) {
        return false;
    }
    uint32_t rest = 0;
    for (uint32_t j = head + 1; j < end; j++) {
        rest += out[j].len;
    }
    uint8_t *buf = seg_buf_.get();
    std::memcpy(buf, out[head].data, len - rest);
    for (uint32_t j = head + 1, off = len - rest; j < end; j++) {
        std::memcpy(buf + off, out[j].data, out[j].len);
        off += out[j].len;
    }
    if (!plan_tcp_cut(buf, len, gso_mtu_, kFrameSize - kRxDataOffset,
                      &seg_cut_)) {
        seg_cut_ = TcpCut();
        return false;
    }
    seg_next_ = 0;
    for (uint32_t j = head; j < end; j++) {
        rx_scratch_[j - head] = out[j].index;
    }
    pool_->put_from_kernel(rx_scratch_.get(), end - head, FrameState::kFill);
    stats_.rx_segmented++;
    return true;
}

// The next segments of the packet being cut, up to 'room', each in a
// frame of its own laid out as a received one; fewer if the pool is short
// (the rest at the next call).
uint32_t
afxdp_queue::emit_segments(afxdp_rx_frame *out, uint32_t room) noexcept
{
    const size_t left = seg_cut_.n - seg_next_;
    uint32_t k = pool_->get(room < left ? room : uint32_t(left),
                            rx_scratch_.get(), FrameState::kFill);
    uint8_t *area = pool_->area();
    for (uint32_t j = 0; j < k; j++) {
        const uint32_t index = rx_scratch_[j];
        uint8_t *frame = area + (uint64_t(index) << kFrameShift);
        if (rx_meta_) {
            forget_rx_meta(frame);
        }
        uint8_t *data = frame + kRxDataOffset;
        out[j].data = data;
        out[j].len = uint32_t(write_tcp_segment(seg_buf_.get(), seg_cut_,
                                                seg_next_++, data));
        out[j].index = index;
        out[j].meta = pool_->meta(index);
        out[j].n_frames = 1;
        out[j].has_rx_hash = false;
        out[j].has_flow_mark = false;
    }
    stats_.rx_segments += k;
    return k;
}

// What is left of a packet being cut, which comes before anything newer;
// taken before refill(), which may give the kernel every free frame.  0
// if no frame was free: the caller then receives as usual (those packets
// overtake the segments), and the frames it hands out come back.
size_t
afxdp_queue::recv_segments(afxdp_rx_frame *out, size_t max, int *qfill,
                           unsigned *events) noexcept
{
    uint32_t n = emit_segments(out, uint32_t(max));
    refill(events);
    if (!n) {
        return 0;
    }
    settle_owed_kicks(this, n, busy_polled_);
    hand_over(out, n);
    if (qfill) {
        *qfill = int(rx_.backlog());
    }
    return n;
}

// The entries of the 'n' descriptors peeked from 'first' (whole
// packets); returns how many.  '*taken' gets how many descriptors were
// used: more where the last packet was taken to be cut, whose frames are
// then back in the pool, and the descriptors after it unpeeked.
uint32_t
afxdp_queue::read_burst(afxdp_rx_frame *out, uint32_t first, uint32_t n,
                        uint32_t *taken) noexcept
{
    uint8_t *area = pool_->area();
    // The caller writes each frame's metadata next (OVS: a dp_packet
    // header).  Frames come back around the rings only after thousands of
    // other packets, so those lines are cold: start fetching all of them
    // now, for the whole burst, rather than one miss at a time.
    const size_t prefetch_bytes = pool_->meta_size() < kMetaPrefetchBytes
                                  ? pool_->meta_size() : kMetaPrefetchBytes;
    uint32_t head = 0;      // The entry that starts the current packet.
    uint32_t packets = 0, multi = 0;
    *taken = n;
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
        if (rx_meta_) {
            __builtin_prefetch(area + d.addr - sizeof(RxMeta), 0, 3);
        }
        out[i].data = area + d.addr;
        out[i].len = d.len;
        out[i].index = index;
        out[i].meta = meta;
        out[i].has_rx_hash = false;
        out[i].has_flow_mark = false;
        if (i == head) {
            out[i].n_frames = 1;
            packets++;
        } else {
            // A frame that continues the packet of entry 'head'.
            out[i].n_frames = 0;
            multi += out[head].n_frames == 1;
            out[head].n_frames++;
            out[head].len += d.len;
        }
        pool_->set_owner(index, 0);
        if (d.options & compat::kDescContinues) {
            continue;
        }
        // (One at a time: while one waits to be cut, the next goes on
        // whole.)
        if (gso_mtu_ && out[head].len > gso_mtu_ + kEthHeaderLen
            && seg_next_ >= seg_cut_.n && take_oversize(out, head, i + 1)) {
            rx_.unpeek(n - i - 1);
            *taken = i + 1;
            break;
        }
        head = i + 1;
    }
    stats_.rx_packets += packets;
    stats_.rx_multi_frame += multi;
    return head;   // Past the last packet, or at the one being cut.
}

size_t
afxdp_queue::recv(afxdp_rx_frame *out, size_t max, int *qfill,
                  unsigned *events, int *error) noexcept
{
    if (seg_next_ >= seg_cut_.n) {
        refill(events);
    } else if (size_t n = recv_segments(out, max, qfill, events)) {
        return n;
    }
    uint32_t first;
    uint32_t n = rx_.peek(uint32_t(max), &first);
    if (multi_buffer_ && n) {
        n = whole_packets(&first, n, uint32_t(max));
    }
    settle_owed_kicks(this, n, busy_polled_);
    if (n == 0) {
        if (qfill) {
            *qfill = 0;
        }
        rx_wakeup_if_needed(events, error);
        return 0;
    }
    uint32_t taken;
    n = read_burst(out, first, n, &taken);
    rx_.release();
    in_kernel_rx_ -= taken;
    if (seg_next_ < seg_cut_.n) {
        n += emit_segments(out + n, uint32_t(max) - n);
    }
    hand_over(out, n);
    if (qfill) {
        // A fresh read of the kernel's index: a cache miss, so only when
        // asked (OVS asks when PMD performance metrics are on).
        *qfill = int(rx_.backlog());
    }
    return n;
}
