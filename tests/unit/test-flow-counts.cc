// afxdp_flow_counts (afxdp-offload.h, flow_counts.cc): each packet XDP executed
// for a megaflow is told to OVS once, whatever the puts, reopens and
// copies.  Tier 1: no kernel.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "afxdp-offload.h"

namespace {

afxdp_flow_stats
xdp(uint64_t packets, uint64_t bytes = 0)
{
    afxdp_flow_stats s = {};
    s.n_packets = packets;
    s.n_bytes = bytes ? bytes : packets * 100;
    return s;
}

// XDP's count read now: 'packets' of 100 bytes.
void
xdp_read(afxdp_flow_counts *c, uint64_t packets)
{
    afxdp_flow_stats now = xdp(packets);
    afxdp_flow_counts_read(c, &now);
}

// A copy of the megaflow, as OVS keeps it: what it was told last.
struct Copy {
    afxdp_flow_stats told = {};
    // Reads what it is told now, as a revalidator of that copy does.
    uint64_t ask(afxdp_flow_counts *c)
    {
        afxdp_flow_counts_tell(c, true, &told);
        return told.n_packets;
    }
};

TEST(FlowCounts, AFlowPutAgainKeepsCountingWhereItWas)
{
    // The sequence: 1000 packets, a mod-flows (the same megaflow
    // put again, XDP's count going on), 500 more, another mod-flows.
    afxdp_flow_counts c = {};
    Copy a;
    xdp_read(&c, 1000);
    EXPECT_EQ(a.ask(&c), 1000u);
    xdp_read(&c, 1000);
    EXPECT_EQ(a.ask(&c), 1000u);
    xdp_read(&c, 1500);
    EXPECT_EQ(a.ask(&c), 1500u);
    EXPECT_EQ(a.told.n_bytes, 150000u);
    xdp_read(&c, 1500);
    EXPECT_EQ(a.ask(&c), 1500u);
}

TEST(FlowCounts, AReopenEndsTheCountAndTheNextAddsToIt)
{
    afxdp_flow_counts c = {};
    Copy a;
    xdp_read(&c, 400);
    EXPECT_EQ(a.ask(&c), 400u);
    // The last read just before the maps close, then the end.
    xdp_read(&c, 700);
    afxdp_flow_counts_end(&c);
    EXPECT_EQ(a.ask(&c), 700u);
    xdp_read(&c, 300);
    EXPECT_EQ(a.ask(&c), 1000u);
    // A count that went back without an end (the flow left the maps and
    // came back) ended as last read.
    xdp_read(&c, 5);
    EXPECT_EQ(a.ask(&c), 1005u);
}

TEST(FlowCounts, TwoCopiesAreToldEachPacketOnce)
{
    // Two PMD threads' copies of one megaflow, each asked for by its
    // revalidator: the figures add up to XDP's count, and each grows.
    afxdp_flow_counts c = {};
    Copy a, b;
    xdp_read(&c, 100);
    EXPECT_EQ(a.ask(&c), 100u);
    EXPECT_EQ(b.ask(&c), 0u);
    xdp_read(&c, 150);
    EXPECT_EQ(b.ask(&c), 50u);
    EXPECT_EQ(a.ask(&c), 100u);
    xdp_read(&c, 190);
    EXPECT_EQ(a.ask(&c), 140u);
    EXPECT_EQ(b.ask(&c), 50u);
    EXPECT_EQ(a.told.n_packets + b.told.n_packets, 190u);
    EXPECT_EQ(a.told.n_bytes + b.told.n_bytes, 19000u);
    // A third copy, new: it starts from nothing.
    Copy d;
    xdp_read(&c, 200);
    EXPECT_EQ(d.ask(&c), 10u);
    EXPECT_EQ(a.told.n_packets + b.told.n_packets + d.told.n_packets, 200u);
    // Used and flags go to everyone alike.
    afxdp_flow_stats now = xdp(200);
    now.used_msec = 777;
    now.tcp_flags = 0x12;
    afxdp_flow_counts_read(&c, &now);
    b.ask(&c);
    EXPECT_EQ(b.told.used_msec, 777);
    EXPECT_EQ(b.told.tcp_flags, 0x12);
}

TEST(FlowCounts, AReaderThatIsNoCopyIsToldNoPackets)
{
    afxdp_flow_counts c = {};
    Copy a;
    xdp_read(&c, 30);
    afxdp_flow_stats anon = {};
    afxdp_flow_counts_tell(&c, false, &anon);
    EXPECT_EQ(anon.n_packets, 0u);
    EXPECT_EQ(a.ask(&c), 30u);
}

TEST(FlowCounts, WhatNoCopyWasToldIsCountedAtTheEnd)
{
    afxdp_flow_counts c = {};
    Copy a;
    xdp_read(&c, 10);
    a.ask(&c);
    xdp_read(&c, 14);
    uint64_t packets, bytes;
    afxdp_flow_counts_untold(&c, &packets, &bytes);
    EXPECT_EQ(packets, 4u);
    EXPECT_EQ(bytes, 400u);
}

// A random history of packets, reads, reopens, copies made and deleted,
// and asks: the copies' figures, each as last told, never exceed XDP's
// count, never go back, and add up to it after the last ask.
TEST(FlowCounts, AnyHistoryTellsEachPacketOnce)
{
    std::mt19937 rng(42);
    for (int round = 0; round < 200; round++) {
        afxdp_flow_counts c = {};
        std::map<int, Copy> copies;   // Live copies.
        uint64_t gone = 0;            // What deleted copies were told.
        uint64_t xdp_total = 0, running = 0;
        int next_copy = 0;
        copies[next_copy++];
        for (int step = 0; step < 300; step++) {
            switch (rng() % 6) {
            case 0:   // Packets.
                running += rng() % 50;
                break;
            case 1:   // A read of XDP's count (a revalidator's, dpctl's).
                xdp_read(&c, running);
                break;
            case 2:   // A reopen: the last read, the end.
                xdp_read(&c, running);
                afxdp_flow_counts_end(&c);
                xdp_total += running;
                running = 0;
                break;
            case 3:   // A new copy (another PMD).
                copies[next_copy++];
                break;
            case 4:   // A copy deleted, after its last read.
                if (copies.size() > 1) {
                    auto it = copies.begin();
                    std::advance(it, rng() % copies.size());
                    it->second.ask(&c);
                    gone += it->second.told.n_packets;
                    copies.erase(it);
                }
                break;
            default: {   // A copy asks.
                auto it = copies.begin();
                std::advance(it, rng() % copies.size());
                uint64_t before = it->second.told.n_packets;
                it->second.ask(&c);
                ASSERT_GE(it->second.told.n_packets, before);
                break;
            }
            }
            uint64_t sum = gone;
            for (auto &[id, copy] : copies) {
                sum += copy.told.n_packets;
            }
            ASSERT_LE(sum, xdp_total + running) << round << " " << step;
        }
        // Any copy asks once more: all of XDP's count has then been told,
        // once.
        xdp_read(&c, running);
        uint64_t sum = gone;
        for (auto &[id, copy] : copies) {
            copy.ask(&c);
            sum += copy.told.n_packets;
        }
        ASSERT_EQ(sum, xdp_total + running) << round;
    }
}

}  // namespace
