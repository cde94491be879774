// Tier 2 (real kernel, root only): coalesced TX kicks on a veth pair:
// when a send's kick is owed, paid, or never deferred.

#include <gtest/gtest.h>

#include "veth-test.hh"

using namespace afxdp_test;

// --- 10. Coalesced TX kicks -----------------------------------------------
//
// One device on the veth end a, a packet socket on its peer b: frames the
// packet socket sends arrive on the device's queue, and whatever the queue
// sends leaves a and reaches the packet socket.  Copy mode (generic): there
// the kernel transmits only when kicked.

namespace {

afxdp_dev_config
coalescing_config(const char *ifname, bool coalesce = true)
{
    afxdp_dev_config cfg = config(ifname, AFXDP_MODE_GENERIC);
    cfg.port.coalesce_tx_kicks = coalesce;
    cfg.busy_polled = true;
    return cfg;
}

// One receive call on 'q' for at most 'max' frames, appended to 'held'.
size_t
recv_once(afxdp_queue *q, size_t max, std::vector<afxdp_rx_frame> *held)
{
    afxdp_rx_frame frames[32];
    unsigned events = 0;
    int error = 0;
    size_t n = afxdp_queue_recv(q, frames, max < 32 ? max : 32, nullptr,
                                &events, &error);
    held->insert(held->end(), frames, frames + n);
    return n;
}

// Sends copies of 'frames' on 'q' and gives the frames back to the pool.
void
send_back(afxdp_queue *q, std::vector<afxdp_rx_frame> *frames)
{
    afxdp_pool *pool = afxdp_queue_pool(q);
    std::vector<afxdp_tx_packet> pkts;
    for (const afxdp_rx_frame &f : *frames) {
        pkts.push_back({f.data, f.len, nullptr});
    }
    unsigned events = 0;
    int error = 0;
    EXPECT_EQ(afxdp_queue_send(q, pkts.data(), pkts.size(), &events,
                               &error), 0u);
    for (const afxdp_rx_frame &f : *frames) {
        afxdp_pool_put(pool, f.data);
    }
    frames->clear();
}

// The sendto() calls the queue made, on a send or later.
uint64_t
syscalls(afxdp_queue *q)
{
    afxdp_queue_stats st = stats_of(q);
    return st.tx_kicks + st.tx_kick_retries + st.tx_kicks_late;
}

// The device (coalescing, unless a test reopens it otherwise) and the
// packet socket on its peer; skipped where the kernel cannot coalesce
// (before Linux 6.17).
class Coalescing : public Veth {
protected:
    void SetUp() override
    {
        Veth::SetUp();
        if (IsSkipped()) {
            return;
        }
        peer_.reset(new PacketSocket(net_.b(), kEthType));
        ASSERT_EQ(peer_->error(), "");
        reopen(coalescing_config(net_.a()));
        afxdp_dev_info info;
        afxdp_dev_get_info(dev_.get(), &info);
        if (!info.coalesce_tx_kicks_in_use) {
            GTEST_SKIP() << "TX kicks not coalesced here: "
                         << info.coalesce_tx_kicks_reason;
        }
    }

    void reopen(const afxdp_dev_config &cfg)
    {
        dev_.reset();
        dev_ = open_dev_after_close(cfg);
        ASSERT_TRUE(dev_);
        q_ = afxdp_dev_queue(dev_.get(), 0);
    }

    // The peer sends frames first..first+n-1; they are received here,
    // the last receive call returning packets.
    void from_peer(uint32_t first, uint32_t n,
                   std::vector<afxdp_rx_frame> *held)
    {
        ASSERT_EQ(peer_->send_frames(first, n), n);
        receive(q_, n, held);
        ASSERT_EQ(held->size(), size_t(n));
    }

    // Frames first..first+n-1 reach the peer within 'ms'.
    void peer_gets(uint32_t first, uint32_t n, int ms = 2000)
    {
        std::vector<uint32_t> seqs = peer_->receive_frames(n, ms);
        ASSERT_EQ(seqs.size(), size_t(n));
        for (uint32_t i = 0; i < n; i++) {
            EXPECT_EQ(seqs[i], first + i);
        }
    }

    std::unique_ptr<PacketSocket> peer_;
    Dev dev_;
    afxdp_queue *q_ = nullptr;
};

}  // namespace

TEST_F(Coalescing, SendAfterReceiveOwesItsKickUntilTheRxQueueIsEmpty)
{
    std::vector<afxdp_rx_frame> held;
    from_peer(0, 8, &held);
    send_back(q_, &held);
    EXPECT_EQ(stats_of(q_).tx_kicks_deferred, 1u);
    EXPECT_EQ(syscalls(q_), 0u);
    EXPECT_TRUE(peer_->receive_frames(8, 200).empty())
        << "nothing leaves before the kick";

    // The RX queue comes up empty: the thread pays what it owes.
    EXPECT_EQ(recv_once(q_, 32, &held), 0u);
    EXPECT_EQ(stats_of(q_).tx_kicks_late, 1u);
    peer_gets(0, 8);
    EXPECT_EQ(syscalls(q_), 1u);
    unsigned events = 0;
    int error = 0;
    EXPECT_EQ(afxdp_queue_send(q_, nullptr, 0, &events, &error), 0u);
    expect_frames_add_up(q_, 0);
}

TEST_F(Coalescing, TwoBurstsLeaveInOneSendto)
{
    // Two bursts of 8 wait in the RX ring, as a busy PMD finds them.
    std::vector<afxdp_rx_frame> burst;
    ASSERT_EQ(peer_->send_frames(16, 16), 16u);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(recv_once(q_, 8, &burst), 8u);
    send_back(q_, &burst);
    ASSERT_EQ(recv_once(q_, 8, &burst), 8u);
    send_back(q_, &burst);
    EXPECT_EQ(stats_of(q_).tx_kicks_deferred, 2u);
    EXPECT_LE(syscalls(q_), 1u);
    // Paid by the second send (at most two bursts per kick) or, with
    // deeper coalescing, by the empty receive.
    EXPECT_EQ(recv_once(q_, 32, &burst), 0u);
    peer_gets(16, 16);
    EXPECT_EQ(syscalls(q_), 1u) << "one sendto() for both bursts";
    EXPECT_EQ(stats_of(q_).tx_packets, 16u);
}

TEST_F(Coalescing, OwedKickIsPaidWithinAFewBurstsEvenIfNothingIsSent)
{
    std::vector<afxdp_rx_frame> held;
    from_peer(0, 4, &held);
    // More traffic waits in the RX ring, none of which we will send.
    ASSERT_EQ(peer_->send_frames(4, 64), 64u);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    send_back(q_, &held);
    ASSERT_EQ(stats_of(q_).tx_kicks_deferred, 1u);
    int polls = 0;
    while (stats_of(q_).tx_kicks_late == 0 && polls < 16) {
        ASSERT_GT(recv_once(q_, 4, &held), 0u);
        polls++;
    }
    EXPECT_EQ(stats_of(q_).tx_kicks_late, 1u);
    EXPECT_LE(polls, AFXDP_COALESCED_BURSTS)
        << "paid within the coalescing depth";
    peer_gets(0, 4);
    for (const afxdp_rx_frame &f : held) {
        afxdp_pool_put(afxdp_queue_pool(q_), f.data);
    }
}

TEST_F(Coalescing, OnlyTheReceivingThreadDefersAndItPaysWhenItExits)
{
    // Received here, sent from a thread that received nothing: no reason
    // to wait, it kicks.
    std::vector<afxdp_rx_frame> held;
    from_peer(0, 4, &held);
    std::thread([&] { send_back(q_, &held); }).join();
    EXPECT_EQ(stats_of(q_).tx_kicks_deferred, 0u);
    EXPECT_EQ(stats_of(q_).tx_kicks, 1u);
    peer_gets(0, 4);

    // A thread that receives, sends and exits owes a kick at its exit,
    // and pays it there.
    std::thread([&] {
        std::vector<afxdp_rx_frame> mine;
        from_peer(4, 4, &mine);
        send_back(q_, &mine);
        EXPECT_EQ(stats_of(q_).tx_kicks_deferred, 1u);
    }).join();
    EXPECT_EQ(stats_of(q_).tx_kicks_late, 1u);
    peer_gets(4, 4);
}

TEST_F(Coalescing, OwedKickOfAClosedQueueIsDroppedSafely)
{
    std::vector<afxdp_rx_frame> held;
    from_peer(0, 4, &held);
    send_back(q_, &held);
    ASSERT_EQ(stats_of(q_).tx_kicks_deferred, 1u);
    // Closed with the kick owed: the thread still holds it.  A new device,
    // very likely at the same addresses: the stale debt costs it at most
    // an early kick, and its traffic flows.
    reopen(coalescing_config(net_.a()));
    from_peer(10, 4, &held);
    send_back(q_, &held);
    EXPECT_EQ(recv_once(q_, 32, &held), 0u);
    peer_gets(10, 4);
}

TEST_F(Coalescing, KickOwedToAnIdleThreadIsPaidByKickOwed)
{
    std::vector<afxdp_rx_frame> held;
    from_peer(0, 4, &held);
    send_back(q_, &held);
    ASSERT_EQ(stats_of(q_).tx_kicks_deferred, 1u);
    // This thread polls no more; another one (OVS: the main thread, with
    // the statistics) finds the debt.
    std::thread([&] { afxdp_queue_kick_owed(q_); }).join();
    EXPECT_EQ(stats_of(q_).tx_kicks_late, 1u);
    peer_gets(0, 4);
    afxdp_queue_kick_owed(q_);
    EXPECT_EQ(stats_of(q_).tx_kicks_late, 1u) << "nothing owed any more";
    // The debt this thread still records is paid harmlessly.
    EXPECT_EQ(recv_once(q_, 32, &held), 0u);
}

TEST_F(Coalescing, AFailedLateKickIsCountedAndItsFramesLeaveLater)
{
    std::vector<afxdp_rx_frame> held;
    from_peer(0, 4, &held);
    send_back(q_, &held);
    ASSERT_EQ(stats_of(q_).tx_kicks_deferred, 1u);
    // The link goes down before the debt is paid: the late kick fails with
    // ENETDOWN, on a thread that has no caller to tell.  The counter says
    // it, and the frames wait in the TX ring.
    ASSERT_EQ(net_.link_set(net_.a(), "down"), "");
    std::thread([&] { afxdp_queue_kick_owed(q_); }).join();
    afxdp_queue_stats st = stats_of(q_);
    EXPECT_EQ(st.tx_kicks_late, 1u);
    EXPECT_EQ(st.tx_kick_errors, 1u);
    expect_waiting_to_send(q_, 4);

    // Up again: this thread's own debt, paid when its RX queue comes up
    // empty, sends them.
    ASSERT_EQ(net_.link_set(net_.a(), "up"), "");
    EXPECT_EQ(recv_once(q_, 32, &held), 0u);
    peer_gets(0, 4);
    st = stats_of(q_);
    EXPECT_EQ(st.tx_kicks_late, 2u);
    EXPECT_EQ(st.tx_kick_errors, 1u);
    expect_frames_add_up(q_, 0);
}

TEST_F(Coalescing, WhatANonBusyPollerReceivesIsKickedAtOnce)
{
    afxdp_dev_config cfg = coalescing_config(net_.a());
    cfg.busy_polled = false;
    reopen(cfg);
    std::vector<afxdp_rx_frame> held;
    from_peer(0, 4, &held);
    send_back(q_, &held);
    EXPECT_EQ(stats_of(q_).tx_kicks_deferred, 0u);
    EXPECT_EQ(stats_of(q_).tx_kicks, 1u);
    peer_gets(0, 4, 500);
}

TEST_F(Coalescing, WithoutCoalescingEverySendKicks)
{
    reopen(coalescing_config(net_.a(), false));
    afxdp_dev_info info;
    afxdp_dev_get_info(dev_.get(), &info);
    EXPECT_FALSE(info.coalesce_tx_kicks_requested);
    EXPECT_FALSE(info.coalesce_tx_kicks_in_use);
    EXPECT_STREQ(info.coalesce_tx_kicks_reason, "");
    std::vector<afxdp_rx_frame> held;
    from_peer(0, 4, &held);
    send_back(q_, &held);
    EXPECT_EQ(stats_of(q_).tx_kicks_deferred, 0u);
    EXPECT_EQ(stats_of(q_).tx_kicks, 1u);
    peer_gets(0, 4, 500);
}
