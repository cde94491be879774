// Tier 2 (real kernel, root only): what a port shows its operator
// (afxdp-report.h) from a real device: its status keys in order, reasons
// only where there are some, why the fast path is off, the counters'
// names, the UMEM's frames adding up, and a program another process
// removed said once.

#include <gtest/gtest.h>

#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <net/if.h>

#include <map>
#include <utility>

#include "afxdp-report.h"
#include "veth-test.hh"

using namespace afxdp_test;

namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

void
add_pair(void *aux, const char *key, const char *value)
{
    static_cast<Pairs *>(aux)->emplace_back(key ? key : "", value);
}

Pairs
status_of(afxdp_dev *d, const char *offload_off)
{
    Pairs p;
    afxdp_dev_status(d, offload_off, add_pair, &p);
    return p;
}

std::string
value_of(const Pairs &p, const std::string &key)
{
    for (const auto &kv : p) {
        if (kv.first == key) {
            return kv.second;
        }
    }
    return "(none)";
}

class Report : public Veth {
protected:
    Dev open(bool offload, bool opt_in = true)
    {
        afxdp_dev_config cfg = config(net_.a(), AFXDP_MODE_GENERIC);
        cfg.offload = offload;
        cfg.port.fast_path = opt_in;
        return open_dev(cfg);
    }
};

}  // namespace

TEST_F(Report, TheStatusHasItsKeysInOrderAndReasonsOnlyWhereThereAreSome)
{
    Dev d = open(false);
    ASSERT_TRUE(d);
    afxdp_dev_info info;
    afxdp_dev_get_info(d.get(), &info);
    const Pairs p = status_of(d.get(), "other_config:hw-offload is not true");

    std::vector<std::string> keys;
    for (const auto &kv : p) {
        keys.push_back(kv.first);
    }
    std::vector<std::string> want = {
        "xdp_mode", "xdp-mode", "zero_copy", "use_need_wakeup",
        "need_wakeup_in_use"};
    if (info.need_wakeup_reason[0]) {
        want.push_back("need_wakeup_reason");
    }
    for (const char *k : {"n_rxq", "ring_size", "umem_frames", "umem_id",
                          "umem_total_frames", "umem_shared_by",
                          "tx_in_place", "coalesce_tx_kicks"}) {
        want.push_back(k);
    }
    if (info.coalesce_tx_kicks_reason[0]) {
        want.push_back("coalesce_tx_kicks_reason");
    }
    want.push_back("multi_buffer");
    if (info.multi_buffer_reason[0]) {
        want.push_back("multi_buffer_reason");
    }
    want.push_back("max_mtu");
    want.push_back("rx_hash");
    if (info.rx_hash_reason[0]) {
        want.push_back("rx_hash_reason");
    }
    want.push_back("rx_vlan");
    if (info.rx_vlan_reason[0]) {
        want.push_back("rx_vlan_reason");
    }
    want.push_back("rx_csum_finish");
    want.push_back("rx_segment");
    if (info.rx_segment_reason[0]) {
        want.push_back("rx_segment_reason");
    }
    for (const char *k : {"xdp_prog_id", "xdp_prog_attached", "xdp_fast_path",
                          "xdp_fast_path_reason"}) {
        want.push_back(k);
    }
    EXPECT_EQ(keys, want);
    EXPECT_EQ(value_of(p, "xdp_mode"), "generic");
    // A veth in generic mode: its peer's GSO packets are cut where a
    // frame can take them whole, and the port says why not elsewhere.
    EXPECT_EQ(value_of(p, "rx_segment"), info.multi_buffer ? "true" : "false");
    EXPECT_EQ(info.rx_segment_reason[0] != 0, !info.multi_buffer);
    EXPECT_EQ(value_of(p, "n_rxq"), "1");
    EXPECT_EQ(value_of(p, "umem_frames"), "1024");
    EXPECT_EQ(value_of(p, "umem_shared_by"), "1");
    EXPECT_EQ(value_of(p, "xdp_prog_id"), std::to_string(info.prog_id));
    EXPECT_EQ(value_of(p, "xdp_prog_attached"), "true");
    EXPECT_EQ(value_of(p, "xdp_fast_path"), "false");
    EXPECT_EQ(value_of(p, "xdp_fast_path_reason"),
              "other_config:hw-offload is not true");
}

TEST_F(Report, TheFastPathSaysWhyItIsOffOrWhatItDoes)
{
    {
        // Offload on, the port opted out.
        Dev d = open(true, false);
        ASSERT_TRUE(d);
        EXPECT_EQ(value_of(status_of(d.get(), nullptr),
                           "xdp_fast_path_reason"),
                  "options:xdp_fast_path is false");
    }
    SKIP_WITHOUT_FAST_PATH_PROGRAM();
    afxdp_dev_config cfg = config(net_.a(), AFXDP_MODE_GENERIC);
    cfg.offload = true;
    Dev d = open_dev_after_close(cfg);
    ASSERT_TRUE(d);
    const Pairs p = status_of(d.get(), nullptr);
    EXPECT_EQ(value_of(p, "xdp_fast_path"), "true");
    EXPECT_EQ(value_of(p, "xdp_fast_path_reason"), "(none)");
    afxdp_fast_path_stats fp;
    afxdp_dev_get_fast_path(d.get(), &fp);
    EXPECT_EQ(value_of(p, "xdp_flow_marks"), fp.marks ? "true" : "false");
    EXPECT_EQ(value_of(p, "xdp_flow_marks_reason"),
              fp.marks ? "(none)" : fp.marks_reason);
    EXPECT_EQ(value_of(p, "xdp_redirect_targets"), "(none)");
    EXPECT_EQ(value_of(p, "xdp_fast_path_tc"), fp.tc ? "true" : "false");
    EXPECT_EQ(value_of(p, "xdp_fast_path_tc_reason"),
              fp.tc ? "(none)" : fp.tc_reason);

    afxdp_umem_frames u = {};
    Pairs show;
    afxdp_dev_show(d.get(), nullptr, &u, add_pair, &show);
    ASSERT_EQ(show.size(), 1u);
    const std::string &text = show[0].second;
    EXPECT_NE(text.find("\n  xdp fast path: on, 0 flows, 0 masks, 0 puts "
                        "failed\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\n    redirect targets: none\n"), std::string::npos);
    EXPECT_NE(text.find(fp.tc ? "\n    tc half: on (" : "\n    tc half: off: "),
              std::string::npos) << text;
    EXPECT_NE(text.find("\n    refused_after_drop:"), std::string::npos);
    EXPECT_NE(text.find("\n  queue 0:\n"), std::string::npos);
}

TEST_F(Report, TheUmemsFramesAddUpAndEachQueueHasItsCounters)
{
    Dev d = open(false);
    ASSERT_TRUE(d);
    afxdp_dev_info info;
    afxdp_dev_get_info(d.get(), &info);
    ASSERT_TRUE(send_raw(net_.b(), udp_frame(1, 1)));
    ASSERT_EQ(receive_copies(afxdp_dev_queue(d.get(), 0), 1).size(), 1u);

    afxdp_umem_frames u = {};
    u.umem_id = info.umem_id + 1;       // Another UMEM: nothing of ours.
    afxdp_umem_frames_add(&u, d.get());
    EXPECT_EQ(u.total, 0u);
    EXPECT_EQ(u.in_kernel, 0u);
    u = {};
    u.umem_id = info.umem_id;
    afxdp_umem_frames_add(&u, d.get());
    EXPECT_EQ(u.total, info.umem_frames);
    EXPECT_GT(u.in_kernel, 0u) << "the fill ring has frames";
    EXPECT_EQ(u.free + u.in_kernel + u.kept + u.in_ovs, u.total);

    std::map<std::string, uint64_t> counters;
    afxdp_dev_counters(
        d.get(),
        [](void *aux, const char *name, uint64_t value) {
            (*static_cast<std::map<std::string, uint64_t> *>(aux))[name]
                = value;
        },
        &counters);
    EXPECT_LE(counters.size(), size_t(AFXDP_DEV_COUNTERS_PER_QUEUE));
    EXPECT_EQ(counters["xsk_queue_0_rx_packets"], 1u);
    EXPECT_EQ(counters.count("xsk_queue_0_rx_dropped"), 1u)
        << "the kernel's XDP_STATISTICS";
    EXPECT_EQ(counters.count("xsk_queue_1_rx_packets"), 0u);
}

TEST_F(Report, AProgramAnotherProcessRemovedIsSaidOnce)
{
    Dev d = open(false);
    ASSERT_TRUE(d);
    EXPECT_FALSE(afxdp_dev_prog_lost(d.get()));
    // Another process takes the program off the interface.
    int ifindex = int(if_nametoindex(net_.a()));
    ASSERT_EQ(bpf_xdp_detach(ifindex, XDP_FLAGS_SKB_MODE, nullptr), 0);
    allow_log("our XDP program is no longer attached");
    EXPECT_TRUE(afxdp_dev_prog_lost(d.get()));
    EXPECT_FALSE(afxdp_dev_prog_lost(d.get()));
    EXPECT_TRUE(logged(std::string("warn|") + net_.a() + ": our XDP program "
                       "is no longer attached (another process detached or "
                       "replaced it): the port receives nothing.  Change any "
                       "of its options, or delete and add it, to attach it "
                       "again."));
}
