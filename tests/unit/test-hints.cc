// Tier 2 (real kernel, root only): packet hints on a veth pair.  In
// native mode each packet comes with the driver's RSS hash (one per flow),
// and a VLAN tag the sender offloaded (a tc program on B, tc-vlan.hh) is
// back in the frame; generic mode and options:rx_hints=false have
// neither, and say why.

#include <gtest/gtest.h>

#include "veth-test.hh"

using namespace afxdp_test;

// --- 11. Packet hints -----------------------------------------------------


TEST_F(Hints, NativeModeHandsOverTheDriversHashOnePerFlow)
{
    afxdp_dev_info info;
    Dev dev = open(AFXDP_MODE_NATIVE, true, &info);
    ASSERT_TRUE(dev);
    if (!info.rx_hash) {
        GTEST_SKIP() << "no RX hash here: " << info.rx_hash_reason;
    }
    EXPECT_STREQ(info.rx_hash_reason, "");
    afxdp_queue *q = afxdp_dev_queue(dev.get(), 0);

    const uint16_t kFlows = 8;
    const uint32_t n = 64;
    for (uint32_t i = 0; i < n; i++) {
        ASSERT_TRUE(send_raw(net_.b(), udp_frame(1000 + i % kFlows, i)));
    }
    std::vector<Received> got = receive_copies(q, n);
    ASSERT_EQ(got.size(), size_t(n));
    std::map<uint16_t, uint32_t> hash_of_flow;
    for (const Received &r : got) {
        int64_t seq = udp_seq_of(r.data.data(), r.data.size());
        ASSERT_GE(seq, 0) << "not a test frame";
        ASSERT_TRUE(r.has_hash) << "frame " << seq;
        uint16_t flow = uint16_t(1000 + seq % kFlows);
        auto it = hash_of_flow.emplace(flow, r.hash).first;
        EXPECT_EQ(it->second, r.hash) << "flow " << flow << " changed hash";
    }
    std::set<uint32_t> hashes;
    for (const auto &fh : hash_of_flow) {
        hashes.insert(fh.second);
    }
    EXPECT_EQ(hashes.size(), size_t(kFlows)) << "flows share a hash";
    afxdp_queue_stats st;
    afxdp_queue_get_stats(q, &st);
    EXPECT_EQ(st.rx_hash, st.rx_packets);
    expect_frames_add_up(q, 0);
}

TEST_F(Hints, NativeModePutsAnOffloadedVlanTagBackIntoTheFrame)
{
    // The tag as the sender's driver would offload it: priority and DEI
    // bits are the tag's too, and 802.1ad keeps its own TPID.
    struct Tag {
        uint16_t tpid, tci;
    } tags[] = {
        {0x8100, kVlan},
        {0x8100, 5 << 13 | 0x1000 | 4094},   // PCP 5, DEI, VID 4094.
        {0x88a8, 3 << 13 | 100},             // 802.1ad, PCP 3.
    };
    for (const Tag &tag : tags) {
        SCOPED_TRACE(testing::Message() << std::hex << "TPID " << tag.tpid
                                        << " TCI " << tag.tci);
        ASSERT_EQ(afxdp_test::tc_vlan_attach(net_.b(), tag.tci, tag.tpid),
                  "");
        afxdp_dev_info info;
        Dev dev = open(AFXDP_MODE_NATIVE, true, &info);
        ASSERT_TRUE(dev);
        if (!info.rx_vlan) {
            GTEST_SKIP() << "no RX VLAN tag here: " << info.rx_vlan_reason;
        }
        afxdp_queue *q = afxdp_dev_queue(dev.get(), 0);

        // Frames of every length from 60 bytes on, each tagged on its way
        // out of B, outside the frame.
        const uint32_t n = 40;
        PacketSocket peer(net_.b(), 0);
        ASSERT_EQ(peer.error(), "");
        ASSERT_EQ(peer.send_frames(0, n), n);
        std::vector<Received> got = receive_copies(q, n);
        ASSERT_EQ(got.size(), size_t(n));
        for (uint32_t i = 0; i < n; i++) {
            std::vector<uint8_t> &f = got[i].data;
            ASSERT_GE(f.size(), 18u);
            // The TPID and the whole TCI, right after the MAC addresses...
            EXPECT_EQ((f[12] << 8 | f[13]), tag.tpid);
            EXPECT_EQ((f[14] << 8 | f[15]), tag.tci);
            // ...and the frame as sent around it.
            f.erase(f.begin() + 12, f.begin() + 16);
            EXPECT_TRUE(is_frame(f.data(), f.size(), i));
        }
        afxdp_queue_stats st;
        afxdp_queue_get_stats(q, &st);
        EXPECT_EQ(st.rx_vlan_restored, uint64_t(n));
        EXPECT_EQ(st.rx_vlan_lost, 0u);
        expect_frames_add_up(q, 0);
        dev.reset();
        ASSERT_EQ(afxdp_test::tc_vlan_detach(net_.b()), "");
    }
}

TEST_F(Hints, GenericModeHasNoneAndSaysWhy)
{
    afxdp_dev_info info;
    Dev dev = open(AFXDP_MODE_GENERIC, true, &info);
    ASSERT_TRUE(dev);
    EXPECT_FALSE(info.rx_hash);
    EXPECT_FALSE(info.rx_vlan);
    EXPECT_NE(std::strstr(info.rx_hash_reason, "generic"), nullptr)
        << info.rx_hash_reason;
    EXPECT_NE(std::strstr(info.rx_vlan_reason, "generic"), nullptr)
        << info.rx_vlan_reason;
    afxdp_queue *q = afxdp_dev_queue(dev.get(), 0);
    ASSERT_TRUE(send_raw(net_.b(), udp_frame(1000, 0)));
    std::vector<Received> got = receive_copies(q, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_FALSE(got[0].has_hash);
    afxdp_queue_stats st;
    afxdp_queue_get_stats(q, &st);
    EXPECT_EQ(st.rx_hash, 0u);
}

TEST_F(Hints, OptionOffLeavesThemOutInNativeModeToo)
{
    afxdp_dev_info info;
    Dev dev = open(AFXDP_MODE_NATIVE, false, &info);
    ASSERT_TRUE(dev);
    EXPECT_FALSE(info.rx_hash);
    EXPECT_FALSE(info.rx_vlan);
    EXPECT_STREQ(info.rx_hash_reason, "options:rx_hints is false");
    afxdp_queue *q = afxdp_dev_queue(dev.get(), 0);
    ASSERT_TRUE(send_raw(net_.b(), udp_frame(1000, 0)));
    std::vector<Received> got = receive_copies(q, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_FALSE(got[0].has_hash);
    EXPECT_EQ(udp_seq_of(got[0].data.data(), got[0].data.size()), 0);
}

TEST_F(Hints, TaggedJumboFramesArriveWholeWithTheirTag)
{
    for (const char *end : {net_.a(), net_.b()}) {
        ASSERT_EQ(net_.link_set(end, "mtu 9000"), "");
    }
    ASSERT_EQ(afxdp_test::tc_vlan_attach(net_.b(), kVlan), "");
    if (skip_without_multi_buffer(config(net_.a(), AFXDP_MODE_NATIVE))) {
        return;
    }
    afxdp_dev_info info;
    Dev dev = open(AFXDP_MODE_NATIVE, true, &info);
    ASSERT_TRUE(dev);
    if (!info.rx_vlan || !info.multi_buffer) {
        GTEST_SKIP() << "needs the RX VLAN tag (" << info.rx_vlan_reason
                     << ") and multi-buffer (" << info.multi_buffer_reason
                     << ")";
    }
    afxdp_queue *q = afxdp_dev_queue(dev.get(), 0);
    afxdp_pool *pool = afxdp_queue_pool(q);

    // Each length of kJumboLens, tagged outside the frame: the tag goes
    // into the first of the packet's frames.
    const uint32_t n = sizeof kJumboLens / sizeof kJumboLens[0];
    PacketSocket peer(net_.b(), 0);
    ASSERT_EQ(peer.error(), "");
    ASSERT_EQ(peer.send_frames(kJumbo, n), n);
    uint32_t seq = kJumbo;
    for (int i = 0; i < 2000 && seq < kJumbo + n; i++) {
        afxdp_rx_frame frames[32];
        int error = 0;
        unsigned events = 0;
        size_t k = afxdp_queue_recv(q, frames, 32, nullptr, &events, &error);
        for (size_t j = 0; j < k; j += frames[j].n_frames) {
            std::vector<uint8_t> f(frames[j].len);
            if (frames[j].n_frames > 1) {
                afxdp_rx_gather(pool, &frames[j], f.data());
            } else {
                std::memcpy(f.data(), frames[j].data, f.size());
                afxdp_pool_put(pool, frames[j].data);
            }
            ASSERT_EQ(f.size(), frame_len(seq) + 4) << "frame " << seq;
            EXPECT_EQ((f[12] << 8 | f[13]), 0x8100) << "frame " << seq;
            EXPECT_EQ((f[14] << 8 | f[15]), kVlan) << "frame " << seq;
            f.erase(f.begin() + 12, f.begin() + 16);
            EXPECT_TRUE(is_frame(f.data(), f.size(), seq));
            seq++;
        }
        if (k == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    EXPECT_EQ(seq, kJumbo + n) << "packets missing";
    afxdp_queue_stats st;
    afxdp_queue_get_stats(q, &st);
    EXPECT_EQ(st.rx_vlan_restored, uint64_t(n));
    EXPECT_GT(st.rx_multi_frame, 0u);
    expect_frames_add_up(q, 0);
}
