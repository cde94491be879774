// UMEM memory and the frames in it.
//
// Mapping owns the page-aligned area the kernel registers as a UMEM.
// FrameStack is the LIFO of free frame numbers (unsynchronized, so it can be
// tested alone).  afxdp_pool ties them together with a lock, the caller's
// per-frame metadata and the rule that lets a closed queue's memory live
// until the last frame the caller holds comes back.
#ifndef AFXDP_FRAMES_HH
#define AFXDP_FRAMES_HH

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "afxdp.h"
#include "result.hh"

namespace afxdp {

inline constexpr uint32_t kFrameSize = AFXDP_FRAME_SIZE;
// Packets one call handles at most: OVS's NETDEV_MAX_BURST.
inline constexpr uint32_t kBurst = 32;
// Bytes in a CPU cache line (x86-64 and most arm64 cores).
inline constexpr size_t kCacheLine = 64;

// Rounds 'n' up to whole cache lines.
constexpr size_t
cache_line_round_up(size_t n)
{
    return (n + kCacheLine - 1) & ~(kCacheLine - 1);
}

// Tells the CPU that this thread is spinning on a lock or flag (a pause
// hint where the CPU has one, otherwise nothing).
inline void
cpu_relax() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}
inline constexpr uint32_t kFrameShift = 12;
inline constexpr size_t kHugePage = size_t(2) << 20;
static_assert(1u << kFrameShift == kFrameSize, "frame size is 2^shift");

// An anonymous private mapping, unmapped on destruction.
class Mapping {
public:
    Mapping() = default;
    Mapping(const Mapping &) = delete;
    Mapping &operator=(const Mapping &) = delete;
    Mapping(Mapping &&o) noexcept { swap(o); }
    Mapping &operator=(Mapping &&o) noexcept { swap(o); return *this; }
    ~Mapping();

    // 'len' bytes of zeroed memory, 2 MiB-aligned and advised for
    // transparent huge pages, preferring NUMA node 'numa_node' when it is
    // not -1.
    static Result<Mapping> create(size_t len, int numa_node) noexcept;

    uint8_t *data() const noexcept { return data_; }
    size_t size() const noexcept { return size_; }

private:
    void swap(Mapping &o) noexcept
    {
        std::swap(data_, o.data_);
        std::swap(size_, o.size_);
    }
    uint8_t *data_ = nullptr;
    size_t size_ = 0;
};

// Free frame numbers, last in first out (the most recently used frame is
// the most likely to be in cache).  Not thread-safe; afxdp_pool locks it.
class FrameStack {
public:
    FrameStack() = default;
    static Result<FrameStack> create(uint32_t capacity) noexcept;

    uint32_t capacity() const noexcept { return capacity_; }
    uint32_t count() const noexcept { return top_; }

    // Pops up to 'n' frames into 'out'; returns how many.
    uint32_t pop(uint32_t n, uint32_t *out) noexcept;
    // Pushes 'n' frames.  Pushing more than were popped is a caller bug
    // and aborts: a frame freed twice would be handed out twice.
    void push(const uint32_t *frames, uint32_t n) noexcept;
    void push(uint32_t frame) noexcept { push(&frame, 1); }

private:
    std::unique_ptr<uint32_t[]> slots_;
    uint32_t capacity_ = 0;
    uint32_t top_ = 0;
};

// A spin lock: held for a handful of instructions, by threads that must
// not sleep (OVS PMD threads).
class SpinLock {
public:
    void lock() noexcept
    {
        while (flag_.test_and_set(std::memory_order_acquire)) {
            cpu_relax();
        }
    }
    void unlock() noexcept { flag_.clear(std::memory_order_release); }

private:
    std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

// Where a frame is.  Builds configured with --enable-frame-debug record it
// for every frame and abort on any move that does not start where the frame
// is (a double free, a frame given to the kernel twice, a lost frame used
// again); other builds compile the checks away.
enum class FrameState : uint8_t {
    kFree,     // In the pool.
    kFill,     // Fill ring or RX ring: the kernel's to receive into.
    kApp,      // Received and lent to the caller (OVS: a dp_packet).
    kTx,       // TX ring or completion ring.
    kKept,     // Back from the completion ring, kept by its queue for its
               // next copies (see afxdp_queue::take_kept()).
};
const char *frame_state_name(FrameState) noexcept;

#ifdef AFXDP_FRAME_DEBUG
inline constexpr bool kFrameDebug = true;
#else
inline constexpr bool kFrameDebug = false;
#endif

}  // namespace afxdp

// The frames of one UMEM: what struct afxdp_pool is.  Heap-allocated and
// never moved: the caller keeps pointers to it in every packet it holds.
struct afxdp_pool {
public:
    static afxdp::Result<std::unique_ptr<afxdp_pool>> create(
        uint32_t n_frames, size_t meta_size, int numa_node) noexcept;

    uint8_t *area() const noexcept { return area_.data(); }
    size_t area_size() const noexcept { return area_.size(); }
    uint32_t n_frames() const noexcept { return stack_.capacity(); }
    void *meta(uint32_t frame) noexcept
    {
        return meta_.data() + size_t(frame) * meta_size_;
    }
    size_t meta_size() const noexcept { return meta_size_; }
    uint32_t frame_of(const void *p) const noexcept
    {
        return uint32_t((static_cast<const uint8_t *>(p) - area())
                        >> afxdp::kFrameShift);
    }

    // For the queues on the UMEM (any thread; under the pool's lock): frames
    // taken for the fill ring ('to' kFill) or for TX (kTx), given back by
    // the kernel (from 'from'), and lent to the caller once received.
    uint32_t get(uint32_t n, uint32_t *out,
                 afxdp::FrameState to = afxdp::FrameState::kFill) noexcept;
    void put_from_kernel(const uint32_t *frames, uint32_t n,
                         afxdp::FrameState from
                         = afxdp::FrameState::kFill) noexcept;
    void lend(const uint32_t *frames, uint32_t n) noexcept
    {
        move(frames, n, afxdp::FrameState::kFill, afxdp::FrameState::kApp);
        lent_.fetch_add(n, std::memory_order_relaxed);
    }

    // A queue keeps frames the kernel completed for its own next sends
    // (kTx to kKept), and takes them again (kKept to kTx): no lock, only
    // the record kFrameDebug keeps.
    void keep(const uint32_t *frames, uint32_t n) noexcept
    {
        move(frames, n, afxdp::FrameState::kTx, afxdp::FrameState::kKept);
    }
    void unkeep(const uint32_t *frames, uint32_t n) noexcept
    {
        move(frames, n, afxdp::FrameState::kKept, afxdp::FrameState::kTx);
    }

    // Where 'frame' is (kFree for every frame unless kFrameDebug).
    afxdp::FrameState state(uint32_t frame) const noexcept
    {
        return state_ ? afxdp::FrameState(state_[frame])
                      : afxdp::FrameState::kFree;
    }

    // From any thread: a frame lent to the caller comes back.
    void put_from_app(const void *const *data, size_t n) noexcept;
    // From any thread: copies the packet of several frames that starts at
    // 'head' (see afxdp_rx_frame) to 'dst', and takes its frames back.
    void gather(const afxdp_rx_frame *head, uint8_t *dst) noexcept;
    // The same, by frame number.
    void put_app_frames(const uint32_t *frames, uint32_t n) noexcept;
    // Frames lent to the caller go straight to a TX ring of a queue
    // sharing this pool (sent in place, not copied).
    void take_from_app(const uint32_t *frames, uint32_t n) noexcept
    {
        move(frames, n, afxdp::FrameState::kApp, afxdp::FrameState::kTx);
        sent_.fetch_add(n, std::memory_order_relaxed);
    }

    // --- Sharing one pool between devices. --------------------------------
    //
    // A device that needs 'demand' frames joins a shareable pool on its
    // NUMA node that still has room for them, or makes a new one with room
    // for a peer of its size (2 * demand frames), so that two ports forward
    // to each other by frame address.  With 'share' false it gets a pool of
    // its own of exactly 'demand' frames.  'init' (may be NULL) runs once,
    // on a new pool, before any frame is handed out.  Each call takes one
    // device reference; release() gives it back and the last one retires
    // the pool.  '*created' says whether the pool is new.
    static afxdp::Result<afxdp_pool *> acquire(
        uint32_t demand, size_t meta_size, int numa_node, bool share,
        void (*init)(afxdp_pool *, uint32_t n_frames), bool *created)
        noexcept;
    void release(uint32_t demand) noexcept;

    uint32_t id() const noexcept { return id_; }
    // Devices using the pool now.
    unsigned devices() const noexcept;

    // Each queue on the pool has a slot, and each frame it gives its
    // kernel rings is tagged with it, so that when the queue's socket is
    // gone, the frames the kernel held for it come back.  add_queue()
    // returns 0 when all 255 slots are taken.
    uint8_t add_queue() noexcept;
    // Frames a queue keeps for its next sends stay tagged with its slot,
    // so they come back too.  Returns how many frames came back.  Only
    // once the socket is closed.
    uint32_t remove_queue(uint8_t slot) noexcept;
    // Hot path, by the queue's own thread: tag 'frame' as in the kernel
    // rings of 'slot' (0: in none).
    void set_owner(uint32_t frame, uint8_t slot) noexcept
    {
        owner_[frame].store(slot, std::memory_order_relaxed);
    }

    uint32_t free_count() noexcept;
    uint32_t in_app() const noexcept
    {
        // Read apart, the three may disagree for a moment while frames
        // move; never below zero.
        uint64_t out = back_.load(std::memory_order_relaxed)
                       + sent_.load(std::memory_order_relaxed);
        uint64_t lent = lent_.load(std::memory_order_relaxed);
        return lent > out ? uint32_t(lent - out) : 0;
    }

    // The owning queue is gone and the kernel no longer uses the UMEM:
    // frees now if the caller holds no frame, else on the last put.
    static void retire(afxdp_pool *) noexcept;

    // Pools retired and not yet freed, process-wide.
    static unsigned retired_count() noexcept;

private:
    afxdp_pool() = default;

    // Records that 'frames' move from 'from' to 'to'; aborts, naming the
    // frame and both states, if one of them is not at 'from'.
    void move(const uint32_t *frames, uint32_t n, afxdp::FrameState from,
              afxdp::FrameState to) noexcept
    {
        if (afxdp::kFrameDebug) {
            move_checked(frames, n, from, to);
        }
    }
    void move_checked(const uint32_t *frames, uint32_t n,
                      afxdp::FrameState from, afxdp::FrameState to) noexcept;

    uint32_t id_ = 0;                     // For operators: "UMEM 3".
    int numa_node_ = -1;
    uint64_t reserved_ = 0;               // Frames devices asked for;
    unsigned devices_ = 0;                // and how many devices: both
                                          // under the registry's mutex.
    bool slot_used_[256] = {};            // Queue slots, likewise.
    std::unique_ptr<std::atomic<uint8_t>[]> owner_;   // Slot per frame.
    afxdp::Mapping area_;                 // The UMEM itself.
    afxdp::Mapping meta_;                 // Caller's per-frame metadata.
    size_t meta_size_ = 0;
    afxdp::SpinLock lock_;                // Guards the members below.
    afxdp::FrameStack stack_;             // Free frames.
    bool retired_ = false;                // Owning queue is closed.
    // Frames lent to the caller: those received, less those put back
    // (under 'lock_', so a plain load and store, not a locked instruction
    // per packet) and those sent in place.  Each RMW below is per burst.
    std::atomic<uint64_t> lent_{0};
    std::atomic<uint64_t> back_{0};
    std::atomic<uint64_t> sent_{0};
    std::unique_ptr<uint8_t[]> state_;    // FrameState per frame, if
                                          // kFrameDebug.
};

namespace afxdp {
struct PoolRetirer {
    void operator()(afxdp_pool *p) const noexcept { afxdp_pool::retire(p); }
};
using PoolHandle = std::unique_ptr<afxdp_pool, PoolRetirer>;
}  // namespace afxdp

#endif  // AFXDP_FRAMES_HH
