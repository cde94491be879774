#include "frames.hh"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.hh"

namespace afxdp {

namespace {

// A frame check failed: says so in the embedder's log (a daemon's stderr
// is /dev/null) and on stderr (the unit tests), then aborts.
[[noreturn]] __attribute__((format(printf, 1, 2))) void
frame_check_failed(const char *fmt, ...) noexcept
{
    char msg[256];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, args);
    va_end(args);
    log(AFXDP_LOG_ERR, "%s", msg);
    std::fprintf(stderr, "afxdp: %s\n", msg);
    std::abort();
}

}  // namespace

Mapping::~Mapping()
{
    if (data_) {
        munmap(data_, size_);
    }
}

Result<Mapping>
Mapping::create(size_t len, int numa_node) noexcept
{
    // Map a huge page more than asked and keep a 2 MiB-aligned 'len' of it,
    // so that transparent huge pages can back the whole area.  A UMEM's
    // frames are touched by the kernel and by the PMD in ring order across
    // thousands of 4 KiB pages: with 4 KiB pages nearly every packet is a
    // TLB miss.
    size_t page = size_t(sysconf(_SC_PAGESIZE));
    size_t mlen = (len + page - 1) & ~(page - 1);
    size_t span = mlen + kHugePage;
    void *p = mmap(nullptr, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        return Result<Mapping>::failure(-errno);
    }
    uintptr_t base = reinterpret_cast<uintptr_t>(p);
    uintptr_t start = (base + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
    if (start > base) {
        munmap(p, start - base);
    }
    uintptr_t end = start + mlen;
    if (end < base + span) {
        munmap(reinterpret_cast<void *>(end), base + span - end);
    }
    p = reinterpret_cast<void *>(start);

    Mapping m;
    m.data_ = static_cast<uint8_t *>(p);
    m.size_ = len;
    if (len >= kHugePage && madvise(p, len, MADV_HUGEPAGE)) {
        // THP disabled ("never") or not built: 4 KiB pages still work.
        log(AFXDP_LOG_DBG, "madvise(MADV_HUGEPAGE) failed: %s",
            std::strerror(errno));
    }
    if (numa_node >= 0 && numa_node < 64) {
        // MPOL_PREFERRED (1): the node if it has room, anywhere otherwise.
        // The pages are not touched yet, so they will follow the policy.
        unsigned long mask = 1ul << numa_node;
        if (syscall(SYS_mbind, p, len, 1, &mask, 64, 0)) {
            log(AFXDP_LOG_DBG, "mbind to NUMA node %d failed: %s",
                numa_node, std::strerror(errno));
        }
    }
    return m;
}

Result<FrameStack>
FrameStack::create(uint32_t capacity) noexcept
{
    FrameStack s;
    s.slots_.reset(new (std::nothrow) uint32_t[capacity]);
    if (!s.slots_) {
        return Result<FrameStack>::failure(-ENOMEM);
    }
    s.capacity_ = capacity;
    return s;
}

uint32_t
FrameStack::pop(uint32_t n, uint32_t *out) noexcept
{
    if (n > top_) {
        n = top_;
    }
    top_ -= n;
    std::memcpy(out, &slots_[top_], n * sizeof *out);
    return n;
}

void
FrameStack::push(const uint32_t *frames, uint32_t n) noexcept
{
    if (n > capacity_ - top_) {
        frame_check_failed("frame stack overflow (%u + %u > %u): a frame "
                           "was freed twice", top_, n, capacity_);
    }
    std::memcpy(&slots_[top_], frames, n * sizeof *frames);
    top_ += n;
}

const char *
frame_state_name(FrameState s) noexcept
{
    switch (s) {
    case FrameState::kFree: return "free";
    case FrameState::kFill: return "in the fill/RX rings";
    case FrameState::kApp: return "lent to the application";
    case FrameState::kTx: return "in the TX/completion rings";
    case FrameState::kKept: return "kept by a queue for sending";
    }
    return "in an unknown state";
}

}  // namespace afxdp

using afxdp::Result;

namespace {
std::atomic<unsigned> n_retired{0};   // Retired pools not yet freed.
}

unsigned
afxdp_pool::retired_count() noexcept
{
    return n_retired.load(std::memory_order_relaxed);
}

Result<std::unique_ptr<afxdp_pool>>
afxdp_pool::create(uint32_t n_frames, size_t meta_size, int numa_node) noexcept
{
    using R = Result<std::unique_ptr<afxdp_pool>>;
    std::unique_ptr<afxdp_pool> p(new (std::nothrow) afxdp_pool);
    if (!p) {
        return R::failure(-ENOMEM);
    }
    auto area = afxdp::Mapping::create(size_t(n_frames) * afxdp::kFrameSize,
                                       numa_node);
    if (!area.ok()) {
        return R::failure(area.error());
    }
    p->area_ = area.take();

    auto stack = afxdp::FrameStack::create(n_frames);
    if (!stack.ok()) {
        return R::failure(stack.error());
    }
    p->stack_ = stack.take();
    if (afxdp::kFrameDebug) {
        // Zeroed: every frame starts free.
        p->state_.reset(new (std::nothrow) uint8_t[n_frames]());
        if (!p->state_) {
            return R::failure(-ENOMEM);
        }
    }
    p->owner_.reset(new (std::nothrow) std::atomic<uint8_t>[n_frames]);
    if (!p->owner_) {
        return R::failure(-ENOMEM);
    }
    for (uint32_t i = 0; i < n_frames; i++) {
        p->owner_[i].store(0, std::memory_order_relaxed);
    }
    // Push in reverse so that frame 0 is handed out first.
    for (uint32_t i = n_frames; i-- > 0;) {
        p->stack_.push(i);
    }

    // Whole cache lines per frame, from a page-aligned base: a packet's
    // metadata never shares a line with its neighbour's.
    p->meta_size_ = afxdp::cache_line_round_up(meta_size);
    if (p->meta_size_) {
        auto meta = afxdp::Mapping::create(p->meta_size_ * n_frames,
                                           numa_node);
        if (!meta.ok()) {
            return R::failure(meta.error());
        }
        p->meta_ = meta.take();
    }
    return R(std::move(p));
}

uint32_t
afxdp_pool::get(uint32_t n, uint32_t *out, afxdp::FrameState to) noexcept
{
    std::lock_guard<afxdp::SpinLock> g(lock_);
    n = stack_.pop(n, out);
    move(out, n, afxdp::FrameState::kFree, to);
    return n;
}

void
afxdp_pool::put_from_kernel(const uint32_t *frames, uint32_t n,
                            afxdp::FrameState from) noexcept
{
    std::lock_guard<afxdp::SpinLock> g(lock_);
    move(frames, n, from, afxdp::FrameState::kFree);
    stack_.push(frames, n);
}

void
afxdp_pool::move_checked(const uint32_t *frames, uint32_t n,
                         afxdp::FrameState from, afxdp::FrameState to) noexcept
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t f = frames[i];
        if (f >= n_frames() || afxdp::FrameState(state_[f]) != from) {
            const char *is = f >= n_frames()
                             ? "out of range"
                             : afxdp::frame_state_name(
                                   afxdp::FrameState(state_[f]));
            afxdp::frame_check_failed(
                "frame %u of UMEM %u is %s, not %s, when it should become "
                "%s: a frame freed twice or lost", f, id(), is,
                afxdp::frame_state_name(from), afxdp::frame_state_name(to));
        }
        state_[f] = uint8_t(to);
    }
}

uint32_t
afxdp_pool::free_count() noexcept
{
    std::lock_guard<afxdp::SpinLock> g(lock_);
    return stack_.count();
}

void
afxdp_pool::put_from_app(const void *const *data, size_t n) noexcept
{
    uint32_t frames[afxdp::kBurst];

    while (n > 0) {
        uint32_t k = n < afxdp::kBurst ? uint32_t(n) : afxdp::kBurst;
        for (uint32_t i = 0; i < k; i++) {
            frames[i] = frame_of(data[i]);
        }
        data += k;
        n -= k;
        // The last put on a retired pool frees it: nothing after that.
        put_app_frames(frames, k);
    }
}

void
afxdp_pool::gather(const afxdp_rx_frame *head, uint8_t *dst) noexcept
{
    // 'len' of the head is the whole packet's: its own part is what the
    // other frames leave.
    uint32_t n = head->n_frames;
    uint32_t head_len = head->len;
    for (uint32_t i = 1; i < n; i++) {
        head_len -= head[i].len;
    }
    uint32_t frames[afxdp::kBurst];
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = i ? head[i].len : head_len;
        std::memcpy(dst, head[i].data, len);
        dst += len;
        frames[k++] = head[i].index;
        if (k == afxdp::kBurst || i + 1 == n) {
            put_app_frames(frames, k);
            k = 0;
        }
    }
}

void
afxdp_pool::put_app_frames(const uint32_t *frames, uint32_t n) noexcept
{
    lock_.lock();
    move(frames, n, afxdp::FrameState::kApp, afxdp::FrameState::kFree);
    stack_.push(frames, n);
    // Under the lock, so that retire() and the last put agree on who
    // frees.
    back_.store(back_.load(std::memory_order_relaxed) + n,
                std::memory_order_relaxed);
    bool last = retired_ && in_app() == 0;
    lock_.unlock();
    if (last) {
        n_retired.fetch_sub(1, std::memory_order_relaxed);
        delete this;
    }
}

namespace {

// Pools devices may join, process-wide.  Opening and closing devices is
// rare (OVS: the main thread, at reconfiguration): a mutex and a small
// array are enough.
std::mutex registry_mutex;
afxdp_pool *registry[64];
uint32_t next_pool_id = 1;

}  // namespace

Result<afxdp_pool *>
afxdp_pool::acquire(uint32_t demand, size_t meta_size, int numa_node,
                    bool share, void (*init)(afxdp_pool *, uint32_t),
                    bool *created) noexcept
{
    std::lock_guard<std::mutex> g(registry_mutex);
    size_t line_meta = afxdp::cache_line_round_up(meta_size);
    *created = false;
    if (share) {
        for (afxdp_pool *p : registry) {
            if (p && p->numa_node_ == numa_node
                && p->meta_size_ == line_meta
                && p->reserved_ + demand <= p->n_frames()) {
                p->reserved_ += demand;
                p->devices_++;
                return p;
            }
        }
    }

    afxdp_pool **slot = nullptr;
    for (afxdp_pool *&p : registry) {
        if (!p) {
            slot = &p;
            break;
        }
    }
    // Room for a peer as large as this device when sharing; just this
    // device when a registry slot or the memory for a peer is missing.
    auto r = Result<std::unique_ptr<afxdp_pool>>::failure(-ENOMEM);
    if (share && slot && uint64_t(demand) * 2 <= AFXDP_MAX_FRAMES) {
        r = create(demand * 2, meta_size, numa_node);
    }
    if (!r.ok()) {
        share = false;
        r = create(demand, meta_size, numa_node);
    }
    if (!r.ok()) {
        return Result<afxdp_pool *>::failure(r.error());
    }
    afxdp_pool *p = r.take().release();
    p->id_ = next_pool_id++;
    p->numa_node_ = numa_node;
    p->reserved_ = demand;
    p->devices_ = 1;
    if (init) {
        init(p, p->n_frames());
    }
    if (share) {
        *slot = p;   // Other devices may join it.
    }
    *created = true;
    return p;
}

void
afxdp_pool::release(uint32_t demand) noexcept
{
    {
        std::lock_guard<std::mutex> g(registry_mutex);
        reserved_ -= demand;
        if (--devices_ > 0) {
            return;
        }
        for (afxdp_pool *&p : registry) {
            if (p == this) {
                p = nullptr;
            }
        }
    }
    retire(this);
}

unsigned
afxdp_pool::devices() const noexcept
{
    std::lock_guard<std::mutex> g(registry_mutex);
    return devices_;
}

uint8_t
afxdp_pool::add_queue() noexcept
{
    std::lock_guard<std::mutex> g(registry_mutex);
    for (unsigned s = 1; s < 256; s++) {
        if (!slot_used_[s]) {
            slot_used_[s] = true;
            return uint8_t(s);
        }
    }
    return 0;
}

uint32_t
afxdp_pool::remove_queue(uint8_t slot) noexcept
{
    uint32_t back[64];
    uint32_t n_back = 0, total = 0;

    lock_.lock();
    for (uint32_t f = 0; f < n_frames(); f++) {
        if (owner_[f].load(std::memory_order_relaxed) != slot) {
            continue;
        }
        owner_[f].store(0, std::memory_order_relaxed);
        if (afxdp::kFrameDebug) {
            // In the fill/RX rings, the TX/completion rings, or kept by
            // the queue for sending.
            afxdp::FrameState from = state(f);
            move(&f, 1, from == afxdp::FrameState::kTx
                        || from == afxdp::FrameState::kKept
                        ? from : afxdp::FrameState::kFill,
                 afxdp::FrameState::kFree);
        }
        back[n_back++] = f;
        if (n_back == 64) {
            stack_.push(back, n_back);
            total += n_back;
            n_back = 0;
        }
    }
    stack_.push(back, n_back);
    total += n_back;
    lock_.unlock();

    std::lock_guard<std::mutex> g(registry_mutex);
    slot_used_[slot] = false;
    return total;
}

void
afxdp_pool::retire(afxdp_pool *p) noexcept
{
    if (!p) {
        return;
    }
    p->lock_.lock();
    p->retired_ = true;
    bool unused = p->in_app() == 0;
    if (!unused) {
        // Counted under the lock, so the last put cannot uncount it first.
        n_retired.fetch_add(1, std::memory_order_relaxed);
    }
    p->lock_.unlock();
    if (unused) {
        delete p;
    } else {
        afxdp::log(AFXDP_LOG_DBG, "UMEM of %u frames kept until %u frames "
                   "come back", p->n_frames(), p->in_app());
    }
}
