// Tier 1 (no kernel): the typed ring views of ring.hh over plain memory.
//
// Each test builds a RingMemory in a FakeRing and plays the kernel's part
// by writing the shared producer or consumer index directly.  Proves that
// a producer never reserves more than is free, that a consumer never peeks
// more than was published, that neither side publishes an index before
// submit()/release(), that indices wrap correctly past 2^32, how
// needs_wakeup() reads the flags word, and that pending()/backlog() count
// what the kernel has not yet taken or what we have not yet read.  It also
// checks at compile time that each ring type only offers its own side.

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ring.hh"

using afxdp::CompletionRing;
using afxdp::FillRing;
using afxdp::RingMemory;
using afxdp::RxRing;
using afxdp::TxRing;

namespace {

// The shared part of one ring, as the kernel would map it.
template <typename Slot>
struct FakeRing {
    explicit FakeRing(uint32_t size, uint32_t start = 0)
        : producer(start), consumer(start), slots(size) {}

    RingMemory memory(bool with_flags = true)
    {
        return {&producer, &consumer, with_flags ? &flags : nullptr,
                slots.data(), uint32_t(slots.size())};
    }
    // The slot that ring index 'idx' maps to.
    Slot &slot(uint32_t idx) { return slots[idx & (slots.size() - 1)]; }

    uint32_t producer;
    uint32_t consumer;
    uint32_t flags = 0;
    std::vector<Slot> slots;
};

// Compile-time checks that a ring type offers only its own side.
template <typename R, typename = void>
struct HasReserve : std::false_type {};
template <typename R>
struct HasReserve<R, std::void_t<decltype(std::declval<R &>().reserve(
                         0u, static_cast<uint32_t *>(nullptr)))>>
    : std::true_type {};

template <typename R, typename = void>
struct HasPeek : std::false_type {};
template <typename R>
struct HasPeek<R, std::void_t<decltype(std::declval<R &>().peek(
                      0u, static_cast<uint32_t *>(nullptr)))>>
    : std::true_type {};

static_assert(HasReserve<FillRing>::value && !HasPeek<FillRing>::value,
              "a fill ring is only produced into");
static_assert(HasReserve<TxRing>::value && !HasPeek<TxRing>::value,
              "a TX ring is only produced into");
static_assert(HasPeek<CompletionRing>::value
              && !HasReserve<CompletionRing>::value,
              "a completion ring is only consumed from");
static_assert(HasPeek<RxRing>::value && !HasReserve<RxRing>::value,
              "an RX ring is only consumed from");
static_assert(std::is_same_v<std::remove_reference_t<decltype(
                  std::declval<FillRing &>().at(0))>, uint64_t>,
              "fill slots are frame addresses");
static_assert(std::is_same_v<std::remove_reference_t<decltype(
                  std::declval<RxRing &>().at(0))>, const xdp_desc>,
              "RX slots are read-only descriptors");

}  // namespace

TEST(Ring, ProducerReservesOnlyFreeSlots)
{
    FakeRing<uint64_t> k(8);
    FillRing fill(k.memory());
    uint32_t first = 99;

    EXPECT_EQ(fill.size(), 8u);
    EXPECT_EQ(fill.reserve(5, &first), 5u);
    EXPECT_EQ(first, 0u);
    EXPECT_EQ(fill.reserve(5, &first), 3u);   // Only 3 left.
    EXPECT_EQ(first, 5u);
    EXPECT_EQ(fill.reserve(1, &first), 0u);   // Full.
    EXPECT_EQ(fill.free_slots(1), 0u);

    // Nothing is visible to the kernel before submit().
    EXPECT_EQ(k.producer, 0u);
    fill.submit();
    EXPECT_EQ(k.producer, 8u);

    // The kernel consumes two; exactly two become reservable again, at
    // indices 8 and 9, which are slots 0 and 1.
    k.consumer = 2;
    EXPECT_EQ(fill.reserve(4, &first), 2u);
    EXPECT_EQ(first, 8u);
    fill.at(first) = 0x1000;
    fill.at(first + 1) = 0x2000;
    EXPECT_EQ(k.slots[0], 0x1000u);
    EXPECT_EQ(k.slots[1], 0x2000u);
    fill.submit();
    EXPECT_EQ(k.producer, 10u);
}

TEST(Ring, ProducerRefreshesConsumerOnlyWhenShort)
{
    FakeRing<uint64_t> k(16);
    FillRing fill(k.memory());
    uint32_t first;

    ASSERT_EQ(fill.reserve(12, &first), 12u);
    fill.submit();
    EXPECT_EQ(fill.free_slots(4), 4u);

    // The kernel frees 6 more, but 4 cached free slots satisfy a request
    // for 4, so the shared index is not read.
    k.consumer = 6;
    EXPECT_EQ(fill.free_slots(4), 4u);
    // Asking for more than the cache holds reads it.
    EXPECT_EQ(fill.free_slots(5), 10u);
    EXPECT_EQ(fill.reserve(16, &first), 10u);
}

TEST(Ring, ProducerStartsFromTheSharedIndices)
{
    // A ring whose kernel side already holds 3 entries of 8.
    FakeRing<uint64_t> k(8);
    k.producer = 103;
    k.consumer = 100;
    FillRing fill(k.memory());
    uint32_t first;

    EXPECT_EQ(fill.reserve(8, &first), 5u);
    EXPECT_EQ(first, 103u);
}

TEST(Ring, ProducerWrapsPast32Bits)
{
    const uint32_t start = UINT32_MAX - 2;
    FakeRing<xdp_desc> k(8, start);
    TxRing tx(k.memory());
    uint32_t first;

    ASSERT_EQ(tx.reserve(8, &first), 8u);
    EXPECT_EQ(first, start);
    for (uint32_t i = 0; i < 8; i++) {
        tx.at(first + i) = xdp_desc{uint64_t(i) << 12, 60 + i, 0};
    }
    EXPECT_EQ(tx.pending(), 0u);        // Reserved is not submitted.
    tx.submit();
    EXPECT_EQ(tx.pending(), 8u);
    EXPECT_EQ(k.producer, start + 8);   // 5, having wrapped.
    EXPECT_EQ(k.producer, 5u);

    // Entry i sits in slot (start + i) mod 8: 5, 6, 7, 0, 1, ...
    for (uint32_t i = 0; i < 8; i++) {
        EXPECT_EQ(k.slot(start + i).addr, uint64_t(i) << 12);
        EXPECT_EQ(k.slot(start + i).len, 60 + i);
    }
    EXPECT_EQ(k.slots[5].len, 60u);
    EXPECT_EQ(k.slots[0].len, 63u);

    // The kernel's consumer index crosses 2^32 too.
    EXPECT_EQ(tx.reserve(1, &first), 0u);
    k.consumer = start + 3;   // 0.
    EXPECT_EQ(k.consumer, 0u);
    EXPECT_EQ(tx.pending(), 5u);
    EXPECT_EQ(tx.reserve(8, &first), 3u);
    EXPECT_EQ(first, 5u);
}

TEST(Ring, ConsumerWrapsPast32Bits)
{
    const uint32_t start = UINT32_MAX - 5;
    FakeRing<xdp_desc> k(8, start);
    RxRing rx(k.memory());
    uint32_t first;

    EXPECT_EQ(rx.peek(8, &first), 0u);
    for (uint32_t i = 0; i < 7; i++) {
        k.slot(start + i) = xdp_desc{uint64_t(i) << 12, 100 + i, 0};
    }
    k.producer = start + 7;   // 1, having wrapped.

    EXPECT_EQ(rx.backlog(), 7u);
    ASSERT_EQ(rx.peek(16, &first), 7u);
    EXPECT_EQ(first, start);
    for (uint32_t i = 0; i < 7; i++) {
        EXPECT_EQ(rx.at(first + i).addr, uint64_t(i) << 12);
        EXPECT_EQ(rx.at(first + i).len, 100 + i);
    }
    EXPECT_EQ(rx.backlog(), 0u);
    EXPECT_EQ(k.consumer, start);   // Not before release().
    rx.release();
    EXPECT_EQ(k.consumer, 1u);
}

TEST(Ring, ConsumerPeeksOnlyWhatWasPublished)
{
    FakeRing<uint64_t> k(8);
    CompletionRing comp(k.memory());
    uint32_t first;

    EXPECT_EQ(comp.available(), 0u);
    EXPECT_EQ(comp.peek(4, &first), 0u);

    for (uint32_t i = 0; i < 4; i++) {
        k.slot(i) = uint64_t(i + 1) << 12;
    }
    // Written but not published: still nothing.
    EXPECT_EQ(comp.peek(4, &first), 0u);
    k.producer = 4;

    ASSERT_EQ(comp.peek(2, &first), 2u);
    EXPECT_EQ(first, 0u);
    EXPECT_EQ(comp.at(first), 1u << 12);
    EXPECT_EQ(comp.at(first + 1), 2u << 12);
    EXPECT_EQ(comp.backlog(), 2u);
    EXPECT_EQ(k.consumer, 0u);
    comp.release();
    EXPECT_EQ(k.consumer, 2u);

    // More arrives, but the two cached entries are handed out first
    // without reading the shared index again.
    k.slot(4) = 5u << 12;
    k.producer = 5;
    EXPECT_EQ(comp.backlog(), 3u);
    ASSERT_EQ(comp.peek(8, &first), 2u);
    EXPECT_EQ(first, 2u);
    EXPECT_EQ(comp.at(first + 1), 4u << 12);
    ASSERT_EQ(comp.peek(8, &first), 1u);
    EXPECT_EQ(comp.at(first), 5u << 12);
    comp.release();
    EXPECT_EQ(k.consumer, 5u);
    EXPECT_EQ(comp.backlog(), 0u);
    EXPECT_EQ(comp.available(), 0u);
}

TEST(Ring, ConsumerReleasesEverythingPeekedAtOnce)
{
    FakeRing<uint64_t> k(8);
    CompletionRing comp(k.memory());
    uint32_t first;

    k.producer = 6;
    EXPECT_EQ(comp.peek(2, &first), 2u);
    EXPECT_EQ(comp.peek(3, &first), 3u);
    EXPECT_EQ(first, 2u);
    comp.release();
    EXPECT_EQ(k.consumer, 5u);
    EXPECT_EQ(comp.backlog(), 1u);
}

TEST(Ring, ConsumerUnpeeksTheTailItCannotUseYet)
{
    FakeRing<xdp_desc> k(8, UINT32_MAX - 2);
    RxRing rx(k.memory());
    uint32_t first;

    for (uint32_t i = 0; i < 5; i++) {
        k.slot(UINT32_MAX - 2 + i).addr = uint64_t(i) << 12;
    }
    k.producer = UINT32_MAX - 2 + 5;
    ASSERT_EQ(rx.peek(8, &first), 5u);
    // The last two are, say, the first frames of a packet whose last
    // frame is not there yet: take three, leave two.
    rx.unpeek(2);
    rx.release();
    EXPECT_EQ(k.consumer, UINT32_MAX - 2 + 3);
    EXPECT_EQ(rx.backlog(), 2u);
    ASSERT_EQ(rx.peek(8, &first), 2u);
    EXPECT_EQ(rx.at(first).addr, 3u << 12);
    EXPECT_EQ(rx.at(first + 1).addr, 4u << 12);
    rx.release();
    EXPECT_EQ(k.consumer, k.producer);
}

TEST(Ring, ProducerCancelsWhatItReservedAndDidNotSubmit)
{
    FakeRing<xdp_desc> k(8);
    TxRing tx(k.memory());
    uint32_t first;

    ASSERT_EQ(tx.reserve(2, &first), 2u);
    tx.submit();
    ASSERT_EQ(tx.reserve(3, &first), 3u);
    EXPECT_EQ(first, 2u);
    // Not all of a packet's frames found room: give the slots back.
    tx.cancel(3);
    tx.submit();
    EXPECT_EQ(k.producer, 2u);
    EXPECT_EQ(tx.pending(), 2u);
    ASSERT_EQ(tx.reserve(6, &first), 6u);
    EXPECT_EQ(first, 2u) << "the cancelled slots are reserved again";
    EXPECT_EQ(tx.free_slots(1), 0u);
}

TEST(Ring, PendingCountsWhatTheKernelHasNotTaken)
{
    FakeRing<uint64_t> k(8);
    FillRing fill(k.memory());
    uint32_t first;

    EXPECT_EQ(fill.pending(), 0u);
    ASSERT_EQ(fill.reserve(5, &first), 5u);
    fill.submit();
    EXPECT_EQ(fill.pending(), 5u);
    k.consumer = 3;
    EXPECT_EQ(fill.pending(), 2u);
    k.consumer = 5;
    EXPECT_EQ(fill.pending(), 0u);
}

TEST(Ring, NeedsWakeupWithoutFlagsWordIsAlwaysTrue)
{
    FakeRing<uint64_t> k(8);
    FakeRing<xdp_desc> kt(8);
    FillRing fill(k.memory(false));
    TxRing tx(kt.memory(false));

    EXPECT_TRUE(fill.needs_wakeup(XDP_RING_NEED_WAKEUP));
    EXPECT_TRUE(fill.needs_wakeup(0));
    EXPECT_TRUE(tx.needs_wakeup(XDP_RING_NEED_WAKEUP));
}

TEST(Ring, NeedsWakeupFollowsTheFlag)
{
    FakeRing<uint64_t> k(8);
    FillRing fill(k.memory());

    k.flags = 0;
    EXPECT_FALSE(fill.needs_wakeup(XDP_RING_NEED_WAKEUP));
    k.flags = XDP_RING_NEED_WAKEUP;
    EXPECT_TRUE(fill.needs_wakeup(XDP_RING_NEED_WAKEUP));
    k.flags = 0;
    EXPECT_FALSE(fill.needs_wakeup(XDP_RING_NEED_WAKEUP));
    // Other bits do not count.
    k.flags = ~uint32_t(XDP_RING_NEED_WAKEUP);
    EXPECT_FALSE(fill.needs_wakeup(XDP_RING_NEED_WAKEUP));
    // A build without need_wakeup passes flag 0: always wake.
    k.flags = 0;
    EXPECT_TRUE(fill.needs_wakeup(0));
}

TEST(Ring, FullCycleOverManyLaps)
{
    // Producer and consumer chase each other around a small ring many
    // times, starting just below 2^32, with uneven batch sizes.
    FakeRing<uint64_t> k(4, UINT32_MAX - 9);
    FillRing fill(k.memory());
    CompletionRing comp(k.memory());
    uint64_t next_in = 0, next_out = 0;

    for (int round = 0; round < 100; round++) {
        uint32_t first;
        uint32_t want = 1 + round % 5;
        uint32_t got = fill.reserve(want, &first);
        EXPECT_LE(got, 4u);
        EXPECT_EQ(got, std::min<uint64_t>(want, 4 - (next_in - next_out)));
        for (uint32_t i = 0; i < got; i++) {
            fill.at(first + i) = next_in++;
        }
        fill.submit();

        uint32_t n = comp.peek(1 + round % 3, &first);
        for (uint32_t i = 0; i < n; i++) {
            EXPECT_EQ(comp.at(first + i), next_out++);
        }
        comp.release();
    }
    EXPECT_GT(next_out, 100u);
}
