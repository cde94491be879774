// Typed views of the four AF_XDP rings.
//
// A ring is a power-of-two array shared with the kernel plus a producer and
// a consumer index.  The type says who produces and what a slot holds, so a
// fill ring can only be reserved and submitted, a completion ring only
// peeked and released, and so on.  The views hold no memory: the socket or
// UMEM that mapped the ring owns it, and the unit tests point them at
// anonymous memory.
#ifndef AFXDP_RING_HH
#define AFXDP_RING_HH

#include <cstdint>
#include <linux/if_xdp.h>

namespace afxdp {

// Where a ring lives: what the kernel's XDP_MMAP_OFFSETS (or libxdp) gives.
struct RingMemory {
    uint32_t *producer;     // Producer index, written by the producer only.
    uint32_t *consumer;     // Consumer index, written by the consumer only.
    uint32_t *flags;        // XDP_RING_NEED_WAKEUP lives here; may be null.
    void *slots;            // 'size' slots of the ring's descriptor type.
    uint32_t size;          // Number of slots, a power of two.
};

// The side of a ring that user space produces into (fill, TX).
template <typename Slot>
class ProducerRing {
public:
    ProducerRing() = default;
    explicit ProducerRing(const RingMemory &m) noexcept
        : m_(m), mask_(m.size - 1),
          cached_prod_(*m.producer), cached_cons_(*m.consumer + m.size) {}

    uint32_t size() const noexcept { return m_.size; }

    // Slots free for reserve(), refreshing from the kernel only when the
    // cached view shows fewer than 'wanted'.
    uint32_t free_slots(uint32_t wanted) noexcept
    {
        uint32_t n = cached_cons_ - cached_prod_;
        if (n < wanted) {
            // Acquire: slots the kernel consumed may be reused only after
            // its reads of them are complete.
            cached_cons_ = __atomic_load_n(m_.consumer, __ATOMIC_ACQUIRE)
                           + m_.size;
            n = cached_cons_ - cached_prod_;
        }
        return n;
    }

    // Reserves up to 'n' slots; returns how many, all or fewer.  Slot i of
    // the reservation is at(first + i).
    uint32_t reserve(uint32_t n, uint32_t *first) noexcept
    {
        uint32_t avail = free_slots(n);
        if (n > avail) {
            n = avail;
        }
        *first = cached_prod_;
        cached_prod_ += n;
        return n;
    }

    Slot &at(uint32_t idx) noexcept
    {
        return static_cast<Slot *>(m_.slots)[idx & mask_];
    }

    // Takes back the last 'n' slots reserved and not yet submitted.
    void cancel(uint32_t n) noexcept { cached_prod_ -= n; }

    // Publishes everything reserved so far.
    void submit() noexcept
    {
        // Release: the slot contents must be visible before the index.
        __atomic_store_n(m_.producer, cached_prod_, __ATOMIC_RELEASE);
    }

    // Entries submitted and not yet consumed by the kernel (slots reserved
    // but not submitted do not count: the kernel cannot see them).
    uint32_t pending() const noexcept
    {
        // Relaxed: only we write the producer index.
        return __atomic_load_n(m_.producer, __ATOMIC_RELAXED)
               - __atomic_load_n(m_.consumer, __ATOMIC_ACQUIRE);
    }

    // True when the kernel asked to be woken up (XDP_USE_NEED_WAKEUP).
    // Without the flags word, every call needs a wakeup.
    bool needs_wakeup(uint32_t flag) const noexcept
    {
        if (!m_.flags || !flag) {
            return true;
        }
        // Relaxed: a stale flag costs one extra or one late syscall.
        return __atomic_load_n(m_.flags, __ATOMIC_RELAXED) & flag;
    }

private:
    RingMemory m_{};
    uint32_t mask_ = 0;
    uint32_t cached_prod_ = 0;   // Next slot to reserve.
    uint32_t cached_cons_ = 0;   // Kernel's consumer index plus size.
};

// The side of a ring that user space consumes from (RX, completion).
template <typename Slot>
class ConsumerRing {
public:
    ConsumerRing() = default;
    explicit ConsumerRing(const RingMemory &m) noexcept
        : m_(m), mask_(m.size - 1),
          cached_prod_(*m.producer), cached_cons_(*m.consumer) {}

    uint32_t size() const noexcept { return m_.size; }

    // Entries ready to read, refreshing from the kernel when the cached
    // view is exhausted.
    uint32_t available() noexcept
    {
        uint32_t n = cached_prod_ - cached_cons_;
        if (n == 0) {
            // Acquire: the kernel's slot writes are visible after this.
            cached_prod_ = __atomic_load_n(m_.producer, __ATOMIC_ACQUIRE);
            n = cached_prod_ - cached_cons_;
        }
        return n;
    }

    // Up to 'n' entries to read at at(first + i); release() them after.
    uint32_t peek(uint32_t n, uint32_t *first) noexcept
    {
        uint32_t avail = available();
        if (n > avail) {
            n = avail;
        }
        *first = cached_cons_;
        cached_cons_ += n;
        return n;
    }

    const Slot &at(uint32_t idx) const noexcept
    {
        return static_cast<const Slot *>(m_.slots)[idx & mask_];
    }

    // Puts back the last 'n' entries peeked and not yet released: the next
    // peek returns them again.
    void unpeek(uint32_t n) noexcept { cached_cons_ -= n; }

    // Hands back to the producer every slot peeked so far.
    void release() noexcept
    {
        // Release: our reads of the slots complete before the kernel may
        // overwrite them.
        __atomic_store_n(m_.consumer, cached_cons_, __ATOMIC_RELEASE);
    }

    // Entries the producer has published that we have not peeked, read
    // fresh from the shared index (for qfill and for show).
    uint32_t backlog() const noexcept
    {
        return __atomic_load_n(m_.producer, __ATOMIC_ACQUIRE) - cached_cons_;
    }

private:
    RingMemory m_{};
    uint32_t mask_ = 0;
    uint32_t cached_prod_ = 0;   // Producer index as last read.
    uint32_t cached_cons_ = 0;   // Next slot to read.
};

// Fill: user space gives the kernel frame addresses to receive into.
using FillRing = ProducerRing<uint64_t>;
// Completion: the kernel returns the addresses of transmitted frames.
using CompletionRing = ConsumerRing<uint64_t>;
// RX: the kernel hands over received frames.
using RxRing = ConsumerRing<xdp_desc>;
// TX: user space hands over frames to transmit.
using TxRing = ProducerRing<xdp_desc>;

}  // namespace afxdp

#endif  // AFXDP_RING_HH
