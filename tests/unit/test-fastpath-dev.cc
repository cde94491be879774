// Tier 2 (real kernel, root only): the XDP fast path on a device: flows
// dropped, marked or redirected in XDP, metadata only the kernel wrote,
// counts across refused puts, redirect targets and what the kernel says
// of them.

#include <gtest/gtest.h>

#include "veth-test.hh"

using namespace afxdp_test;

// --- 12. The XDP fast path ------------------------------------------------
//
// Flows put through the C API run in the fast path's program on real
// frames from the peer: what XDP drops never reaches the socket, what it
// does not handle does, a partially offloaded flow's packets come with
// its mark, and every refusal leaves the maps without the flow.

namespace {

// A match on UDP flow 'flow' of udp_frame(): IPv4, UDP, source port.
afxdp_flow_match
udp_flow_match(uint16_t flow, uint16_t dst_port_mask = 0)
{
    afxdp_flow_match m = {};
    m.key.dl_type = htons(0x0800);
    m.mask.dl_type = 0xffff;
    m.key.nw_proto = 17;
    m.mask.nw_proto = 0xff;
    m.key.tp_src = htons(flow);
    m.mask.tp_src = 0xffff;
    m.key.tp_dst = htons(9) & dst_port_mask;
    m.mask.tp_dst = dst_port_mask;
    return m;
}

afxdp_flow_action
action_of(afxdp_flow_action_type type, const char *other = nullptr)
{
    afxdp_flow_action a = {};
    a.type = type;
    if (other) {
        a.other = other;
    }
    return a;
}

std::string
prog_name(uint32_t id)
{
    int fd = bpf_prog_get_fd_by_id(id);
    bpf_prog_info info = {};
    uint32_t len = sizeof info;
    std::string name = fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len)
                       ? info.name : "?";
    if (fd >= 0) {
        close(fd);
    }
    return name;
}

class FastPathDev : public Veth {
protected:
    Dev open(afxdp_xdp_mode mode, bool offload = true, bool opt_in = true)
    {
        afxdp_dev_config cfg = config(net_.a(), mode);
        cfg.offload = offload;
        cfg.port.fast_path = opt_in;
        Dev d = open_dev(cfg);
        if (d) {
            afxdp_dev_get_fast_path(d.get(), &fp_);
            afxdp_dev_get_info(d.get(), &info_);
        }
        return d;
    }
    void refresh(const Dev &d) { afxdp_dev_get_fast_path(d.get(), &fp_); }
    // Puts a drop of UDP flow 'flow' (udp_flow_match): the C API's answer.
    int put_drop(const Dev &d, const uint32_t ufid[4], uint16_t flow)
    {
        afxdp_flow_match m = udp_flow_match(flow);
        afxdp_flow_action drop = action_of(AFXDP_ACTION_DROP);
        afxdp_offload_refusal why;
        return afxdp_dev_flow_put(d.get(), ufid, &m, &drop, 1, 1, &why);
    }
    // Sends 'n' frames of each flow in 'flows' from the peer; returns what
    // reached the socket within a second (or once 'want' came).
    std::vector<Received> exchange(afxdp_queue *q,
                                   std::initializer_list<uint16_t> flows,
                                   uint32_t n, size_t want)
    {
        for (uint32_t i = 0; i < n; i++) {
            for (uint16_t f : flows) {
                EXPECT_TRUE(send_raw(net_.b(), udp_frame(f, i)));
            }
        }
        return receive_copies(q, want, 1000);
    }

    afxdp_fast_path_stats fp_;
    afxdp_dev_info info_;
};

const uint32_t kUfid1[4] = {1, 2, 3, 4};
const uint32_t kUfid2[4] = {5, 6, 7, 8};

}  // namespace

TEST_F(FastPathDev, WithoutOffloadOrOptedOutThePortRunsThePlainProgram)
{
    for (bool offload : {false, true}) {
        Dev dev = open(AFXDP_MODE_GENERIC, offload, !offload);
        ASSERT_TRUE(dev);
        EXPECT_FALSE(fp_.requested);
        EXPECT_FALSE(fp_.active);
        EXPECT_STREQ(fp_.reason, "");
        EXPECT_EQ(prog_name(info_.prog_id), "ovs_afxdp_xsk");
        EXPECT_EQ(put_drop(dev, kUfid1, 1000), EOPNOTSUPP);
        dev.reset();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

TEST_F(FastPathDev, WithoutItsProgramThePortOpensPlainAndSaysWhy)
{
    if (afxdp_fast_path_built()) {
        GTEST_SKIP() << "built with the fast path's program: a build "
                     << "configured BPF_CLANG=no runs this (CI's stage 1b)";
    }
    allow_log("going on without the XDP fast path");
    Dev dev = open(AFXDP_MODE_GENERIC);
    ASSERT_TRUE(dev);
    EXPECT_TRUE(fp_.requested);
    EXPECT_FALSE(fp_.active);
    EXPECT_NE(std::string(fp_.reason).find("no clang"), std::string::npos)
        << fp_.reason;
    EXPECT_EQ(prog_name(info_.prog_id), "ovs_afxdp_xsk");
    EXPECT_EQ(put_drop(dev, kUfid1, 1000), EOPNOTSUPP);
    afxdp_queue *q = afxdp_dev_queue(dev.get(), 0);
    EXPECT_EQ(exchange(q, {1000}, 4, 4).size(), 4u);
    expect_frames_add_up(q, 0);
}

// For a test of the marks a partially offloaded flow's packets carry:
// skips where the kernel lets no XDP program write them.
#define SKIP_WITHOUT_MARKS()                                                \
    if (!fp_.marks)                                                         \
    GTEST_SKIP() << fp_.marks_reason << ": no mark reaches the socket "     \
                 << "(WithoutMetadataAPartialFlowStaysInOvs runs instead)"

// A port open with the fast path, once per mode.
class FastPathMode : public FastPathDev,
                     public ::testing::WithParamInterface<afxdp_xdp_mode> {
protected:
    void SetUp() override
    {
        FastPathDev::SetUp();
        if (IsSkipped()) {
            return;
        }
        SKIP_WITHOUT_FAST_PATH_PROGRAM();
        dev_ = open(GetParam());
        ASSERT_TRUE(dev_);
        ASSERT_TRUE(fp_.active) << fp_.reason;
        q_ = afxdp_dev_queue(dev_.get(), 0);
    }

    // Puts flow 'flow' (udp_flow_match) partially offloaded: a "ct"
    // action XDP cannot run, so its packets reach OVS with 'mark'.
    void put_marked(const uint32_t ufid[4], uint16_t flow, uint32_t mark)
    {
        afxdp_flow_match m = udp_flow_match(flow);
        afxdp_flow_action ct = action_of(AFXDP_ACTION_OTHER, "ct");
        afxdp_offload_refusal why;
        ASSERT_EQ(afxdp_dev_flow_put(dev_.get(), ufid, &m, &ct, 1, mark,
                                     &why), 0);
        EXPECT_EQ(why, AFXDP_REFUSED_action);
    }

    Dev dev_;
    afxdp_queue *q_ = nullptr;
};

TEST_P(FastPathMode, DropsItsFlowInXdpAndTheRestReachesOvs)
{
    EXPECT_TRUE(fp_.requested);
    EXPECT_EQ(prog_name(info_.prog_id),
              info_.rx_hash || info_.rx_vlan ? "ovs_afxdp_fasth"
                                             : "ovs_afxdp_fast");

    afxdp_flow_match m = udp_flow_match(1000);
    afxdp_flow_action drop = action_of(AFXDP_ACTION_DROP);
    afxdp_offload_refusal why = AFXDP_REFUSED_action;
    ASSERT_EQ(afxdp_dev_flow_put(dev_.get(), kUfid1, &m, &drop, 1, 1, &why), 0);
    EXPECT_EQ(why, AFXDP_REFUSED_N);

    const uint32_t n = 10;
    std::vector<Received> got = exchange(q_, {1000, 2000}, n, 2 * n);
    ASSERT_EQ(got.size(), size_t(n)) << "flow 2000's, and no more";
    for (const Received &r : got) {
        EXPECT_EQ((r.data[34] << 8 | r.data[35]), 2000);
        EXPECT_FALSE(r.has_mark);
    }
    refresh(dev_);
    EXPECT_EQ(fp_.flows, 1u);
    EXPECT_EQ(fp_.masks, 1u);
    EXPECT_EQ(fp_.packets[AFXDP_FP_dropped], uint64_t(n));
    EXPECT_GE(fp_.packets[AFXDP_FP_missed], uint64_t(n));
    afxdp_flow_stats st;
    ASSERT_EQ(afxdp_dev_flow_stats(dev_.get(), kUfid1, &st), 0);
    EXPECT_EQ(st.n_packets, uint64_t(n));
    EXPECT_EQ(st.n_bytes, n * udp_frame(1000, 0).size());
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long now_ms = now.tv_sec * 1000LL + now.tv_nsec / 1000000;
    EXPECT_GT(st.used_msec, now_ms - 5000);
    EXPECT_LE(st.used_msec, now_ms);

    // Deleted: its packets reach OVS again.
    ASSERT_EQ(afxdp_dev_flow_del(dev_.get(), kUfid1), 0);
    EXPECT_EQ(afxdp_dev_flow_del(dev_.get(), kUfid1), ENOENT);
    EXPECT_EQ(afxdp_dev_flow_stats(dev_.get(), kUfid1, &st), ENOENT);
    got = exchange(q_, {1000}, n, n);
    EXPECT_EQ(got.size(), size_t(n));
    expect_frames_add_up(q_, 0);
}

// The fast path's own hash (key-hash.hh) of an IPv4 UDP frame of
// udp_frame(): its key's addresses, protocol and ports.
uint32_t
fast_path_hash(const uint8_t *frame)
{
    afxdp_flow_key key = {};
    std::memcpy(key.nw_src, frame + 26, 4);
    std::memcpy(key.nw_dst, frame + 30, 4);
    key.nw_proto = frame[23];
    std::memcpy(&key.tp_src, frame + 34, 2);
    std::memcpy(&key.tp_dst, frame + 36, 2);
    return afxdp_test::key_hash(key);
}

TEST_P(FastPathMode, PartialOffloadHandsOvsTheMark)
{
    SKIP_WITHOUT_MARKS();
    put_marked(kUfid1, 1000, 77);

    const uint32_t n = 8;
    std::vector<Received> got = exchange(q_, {1000, 2000}, n, 2 * n);
    ASSERT_EQ(got.size(), size_t(2 * n));
    size_t marked = 0;
    for (const Received &r : got) {
        bool ours = (r.data[34] << 8 | r.data[35]) == 1000;
        EXPECT_EQ(r.has_mark, ours);
        if (r.has_mark) {
            EXPECT_EQ(r.mark, 77u);
            marked++;
        }
        // The frame itself is as sent.
        EXPECT_GE(udp_seq_of(r.data.data(), r.data.size()), 0);
    }
    EXPECT_EQ(marked, size_t(n));
    EXPECT_EQ(stats_of(q_).rx_flow_marks, uint64_t(n));
    // Every packet comes with a hash, marked or not, the same for all of
    // a flow's: the driver's, or where it has none (generic mode) the
    // program's own, so that OVS may take a marked packet by its mark in
    // any mode (netdev_afxdp_takes_marks()).
    std::map<int, uint32_t> hash_of;
    for (const Received &r : got) {
        int flow = r.data[34] << 8 | r.data[35];
        ASSERT_TRUE(r.has_hash) << "flow " << flow;
        if (!info_.rx_hash) {
            EXPECT_EQ(r.hash, fast_path_hash(r.data.data()));
        }
        auto [it, first] = hash_of.emplace(flow, r.hash);
        EXPECT_TRUE(first || it->second == r.hash) << "flow " << flow;
    }
    ASSERT_EQ(hash_of.size(), 2u);
    EXPECT_NE(hash_of[1000], hash_of[2000]);
    EXPECT_GE(stats_of(q_).rx_hash, uint64_t(2 * n));
    refresh(dev_);
    EXPECT_EQ(fp_.packets[AFXDP_FP_marked], uint64_t(n));
    EXPECT_EQ(fp_.refused[AFXDP_REFUSED_action], 1u);
    // XDP carried nothing out: OVS counts these packets, not the flow.
    afxdp_flow_stats st;
    ASSERT_EQ(afxdp_dev_flow_stats(dev_.get(), kUfid1, &st), 0);
    EXPECT_EQ(st.n_packets, 0u);
    expect_frames_add_up(q_, 0);
}

TEST_P(FastPathMode, AMarkNeverOutlivesItsPacket)
{
    SKIP_WITHOUT_MARKS();
    // More marked packets than the RX ring holds, then unmarked ones:
    // whatever the kernel does with the frames it could not deliver, no
    // packet of another flow may come with the mark.  (Linux 6.18 checks
    // the ring before copying in copy mode; in zero-copy mode a driver
    // recycles the frame, our metadata in it.  The program writes
    // metadata for every packet it gives the socket, which the kernel
    // test-run case in test-fastpath.cc checks directly.)
    put_marked(kUfid1, 1000, 77);
    for (uint32_t i = 0; i < 400; i++) {
        ASSERT_TRUE(send_raw(net_.b(), udp_frame(1000, i)));
    }
    std::vector<Received> got = receive_copies(q_, 400, 500);
    ASSERT_GT(got.size(), 0u);
    ASSERT_LT(got.size(), 400u) << "the ring was never full";
    for (const Received &r : got) {
        EXPECT_TRUE(r.has_mark);
    }
    // Fewer than the ring holds, so that all arrive.
    got = exchange(q_, {2000}, 200, 200);
    EXPECT_EQ(got.size(), 200u);
    size_t marked = 0;
    for (const Received &r : got) {
        marked += r.has_mark;
    }
    EXPECT_EQ(marked, 0u) << "packets of flow 2000 with flow 1000's mark";
    expect_frames_add_up(q_, 0);
}

TEST_P(FastPathMode, WithoutMetadataAPartialFlowStaysInOvs)
{
    if (fp_.marks) {
        GTEST_SKIP() << "this kernel lets XDP programs write metadata: the "
                     << "tests of marks run instead";
    }
    EXPECT_NE(std::string(fp_.marks_reason).find("bpf_xdp_adjust_meta"),
              std::string::npos) << fp_.marks_reason;
    // A flow XDP cannot execute whole is not put: its packets would reach
    // OVS unmarked, as a miss does.
    afxdp_flow_match m = udp_flow_match(1000);
    afxdp_flow_action ct = action_of(AFXDP_ACTION_OTHER, "ct");
    afxdp_offload_refusal why;
    EXPECT_EQ(afxdp_dev_flow_put(dev_.get(), kUfid1, &m, &ct, 1, 77, &why),
              EOPNOTSUPP);
    EXPECT_EQ(why, AFXDP_REFUSED_action);
    // One it executes whole is.
    ASSERT_EQ(put_drop(dev_, kUfid2, 2000), 0);
    const uint32_t n = 8;
    std::vector<Received> got = exchange(q_, {1000, 2000}, n, 2 * n);
    ASSERT_EQ(got.size(), size_t(n)) << "flow 1000's, and no more";
    for (const Received &r : got) {
        EXPECT_EQ((r.data[34] << 8 | r.data[35]), 1000);
        EXPECT_FALSE(r.has_mark);
    }
    refresh(dev_);
    EXPECT_EQ(fp_.flows, 1u);
    EXPECT_EQ(fp_.packets[AFXDP_FP_dropped], uint64_t(n));
    EXPECT_EQ(fp_.packets[AFXDP_FP_marked], 0u);
    EXPECT_EQ(stats_of(q_).rx_flow_marks, 0u);
    expect_frames_add_up(q_, 0);
}

TEST_P(FastPathMode, ADeletedFlowsMarkIsNotTakenForTheFlowGivenItNext)
{
    SKIP_WITHOUT_MARKS();
    // OVS 3.1 to 3.6 give a freed mark to the next flow at once, and look
    // it up on every port (marks.hh): flow 1000's packets wait in the RX
    // ring while it is deleted and flow 2000 takes its mark.
    put_marked(kUfid1, 1000, 77);
    const uint32_t n = 20;
    for (uint32_t i = 0; i < n; i++) {
        ASSERT_TRUE(send_raw(net_.b(), udp_frame(1000, i)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_EQ(afxdp_dev_flow_del(dev_.get(), kUfid1), 0);
    put_marked(kUfid2, 2000, 77);
    std::vector<Received> got = receive_copies(q_, n, 1000);
    ASSERT_EQ(got.size(), size_t(n));
    size_t taken = 0;
    for (const Received &r : got) {
        taken += r.has_mark;
    }
    EXPECT_EQ(taken, 0u) << "flow 1000's packets taken for flow 2000's";
    EXPECT_EQ(stats_of(q_).rx_flow_marks_stale, uint64_t(n));
    EXPECT_EQ(stats_of(q_).rx_flow_marks, 0u);

    // Flow 2000's own come with the mark; flow 2000 put again (new
    // actions, the same mark) keeps it for its packets in flight.
    for (uint32_t i = 0; i < 5; i++) {
        ASSERT_TRUE(send_raw(net_.b(), udp_frame(2000, i)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    put_marked(kUfid2, 2000, 77);
    got = receive_copies(q_, 5, 1000);
    ASSERT_EQ(got.size(), 5u);
    for (const Received &r : got) {
        EXPECT_TRUE(r.has_mark);
        EXPECT_EQ(r.mark, 77u);
    }
    expect_frames_add_up(q_, 0);
}

TEST_P(FastPathMode, OnlyMetadataTheKernelWroteIsTaken)
{
    SKIP_WITHOUT_MARKS();
    // Many drivers cannot carry XDP metadata (hints.hh): there the kernel
    // writes nothing in front of a packet.  To stand for one, the device's
    // program gives way to a bare redirect into the same sockets.  What a
    // frame held in front of the packet must then not be taken for its
    // metadata: here bytes the test writes as OVS may write a frame's
    // headroom (a pushed header), the magic, a hash and a real flow's
    // mark.
    put_marked(kUfid1, 1000, 77);
    std::vector<Received> got = exchange(q_, {1000}, 10, 10);
    ASSERT_EQ(got.size(), 10u);
    for (const Received &r : got) {
        ASSERT_TRUE(r.has_mark) << "flow 1000 is marked by the fast path";
    }

    // The sockets' map, from the device's program.
    int ours = bpf_prog_get_fd_by_id(info_.prog_id);
    ASSERT_GE(ours, 0) << std::strerror(errno);
    uint32_t map_ids[16] = {};
    bpf_prog_info pinfo = {};
    pinfo.nr_map_ids = 16;
    pinfo.map_ids = uint64_t(uintptr_t(map_ids));
    uint32_t len = sizeof pinfo;
    ASSERT_EQ(bpf_obj_get_info_by_fd(ours, &pinfo, &len), 0);
    int xsks = -1;
    for (uint32_t i = 0; i < pinfo.nr_map_ids && i < 16 && xsks < 0; i++) {
        int fd = bpf_map_get_fd_by_id(map_ids[i]);
        bpf_map_info minfo = {};
        uint32_t mlen = sizeof minfo;
        if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &minfo, &mlen)
            && minfo.type == BPF_MAP_TYPE_XSKMAP) {
            xsks = fd;
        } else if (fd >= 0) {
            close(fd);
        }
    }
    ASSERT_GE(xsks, 0) << "no XSKMAP in the device's program";
    const bpf_insn bare[] = {
        {BPF_LDX | BPF_MEM | BPF_W, 2, 1,
         int16_t(offsetof(xdp_md, rx_queue_index)), 0},
        {BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, xsks},
        {0, 0, 0, 0, 0},
        {BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, XDP_PASS},
        {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    int prog = bpf_prog_load(BPF_PROG_TYPE_XDP, "bare_redirect", "GPL", bare,
                             sizeof bare / sizeof bare[0], nullptr);
    ASSERT_GE(prog, 0) << std::strerror(-prog);
    int ifindex = int(if_nametoindex(net_.a()));
    uint32_t mode = GetParam() == AFXDP_MODE_NATIVE ? XDP_FLAGS_DRV_MODE
                                                    : XDP_FLAGS_SKB_MODE;
    LIBBPF_OPTS(bpf_xdp_attach_opts, swap, .old_prog_fd = ours);
    ASSERT_EQ(bpf_xdp_attach(ifindex, prog, mode | XDP_FLAGS_REPLACE, &swap),
              0);

    // Rounds of receive, write in front of each packet, give the frame
    // back.  The pool hands out the frames it got last first, so the
    // later rounds' packets land in frames written so.
    afxdp_pool *pool = afxdp_queue_pool(q_);
    const uint32_t forged[3] = {
        77, 0x12345678,
        AFXDP_META_MAGIC | AFXDP_META_MARK | AFXDP_META_HASH};
    const uint32_t kRounds = 3, kPerRound = 150;
    size_t received = 0, with_meta = 0;
    for (uint32_t round = 0; round < kRounds; round++) {
        for (uint32_t i = 0; i < kPerRound; i++) {
            ASSERT_TRUE(send_raw(net_.b(),
                                 udp_frame(1000, round * kPerRound + i)));
        }
        size_t in_round = 0;
        for (int ms = 0; ms < 2000 && in_round < kPerRound; ms++) {
            afxdp_rx_frame frames[32];
            int error = 0;
            unsigned events = 0;
            size_t n = afxdp_queue_recv(q_, frames, 32, nullptr, &events,
                                        &error);
            for (size_t k = 0; k < n; k++) {
                with_meta += frames[k].has_flow_mark || frames[k].has_rx_hash;
                uint8_t *d = static_cast<uint8_t *>(frames[k].data);
                std::memcpy(d - sizeof forged, forged, sizeof forged);
                afxdp_pool_put(pool, frames[k].data);
            }
            in_round += n;
            if (n == 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        }
        received += in_round;
    }
    EXPECT_EQ(received, size_t(kRounds * kPerRound));
    EXPECT_EQ(with_meta, 0u) << "packets took what was in front of them "
                                "for their metadata";

    LIBBPF_OPTS(bpf_xdp_attach_opts, back, .old_prog_fd = prog);
    EXPECT_EQ(bpf_xdp_attach(ifindex, ours, mode | XDP_FLAGS_REPLACE, &back),
              0);
    close(prog);
    close(xsks);
    close(ours);
    expect_frames_add_up(q_, 0);
}

namespace {

// An XDP program for a veth's peer that sends every frame straight back
// (XDP_TX) with 12 bytes of metadata of its own in front: a real flow's
// mark, the hash kForgedHash and our magic with the mark's and the hash's
// flags.  The frame comes back to the veth as an XDP frame, which keeps
// its metadata.  Returns the program's fd, or -errno.
const uint32_t kForgedHash = 0x12345678;
int
attach_bouncer_with_meta(int ifindex, uint32_t mark)
{
    const int32_t flags = int32_t(AFXDP_META_MAGIC | AFXDP_META_MARK
                                  | AFXDP_META_HASH);
    const bpf_insn insns[] = {
        {BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0},
        {BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, -12},
        {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_xdp_adjust_meta},
        {BPF_JMP | BPF_JNE | BPF_K, 0, 0, 10, 0},              // To pass.
        {BPF_LDX | BPF_MEM | BPF_W, 2, 6,
         int16_t(offsetof(xdp_md, data_meta)), 0},
        {BPF_LDX | BPF_MEM | BPF_W, 3, 6, int16_t(offsetof(xdp_md, data)),
         0},
        {BPF_ALU64 | BPF_MOV | BPF_X, 4, 2, 0, 0},
        {BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, 12},
        {BPF_JMP | BPF_JGT | BPF_X, 4, 3, 5, 0},               // To pass.
        {BPF_ST | BPF_MEM | BPF_W, 2, 0, 0, int32_t(mark)},
        {BPF_ST | BPF_MEM | BPF_W, 2, 0, 4, int32_t(kForgedHash)},
        {BPF_ST | BPF_MEM | BPF_W, 2, 0, 8, flags},
        {BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_TX},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
        {BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_PASS},      // Pass.
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    return attach_xdp_insns(ifindex, "bounce_meta", insns,
                            sizeof insns / sizeof insns[0],
                            XDP_FLAGS_DRV_MODE);
}

// Sends flow 'flows' packets (udp_frame(), numbered from 0 in turn) out of
// 'q', which the peer's bouncer sends back with its metadata; returns what
// came back within a second.
std::vector<Received>
bounce(afxdp_queue *q, std::initializer_list<uint16_t> flows, uint32_t n)
{
    std::vector<std::vector<uint8_t>> frames;
    uint32_t seq = 0;
    for (uint32_t i = 0; i < n; i++) {
        for (uint16_t f : flows) {
            frames.push_back(udp_frame(f, seq++));
        }
    }
    std::vector<afxdp_tx_packet> pkts;
    for (const auto &f : frames) {
        pkts.push_back({f.data(), uint32_t(f.size())});
    }
    unsigned events = 0;
    int error = 0;
    EXPECT_EQ(afxdp_queue_send(q, pkts.data(), pkts.size(), &events, &error),
              0u);
    EXPECT_EQ(error, 0) << std::strerror(error);
    return receive_copies(q, pkts.size(), 1000);
}

}  // namespace

TEST_P(FastPathMode, MetadataThatCameWithTheFrameIsNotTaken)
{
    SKIP_WITHOUT_MARKS();
    // A frame can reach the program with metadata already in front of it:
    // one that came to the veth as an XDP frame (sent back by XDP_TX on
    // the peer, as here, or redirected in by another program).  The
    // program's own must replace it, not go in front of it, or the socket
    // would read the other program's words: here a real flow's mark and a
    // hash.
    if (GetParam() != AFXDP_MODE_NATIVE) {
        GTEST_SKIP() << "generic XDP starts every packet with no metadata";
    }
    put_marked(kUfid1, 1000, 77);
    int b = int(if_nametoindex(net_.b()));
    int bouncer = attach_bouncer_with_meta(b, 77);
    ASSERT_GE(bouncer, 0) << std::strerror(-bouncer);
    // Flow 2000 has no flow in XDP (a miss), flow 1000 is marked.
    const uint32_t n = 50;
    std::vector<Received> got = bounce(q_, {2000, 1000}, n);
    EXPECT_EQ(bpf_xdp_detach(b, XDP_FLAGS_DRV_MODE, nullptr), 0);
    close(bouncer);
    EXPECT_EQ(got.size(), size_t(2 * n));
    for (const Received &r : got) {
        int64_t seq = udp_seq_of(r.data.data(), r.data.size());
        ASSERT_GE(seq, 0) << "not a test frame";
        EXPECT_EQ(r.has_mark, seq % 2 == 1) << "frame " << seq;
        if (r.has_mark) {
            EXPECT_EQ(r.mark, 77u);
        }
        EXPECT_FALSE(r.has_hash && r.hash == kForgedHash) << "frame " << seq;
    }
    expect_frames_add_up(q_, 0);
}

TEST_F(Hints, MetadataThatCameWithTheFrameIsNotTaken)
{
    // The same for the plain program with hints (FastPathMode's test).
    afxdp_dev_info info;
    Dev dev = open(AFXDP_MODE_NATIVE, true, &info);
    ASSERT_TRUE(dev);
    if (!info.rx_hash && !info.rx_vlan) {
        GTEST_SKIP() << "no hints here: " << info.rx_hash_reason;
    }
    afxdp_queue *q = afxdp_dev_queue(dev.get(), 0);
    int b = int(if_nametoindex(net_.b()));
    int bouncer = attach_bouncer_with_meta(b, 77);
    ASSERT_GE(bouncer, 0) << std::strerror(-bouncer);
    std::vector<Received> got = bounce(q, {1000}, 50);
    EXPECT_EQ(bpf_xdp_detach(b, XDP_FLAGS_DRV_MODE, nullptr), 0);
    close(bouncer);
    EXPECT_EQ(got.size(), 50u);
    for (const Received &r : got) {
        EXPECT_FALSE(r.has_mark) << "the plain program marks nothing";
        EXPECT_FALSE(r.has_hash && r.hash == kForgedHash);
    }
    expect_frames_add_up(q, 0);
}

TEST_P(FastPathMode, AFlowThatCannotStayLeavesTheMaps)
{
    afxdp_flow_action drop = action_of(AFXDP_ACTION_DROP);
    afxdp_offload_refusal why;

    // Changed into a match on a field XDP does not parse: out.
    afxdp_flow_match m = udp_flow_match(1000);
    ASSERT_EQ(afxdp_dev_flow_put(dev_.get(), kUfid1, &m, &drop, 1, 1, &why), 0);
    m.unparsed_field = "tunnel";
    EXPECT_EQ(afxdp_dev_flow_put(dev_.get(), kUfid1, &m, &drop, 1, 1, &why),
              EOPNOTSUPP);
    EXPECT_EQ(why, AFXDP_REFUSED_match_field);
    EXPECT_EQ(exchange(q_, {1000}, 4, 4).size(), 4u);

    // Changed into one that does not fit: out, not left as it was.  Flow
    // 2 shares flow 1's mask, so that flow 1's change frees no slot, and
    // 31 more masks fill the slots.
    m = udp_flow_match(1000);
    afxdp_flow_match m2 = udp_flow_match(1001);
    ASSERT_EQ(afxdp_dev_flow_put(dev_.get(), kUfid1, &m, &drop, 1, 1, &why), 0);
    ASSERT_EQ(afxdp_dev_flow_put(dev_.get(), kUfid2, &m2, &drop, 1, 2, &why), 0);
    for (uint32_t i = 1; i < 32; i++) {
        afxdp_flow_match other = udp_flow_match(3000, uint16_t(i));
        const uint32_t id[4] = {100 + i, 0, 0, 0};
        ASSERT_EQ(afxdp_dev_flow_put(dev_.get(), id, &other, &drop, 1, i, &why),
                  0) << i;
    }
    refresh(dev_);
    EXPECT_EQ(fp_.masks, 32u);
    EXPECT_EQ(exchange(q_, {1000}, 4, 4).size(), 0u) << "dropped in XDP";
    afxdp_flow_match wider = udp_flow_match(1000, 0xff00);
    EXPECT_EQ(afxdp_dev_flow_put(dev_.get(), kUfid1, &wider, &drop, 1, 1, &why),
              ENOSPC);
    EXPECT_EQ(exchange(q_, {1000}, 4, 4).size(), 4u) << "back to OVS";
    refresh(dev_);
    EXPECT_EQ(fp_.put_failed, 1u);
    EXPECT_EQ(fp_.flows, 32u);
    expect_frames_add_up(q_, 0);
}

namespace {

// A second veth pair, c and its peer d, beside the fixture's.
struct SecondPair {
    explicit SecondPair(const std::string &c_name, const std::string &d_name)
        : c(c_name), d(d_name)
    {
        error = afxdp_test::run_ip("link add " + c + " type veth peer name "
                                   + d);
        if (error.empty()) {
            error = afxdp_test::run_ip("link set " + c + " up");
        }
        if (error.empty()) {
            error = afxdp_test::run_ip("link set " + d + " up");
        }
    }
    std::string c, d, error;
};

}  // namespace

// A flow put again with what XDP cannot take leaves the maps with its
// count read a last time, and the count it starts when it comes back adds
// to that: every packet is told to OVS once, however far the new count
// has gone when it is next read.  (The shim once lost what the first
// count had, when the new one passed it before a read.)
TEST_P(FastPathMode, AFlowsCountStaysWholeThroughAPutXdpRefuses)
{
    afxdp_flow_action drop = action_of(AFXDP_ACTION_DROP);
    afxdp_offload_refusal why;
    afxdp_flow_counts counts = {};
    afxdp_flow_match m = udp_flow_match(1000);
    // Sends 'n' packets of the flow and waits until XDP counted 'total'
    // since the flow's put.
    auto drop_in_xdp = [&](uint32_t n, uint64_t total) {
        exchange(q_, {1000}, n, 0);
        afxdp_flow_stats now = {};
        for (int i = 0; i < 200 && now.n_packets < total; i++) {
            ASSERT_EQ(afxdp_dev_flow_stats(dev_.get(), kUfid1, &now), 0);
            if (now.n_packets < total) {
                usleep(10000);
            }
        }
        ASSERT_EQ(now.n_packets, total);
    };

    ASSERT_EQ(afxdp_dev_flow_put_counted(dev_.get(), kUfid1, &m, &drop, 1, 1,
                                         &why, &counts), 0);
    drop_in_xdp(3, 3);
    afxdp_flow_stats now;
    ASSERT_EQ(afxdp_dev_flow_stats(dev_.get(), kUfid1, &now), 0);
    afxdp_flow_counts_read(&counts, &now);
    drop_in_xdp(2, 5);    // Not read: the refused put reads them.

    m.unparsed_field = "tunnel";
    EXPECT_EQ(afxdp_dev_flow_put_counted(dev_.get(), kUfid1, &m, &drop, 1, 1,
                                         &why, &counts), EOPNOTSUPP);
    EXPECT_EQ(counts.ended.n_packets, 5u);
    EXPECT_EQ(counts.running.n_packets, 0u);

    m.unparsed_field = nullptr;
    ASSERT_EQ(afxdp_dev_flow_put_counted(dev_.get(), kUfid1, &m, &drop, 1, 1,
                                         &why, &counts), 0);
    drop_in_xdp(8, 8);    // Past the first count before any read.
    ASSERT_EQ(afxdp_dev_flow_stats(dev_.get(), kUfid1, &now), 0);
    afxdp_flow_counts_read(&counts, &now);
    afxdp_flow_stats told = {};
    afxdp_flow_counts_tell(&counts, true, &told);
    EXPECT_EQ(told.n_packets, 13u);
    expect_frames_add_up(q_, 0);
}

TEST_F(FastPathDev, ARedirectTargetIsOkExactlyWhileItsDriverTakesXdpFrames)
{
    // Frames redirected into veth A come out of its peer B, which takes
    // them only with an XDP program or GRO on: the kernel says which.
    const int a = int(if_nametoindex(net_.a()));
    const int b = int(if_nametoindex(net_.b()));
    char why[256];
    EXPECT_FALSE(afxdp_xdp_target_ok(a, nullptr, why, sizeof why));
    if (std::strstr(why, "Linux 6.3")) {
        GTEST_SKIP() << why;
    }
    EXPECT_NE(std::string(why).find("peer has an XDP program or GRO"),
              std::string::npos) << why;
    int prog = attach_xdp_pass(b);
    ASSERT_GE(prog, 0) << std::strerror(-prog);
    EXPECT_TRUE(afxdp_xdp_target_ok(a, nullptr, why, sizeof why)) << why;
    EXPECT_STREQ(why, "");
    EXPECT_FALSE(afxdp_xdp_target_ok(b, nullptr, why, sizeof why))
        << "only A's peer changed";
    ASSERT_EQ(bpf_xdp_detach(b, XDP_FLAGS_DRV_MODE, nullptr), 0);
    close(prog);
    EXPECT_FALSE(afxdp_xdp_target_ok(a, nullptr, why, sizeof why));
    if (run_ethtool("-K " + std::string(net_.b()) + " gro on")) {
        return;   // No ethtool: the XDP half was checked.
    }
    EXPECT_TRUE(afxdp_xdp_target_ok(a, nullptr, why, sizeof why)) << why;
    ASSERT_EQ(run_ethtool("-K " + std::string(net_.b()) + " gro off"), 0);
    EXPECT_FALSE(afxdp_xdp_target_ok(a, nullptr, why, sizeof why));
}

TEST_F(FastPathDev, ARedirectTargetIsTheInterfaceItWasNamedFor)
{
    // An index a deleted interface freed may go to the next one made:
    // a target is checked by name too.
    const int a = int(if_nametoindex(net_.a()));
    const int b = int(if_nametoindex(net_.b()));
    int prog = attach_xdp_pass(b);
    ASSERT_GE(prog, 0) << std::strerror(-prog);
    char why[256];
    bool ok = afxdp_xdp_target_ok(a, nullptr, why, sizeof why);
    if (!ok && std::strstr(why, "Linux 6.3")) {
        bpf_xdp_detach(b, XDP_FLAGS_DRV_MODE, nullptr);
        close(prog);
        GTEST_SKIP() << why;
    }
    EXPECT_TRUE(ok) << why;
    EXPECT_TRUE(afxdp_xdp_target_ok(a, net_.a(), why, sizeof why)) << why;
    EXPECT_FALSE(afxdp_xdp_target_ok(a, net_.b(), why, sizeof why));
    EXPECT_EQ(std::string(why), "interface " + std::to_string(a) + " is "
                                + net_.a() + " now, not " + net_.b());
    // An index no interface has.
    EXPECT_FALSE(afxdp_xdp_target_ok(INT_MAX, net_.a(), why, sizeof why));
    EXPECT_EQ(std::string(why), "interface " + std::to_string(INT_MAX)
                                + " is gone");
    ASSERT_EQ(bpf_xdp_detach(b, XDP_FLAGS_DRV_MODE, nullptr), 0);
    close(prog);
}

// Before Linux 6.3 the core reads a veth's peer instead of the kernel's
// xdp-features.  Where the kernel has both, they agree in every state of
// the peer (no program, a native one, a generic one, GRO on) but one:
// with the peer down, xdp-features still says yes (the watcher then
// catches the failed bulks), the peer's own state no.
TEST_F(FastPathDev, AVethsPeerSaysWhatTheKernelsXdpFeaturesSay)
{
    const int a = int(if_nametoindex(net_.a()));
    const int b = int(if_nametoindex(net_.b()));
    char why[256];
    afxdp::Failure peer_no;
    uint64_t features;
    if (afxdp::netdev_dev_attr(a, afxdp::kNetdevAttrXdpFeatures,
                               &features) == -EOPNOTSUPP) {
        GTEST_SKIP() << "no xdp-features to compare with (Linux 6.3): "
                     << "ARedirectTargetIsOk... checks the peer alone";
    }
    auto agree = [&](const char *state, bool want, int kernel_want = -1) {
        bool kernel = afxdp_xdp_target_ok(a, nullptr, why, sizeof why);
        peer_no = afxdp::check_veth_peer_takes_xdp(a);
        bool peer = !peer_no;
        EXPECT_EQ(kernel, kernel_want < 0 ? want : kernel_want != 0)
            << state << ": " << why;
        EXPECT_EQ(peer, want) << state << ": " << peer_no.why;
    };
    agree("no program on the peer", false);
    int prog = attach_xdp_pass(b);
    ASSERT_GE(prog, 0) << std::strerror(-prog);
    agree("a native program on the peer", true);
    ASSERT_EQ(net_.link_set(net_.b(), "down"), "");
    agree("the peer down", false, true);
    EXPECT_STREQ(peer_no.why, "its veth peer is down");
    EXPECT_EQ(peer_no.error, -ENETDOWN);
    ASSERT_EQ(net_.link_set(net_.b(), "up"), "");
    agree("the peer up again", true);
    ASSERT_EQ(bpf_xdp_detach(b, XDP_FLAGS_DRV_MODE, nullptr), 0);
    close(prog);
    prog = attach_xdp_pass(b, XDP_FLAGS_SKB_MODE);
    ASSERT_GE(prog, 0) << std::strerror(-prog);
    agree("a generic program on the peer", false);
    ASSERT_EQ(bpf_xdp_detach(b, XDP_FLAGS_SKB_MODE, nullptr), 0);
    close(prog);
    if (run_ethtool("-K " + std::string(net_.b()) + " gro on")) {
        return;   // No ethtool: the programs were checked.
    }
    agree("GRO on the peer", true);
    ASSERT_EQ(run_ethtool("-K " + std::string(net_.b()) + " gro off"), 0);
    agree("GRO off again", false);
}

// Asks generic netlink for family 'name': 0 if the kernel has it, else
// the kernel's -errno (-ENOENT where it has none).
int
genl_ask_family(const char *name)
{
    struct {
        nlmsghdr nlh;
        genlmsghdr genl;
        nlattr attr;
        char name[32];
    } req{};
    const size_t len = std::strlen(name) + 1;
    if (len > sizeof req.name) {
        return -ENAMETOOLONG;
    }
    afxdp::Fd fd(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
                        NETLINK_GENERIC));
    if (!fd) {
        return -errno;
    }
    req.nlh.nlmsg_type = GENL_ID_CTRL;
    req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    req.nlh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + NLA_HDRLEN + len);
    req.genl.cmd = CTRL_CMD_GETFAMILY;
    req.genl.version = 1;
    req.attr.nla_type = CTRL_ATTR_FAMILY_NAME;
    req.attr.nla_len = uint16_t(NLA_HDRLEN + len);
    std::memcpy(req.name, name, len);
    int err = -EIO;
    if (send(fd.get(), &req, req.nlh.nlmsg_len, 0) < 0) {
        err = -errno;
    } else {
        alignas(nlmsghdr) char buf[8192];
        ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
        auto *h = reinterpret_cast<nlmsghdr *>(buf);
        if (n < 0) {
            err = -errno;
        } else if (NLMSG_OK(h, size_t(n)) && h->nlmsg_type == NLMSG_ERROR) {
            err = static_cast<nlmsgerr *>(NLMSG_DATA(h))->error;
        } else if (NLMSG_OK(h, size_t(n))) {
            err = 0;
        }
    }
    return err;
}

// The kernel's module requests (the module:module_request tracepoint,
// which fires as the kernel runs modprobe) made in the calling thread:
// a perf counter of the thread's own, which changes nothing on the host
// and goes with its descriptor.
class ModuleRequests {
public:
    ModuleRequests()
    {
        long long id = -1;
        for (const char *dir : {"/sys/kernel/tracing",
                                "/sys/kernel/debug/tracing"}) {
            std::ifstream in(std::string(dir)
                             + "/events/module/module_request/id");
            if (in >> id) {
                break;
            }
        }
        if (id < 0) {
            why_ = "no tracefs with the module:module_request event";
            return;
        }
        perf_event_attr attr{};
        attr.type = PERF_TYPE_TRACEPOINT;
        attr.size = sizeof attr;
        attr.config = uint64_t(id);
        fd_ = afxdp::Fd(int(syscall(SYS_perf_event_open, &attr, 0, -1, -1,
                                    PERF_FLAG_FD_CLOEXEC)));
        if (!fd_) {
            why_ = std::string("perf_event_open: ") + std::strerror(errno);
        }
    }

    // Why there is no count ("" if there is one).
    const std::string &why() const { return why_; }
    long long count() const
    {
        uint64_t n = 0;
        return read(fd_.get(), &n, sizeof n) == ssize_t(sizeof n)
               ? (long long) n : -1;
    }

private:
    afxdp::Fd fd_;
    std::string why_;
};

// Where the kernel lacks a generic netlink family (the netdev family
// before Linux 6.3), each question for it runs the kernel's modprobe.  A
// redirect target is checked every 100 ms, from the revalidators' flow
// dumps too: the core asks for the family once a process.  (It asked at
// each check once: on 6.1 under qemu a check outlasted a second, the
// dumps took 7 s and OVS deleted offloaded flows.)  A family that does
// not exist shows first that the count sees this kernel's modprobe runs.
TEST_F(FastPathDev, AKernelWithoutTheNetdevFamilyIsAskedForItOnce)
{
    const int a = int(if_nametoindex(net_.a()));
    char why[256];
    afxdp_xdp_target_ok(a, nullptr, why, sizeof why);   // The core's first question.
    if (genl_ask_family("netdev") != -ENOENT) {
        GTEST_SKIP() << "the kernel has the netdev family (Linux 6.3): "
                        "no modprobe to count";
    }
    ModuleRequests requests;
    if (!requests.why().empty()) {
        GTEST_SKIP() << "cannot count modprobe runs: " << requests.why();
    }
    const long long before = requests.count();
    EXPECT_EQ(genl_ask_family("afxdp-nonesuch"), -ENOENT);
    const long long control = requests.count() - before;
    if (control != 1) {
        GTEST_SKIP() << control << " module requests counted for a family "
                        "the kernel lacks, not 1 (no CONFIG_MODULES?)";
    }
    for (int i = 0; i < 5; i++) {
        EXPECT_FALSE(afxdp_xdp_target_ok(a, nullptr, why, sizeof why));
    }
    EXPECT_EQ(requests.count() - before - control, 0)
        << "checks of a redirect target ran modprobe";
}

// A named network namespace, deleted (with its devices) when it goes.
struct NamedNetns {
    explicit NamedNetns(std::string n) : name(std::move(n))
    {
        error = afxdp_test::run_ip("netns add " + name);
    }
    ~NamedNetns()
    {
        if (error.empty()) {
            afxdp_test::run_ip("netns del " + name);
        }
    }
    std::string name, error;
};

// A child process alone in a network namespace of its own (a container's
// namespace: no name), killed when it goes.
struct NetnsHolder {
    NetnsHolder()
    {
        int ready[2];
        if (pipe(ready)) {
            return;
        }
        pid = fork();
        if (pid == 0) {
            char ok = !unshare(CLONE_NEWNET);
            (void) !write(ready[1], &ok, 1);
            pause();
            _exit(0);
        }
        close(ready[1]);
        char ok = 0;
        ssize_t n;
        do {
            n = read(ready[0], &ok, 1);
        } while (n < 0 && errno == EINTR);
        close(ready[0]);
        in_own_netns = pid > 0 && n == 1 && ok;
    }
    ~NetnsHolder()
    {
        if (pid > 0) {
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
        }
    }
    pid_t pid = -1;
    bool in_own_netns = false;
};

// A veth's peer in another namespace: before Linux 6.3 the core reads
// its GRO there, in a namespace `ip netns` named or in one that only a
// process holds (a container's), and says what xdp-features says.  Two
// pairs, each peer in a namespace of its own, asked in turn: each is
// found where it is.
TEST_F(FastPathDev, AVethsPeerInAnotherNamespaceHasItsGroReadThere)
{
    if (std::system("command -v ethtool >/dev/null && "
                    "command -v nsenter >/dev/null")) {
        GTEST_SKIP() << "needs ethtool and nsenter";
    }
    const std::string tag = std::to_string(getpid() % 100000);
    SecondPair pair("fpn" + tag, "fpm" + tag);
    ASSERT_EQ(pair.error, "");
    SecondPair other("fpo" + tag, "fpq" + tag);
    ASSERT_EQ(other.error, "");
    const int c = int(if_nametoindex(pair.c.c_str()));
    const int o = int(if_nametoindex(other.c.c_str()));
    uint64_t features;
    const bool kernel_says = afxdp::netdev_dev_attr(
        c, afxdp::kNetdevAttrXdpFeatures, &features) != -EOPNOTSUPP;
    std::string why;
    char why_kernel[256];
    auto expect = [&](int ifindex, const char *state, bool want) {
        const afxdp::Failure no = afxdp::check_veth_peer_takes_xdp(ifindex);
        why = no.why;
        EXPECT_EQ(!no, want) << state << ": " << why;
        if (kernel_says) {
            EXPECT_EQ(afxdp_xdp_target_ok(ifindex, nullptr, why_kernel,
                                          sizeof why_kernel),
                      want) << state << " (xdp-features): " << why_kernel;
        }
    };
    auto in_ns = [&](const std::string &enter, const std::string &cmd) {
        return std::system((enter + " " + cmd + " >/dev/null 2>&1").c_str());
    };

    // Named namespaces, one for each peer.
    NamedNetns ns("afxdp-ut-" + tag), ns2("afxdp-ut2-" + tag);
    ASSERT_EQ(ns.error, "");
    ASSERT_EQ(ns2.error, "");
    const std::string named = "ip netns exec " + ns.name;
    const std::string named2 = "ip netns exec " + ns2.name;
    ASSERT_EQ(afxdp_test::run_ip("link set " + pair.d + " netns " + ns.name),
              "");
    ASSERT_EQ(afxdp_test::run_ip("link set " + other.d + " netns "
                                 + ns2.name), "");
    ASSERT_EQ(in_ns(named, "ip link set " + pair.d + " up"), 0);
    ASSERT_EQ(in_ns(named2, "ip link set " + other.d + " up"), 0);
    expect(c, "GRO off, in a named namespace", false);
    EXPECT_NE(why.find("takes no XDP frames now"), std::string::npos)
        << "the GRO was read, and is off: " << why;
    ASSERT_EQ(in_ns(named2, "ethtool -K " + other.d + " gro on"), 0);
    for (int i = 0; i < 3; i++) {
        expect(o, "GRO on, in the second named namespace", true);
        expect(c, "GRO off, in the first", false);
    }
    ASSERT_EQ(in_ns(named, "ethtool -K " + pair.d + " gro on"), 0);
    expect(c, "GRO on, in a named namespace", true);

    // One only a process holds.
    NetnsHolder held;
    ASSERT_TRUE(held.in_own_netns) << "unshare(CLONE_NEWNET) failed";
    const std::string enter = "nsenter -t " + std::to_string(held.pid)
                              + " -n";
    ASSERT_EQ(in_ns(named, "ip link set " + pair.d + " netns "
                           + std::to_string(held.pid)), 0);
    ASSERT_EQ(in_ns(enter, "ip link set " + pair.d + " up"), 0);
    expect(c, "GRO still on, in a process's namespace", true);
    ASSERT_EQ(in_ns(enter, "ethtool -K " + pair.d + " gro off"), 0);
    expect(c, "GRO off, in a process's namespace", false);
    ASSERT_EQ(in_ns(enter, "ethtool -K " + pair.d + " gro on"), 0);
    expect(c, "GRO on again", true);
    expect(o, "GRO on, in the second named namespace", true);
}

TEST_P(FastPathMode, RedirectsToAnotherInterfaceInXdp)
{
    // Frames from B into A go out of C (to D) in XDP, rewritten, and
    // never reach A's socket.
    SecondPair pair("fpc" + std::to_string(getpid() % 100000),
                    "fpd" + std::to_string(getpid() % 100000));
    ASSERT_EQ(pair.error, "");
    const int c = int(if_nametoindex(pair.c.c_str()));
    const int d = int(if_nametoindex(pair.d.c_str()));
    int prog = attach_xdp_pass(d);
    ASSERT_GE(prog, 0) << std::strerror(-prog);
    char why[256];
    ASSERT_TRUE(afxdp_xdp_target_ok(c, nullptr, why, sizeof why)) << why;
    ASSERT_EQ(afxdp_dev_fast_path_target(dev_.get(), c, true), 0);

    afxdp_flow_match m = {};
    m.key.dl_type = htons(kEthType);
    m.mask.dl_type = 0xffff;
    afxdp_flow_action acts[2] = {action_of(AFXDP_ACTION_SET_ETH),
                                 action_of(AFXDP_ACTION_OUTPUT)};
    const uint8_t dst[6] = {0x02, 0xdd, 0, 0, 0, 0x0d};
    std::memcpy(acts[0].set_eth.dst, dst, 6);
    std::memset(acts[0].set_eth.dst_mask, 0xff, 6);
    acts[1].output.ifindex = c;
    acts[1].output.xdp_target = true;
    acts[1].output.name = pair.c.c_str();
    afxdp_offload_refusal refusal;
    ASSERT_EQ(afxdp_dev_flow_put(dev_.get(), kUfid1, &m, acts, 2, 1,
                                 &refusal), 0);
    ASSERT_EQ(refusal, AFXDP_REFUSED_N);

    PacketSocket sink(pair.d.c_str(), kEthType);
    ASSERT_EQ(sink.error(), "");
    PacketSocket peer(net_.b(), 0);
    ASSERT_EQ(peer.error(), "");
    const uint32_t n = 20;
    ASSERT_EQ(peer.send_frames(0, n), n);
    std::vector<uint32_t> seqs = sink.receive_frames(n, 2000, dst);
    EXPECT_EQ(seqs.size(), size_t(n)) << "frames out of D";
    EXPECT_EQ(receive_copies(q_, 1, 200).size(), 0u) << "none to OVS";
    refresh(dev_);
    EXPECT_EQ(fp_.packets[AFXDP_FP_redirected], uint64_t(n));
    afxdp_flow_stats st;
    ASSERT_EQ(afxdp_dev_flow_stats(dev_.get(), kUfid1, &st), 0);
    EXPECT_EQ(st.n_packets, uint64_t(n));

    // The target withdrawn: the same frames go to OVS, untouched.
    ASSERT_EQ(afxdp_dev_fast_path_target(dev_.get(), c, false), 0);
    ASSERT_EQ(peer.send_frames(n, n), n);
    std::vector<Received> got = receive_copies(q_, n, 2000);
    EXPECT_EQ(got.size(), size_t(n));
    for (const Received &r : got) {
        EXPECT_TRUE(is_frame(r.data.data(), r.data.size(),
                             uint32_t(seq_of(r.data.data(), r.data.size()))));
    }
    refresh(dev_);
    EXPECT_EQ(fp_.packets[AFXDP_FP_redirect_failed], uint64_t(n));
    bpf_xdp_detach(d, XDP_FLAGS_DRV_MODE, nullptr);
    close(prog);
    afxdp_test::run_ip("link del " + pair.c);
    expect_frames_add_up(q_, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, FastPathMode,
    ::testing::Values(AFXDP_MODE_NATIVE, AFXDP_MODE_GENERIC),
    [](const ::testing::TestParamInfo<afxdp_xdp_mode> &info) {
        return std::string(info.param == AFXDP_MODE_NATIVE ? "Native"
                                                           : "Generic");
    });

namespace {

// A packet socket on 'ifname' that sends and receives with a vnet header.
int
vnet_socket(const std::string &ifname)
{
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_IP));
    int on = 1;
    sockaddr_ll sll = {};
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_IP);
    sll.sll_ifindex = int(if_nametoindex(ifname.c_str()));
    if (fd < 0 || setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &on, sizeof on)
        || bind(fd, reinterpret_cast<sockaddr *>(&sll), sizeof sll)) {
        ADD_FAILURE() << "packet socket on " << ifname << ": "
                      << std::strerror(errno);
    }
    return fd;
}

// A TCP/IPv4 packet of 'payload' bytes as a sender on this host hands it
// to its device with GSO: its checksum partial (the pseudo-header's sum).
std::vector<uint8_t>
gso_tcp_packet(size_t payload)
{
    std::vector<uint8_t> p(14 + 20 + 20 + payload);
    const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x02};
    const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x01};
    std::memcpy(&p[0], dst, 6);
    std::memcpy(&p[6], src, 6);
    p[12] = 0x08;
    uint8_t *ip = &p[14];
    ip[0] = 0x45;
    const uint16_t ip_len = uint16_t(20 + 20 + payload);
    ip[2] = uint8_t(ip_len >> 8);
    ip[3] = uint8_t(ip_len);
    ip[8] = 64;
    ip[9] = IPPROTO_TCP;
    const uint8_t saddr[4] = {10, 0, 0, 1}, daddr[4] = {10, 0, 0, 2};
    std::memcpy(ip + 12, saddr, 4);
    std::memcpy(ip + 16, daddr, 4);
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2) {
        sum += uint32_t(ip[i] << 8 | ip[i + 1]);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10] = uint8_t(~sum >> 8);
    ip[11] = uint8_t(~sum);
    uint8_t *tcp = ip + 20;
    tcp[0] = 0x30;                    // Ports 12345 -> 80.
    tcp[1] = 0x39;
    tcp[3] = 80;
    tcp[12] = 5 << 4;
    tcp[13] = 0x18;                   // PSH, ACK.
    tcp[14] = 0xff;
    for (size_t i = 0; i < payload; i++) {
        tcp[20 + i] = uint8_t(i * 7 + 3);
    }
    sum = (10 << 8) + 1 + (10 << 8) + 2 + IPPROTO_TCP + 20 + uint32_t(payload);
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    tcp[16] = uint8_t(sum >> 8);      // Partial: not complemented.
    tcp[17] = uint8_t(sum);
    return p;
}

// Sends 'pkt' (gso_tcp_packet()) through 'fd' (vnet_socket()) as GSO
// TCP/IPv4 in segments of 1448 bytes.
void
send_gso(int fd, const std::vector<uint8_t> &pkt)
{
    VirtioNetHdr vh = {};
    vh.flags = kVirtioNeedsCsum;
    vh.gso_type = kVirtioGsoTcpv4;
    vh.hdr_len = 14 + 20 + 20;
    vh.gso_size = 1448;
    vh.csum_start = 14 + 20;
    vh.csum_offset = 16;
    std::vector<uint8_t> msg(sizeof vh);
    std::memcpy(msg.data(), &vh, sizeof vh);
    msg.insert(msg.end(), pkt.begin(), pkt.end());
    ASSERT_EQ(send(fd, msg.data(), msg.size(), 0), ssize_t(msg.size()))
        << std::strerror(errno);
}

}  // namespace

// Generic mode: a GSO packet (and any whose checksum is partial) of a
// redirected flow goes to its target whole, through the fast path's TC
// half, as a Linux bridge forwards it: D receives one GSO packet, not 14
// segments, and not OVS.  XDP alone could not: the kernel refuses to
// redirect a frame longer than the target's MTU.
TEST_F(FastPathDev, InGenericModeAGsoPacketIsRedirectedWhole)
{
    SKIP_WITHOUT_FAST_PATH_PROGRAM();
    Dev dev = open(AFXDP_MODE_GENERIC);
    ASSERT_TRUE(dev);
    ASSERT_TRUE(fp_.active) << fp_.reason;
    ASSERT_TRUE(fp_.tc) << fp_.tc_reason;
    afxdp_queue *q = afxdp_dev_queue(dev.get(), 0);
    SecondPair pair("fpc" + std::to_string(getpid() % 100000),
                    "fpd" + std::to_string(getpid() % 100000));
    ASSERT_EQ(pair.error, "");
    const int c = int(if_nametoindex(pair.c.c_str()));
    ASSERT_EQ(afxdp_dev_fast_path_target(dev.get(), c, true), 0);

    afxdp_flow_match m = {};
    m.key.dl_type = htons(ETH_P_IP);
    m.mask.dl_type = 0xffff;
    afxdp_flow_action out = action_of(AFXDP_ACTION_OUTPUT);
    out.output.ifindex = c;
    out.output.xdp_target = true;
    out.output.name = pair.c.c_str();
    afxdp_offload_refusal refusal;
    ASSERT_EQ(afxdp_dev_flow_put(dev.get(), kUfid1, &m, &out, 1, 1,
                                 &refusal), 0);
    ASSERT_EQ(refusal, AFXDP_REFUSED_N);

    afxdp::Fd sink(vnet_socket(pair.d));
    afxdp::Fd sender(vnet_socket(net_.b()));
    const std::vector<uint8_t> pkt = gso_tcp_packet(20000);
    send_gso(sender.get(), pkt);

    VirtioNetHdr rh;
    std::vector<uint8_t> got(sizeof rh + 65536);
    pollfd pfd = {sink.get(), POLLIN, 0};
    ASSERT_EQ(poll(&pfd, 1, 2000), 1) << "nothing out of D";
    const ssize_t n = recv(sink.get(), got.data(), got.size(), 0);
    ASSERT_EQ(n, ssize_t(sizeof rh + pkt.size())) << "one packet, whole";
    std::memcpy(&rh, got.data(), sizeof rh);
    EXPECT_EQ(rh.gso_type, kVirtioGsoTcpv4) << "still GSO";
    EXPECT_EQ(rh.gso_size, 1448);
    EXPECT_EQ(rh.flags & kVirtioNeedsCsum, kVirtioNeedsCsum)
        << "its checksum still the kernel's to finish";
    EXPECT_TRUE(std::equal(pkt.begin(), pkt.end(), got.begin() + sizeof rh))
        << "byte for byte, Ethernet header included";
    EXPECT_EQ(receive_copies(q, 1, 200).size(), 0u) << "none to OVS";
    refresh(dev);
    EXPECT_EQ(fp_.packets[AFXDP_FP_to_tc], 1u);
    EXPECT_EQ(fp_.packets[AFXDP_FP_tc_redirected], 1u);
    EXPECT_EQ(fp_.packets[AFXDP_FP_tc_failed], 0u);
    EXPECT_EQ(fp_.packets[AFXDP_FP_multi_buffer], 0u);
    afxdp_flow_stats st;
    ASSERT_EQ(afxdp_dev_flow_stats(dev.get(), kUfid1, &st), 0);
    EXPECT_EQ(st.n_packets, 1u);
    EXPECT_EQ(st.n_bytes, uint64_t(pkt.size()));

    // Without its TC half (a native port's fast path has none) the same
    // packet would be cut and sent through OVS; closing the port takes
    // the half off the interface with the hook it made.
    dev.reset();
    LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = int(if_nametoindex(net_.a())),
                .attach_point = bpf_tc_attach_point(BPF_TC_INGRESS
                                                    | BPF_TC_EGRESS));
    EXPECT_EQ(bpf_tc_hook_create(&hook), 0) << "the hook it made is gone";
    bpf_tc_hook_destroy(&hook);
    afxdp_test::run_ip("link del " + pair.c);
}
