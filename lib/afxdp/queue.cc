#include "queue.hh"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <net/if.h>
#include <new>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.hh"

using afxdp::Result;

namespace afxdp {
namespace {

// Packets copied into one frame at most this long.
constexpr uint32_t kMaxTxLen = kFrameSize - AFXDP_FRAME_HEADROOM
                               - AFXDP_XDP_HEADROOM;
// Fill the fill ring only when at least this many slots are free, so a
// refill is never a syscall-free trickle of one or two frames.
constexpr uint32_t kRefillMin = 32;
// In copy mode the kernel transmits at most TX_BATCH_SIZE frames per
// sendto(): 16 in older kernels, 32 in newer ones, unless
// XDP_MAX_TX_SKB_BUDGET (6.17) sets it.  Counting how many retries a full
// ring may need, we assume the smaller.
constexpr uint32_t kKernelTxBatch = 16;
// A deferred kick is paid before this many bursts wait behind it, and the
// kernel is asked to send that many frames per sendto().
constexpr uint32_t kCoalescedBursts = AFXDP_COALESCED_BURSTS;
// A thread that owes a kick pays it after this many receive calls on
// other queues at the latest (its own RX queue may have moved away).
constexpr uint32_t kMaxPollsOwed = 64;
// Kicks one thread may owe at a time (one per TX queue it feeds).
constexpr int kMaxOwed = 4;
// Bounds on retrying a full TX ring within one send() call.
constexpr int kTxReserveTries = 4;
// How much of each received frame's metadata to prefetch: what OVS's
// dp_packet_use_afxdp() and pkt_metadata_init() write.
constexpr size_t kMetaPrefetchBytes = 256;
// Completed frames a queue keeps for its next copies: two coalesced kicks'
// worth (what one completion reap returns, and the sends before the
// next), and never more than a quarter of a ring, so that a small UMEM's
// frames are not held back from the fill ring.
constexpr uint32_t kKeptMax = 2 * AFXDP_COALESCED_BURSTS * kBurst;
// How long a socket waits for its queue to be released by a socket that
// was just closed: 100 tries of 2 ms.
constexpr int kBusyRetries = 100;
constexpr useconds_t kBusyRetryUsec = 2000;

RingMemory
ring_memory(xsk_ring_prod &r) noexcept
{
    return {r.producer, r.consumer, compat::ring_flags(r), r.ring, r.size};
}

RingMemory
ring_memory(xsk_ring_cons &r) noexcept
{
    return {r.producer, r.consumer, compat::ring_flags(r), r.ring, r.size};
}

}  // namespace
}  // namespace afxdp

using namespace afxdp;

// --- Kicks a thread owes ---------------------------------------------------

int
TxKicker::kick_late() noexcept
{
    uint32_t v = state_.load(std::memory_order_acquire);
    do {
        if (v & kClosed) {
            return 0;
        }
    } while (!state_.compare_exchange_weak(v, v + 1,
                                           std::memory_order_acq_rel));
    owed_.store(false, std::memory_order_relaxed);
    late_kicks_.fetch_add(1, std::memory_order_relaxed);
    int err = 0;
    if (sendto(fd_, nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0
        && errno != EAGAIN && errno != EBUSY && errno != ENOBUFS) {
        // No caller of a late kick can report it: counted here, shown in
        // the queue's tx_kick_errors.
        err = -errno;
        late_kick_errors_.fetch_add(1, std::memory_order_relaxed);
    }
    state_.fetch_sub(1, std::memory_order_release);
    return err;
}

void
TxKicker::close() noexcept
{
    state_.fetch_or(kClosed, std::memory_order_acq_rel);
    while (state_.load(std::memory_order_acquire) & ~kClosed) {
        cpu_relax();
    }
}

namespace {

// What this thread owes: the kick of a TX queue it sent on, to be paid by
// the time it has polled again the RX queue whose packets those were.  The
// entry holds the TX queue's kicker, never the queue, which may be closed
// meanwhile; and while the entry holds it, no other queue's kicker can
// have its address.  'rxq' is only compared, never followed: a queue
// opened at a closed one's address costs at most an early kick.
struct OwedKick {
    TxKicker *kicker;          // One reference.
    const afxdp_queue *rxq;
    uint32_t polls;            // Receive calls on this thread since.
    uint32_t bursts;           // Bursts 'rxq' gave this thread since.
};
thread_local OwedKick owed[kMaxOwed];
thread_local int n_owed;
// The RX queue whose packets this thread is handling now: the last one its
// receive returned packets from (null once one came up empty).
thread_local const afxdp_queue *rx_now;

// Forgets debt 'i' (its kick made or about to be made by the caller).
void
forget(int i) noexcept
{
    owed[i].kicker->unref();
    owed[i] = owed[--n_owed];
}

void
pay(int i) noexcept
{
    owed[i].kicker->kick_late();
    forget(i);
}

// A receive on 'rxq' that found 'n' packets: pays what is due.
void
settle_owed(const afxdp_queue *rxq, uint32_t n) noexcept
{
    for (int i = n_owed; i-- > 0;) {
        OwedKick &o = owed[i];
        if (o.rxq == rxq) {
            // Its next burst is here: let the send that follows carry it
            // too.  Nothing came, or enough bursts wait: pay now.
            if (n == 0 || o.bursts + 1 >= kCoalescedBursts) {
                pay(i);
            } else {
                o.bursts++;
            }
        } else if (++o.polls > kMaxPollsOwed) {
            pay(i);
        }
    }
}

// Pays this thread's debts when it exits (an OVS PMD thread being
// removed): its queues may be waiting, and each debt holds a reference.
struct OwedAtExit {
    bool armed = false;
    ~OwedAtExit()
    {
        while (n_owed) {
            pay(n_owed - 1);
        }
    }
};
thread_local OwedAtExit owed_at_exit;

int
find_owed(const TxKicker *kicker) noexcept
{
    for (int i = 0; i < n_owed; i++) {
        if (owed[i].kicker == kicker) {
            return i;
        }
    }
    return -1;
}

}  // namespace

namespace {

// One attempt at UMEM + socket with exactly 'bind_flags'.
int
build(afxdp_queue *q, const QueueConfig &cfg, uint16_t bind_flags,
      xsk_ring_prod *lib_fill, xsk_ring_cons *lib_comp, xsk_ring_cons *lib_rx,
      xsk_ring_prod *lib_tx, std::unique_ptr<xsk_umem, XskUmemDeleter> *umem,
      std::unique_ptr<xsk_socket, XskSocketDeleter> *xsk, char *why,
      size_t whylen, bool *umem_failed) noexcept
{
    (void) q;
    xsk_umem_config ucfg = {};
    ucfg.fill_size = cfg.ring_size;
    ucfg.comp_size = cfg.ring_size;
    ucfg.frame_size = kFrameSize;
    ucfg.frame_headroom = AFXDP_FRAME_HEADROOM;

    afxdp_pool *pool = q->pool();
    xsk_umem *u = nullptr;
    int err = xsk_umem__create(&u, pool->area(), pool->area_size(), lib_fill,
                               lib_comp, &ucfg);
    *umem_failed = err != 0;
    if (err) {
        std::snprintf(why, whylen, "registering the UMEM (%zu MiB) failed: "
                      "%s%s", pool->area_size() >> 20, std::strerror(-err),
                      cfg.memlock_charged
                      && (err == -ENOMEM || err == -EPERM)
                      ? " (without CAP_IPC_LOCK, RLIMIT_MEMLOCK must cover "
                        "the UMEM)" : "");
        return err;
    }
    umem->reset(u);

    xsk_socket_config scfg = {};
    scfg.rx_size = cfg.ring_size;
    scfg.tx_size = cfg.ring_size;
    scfg.libbpf_flags = XSK_LIBBPF_FLAGS__INHIBIT_PROG_LOAD;
    scfg.bind_flags = bind_flags;
    // libxdp copies IFNAMSIZ - 1 bytes of the name whatever its length
    // (valgrind: a read past the end of OVS's 7-byte "ovs-p0"); give it a
    // buffer that long.
    char ifname[IF_NAMESIZE] = "";
    std::strncpy(ifname, cfg.ifname, sizeof ifname - 1);
    xsk_socket *s = nullptr;
    err = xsk_socket__create(&s, ifname, cfg.qid, u, lib_rx, lib_tx, &scfg);
    if (err) {
        umem->reset();
        std::snprintf(why, whylen, "creating the AF_XDP socket on queue %u "
                      "failed: %s", cfg.qid, std::strerror(-err));
        return err;
    }
    xsk->reset(s);
    return 0;
}

}  // namespace

Result<std::unique_ptr<afxdp_queue>>
afxdp_queue::create(const QueueConfig &cfg, char *why, size_t whylen,
                    bool *umem_failed) noexcept
{
    using R = Result<std::unique_ptr<afxdp_queue>>;
    if (umem_failed) {
        *umem_failed = false;
    }
    std::unique_ptr<afxdp_queue> q(new (std::nothrow) afxdp_queue);
    if (!q) {
        return R::failure(-ENOMEM);
    }
    q->slot_ = cfg.pool->add_queue();
    if (!q->slot_) {
        std::snprintf(why, whylen, "UMEM %u already has 255 queues",
                      cfg.pool->id());
        return R::failure(-EMFILE);
    }
    q->pool_ = cfg.pool;
    q->rx_scratch_.reset(new (std::nothrow) uint32_t[cfg.ring_size]);
    q->tx_scratch_.reset(new (std::nothrow) uint32_t[cfg.ring_size]);
    q->kept_max_ = std::min(kKeptMax, cfg.ring_size / 4);
    q->kept_.reset(new (std::nothrow) uint32_t[q->kept_max_ + 1]);
    if (!q->rx_scratch_ || !q->tx_scratch_ || !q->kept_) {
        return R::failure(-ENOMEM);
    }

    bool at_umem = false;   // The last failure was the registration.
    bool want_nw = cfg.use_need_wakeup && compat::kNeedWakeupBuilt;
    uint16_t flags = cfg.bind_flags
                     | (want_nw ? compat::kBindNeedWakeup : 0);
    int err;
    for (int tries = 0;; tries++) {
        err = build(q.get(), cfg, flags, &q->lib_fill_, &q->lib_comp_,
                    &q->lib_rx_, &q->lib_tx_, &q->umem_, &q->xsk_, why,
                    whylen, &at_umem);
        // A socket closed a moment ago still holds the queue until an RCU
        // grace period and a work item have run (10-20 ms here): a
        // reconfigure that closes and reopens must wait for it.
        if (err != -EBUSY || tries >= kBusyRetries) {
            break;
        }
        usleep(kBusyRetryUsec);
    }
    if (err == -EINVAL && want_nw) {
        // A kernel without need_wakeup rejects the unknown bind flag with
        // EINVAL.  The port must still come up: bind without it.
        char why2[256];
        err = build(q.get(), cfg, cfg.bind_flags, &q->lib_fill_,
                    &q->lib_comp_, &q->lib_rx_, &q->lib_tx_, &q->umem_,
                    &q->xsk_, why2, sizeof why2, &at_umem);
        if (!err) {
            want_nw = false;
            std::snprintf(q->nw_reason_, sizeof q->nw_reason_,
                          "kernel rejected XDP_USE_NEED_WAKEUP");
        }
    } else if (cfg.use_need_wakeup && !compat::kNeedWakeupBuilt) {
        std::snprintf(q->nw_reason_, sizeof q->nw_reason_,
                      "built without need_wakeup support");
    }
    if (err) {
        if (umem_failed) {
            *umem_failed = at_umem;
        }
        return R::failure(err);
    }
    q->need_wakeup_ = want_nw;
    q->zero_copy_mode_ = cfg.zero_copy_mode;
    q->in_place_ = cfg.zero_copy_mode || cfg.in_place_copy_mode;
    q->fill_ = FillRing(ring_memory(q->lib_fill_));
    q->comp_ = CompletionRing(ring_memory(q->lib_comp_));
    q->rx_ = RxRing(ring_memory(q->lib_rx_));
    q->tx_ = TxRing(ring_memory(q->lib_tx_));

    q->busy_polled_ = cfg.busy_polled;
    q->setup_coalescing(cfg);

    // Give the kernel a full fill ring to receive into.
    unsigned ev = 0;
    q->refill(&ev);
    return R(std::move(q));
}

void
afxdp_queue::setup_coalescing(const QueueConfig &cfg) noexcept
{
    if (!cfg.coalesce_kicks) {
        return;
    }
    if (cfg.zero_copy_mode) {
        std::snprintf(coalesce_reason_, sizeof coalesce_reason_,
                      "zero-copy: the driver drains the TX ring itself");
        return;
    }
    // kCoalescedBursts bursts in one sendto(): the kernel's default is
    // one.
    int budget = int(kCoalescedBursts * kBurst);
    if (setsockopt(fd(), SOL_XDP, compat::kSockoptMaxTxSkbBudget, &budget,
                   sizeof budget)) {
        std::snprintf(coalesce_reason_, sizeof coalesce_reason_,
                      "kernel lacks XDP_MAX_TX_SKB_BUDGET (Linux 6.17): %s",
                      std::strerror(errno));
        return;
    }
    kicker_ = new (std::nothrow) TxKicker(fd());
    if (!kicker_) {
        std::snprintf(coalesce_reason_, sizeof coalesce_reason_,
                      "out of memory");
    }
}

afxdp_queue::~afxdp_queue()
{
    // A thread may still owe our kick: it holds the kicker, not us.
    if (kicker_) {
        kicker_->close();
        kicker_->unref();
    }
    // Once the socket and its UMEM registration are gone the kernel holds
    // none of our frames: whatever sat in this queue's four rings goes
    // back to the pool, which other devices' queues may still be using.
    xsk_.reset();
    umem_.reset();
    if (slot_) {
        uint32_t n = pool_->remove_queue(slot_);
        afxdp::log(AFXDP_LOG_DBG, "UMEM %u: %u frames back from a closed "
                   "queue", pool_->id(), n);
    }
}

int
afxdp_queue::fd() const noexcept
{
    return xsk_socket__fd(xsk_.get());
}

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
    if (n_owed) {
        settle_owed(this, n);
    }
    rx_now = n && busy_polled_ ? this : nullptr;
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

size_t
afxdp_queue::send_burst(const afxdp_tx_packet *pkts, uint32_t n,
                        unsigned *events, int *error) noexcept
{
    // What becomes of each packet, in order: a frame number (its own frame
    // sent in place, or a free one it is copied into), or kDropped.
    constexpr uint32_t kDropped = UINT32_MAX;
    uint32_t frame[kBurst];
    bool in_place[kBurst];
    uint32_t copies[kBurst];
    uint32_t n_copy = 0, n_in_place = 0;
    uint32_t dropped = 0;
    uint8_t *area = pool_->area();

    for (uint32_t i = 0; i < n; i++) {
        const afxdp_tx_packet &p = pkts[i];
        in_place[i] = false;
        frame[i] = kDropped;
        if (p.pool == pool_ && in_place_) {
            // A frame of ours lent to the caller: it may have moved its
            // data within the frame (a pushed header) but never out of it.
            uint64_t off = uint64_t(static_cast<const uint8_t *>(p.data)
                                    - area);
            if (p.len && (off & (kFrameSize - 1)) + p.len <= kFrameSize) {
                in_place[i] = true;
                frame[i] = uint32_t(off >> kFrameShift);
                n_in_place++;
                continue;
            }
            // Cannot happen with OVS's dp_packets; give the frame back.
            uint32_t f = uint32_t(off >> kFrameShift);
            pool_->put_app_frames(&f, 1);
            stats_.tx_dropped_too_long++;
            dropped++;
        } else if (p.len <= kMaxTxLen) {
            copies[n_copy++] = i;
        } else {
            stats_.tx_dropped_too_long++;
            dropped++;
        }
    }

    // Frames to copy into: those we kept (already tagged as ours), then
    // the pool's.
    uint32_t got[kBurst];
    uint32_t have = take_kept(n_copy, got);
    if (have < n_copy) {
        have += pool_->get(n_copy - have, got + have, FrameState::kTx);
    }
    if (have < n_copy) {
        reap_completions(events);
        have += take_kept(n_copy - have, got + have);
        have += pool_->get(n_copy - have, got + have, FrameState::kTx);
        stats_.tx_dropped_no_frames += n_copy - have;
        dropped += n_copy - have;
    }
    for (uint32_t k = 0; k < have; k++) {
        frame[copies[k]] = got[k];
    }

    uint32_t want = n_in_place + have;
    uint32_t first;
    uint32_t slots = reserve_tx(want, &first, events, error);
    if (slots < want) {
        // Drop the last packets: those the ring has no room for.
        uint32_t excess = want - slots;
        stats_.tx_dropped_ring_full += excess;
        dropped += excess;
        for (uint32_t i = n; i-- > 0 && excess;) {
            if (frame[i] == kDropped) {
                continue;
            }
            if (in_place[i]) {
                pool_->put_app_frames(&frame[i], 1);
            } else {
                // It may be one we kept, tagged as ours.
                pool_->set_owner(frame[i], 0);
                pool_->put_from_kernel(&frame[i], 1, FrameState::kTx);
            }
            frame[i] = kDropped;
            excess--;
        }
    }

    uint32_t slot = first, sent_in_place = 0;
    uint32_t taken[kBurst];
    // The packets to copy were received a burst ago on another core, so
    // their lines are elsewhere: fetch the next packet to copy while this
    // one is copied.
    uint32_t next_copy = 0;
    auto prefetch_next_copy = [&]() {
        if (next_copy < have) {
            const afxdp_tx_packet &p = pkts[copies[next_copy++]];
            const uint8_t *d = static_cast<const uint8_t *>(p.data);
            for (uint32_t off = 0; off < p.len; off += kCacheLine) {
                __builtin_prefetch(d + off, 0, 3);
            }
        }
    };
    prefetch_next_copy();
    for (uint32_t i = 0; i < n; i++) {
        uint32_t f = frame[i];
        if (f == kDropped) {
            continue;
        }
        uint64_t addr;
        if (in_place[i]) {
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
    tx_.submit();
    in_kernel_tx_ += slots;
    stats_.tx_packets += slots;
    stats_.tx_in_place += sent_in_place;
    stats_.tx_batches += slots > 0;
    if (dropped) {
        *events |= AFXDP_EV_TX_DROP;
    }
    return dropped;
}

size_t
afxdp_queue::send(const afxdp_tx_packet *pkts, size_t n, unsigned *events,
                  int *error) noexcept
{
    size_t dropped = 0;
    if (in_kernel_tx_) {
        reap_completions(events);
    }
    while (n > 0) {
        uint32_t k = n < kBurst ? uint32_t(n) : kBurst;
        dropped += send_burst(pkts, k, events, error);
        pkts += k;
        n -= k;
    }
    if (tx_.pending()) {
        kick_or_defer(events, error);
    }
    return dropped;
}

void
afxdp_queue::kick_or_defer(unsigned *events, int *error) noexcept
{
    if (kicker_) {
        int i = find_owed(kicker_);
        bool room = tx_.pending() < kCoalescedBursts * kBurst;
        if (i >= 0) {
            if (room && rx_now == owed[i].rxq) {
                // The kick this thread owes us covers this burst too.
                stats_.tx_kicks_deferred++;
                return;
            }
            // Enough waits, or it came from elsewhere: pay for all.
            forget(i);
        } else if (rx_now && n_owed < kMaxOwed && room
                   && (!need_wakeup_
                       || tx_.needs_wakeup(compat::kRingNeedWakeup))) {
            // These packets came from a receive on this thread, whose next
            // burst will be here in a moment: kick with that one.
            owed_at_exit.armed = true;
            kicker_->ref();
            kicker_->owe();
            owed[n_owed++] = {kicker_, rx_now, 0, 0};
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
