// Tier 2 (real kernel, root only): a port's registry of offloaded flows
// (afxdp-flows.h) with real devices: flows put again into each device the
// port opens, each packet XDP dropped told once across reopens and
// copies, OVS 3.7's copies and marks, and what a flush or a refused put
// leaves.

#include <gtest/gtest.h>

#include <utility>

#include "afxdp-flows.h"
#include "veth-test.hh"

using namespace afxdp_test;

namespace {

const uint32_t kUfid1[4] = {1, 2, 3, 4};
const uint32_t kUfid2[4] = {5, 6, 7, 8};
const uint32_t kUfid3[4] = {9, 10, 11, 12};

// A match on UDP flow 'flow' of udp_frame(): IPv4, UDP, source port.
afxdp_flow_match
udp_match(uint16_t flow)
{
    afxdp_flow_match m = {};
    m.key.dl_type = htons(0x0800);
    m.mask.dl_type = 0xffff;
    m.key.nw_proto = 17;
    m.mask.nw_proto = 0xff;
    m.key.tp_src = htons(flow);
    m.mask.tp_src = 0xffff;
    return m;
}

// The references the registry let go of, as dpif-netdev's callback would
// see them.
std::vector<std::pair<unsigned, void *>> unreferenced;

void
record_unref(unsigned pmd_id, void *reference)
{
    unreferenced.emplace_back(pmd_id, reference);
}

struct FlowsCloser {
    void operator()(afxdp_flows *f) const { afxdp_flows_destroy(f); }
};
using Flows = std::unique_ptr<afxdp_flows, FlowsCloser>;

class Registry : public Veth {
protected:
    void SetUp() override
    {
        Veth::SetUp();
        if (IsSkipped()) {
            return;
        }
        SKIP_WITHOUT_FAST_PATH_PROGRAM();
        unreferenced.clear();
        flows_.reset(afxdp_flows_create("p0", nullptr, nullptr));
        ASSERT_TRUE(flows_);
    }
    void TearDown() override
    {
        if (flows_) {
            afxdp_flows_detach(flows_.get());
        }
        flows_.reset();
        dev_.reset();
        Veth::TearDown();
    }

    // Opens the port's device with the fast path (after a close, if
    // 'again') and attaches the registry to it.
    void open(bool again = false)
    {
        afxdp_dev_config cfg = config(net_.a(), AFXDP_MODE_GENERIC);
        cfg.offload = true;
        cfg.port.fast_path = true;
        dev_ = again ? open_dev_after_close(cfg) : open_dev(cfg);
        ASSERT_TRUE(dev_);
        afxdp_fast_path_stats fp;
        afxdp_dev_get_fast_path(dev_.get(), &fp);
        ASSERT_TRUE(fp.active) << fp.reason;
        afxdp_flows_attach(flows_.get(), dev_.get());
    }
    // The port reopens: a new device, empty maps.
    void reopen()
    {
        afxdp_flows_detach(flows_.get());
        dev_.reset();
        open(true);
    }
    unsigned flows_in_maps()
    {
        afxdp_fast_path_stats fp;
        afxdp_dev_get_fast_path(dev_.get(), &fp);
        return fp.flows;
    }
    // Puts a drop of UDP flow 'flow', by 'copy' if any.
    int put_drop(const uint32_t ufid[4], uint16_t flow, uint32_t mark,
                 const afxdp_flow_copy *copy = nullptr,
                 void **previous = nullptr)
    {
        afxdp_flow_match m = udp_match(flow);
        afxdp_flow_action drop = {};
        drop.type = AFXDP_ACTION_DROP;
        return afxdp_flows_put(flows_.get(), ufid, &m, &drop, 1, mark, copy,
                               previous, nullptr);
    }
    // Sends 'n' frames of UDP flow 'flow' and waits until the device's
    // XDP count of 'ufid' is 'total'.
    void drop_in_xdp(const uint32_t ufid[4], uint16_t flow, uint32_t n,
                     uint64_t total)
    {
        for (uint32_t i = 0; i < n; i++) {
            ASSERT_TRUE(send_raw(net_.b(), udp_frame(flow, i)));
        }
        afxdp_flow_stats now = {};
        for (int i = 0; i < 200 && now.n_packets < total; i++) {
            ASSERT_EQ(afxdp_dev_flow_stats(dev_.get(), ufid, &now), 0);
            if (now.n_packets < total) {
                usleep(10000);
            }
        }
        ASSERT_EQ(now.n_packets, total);
    }
    // What a copy with 'token' is told now (the registry keeping it).
    uint64_t told(const uint32_t ufid[4], const void *token,
                  afxdp_flow_where *where = nullptr)
    {
        afxdp_flow_stats st = {};
        afxdp_flow_where w;
        EXPECT_EQ(afxdp_flows_stats(flows_.get(), ufid, token, nullptr, &st,
                                    &w), 0);
        if (where) {
            *where = w;
        }
        return st.n_packets;
    }

    Flows flows_;
    Dev dev_;
};

}  // namespace

TEST_F(Registry, AFlowGoesIntoEachDeviceThePortOpensAndIsToldOnce)
{
    // No device: nothing kept.
    EXPECT_EQ(put_drop(kUfid1, 1000, 7), EOPNOTSUPP);
    afxdp_flow_stats st;
    afxdp_flow_where where;
    EXPECT_EQ(afxdp_flows_stats(flows_.get(), kUfid1, nullptr, nullptr, &st,
                                &where), ENOENT);

    open();
    ASSERT_EQ(put_drop(kUfid1, 1000, 7), 0);
    EXPECT_EQ(flows_in_maps(), 1u);
    drop_in_xdp(kUfid1, 1000, 3, 3);
    // OVS 3.1 to 3.6 keep what each copy was told: the caller says.
    afxdp_flow_stats told = {};
    ASSERT_EQ(afxdp_flows_stats(flows_.get(), kUfid1, &told, &told, &told,
                                &where), 0);
    EXPECT_EQ(told.n_packets, 3u);
    EXPECT_EQ(where, AFXDP_FLOW_IN_XDP);

    drop_in_xdp(kUfid1, 1000, 1, 4);    // Read only as the port closes.
    reopen();
    EXPECT_TRUE(logged("info|p0: put 1 offloaded flows into the new XDP "
                       "fast path (0 failed)."));
    EXPECT_EQ(flows_in_maps(), 1u);
    drop_in_xdp(kUfid1, 1000, 2, 2);    // The new maps count from zero.
    ASSERT_EQ(afxdp_flows_stats(flows_.get(), kUfid1, &told, &told, &told,
                                &where), 0);
    EXPECT_EQ(told.n_packets, 6u) << "3 told, 1 before the reopen, 2 after";
    EXPECT_EQ(where, AFXDP_FLOW_IN_XDP);

    // Detached, nothing runs in XDP.
    afxdp_flows_detach(flows_.get());
    ASSERT_EQ(afxdp_flows_stats(flows_.get(), kUfid1, &told, &told, &told,
                                &where), 0);
    EXPECT_EQ(told.n_packets, 6u);
    EXPECT_EQ(where, AFXDP_FLOW_IN_OVS);
}

TEST_F(Registry, EachCopyIsToldItsShareAndTheFlowGoesWithItsLastCopy)
{
    open();
    int a, a2, b, ta, tb, nobody;
    const afxdp_flow_copy copy_a = {1, &a, &ta, record_unref};
    const afxdp_flow_copy copy_b = {2, &b, &tb, record_unref};
    void *previous = &nobody;
    ASSERT_EQ(put_drop(kUfid1, 1000, 0, &copy_a, &previous), 0);
    EXPECT_EQ(previous, nullptr);
    ASSERT_EQ(put_drop(kUfid1, 1000, 0, &copy_b, &previous), 0);
    EXPECT_EQ(previous, nullptr);
    EXPECT_EQ(flows_in_maps(), 1u);
    // The registry's first mark, each PMD's reference for it.
    EXPECT_EQ(afxdp_flows_marked(flows_.get(), 1, 1), &a);
    EXPECT_EQ(afxdp_flows_marked(flows_.get(), 1, 2), &b);
    EXPECT_EQ(afxdp_flows_marked(flows_.get(), 1, 3), nullptr);
    EXPECT_EQ(afxdp_flows_marked(flows_.get(), 2, 1), nullptr);

    // Each copy is told what no copy was told yet; a reader that is no
    // copy, no packets.
    drop_in_xdp(kUfid1, 1000, 4, 4);
    EXPECT_EQ(told(kUfid1, &ta), 4u);
    EXPECT_EQ(told(kUfid1, &tb), 0u);
    drop_in_xdp(kUfid1, 1000, 2, 6);
    EXPECT_EQ(told(kUfid1, &nobody), 0u);
    EXPECT_EQ(told(kUfid1, &tb), 2u);
    EXPECT_EQ(told(kUfid1, &ta), 4u);

    // PMD 1 replaces its flow: the old reference back to let go of, the
    // new one told from nothing.
    const afxdp_flow_copy copy_a2 = {1, &a2, &ta, record_unref};
    ASSERT_EQ(put_drop(kUfid1, 1000, 0, &copy_a2, &previous), 0);
    EXPECT_EQ(previous, &a);
    EXPECT_EQ(afxdp_flows_marked(flows_.get(), 1, 1), &a2);
    EXPECT_EQ(told(kUfid1, &ta), 0u);

    // Deleted copy by copy; the flow leaves the maps with the last.
    EXPECT_EQ(afxdp_flows_del(flows_.get(), kUfid1, &copy_a, nullptr),
              ENOENT) << "a reference no copy holds now";
    EXPECT_EQ(afxdp_flows_del(flows_.get(), kUfid1, &copy_a2, nullptr), 0);
    EXPECT_EQ(flows_in_maps(), 1u);
    EXPECT_EQ(afxdp_flows_del(flows_.get(), kUfid1, &copy_b, nullptr), 0);
    EXPECT_EQ(flows_in_maps(), 0u);
    EXPECT_EQ(afxdp_flows_del(flows_.get(), kUfid1, &copy_b, nullptr),
              ENOENT);
    EXPECT_TRUE(unreferenced.empty()) << "OVS lets go of what it deletes";
    EXPECT_EQ(afxdp_flows_marked(flows_.get(), 1, 2), nullptr);
}

TEST_F(Registry, AMarkIsNeverTheOneFreedLast)
{
    open();
    int r1, r2, r3, t;
    const afxdp_flow_copy c1 = {1, &r1, &t, nullptr};
    const afxdp_flow_copy c2 = {1, &r2, &t, nullptr};
    const afxdp_flow_copy c3 = {1, &r3, &t, nullptr};
    ASSERT_EQ(put_drop(kUfid1, 1000, 0, &c1), 0);
    ASSERT_EQ(put_drop(kUfid2, 2000, 0, &c2), 0);
    EXPECT_EQ(afxdp_flows_marked(flows_.get(), 2, 1), &r2);
    ASSERT_EQ(afxdp_flows_del(flows_.get(), kUfid2, &c2, nullptr), 0);
    ASSERT_EQ(put_drop(kUfid3, 3000, 0, &c3), 0);
    EXPECT_EQ(afxdp_flows_marked(flows_.get(), 2, 1), nullptr);
    EXPECT_EQ(afxdp_flows_marked(flows_.get(), 3, 1), &r3);
    EXPECT_EQ(afxdp_flows_marked(flows_.get(), 1, 1), &r1);
}

TEST_F(Registry, AFlushOrTheRegistrysEndLetsGoOfEveryCopysReference)
{
    open();
    int r1, r2, r3, t1, t2;
    const afxdp_flow_copy c1 = {1, &r1, &t1, record_unref};
    const afxdp_flow_copy c2 = {2, &r2, &t1, record_unref};
    const afxdp_flow_copy c3 = {1, &r3, &t2, record_unref};
    ASSERT_EQ(put_drop(kUfid1, 1000, 0, &c1), 0);
    ASSERT_EQ(put_drop(kUfid1, 1000, 0, &c2), 0);
    ASSERT_EQ(put_drop(kUfid2, 2000, 0, &c3), 0);
    EXPECT_EQ(flows_in_maps(), 2u);
    afxdp_flows_flush(flows_.get());
    EXPECT_EQ(flows_in_maps(), 0u);
    EXPECT_EQ(unreferenced.size(), 3u);
    EXPECT_EQ(afxdp_flows_in_maps(flows_.get(), nullptr, nullptr), 0u);

    unreferenced.clear();
    ASSERT_EQ(put_drop(kUfid1, 1000, 0, &c1), 0);
    afxdp_flows_detach(flows_.get());
    flows_.reset();
    ASSERT_EQ(unreferenced.size(), 1u);
    EXPECT_EQ(unreferenced[0], std::make_pair(1u, (void *) &r1));
}

TEST_F(Registry, ARefusedNewFlowIsNotKeptAndARefusedPutKeepsTheCount)
{
    open();
    afxdp_flow_match m = udp_match(1000);
    afxdp_flow_action drop = {};
    drop.type = AFXDP_ACTION_DROP;
    m.unparsed_field = "tunnel";
    EXPECT_EQ(afxdp_flows_put(flows_.get(), kUfid1, &m, &drop, 1, 7, nullptr,
                              nullptr, nullptr), EOPNOTSUPP);
    EXPECT_EQ(afxdp_flows_in_maps(flows_.get(), nullptr, nullptr), 0u);
    afxdp_flow_stats told = {};
    afxdp_flow_where where;
    EXPECT_EQ(afxdp_flows_stats(flows_.get(), kUfid1, &told, &told, &told,
                                &where), ENOENT);

    ASSERT_EQ(put_drop(kUfid1, 1000, 7), 0);
    drop_in_xdp(kUfid1, 1000, 3, 3);
    // Put again with what XDP cannot take: kept for OVS, out of the maps,
    // its count read a last time.
    EXPECT_EQ(afxdp_flows_put(flows_.get(), kUfid1, &m, &drop, 1, 7, nullptr,
                              nullptr, nullptr), 0);
    EXPECT_EQ(flows_in_maps(), 0u);
    ASSERT_EQ(afxdp_flows_stats(flows_.get(), kUfid1, &told, &told, &told,
                                &where), 0);
    EXPECT_EQ(told.n_packets, 3u);
    EXPECT_EQ(where, AFXDP_FLOW_IN_OVS);

    ASSERT_EQ(put_drop(kUfid1, 1000, 7), 0);
    drop_in_xdp(kUfid1, 1000, 2, 2);
    ASSERT_EQ(afxdp_flows_stats(flows_.get(), kUfid1, &told, &told, &told,
                                &where), 0);
    EXPECT_EQ(told.n_packets, 5u);
    // Its ufid, once, to whoever counts the flows in the maps.
    std::vector<std::array<uint32_t, 4>> seen;
    EXPECT_EQ(afxdp_flows_in_maps(
                  flows_.get(),
                  [](const uint32_t u[4], void *aux) {
                      static_cast<decltype(seen) *>(aux)->push_back(
                          {u[0], u[1], u[2], u[3]});
                  },
                  &seen), 1u);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0], (std::array<uint32_t, 4>{1, 2, 3, 4}));
}
