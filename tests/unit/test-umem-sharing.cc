// Tier 2 (real kernel, root only): one UMEM shared by devices on two
// veths, frames forwarded in place or copied, and a sharer's close.

#include <gtest/gtest.h>

#include "veth-test.hh"

using namespace afxdp_test;

// --- 9. One UMEM shared by two devices --------------------------------------
//
// Both ends of the pair are opened, sharing one pool: a frame received on
// one end is sent from the other by address, arrives intact, and every
// frame of the shared pool stays accounted for, including when one device
// closes while the other keeps running.

namespace {

afxdp_dev_config
shared_config(const char *ifname, bool in_place = true)
{
    afxdp_dev_config cfg = config(ifname, AFXDP_MODE_GENERIC);
    cfg.port.sharing = in_place ? AFXDP_SHARE_IN_PLACE : AFXDP_SHARE_AUTO;
    return cfg;
}

// Frames of the pool 'a' and 'b' share, wherever they are.
void
expect_shared_frames_add_up(afxdp_queue *a, afxdp_queue *b, uint32_t in_app)
{
    afxdp_frame_counts ca, cb;
    afxdp_queue_get_frames(a, &ca);
    afxdp_queue_get_frames(b, &cb);
    EXPECT_EQ(ca.total, cb.total);
    EXPECT_EQ(ca.in_app, in_app);
    EXPECT_EQ(ca.free + ca.fill + ca.tx + ca.tx_kept + cb.fill + cb.tx
              + cb.tx_kept + ca.in_app, ca.total)
        << "free " << ca.free << " fill " << ca.fill << "+" << cb.fill
        << " tx " << ca.tx << "+" << cb.tx << " kept " << ca.tx_kept << "+"
        << cb.tx_kept << " in_app " << ca.in_app;
}

}  // namespace

TEST_F(Veth, TwoDevicesShareOneUmem)
{
    Dev a = open_dev(shared_config(net_.a()));
    // Best-effort tries zero-copy first, which veth refuses at bind: that
    // is no reason to give up sharing.
    afxdp_dev_config cb = shared_config(net_.b());
    cb.port.mode = AFXDP_MODE_BEST_EFFORT;
    Dev b = open_dev(cb);
    ASSERT_TRUE(a && b);
    afxdp_dev_info ia, ib;
    afxdp_dev_get_info(a.get(), &ia);
    afxdp_dev_get_info(b.get(), &ib);
    EXPECT_NE(ia.umem_id, 0u);
    EXPECT_EQ(ia.umem_id, ib.umem_id);
    EXPECT_EQ(ia.umem_devices, 2u);
    // Room for both: twice what the first device asked for.
    EXPECT_EQ(ia.umem_frames, 2 * 1024u);
    EXPECT_STREQ(ia.umem_share_reason, "");
    EXPECT_EQ(afxdp_queue_pool(afxdp_dev_queue(a.get(), 0)),
              afxdp_queue_pool(afxdp_dev_queue(b.get(), 0)));

    // A third device does not fit: it gets a pool of its own.  (The
    // namespace's loopback, at an MTU one frame holds, as every kernel
    // takes it: its own 64 KiB needs multi-buffer, Linux 6.6.)
    ASSERT_EQ(net_.link_set("lo", "mtu 1500"), "");
    afxdp_dev_config lo = shared_config("lo");
    Dev c = open_dev(lo);
    ASSERT_TRUE(c);
    afxdp_dev_info ic;
    afxdp_dev_get_info(c.get(), &ic);
    EXPECT_NE(ic.umem_id, ia.umem_id);
    EXPECT_EQ(ic.umem_devices, 1u);

    // Without sharing, a pool of exactly what was asked for.
    c.reset();
    afxdp_dev_config own = config("lo", AFXDP_MODE_GENERIC);
    c = open_dev(own);
    ASSERT_TRUE(c);
    afxdp_dev_get_info(c.get(), &ic);
    EXPECT_NE(ic.umem_id, ia.umem_id);
    EXPECT_EQ(ic.umem_frames, 1024u);

    // The last device gone, the pool goes too.
    b.reset();
    afxdp_dev_get_info(a.get(), &ia);
    EXPECT_EQ(ia.umem_devices, 1u);
    a.reset();
    c.reset();
    EXPECT_EQ(afxdp_retired_pools(), 0u);
}

TEST_F(Veth, ForwardsInPlaceBetweenDevicesSharingAUmem)
{
    const uint32_t n = 100;
    Dev a = open_dev(shared_config(net_.a()));
    Dev b = open_dev(shared_config(net_.b()));
    ASSERT_TRUE(a && b);
    afxdp_queue *qa = afxdp_dev_queue(a.get(), 0);
    afxdp_queue *qb = afxdp_dev_queue(b.get(), 0);
    afxdp_pool *pool = afxdp_queue_pool(qa);

    // Copied out of A, received on B.
    NumberedPackets numbered(n);
    unsigned events = 0;
    int error = 0;
    EXPECT_EQ(afxdp_queue_send(qa, numbered.pkts.data(), n, &events,
                               &error), 0u);
    std::vector<afxdp_rx_frame> held;
    receive(qb, n, &held);
    ASSERT_EQ(held.size(), n);
    expect_shared_frames_add_up(qa, qb, n);

    // Sent back out of A in place: B receives the same bytes, in order,
    // in the very frames they left from.
    std::vector<afxdp_tx_packet> back;
    std::vector<uint32_t> sent_frames;
    for (const afxdp_rx_frame &f : held) {
        back.push_back({f.data, f.len, pool});
        sent_frames.push_back(f.index);
    }
    EXPECT_EQ(afxdp_queue_send(qa, back.data(), n, &events, &error), 0u);
    EXPECT_EQ(error, 0) << std::strerror(error);
    std::vector<afxdp_rx_frame> again;
    receive(qb, n, &again);
    ASSERT_EQ(again.size(), n);
    for (uint32_t i = 0; i < n; i++) {
        EXPECT_TRUE(is_frame(again[i].data, again[i].len, i));
    }
    afxdp_queue_stats st;
    afxdp_queue_get_stats(qa, &st);
    EXPECT_EQ(st.tx_packets, 2 * n);
    EXPECT_EQ(st.tx_in_place, n);
    // The send took the frames: the caller holds only the second batch.
    EXPECT_EQ(afxdp_queue_send(qa, nullptr, 0, &events, &error), 0u);
    expect_shared_frames_add_up(qa, qb, n);

    EXPECT_TRUE(afxdp_queue_sends_in_place(qa));

    // A packet of another pool is copied, and stays the caller's (the
    // loopback at an MTU every kernel takes, as above).
    ASSERT_EQ(net_.link_set("lo", "mtu 1500"), "");
    afxdp_dev_config own = config("lo", AFXDP_MODE_GENERIC);
    Dev c = open_dev(own);
    ASSERT_TRUE(c);
    afxdp_queue *qc = afxdp_dev_queue(c.get(), 0);
    afxdp_tx_packet one = {again[0].data, again[0].len, pool};
    EXPECT_EQ(afxdp_queue_send(qc, &one, 1, &events, &error), 0u);
    afxdp_queue_get_stats(qc, &st);
    EXPECT_EQ(st.tx_in_place, 0u);
    expect_shared_frames_add_up(qa, qb, n);

    for (const afxdp_rx_frame &f : again) {
        afxdp_pool_put(pool, f.data);
    }
    expect_shared_frames_add_up(qa, qb, 0);
}

TEST_F(Veth, ClosingOneSharerReturnsTheFramesItsRingsHeld)
{
    Dev a = open_dev(shared_config(net_.a()));
    Dev b = open_dev(shared_config(net_.b()));
    ASSERT_TRUE(a && b);
    afxdp_queue *qa = afxdp_dev_queue(a.get(), 0);
    afxdp_queue *qb = afxdp_dev_queue(b.get(), 0);

    // Traffic both ways leaves frames in every ring of both sockets.
    NumberedPackets numbered(50);
    unsigned events = 0;
    int error = 0;
    afxdp_queue_send(qa, numbered.pkts.data(), 50, &events, &error);
    afxdp_queue_send(qb, numbered.pkts.data(), 50, &events, &error);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));

    afxdp_frame_counts c, cb;
    afxdp_queue_get_frames(qa, &c);
    uint32_t total = c.total;
    ASSERT_GT(c.fill, 0u);
    // B keeps some of the frames its sends completed in, for its next
    // sends: they must come back with its rings'.
    afxdp_queue_get_frames(qb, &cb);
    EXPECT_GT(cb.tx_kept, 0u);
    b.reset();   // B's fill, RX, TX and completion rings: all gone.

    afxdp_queue_get_frames(qa, &c);
    EXPECT_EQ(c.free + c.fill + c.tx + c.tx_kept + c.in_app, total)
        << "free " << c.free << " fill " << c.fill << " tx " << c.tx
        << " kept " << c.tx_kept;

    // B opened again joins the same pool and works.
    b = open_dev_after_close(shared_config(net_.b()));
    ASSERT_TRUE(b);
    qb = afxdp_dev_queue(b.get(), 0);
    afxdp_dev_info ia, ib;
    afxdp_dev_get_info(a.get(), &ia);
    afxdp_dev_get_info(b.get(), &ib);
    EXPECT_EQ(ia.umem_id, ib.umem_id);
    EXPECT_EQ(afxdp_queue_send(qa, numbered.pkts.data(), 50, &events,
                               &error), 0u);
    std::vector<afxdp_rx_frame> held;
    receive(qb, 50, &held);
    EXPECT_EQ(held.size(), 50u);
    for (const afxdp_rx_frame &f : held) {
        afxdp_pool_put(afxdp_queue_pool(qb), f.data);
    }
    expect_shared_frames_add_up(qa, qb, 0);
}

TEST_F(Veth, SharedFramesAreCopiedInCopyModeUnlessAskedOtherwise)
{
    // Copy mode, in_place_copy_mode off: a frame of the shared pool is
    // copied into another frame, and stays the caller's.
    Dev a = open_dev(shared_config(net_.a(), false));
    Dev b = open_dev(shared_config(net_.b(), false));
    ASSERT_TRUE(a && b);
    afxdp_queue *qa = afxdp_dev_queue(a.get(), 0);
    afxdp_queue *qb = afxdp_dev_queue(b.get(), 0);
    afxdp_pool *pool = afxdp_queue_pool(qa);
    EXPECT_EQ(pool, afxdp_queue_pool(qb));
    EXPECT_FALSE(afxdp_queue_sends_in_place(qa));

    NumberedPackets numbered(20);
    unsigned events = 0;
    int error = 0;
    afxdp_queue_send(qa, numbered.pkts.data(), 20, &events, &error);
    std::vector<afxdp_rx_frame> held;
    receive(qb, 20, &held);
    ASSERT_EQ(held.size(), 20u);
    std::vector<afxdp_tx_packet> back;
    for (const afxdp_rx_frame &f : held) {
        back.push_back({f.data, f.len, pool});
    }
    EXPECT_EQ(afxdp_queue_send(qa, back.data(), 20, &events, &error), 0u);
    std::vector<afxdp_rx_frame> again;
    receive(qb, 20, &again);
    ASSERT_EQ(again.size(), 20u);
    for (uint32_t i = 0; i < 20; i++) {
        EXPECT_TRUE(is_frame(again[i].data, again[i].len, i));
        EXPECT_TRUE(is_frame(held[i].data, held[i].len, i))
            << "the caller's frame is untouched";
    }
    afxdp_queue_stats st;
    afxdp_queue_get_stats(qa, &st);
    EXPECT_EQ(st.tx_in_place, 0u);
    EXPECT_EQ(afxdp_queue_send(qa, nullptr, 0, &events, &error), 0u);
    expect_shared_frames_add_up(qa, qb, 40);
    for (const afxdp_rx_frame &f : held) {
        afxdp_pool_put(pool, f.data);
    }
    for (const afxdp_rx_frame &f : again) {
        afxdp_pool_put(pool, f.data);
    }
    expect_shared_frames_add_up(qa, qb, 0);
}
