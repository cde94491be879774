// Tier 1 (no kernel): the free-frame stack and the frame pool of frames.hh.
//
// Proves that FrameStack is LIFO, pops no more than it holds and aborts on
// a push beyond its capacity (a frame freed twice); that a pool hands out
// each frame once, maps any address inside a frame to that frame, gives
// every frame its own zeroed metadata, and keeps an exact count when frames
// come back from many threads at once; and that a retired pool frees its
// memory at once when the application holds no frame, else exactly on the
// last put.  Whether the UMEM is still mapped is checked with msync(),
// which fails with ENOMEM on an unmapped range, so the retire tests prove
// freeing without needing a sanitizer (and stay clean under ASan).

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <sys/mman.h>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "frames.hh"

using afxdp::FrameStack;
using afxdp::kFrameSize;

namespace {

std::unique_ptr<afxdp_pool>
make_pool(uint32_t n_frames, size_t meta_size = 0)
{
    auto r = afxdp_pool::create(n_frames, meta_size, -1);
    EXPECT_TRUE(r.ok()) << "error " << r.error();
    return r.ok() ? r.take() : nullptr;
}

FrameStack
make_stack(uint32_t capacity)
{
    auto r = FrameStack::create(capacity);
    EXPECT_TRUE(r.ok());
    return r.take();
}

// True while [p, p + len) is mapped in this process.
bool
is_mapped(const void *p, size_t len)
{
    int r = msync(const_cast<void *>(p), len, MS_ASYNC);
    EXPECT_TRUE(r == 0 || errno == ENOMEM) << std::strerror(errno);
    return r == 0;
}

// An address inside frame 'f' of 'pool', 'offset' bytes in.
const void *
inside(afxdp_pool *pool, uint32_t f, uint32_t offset = 1234)
{
    return pool->area() + size_t(f) * kFrameSize + offset;
}

}  // namespace

// --- FrameStack -------------------------------------------------------------

TEST(FrameStack, StartsEmpty)
{
    FrameStack s = make_stack(4);
    uint32_t out[4];

    EXPECT_EQ(s.capacity(), 4u);
    EXPECT_EQ(s.count(), 0u);
    EXPECT_EQ(s.pop(4, out), 0u);
}

TEST(FrameStack, PopsInLastInFirstOutOrder)
{
    FrameStack s = make_stack(8);
    const uint32_t in[] = {10, 11, 12};
    uint32_t out[8] = {};

    s.push(in, 3);
    s.push(7);
    EXPECT_EQ(s.count(), 4u);

    // One pop of n gives the top n in stack order (bottom first).
    ASSERT_EQ(s.pop(2, out), 2u);
    EXPECT_EQ(out[0], 12u);
    EXPECT_EQ(out[1], 7u);
    ASSERT_EQ(s.pop(1, out), 1u);
    EXPECT_EQ(out[0], 11u);

    s.push(3);
    ASSERT_EQ(s.pop(1, out), 1u);
    EXPECT_EQ(out[0], 3u);
    EXPECT_EQ(s.count(), 1u);
}

TEST(FrameStack, PopMoreThanAvailableReturnsFewer)
{
    FrameStack s = make_stack(8);
    const uint32_t in[] = {1, 2, 3};
    uint32_t out[8] = {};

    s.push(in, 3);
    ASSERT_EQ(s.pop(8, out), 3u);
    EXPECT_EQ(out[0], 1u);
    EXPECT_EQ(out[1], 2u);
    EXPECT_EQ(out[2], 3u);
    EXPECT_EQ(s.count(), 0u);
    EXPECT_EQ(s.pop(8, out), 0u);
}

TEST(FrameStack, FillsToCapacity)
{
    FrameStack s = make_stack(5);
    const uint32_t in[] = {0, 1, 2, 3, 4};

    s.push(in, 5);
    EXPECT_EQ(s.count(), 5u);
}

TEST(FrameStackDeathTest, PushBeyondCapacityAborts)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    FrameStack s = make_stack(2);
    s.push(0);
    s.push(1);
    EXPECT_DEATH(s.push(1), "frame stack overflow.*freed twice");

    FrameStack t = make_stack(4);
    const uint32_t in[] = {0, 1, 2, 3, 4};
    EXPECT_DEATH(t.push(in, 5), "freed twice");
}

// --- afxdp_pool, one thread -------------------------------------------------

TEST(Pool, CreateHasEveryFrameFree)
{
    auto pool = make_pool(16);
    ASSERT_TRUE(pool);

    EXPECT_EQ(pool->n_frames(), 16u);
    EXPECT_EQ(pool->free_count(), 16u);
    EXPECT_EQ(pool->in_app(), 0u);
    EXPECT_EQ(pool->area_size(), 16u * kFrameSize);
    EXPECT_EQ(uintptr_t(pool->area()) % 4096, 0u);
    EXPECT_TRUE(is_mapped(pool->area(), pool->area_size()));
    // The UMEM starts zeroed.
    std::vector<uint8_t> zero(pool->area_size());
    EXPECT_EQ(std::memcmp(pool->area(), zero.data(), zero.size()), 0);
}

TEST(Pool, GetHandsOutFrameZeroFirstAndEachFrameOnce)
{
    auto pool = make_pool(16);
    ASSERT_TRUE(pool);
    uint32_t out[32];

    ASSERT_EQ(pool->get(1, out), 1u);
    EXPECT_EQ(out[0], 0u);
    // A batch holds the next frames, the lowest last (stack order).
    ASSERT_EQ(pool->get(2, out + 1), 2u);
    EXPECT_EQ(out[1], 2u);
    EXPECT_EQ(out[2], 1u);
    EXPECT_EQ(pool->free_count(), 13u);

    // Asking for more than is left gives what is left.
    ASSERT_EQ(pool->get(32, out + 3), 13u);
    std::set<uint32_t> seen(out, out + 16);
    EXPECT_EQ(seen.size(), 16u);
    EXPECT_EQ(*seen.rbegin(), 15u);
    EXPECT_EQ(pool->get(1, out), 0u);
    EXPECT_EQ(pool->free_count(), 0u);
}

TEST(Pool, PutFromKernelReturnsFramesLastInFirstOut)
{
    auto pool = make_pool(8);
    ASSERT_TRUE(pool);
    uint32_t out[8];

    ASSERT_EQ(pool->get(8, out), 8u);
    const uint32_t back[] = {5, 2};
    pool->put_from_kernel(back, 2);
    EXPECT_EQ(pool->free_count(), 2u);
    EXPECT_EQ(pool->in_app(), 0u);   // Not the application's frames.
    ASSERT_EQ(pool->get(1, out), 1u);
    EXPECT_EQ(out[0], 2u);
}

TEST(Pool, FrameOfAnyAddressInsideTheFrame)
{
    auto pool = make_pool(8);
    ASSERT_TRUE(pool);

    EXPECT_EQ(pool->frame_of(pool->area()), 0u);
    EXPECT_EQ(pool->frame_of(inside(pool.get(), 0, kFrameSize - 1)), 0u);
    EXPECT_EQ(pool->frame_of(inside(pool.get(), 1, 0)), 1u);
    EXPECT_EQ(pool->frame_of(inside(pool.get(), 5)), 5u);
    // Where a received packet starts: after both headrooms.
    EXPECT_EQ(pool->frame_of(inside(pool.get(), 7, AFXDP_FRAME_HEADROOM
                                                   + AFXDP_XDP_HEADROOM)),
              7u);
    EXPECT_EQ(pool->frame_of(inside(pool.get(), 7, kFrameSize - 1)), 7u);
}

TEST(Pool, MetaIsZeroedAlignedAndDistinctPerFrame)
{
    const size_t meta_size = 24;
    const uint32_t n = 32;
    auto pool = make_pool(n, meta_size);
    ASSERT_TRUE(pool);

    std::vector<uint8_t *> metas;
    for (uint32_t f = 0; f < n; f++) {
        auto *m = static_cast<uint8_t *>(pool->meta(f));
        ASSERT_NE(m, nullptr);
        EXPECT_EQ(uintptr_t(m) % alignof(std::max_align_t), 0u);
        for (size_t i = 0; i < meta_size; i++) {
            ASSERT_EQ(m[i], 0) << "frame " << f << " byte " << i;
        }
        metas.push_back(m);
    }
    // No two frames' metadata overlap.
    std::vector<uint8_t *> sorted = metas;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 1; i < sorted.size(); i++) {
        EXPECT_GE(size_t(sorted[i] - sorted[i - 1]), meta_size);
    }
    // Writing every frame's metadata in full leaves the others intact.
    for (uint32_t f = 0; f < n; f++) {
        std::memset(metas[f], int(f + 1), meta_size);
    }
    for (uint32_t f = 0; f < n; f++) {
        for (size_t i = 0; i < meta_size; i++) {
            ASSERT_EQ(metas[f][i], f + 1) << "frame " << f;
        }
    }
    // The C API gives the same address.
    EXPECT_EQ(afxdp_pool_frame_meta(pool.get(), 9), pool->meta(9));
}

TEST(Pool, LendAndPutFromAppCountFramesInApp)
{
    auto pool = make_pool(64);
    ASSERT_TRUE(pool);
    uint32_t out[40];

    ASSERT_EQ(pool->get(40, out), 40u);
    pool->lend(out, 40);
    EXPECT_EQ(pool->in_app(), 40u);

    // Back in one call of more than the internal chunk of 32, by
    // addresses in the middle of each frame.
    std::vector<const void *> ptrs;
    for (uint32_t f : out) {
        ptrs.push_back(inside(pool.get(), f, 100 + f));
    }
    pool->put_from_app(ptrs.data(), 39);
    EXPECT_EQ(pool->in_app(), 1u);
    EXPECT_EQ(pool->free_count(), 63u);
    afxdp_pool_put(pool.get(), ptrs[39]);
    EXPECT_EQ(pool->in_app(), 0u);
    EXPECT_EQ(pool->free_count(), 64u);

    // Every frame is free exactly once.
    uint32_t all[64];
    ASSERT_EQ(pool->get(64, all), 64u);
    EXPECT_EQ(std::set<uint32_t>(all, all + 64).size(), 64u);
}

TEST(PoolDeathTest, FreeingAFrameTwiceAborts)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto pool = make_pool(4);
    ASSERT_TRUE(pool);
    uint32_t f;
    ASSERT_EQ(pool->get(1, &f), 1u);
    pool->put_from_kernel(&f, 1);

    EXPECT_DEATH(pool->put_from_kernel(&f, 1), "freed twice");
    EXPECT_DEATH(afxdp_pool_put(pool.get(), inside(pool.get(), 2)),
                 "freed twice");
}

// --- Frame states (builds configured with --enable-frame-debug) -------------

TEST(PoolStates, EveryMoveIsRecorded)
{
    if (!afxdp::kFrameDebug) {
        GTEST_SKIP() << "frame states are tracked only with "
                        "--enable-frame-debug";
    }
    using afxdp::FrameState;
    auto pool = make_pool(8);
    ASSERT_TRUE(pool);
    uint32_t rx[2], tx[2];
    ASSERT_EQ(pool->get(2, rx, FrameState::kFill), 2u);
    ASSERT_EQ(pool->get(2, tx, FrameState::kTx), 2u);
    EXPECT_EQ(pool->state(rx[0]), FrameState::kFill);
    EXPECT_EQ(pool->state(tx[1]), FrameState::kTx);
    pool->lend(rx, 1);
    EXPECT_EQ(pool->state(rx[0]), FrameState::kApp);
    EXPECT_EQ(pool->state(rx[1]), FrameState::kFill);
    afxdp_pool_put(pool.get(), inside(pool.get(), rx[0]));
    EXPECT_EQ(pool->state(rx[0]), FrameState::kFree);
    // A completed frame kept by its queue, and taken again to send.
    pool->keep(&tx[0], 1);
    EXPECT_EQ(pool->state(tx[0]), FrameState::kKept);
    pool->unkeep(&tx[0], 1);
    EXPECT_EQ(pool->state(tx[0]), FrameState::kTx);
    pool->put_from_kernel(tx, 2, FrameState::kTx);
    EXPECT_EQ(pool->state(tx[0]), FrameState::kFree);
    EXPECT_EQ(pool->state(tx[1]), FrameState::kFree);
}

TEST(PoolStatesDeathTest, EveryWrongMoveAborts)
{
    if (!afxdp::kFrameDebug) {
        GTEST_SKIP() << "frame states are tracked only with "
                        "--enable-frame-debug";
    }
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    using afxdp::FrameState;
    auto pool = make_pool(8);
    ASSERT_TRUE(pool);
    uint32_t f[3];
    ASSERT_EQ(pool->get(1, &f[0], FrameState::kFill), 1u);
    ASSERT_EQ(pool->get(1, &f[1], FrameState::kTx), 1u);
    ASSERT_EQ(pool->get(1, &f[2], FrameState::kFill), 1u);
    pool->lend(&f[2], 1);

    // The application frees a frame the kernel still has to receive into.
    EXPECT_DEATH(afxdp_pool_put(pool.get(), inside(pool.get(), f[0])),
                 "frame [0-9]+ of UMEM .* is in the fill/RX rings, not lent");
    // A frame the kernel has for TX comes back as received.
    EXPECT_DEATH(pool->lend(&f[1], 1), "is in the TX/completion rings");
    // A completion for a frame that was never sent.
    EXPECT_DEATH(pool->put_from_kernel(&f[0], 1, FrameState::kTx),
                 "is in the fill/RX rings, not in the TX/completion rings");
    // A frame lent to the application, freed twice.
    afxdp_pool_put(pool.get(), inside(pool.get(), f[2]));
    EXPECT_DEATH(afxdp_pool_put(pool.get(), inside(pool.get(), f[2])),
                 "is free, not lent to the application.*freed twice");
    // A frame kept for sending, kept again (completed twice), or given
    // to the pool as if it were still in the TX ring.
    pool->keep(&f[1], 1);
    EXPECT_DEATH(pool->keep(&f[1], 1),
                 "is kept by a queue for sending, not in the TX/completion");
    EXPECT_DEATH(pool->put_from_kernel(&f[1], 1, FrameState::kTx),
                 "is kept by a queue for sending");
    // Taking a frame that was never kept.
    EXPECT_DEATH(pool->unkeep(&f[0], 1),
                 "is in the fill/RX rings, not kept by a queue");
    // An index beyond the UMEM.
    const uint32_t bad = 8;
    EXPECT_DEATH(pool->put_from_kernel(&bad, 1, FrameState::kTx),
                 "out of range");
}

// --- afxdp_pool, many threads -----------------------------------------------

TEST(Pool, ConcurrentPutsFromAppKeepAnExactCount)
{
    const uint32_t n = 4096;
    const unsigned n_threads = 8;
    auto pool = make_pool(n);
    ASSERT_TRUE(pool);

    std::vector<uint32_t> frames(n);
    ASSERT_EQ(pool->get(n, frames.data()), n);
    pool->lend(frames.data(), n);

    // Each thread returns its share in batches of uneven sizes, some
    // larger than put_from_app's internal chunk.
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < n_threads; t++) {
        threads.emplace_back([&, t] {
            std::vector<const void *> mine;
            for (uint32_t i = t; i < n; i += n_threads) {
                mine.push_back(inside(pool.get(), frames[i], i % kFrameSize));
            }
            while (!go.load()) {
            }
            const size_t sizes[] = {1, 7, 33, 64, 2};
            size_t done = 0;
            for (unsigned k = 0; done < mine.size(); k++) {
                size_t b = std::min(sizes[k % 5], mine.size() - done);
                if (b == 1) {
                    afxdp_pool_put(pool.get(), mine[done]);
                } else {
                    afxdp_pool_put_n(pool.get(), &mine[done], b);
                }
                done += b;
            }
        });
    }
    go = true;
    for (auto &t : threads) {
        t.join();
    }

    EXPECT_EQ(pool->in_app(), 0u);
    EXPECT_EQ(pool->free_count(), n);
    std::vector<uint32_t> all(n);
    ASSERT_EQ(pool->get(n, all.data()), n);
    EXPECT_EQ(std::set<uint32_t>(all.begin(), all.end()).size(), n);
}

TEST(Pool, PutsFromAppRaceWithTheOwningQueue)
{
    // The owner keeps taking and returning frames (refill, completions)
    // while application threads return the frames they were lent.
    const uint32_t n = 2048, lent = 1024;
    auto pool = make_pool(n);
    ASSERT_TRUE(pool);
    std::vector<uint32_t> frames(lent);
    ASSERT_EQ(pool->get(lent, frames.data()), lent);
    pool->lend(frames.data(), lent);

    std::atomic<bool> stop{false};
    std::thread owner([&] {
        uint32_t scratch[64];
        while (!stop.load()) {
            uint32_t got = pool->get(64, scratch);
            pool->put_from_kernel(scratch, got);
        }
    });
    std::vector<std::thread> apps;
    for (unsigned t = 0; t < 4; t++) {
        apps.emplace_back([&, t] {
            for (uint32_t i = t; i < lent; i += 4) {
                afxdp_pool_put(pool.get(), inside(pool.get(), frames[i]));
            }
        });
    }
    for (auto &t : apps) {
        t.join();
    }
    stop = true;
    owner.join();

    EXPECT_EQ(pool->in_app(), 0u);
    EXPECT_EQ(pool->free_count(), n);
}

// --- Retiring a pool --------------------------------------------------------

TEST(PoolRetire, WithNoFrameLentFreesAtOnce)
{
    auto pool = make_pool(64);
    ASSERT_TRUE(pool);
    const uint8_t *area = pool->area();
    size_t size = pool->area_size();
    ASSERT_TRUE(is_mapped(area, size));

    afxdp_pool::retire(pool.release());
    EXPECT_FALSE(is_mapped(area, size));
}

TEST(PoolRetire, FramesFromTheKernelDoNotKeepItAlive)
{
    // Frames the owner took with get() but never lent (fill ring, TX) are
    // the kernel's, and the kernel is done with the UMEM when it retires.
    auto pool = make_pool(64);
    ASSERT_TRUE(pool);
    uint32_t out[10];
    ASSERT_EQ(pool->get(10, out), 10u);
    const uint8_t *area = pool->area();
    size_t size = pool->area_size();

    afxdp_pool::retire(pool.release());
    EXPECT_FALSE(is_mapped(area, size));
}

TEST(PoolRetire, WithFramesLentFreesOnTheLastPut)
{
    auto pool = make_pool(64, 16);
    ASSERT_TRUE(pool);
    uint32_t out[3];
    ASSERT_EQ(pool->get(3, out), 3u);
    pool->lend(out, 3);
    afxdp_pool *p = pool.release();
    uint8_t *area = p->area();
    size_t size = p->area_size();
    std::memcpy(area + size_t(out[1]) * kFrameSize + 256, "packet", 7);

    afxdp_pool::retire(p);
    // Still mapped, and the application's packets still readable.
    ASSERT_TRUE(is_mapped(area, size));
    EXPECT_STREQ(reinterpret_cast<const char *>(
                     area + size_t(out[1]) * kFrameSize + 256), "packet");

    afxdp_pool_put(p, inside(p, out[0]));
    EXPECT_TRUE(is_mapped(area, size));
    afxdp_pool_put(p, inside(p, out[2]));
    EXPECT_TRUE(is_mapped(area, size));
    afxdp_pool_put(p, inside(p, out[1]));   // The last one frees.
    EXPECT_FALSE(is_mapped(area, size));
}

TEST(PoolRetire, WithFramesLentFreesOnTheLastPutN)
{
    auto pool = make_pool(128);
    ASSERT_TRUE(pool);
    uint32_t out[100];
    ASSERT_EQ(pool->get(100, out), 100u);
    pool->lend(out, 100);
    afxdp_pool *p = pool.release();
    uint8_t *area = p->area();
    size_t size = p->area_size();
    std::vector<const void *> ptrs;
    for (uint32_t f : out) {
        ptrs.push_back(inside(p, f));
    }

    afxdp_pool::retire(p);
    afxdp_pool_put_n(p, ptrs.data(), 60);
    EXPECT_TRUE(is_mapped(area, size));
    afxdp_pool_put_n(p, ptrs.data() + 60, 40);   // Two chunks, then free.
    EXPECT_FALSE(is_mapped(area, size));
}

TEST(PoolRetire, RacesWithPutsFromManyThreads)
{
    // Whoever comes last, the retire or one of the puts, frees the pool
    // exactly once.  Run a few times to vary the interleaving.
    for (int round = 0; round < 20; round++) {
        const uint32_t lent = 256;
        auto pool = make_pool(lent);
        ASSERT_TRUE(pool);
        std::vector<uint32_t> frames(lent);
        ASSERT_EQ(pool->get(lent, frames.data()), lent);
        pool->lend(frames.data(), lent);
        afxdp_pool *p = pool.release();
        uint8_t *area = p->area();
        size_t size = p->area_size();
        std::vector<const void *> ptrs;
        for (uint32_t f : frames) {
            ptrs.push_back(p->area() + size_t(f) * kFrameSize + 64);
        }

        std::atomic<bool> go{false};
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < 4; t++) {
            threads.emplace_back([&, t] {
                while (!go.load()) {
                }
                for (uint32_t i = t * 64; i < (t + 1) * 64; i += 16) {
                    afxdp_pool_put_n(p, &ptrs[i], 16);
                }
            });
        }
        go = true;
        if (round % 2) {
            std::this_thread::yield();
        }
        afxdp_pool::retire(p);
        for (auto &t : threads) {
            t.join();
        }
        EXPECT_FALSE(is_mapped(area, size)) << "round " << round;
    }
}

TEST(PoolRetire, NullIsANoOp)
{
    afxdp_pool::retire(nullptr);
    afxdp::PoolHandle h;
    h.reset();
}
