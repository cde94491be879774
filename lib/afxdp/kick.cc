#include "kick.hh"

#include <cerrno>
#include <sys/socket.h>

#include "frames.hh"

namespace afxdp {

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

// A thread that owes a kick pays it after this many receive calls on
// other queues at the latest (its own RX queue may have moved away).
constexpr uint32_t kMaxPollsOwed = 64;
// Kicks one thread may owe at a time (one per TX queue it feeds).
constexpr int kMaxOwed = 4;

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

void
settle_owed_kicks(const afxdp_queue *rxq, uint32_t n,
                  bool busy_polled) noexcept
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
    rx_now = n && busy_polled ? rxq : nullptr;
}

bool
defer_kick(TxKicker *kicker, bool room, bool kernel_wants) noexcept
{
    int i = find_owed(kicker);
    if (i >= 0) {
        if (room && rx_now == owed[i].rxq) {
            // The kick this thread owes covers this burst too.
            return true;
        }
        // Enough waits, or it came from elsewhere: the caller pays for
        // all.
        forget(i);
        return false;
    }
    if (rx_now && n_owed < kMaxOwed && room && kernel_wants) {
        // These packets came from a receive on this thread, whose next
        // burst will be here in a moment: kick with that one.
        owed_at_exit.armed = true;
        kicker->ref();
        kicker->owe();
        owed[n_owed++] = {kicker, rx_now, 0, 0};
        return true;
    }
    return false;
}

}  // namespace afxdp
