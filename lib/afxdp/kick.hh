// TX kicks in copy mode: the kick of one socket (TxKicker), and the
// ledger of kicks this thread has put off (settle_owed_kicks(),
// defer_kick()).
//
// In copy mode every sendto() costs a system call, and the kernel then
// transmits the TX ring synchronously.  A PMD thread that sends a burst
// received from one of our RX queues may leave the kick for a moment: the
// next bursts from that RX queue are about to be sent too, and one
// sendto() then carries them all (XDP_MAX_TX_SKB_BUDGET lets it).  The
// thread owes the kick; it pays it when enough bursts wait, when the RX
// queue it polls comes up empty, or after a few polls at the latest (see
// afxdp_queue_send() in afxdp.h).
#ifndef AFXDP_KICK_HH
#define AFXDP_KICK_HH

#include <atomic>
#include <cstdint>

#include "afxdp.h"

struct afxdp_queue;

namespace afxdp {

// A deferred kick is paid before this many bursts wait behind it, and the
// kernel is asked to send that many bursts per sendto().
inline constexpr uint32_t kCoalescedBursts = AFXDP_COALESCED_BURSTS;

// The TX kick of one socket, as a thread that has deferred it holds it.
// The thread keeps a reference to this object, not to the queue, which
// may be closed meanwhile: close() waits for a kick in progress and turns
// later ones into no-ops before the socket goes.
class TxKicker {
public:
    explicit TxKicker(int fd) noexcept : fd_(fd) {}
    TxKicker(const TxKicker &) = delete;
    TxKicker &operator=(const TxKicker &) = delete;

    void ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
    void unref() noexcept
    {
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            delete this;
        }
    }

    // A thread now owes this kick.
    void owe() noexcept { owed_.store(true, std::memory_order_relaxed); }
    // The queue's own send kicked: nothing is owed any more.
    void paid() noexcept { owed_.store(false, std::memory_order_relaxed); }
    bool owed() const noexcept
    {
        return owed_.load(std::memory_order_relaxed);
    }

    // From any thread: one sendto() unless the socket is closing.  Counts
    // as a late kick, and a failure of it as a late kick error.  Returns 0
    // or the failed sendto()'s negative errno.
    int kick_late() noexcept;
    // The queue is closing its socket: waits for a kick in progress and
    // makes every later one a no-op.
    void close() noexcept;
    uint64_t late_kicks() const noexcept
    {
        return late_kicks_.load(std::memory_order_relaxed);
    }
    uint64_t late_kick_errors() const noexcept
    {
        return late_kick_errors_.load(std::memory_order_relaxed);
    }

private:
    ~TxKicker() = default;
    static constexpr uint32_t kClosed = 1u << 31;
    std::atomic<uint32_t> refs_{1};      // The queue's, and each debtor's.
    std::atomic<uint32_t> state_{0};     // Kicks under way, | kClosed.
    std::atomic<bool> owed_{false};
    std::atomic<uint64_t> late_kicks_{0};
    std::atomic<uint64_t> late_kick_errors_{0};
    int fd_;
};

// This thread's receive on 'rxq' found 'n' packets: pays the kicks that
// are now due.  If 'n' and 'busy_polled' (the queue is polled in a busy
// loop, so its next burst comes in a moment), what this thread sends next
// may defer its kick on 'rxq'.  'rxq' is only compared, never followed.
void settle_owed_kicks(const afxdp_queue *rxq, uint32_t n,
                       bool busy_polled) noexcept;

// A send on the queue 'kicker' belongs to left frames in its TX ring.
// True if the kick may wait: this thread owes it now (and a reference to
// 'kicker' with it).  False if the caller must kick now; what this thread
// owed for 'kicker' is then forgotten.  'room': the ring has room for
// more bursts before the kick; 'kernel_wants': the ring asks for a kick
// (or need_wakeup is off).
bool defer_kick(TxKicker *kicker, bool room, bool kernel_wants) noexcept;

}  // namespace afxdp

#endif  // AFXDP_KICK_HH
