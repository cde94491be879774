// Opening and closing an AF_XDP queue: the UMEM registration, the socket
// and its bind (with the retries and the fallback the kernel may need),
// and the coalesced kicks.  Receiving is in queue_rx.cc, sending in
// queue_tx.cc, counters in queue_stats.cc.
#include "queue.hh"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <net/if.h>
#include <new>
#include <sys/socket.h>
#include <unistd.h>

#include "log.hh"

using namespace afxdp;

namespace {

// Completed frames a queue keeps for its next copies: two coalesced kicks'
// worth (what one completion reap returns, and the sends before the
// next), and never more than a quarter of a ring, so that a small UMEM's
// frames are not held back from the fill ring.
constexpr uint32_t kKeptMax = 2 * kCoalescedBursts * kBurst;
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

// Fills in '*f' and returns its errno.
__attribute__((format(printf, 3, 4))) int
failed(QueueFailure *f, int neg_errno, const char *format, ...) noexcept
{
    f->error = neg_errno;
    va_list args;
    va_start(args, format);
    std::vsnprintf(f->why, sizeof f->why, format, args);
    va_end(args);
    return neg_errno;
}

}  // namespace

Result<std::unique_ptr<afxdp_queue>, QueueFailure>
afxdp_queue::create(const QueueConfig &cfg) noexcept
{
    using R = Result<std::unique_ptr<afxdp_queue>, QueueFailure>;
    QueueFailure fail;
    std::unique_ptr<afxdp_queue> q(new (std::nothrow) afxdp_queue);
    if (!q) {
        failed(&fail, -ENOMEM, "out of memory");
        return R::failure(std::move(fail));
    }
    q->slot_ = cfg.pool->add_queue();
    if (!q->slot_) {
        failed(&fail, -EMFILE, "UMEM %u already has 255 queues",
               cfg.pool->id());
        return R::failure(std::move(fail));
    }
    q->pool_ = cfg.pool;
    q->rx_scratch_.reset(new (std::nothrow) uint32_t[cfg.ring_size]);
    q->tx_scratch_.reset(new (std::nothrow) uint32_t[cfg.ring_size]);
    q->kept_max_ = std::min(kKeptMax, cfg.ring_size / 4);
    q->kept_.reset(new (std::nothrow) uint32_t[q->kept_max_ + 1]);
    if (!q->rx_scratch_ || !q->tx_scratch_ || !q->kept_) {
        failed(&fail, -ENOMEM, "out of memory");
        return R::failure(std::move(fail));
    }
    if (q->bind_with_retries(cfg, &fail)) {
        return R::failure(std::move(fail));
    }
    q->zero_copy_mode_ = cfg.zero_copy_mode;
    q->in_place_ = cfg.zero_copy_mode || cfg.in_place_copy_mode;
    q->fill_ = FillRing(ring_memory(q->lib_fill_));
    q->comp_ = CompletionRing(ring_memory(q->lib_comp_));
    q->rx_ = RxRing(ring_memory(q->lib_rx_));
    q->tx_ = TxRing(ring_memory(q->lib_tx_));

    q->busy_polled_ = cfg.busy_polled;
    q->rx_meta_ = cfg.rx_meta;
    q->csum_finish_ = cfg.csum_finish;
    if (cfg.gso_mtu) {
        q->seg_buf_.reset(new (std::nothrow) uint8_t[kSegBufSize]);
        q->gso_mtu_ = q->seg_buf_ ? cfg.gso_mtu : 0;
    }
    q->marks_ = cfg.marks;
    q->setup_coalescing(cfg);

    // Give the kernel a full fill ring to receive into.
    unsigned ev = 0;
    q->refill(&ev);
    return R(std::move(q));
}

// Binds with the flags 'cfg' asks for.  A kernel that rejects XDP_USE_SG
// or XDP_USE_NEED_WAKEUP gets a bind without it.  Sets need_wakeup_ and
// multi_buffer_, and the reasons for what was asked and is not in use.
int
afxdp_queue::bind_with_retries(const QueueConfig &cfg,
                               QueueFailure *fail) noexcept
{
    bool want_nw = cfg.use_need_wakeup && compat::kNeedWakeupBuilt;
    uint16_t nw = want_nw ? compat::kBindNeedWakeup : 0;
    uint16_t sg = cfg.multi_buffer ? compat::kBindMultiBuffer : 0;
    uint16_t flags = cfg.bind_flags | nw | sg;
    int err = bind_waiting(cfg, flags, fail);
    int sg_err = 0;
    if (sg && (err == -EINVAL || err == -EOPNOTSUPP)) {
        // Before Linux 6.6 the flag is unknown (EINVAL); a zero-copy
        // driver without multi-buffer support refuses it (EOPNOTSUPP).
        // Packets then stay one frame each, unless the MTU needs more.
        if (cfg.mtu_needs_multi_buffer) {
            return failed(fail, err, "the MTU of %u needs multi-buffer "
                          "AF_XDP (up to %u without), and the kernel "
                          "refused XDP_USE_SG in this mode: %s",
                          cfg.mtu_needs_multi_buffer,
                          AFXDP_MAX_MTU_ONE_FRAME, std::strerror(-err));
        }
        sg_err = err;
        flags &= uint16_t(~sg);
        err = bind_waiting(cfg, flags, fail);
    }
    if (nw && err == -EINVAL) {
        // A kernel without need_wakeup rejects the unknown bind flag with
        // EINVAL.  The port must still come up: bind without it.  If that
        // fails too, its failure is the one to report.
        flags &= uint16_t(~nw);
        err = bind_socket(cfg, flags, fail);
    }
    if (err) {
        return err;
    }
    need_wakeup_ = flags & nw;
    multi_buffer_ = flags & sg;
    if (want_nw && !need_wakeup_) {
        std::snprintf(nw_reason_, sizeof nw_reason_,
                      "kernel rejected XDP_USE_NEED_WAKEUP");
    } else if (cfg.use_need_wakeup && !compat::kNeedWakeupBuilt) {
        std::snprintf(nw_reason_, sizeof nw_reason_,
                      "built without need_wakeup support");
    }
    if (sg && !multi_buffer_) {
        std::snprintf(mb_reason_, sizeof mb_reason_,
                      "kernel rejected XDP_USE_SG (%s)%s",
                      std::strerror(-sg_err),
                      sg_err == -EINVAL ? ": needs Linux 6.6"
                      : ": the driver has no zero-copy multi-buffer");
    }
    return 0;
}

// One bind, waiting for the queue if a socket closed a moment ago still
// holds it.
int
afxdp_queue::bind_waiting(const QueueConfig &cfg, uint16_t bind_flags,
                          QueueFailure *fail) noexcept
{
    for (int tries = 0;; tries++) {
        int err = bind_socket(cfg, bind_flags, fail);
        // The kernel releases a closed socket's queue after an RCU grace
        // period and a work item (10-20 ms here): a reconfigure that
        // closes and reopens must wait for it.
        if (err != -EBUSY || tries >= kBusyRetries) {
            return err;
        }
        usleep(kBusyRetryUsec);
    }
}

// One attempt at UMEM + socket with exactly 'bind_flags'.  On failure
// nothing of the attempt is left.
int
afxdp_queue::bind_socket(const QueueConfig &cfg, uint16_t bind_flags,
                         QueueFailure *fail) noexcept
{
    xsk_umem_config ucfg = {};
    ucfg.fill_size = cfg.ring_size;
    ucfg.comp_size = cfg.ring_size;
    ucfg.frame_size = kFrameSize;
    ucfg.frame_headroom = AFXDP_FRAME_HEADROOM;

    xsk_umem *u = nullptr;
    int err = xsk_umem__create(&u, pool_->area(), pool_->area_size(),
                               &lib_fill_, &lib_comp_, &ucfg);
    fail->at_umem = err != 0;
    if (err) {
        return failed(fail, err, "registering the UMEM (%zu MiB) failed: "
                      "%s%s", pool_->area_size() >> 20, std::strerror(-err),
                      cfg.memlock_charged
                      && (err == -ENOMEM || err == -EPERM)
                      ? " (without CAP_IPC_LOCK, RLIMIT_MEMLOCK must cover "
                        "the UMEM)" : "");
    }
    umem_.reset(u);

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
    err = xsk_socket__create(&s, ifname, cfg.qid, u, &lib_rx_, &lib_tx_,
                             &scfg);
    if (err) {
        umem_.reset();
        return failed(fail, err, "creating the AF_XDP socket on queue %u "
                      "failed: %s", cfg.qid, std::strerror(-err));
    }
    xsk_.reset(s);
    return 0;
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
