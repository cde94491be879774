// Test helpers for the tests of AF_XDP devices on a veth pair
// (test-socket.cc and the others of its tier): numbered frames, a raw
// AF_PACKET socket on the peer, devices opened and closed, the log
// captured, and the fixtures Veth, VethMode and Hints.  Each test file
// that includes it gets the fixtures' log of its own.
#ifndef AFXDP_TESTS_VETH_TEST_HH
#define AFXDP_TESTS_VETH_TEST_HH

#include <algorithm>
#include <map>
#include <set>
#include <atomic>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <linux/bpf.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/perf_event.h>
#include <memory>
#include <mutex>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>
#include <gtest/gtest.h>

#include "afxdp.h"
#include "afxdp-offload.h"
#include "fastpath-maps.h"
#include "fd.hh"
#include "key-hash.hh"
#include "netdev_nl.hh"
#include "netns.hh"
#include "tc-vlan.hh"
#include "xdp-progs.hh"

namespace afxdp_test {


// --- Numbered test frames ---------------------------------------------------

const uint16_t kEthType = 0x88b5;   // IEEE local experimental.
const char kMagic[8] = {'a', 'f', 'x', 'd', 'p', '-', 'u', 't'};
const size_t kHdrLen = 14 + sizeof kMagic + 4;

// Frames numbered from kJumbo on are jumbo-sized, in turn: a whole jumbo
// frame (MTU 9000), the smallest, what one received frame holds (see
// kRxFrameRoom), one byte more, two frames' worth and one byte more, and
// two in between.
const uint32_t kJumbo = 1u << 20;
const size_t kJumboLens[] = {9014, 60, 3712, 3713, 7424, 7425, 5000, 1514};
// Packet bytes the kernel writes into one frame it receives into: the
// frame less our headroom and the kernel's.
const uint32_t kRxFrameRoom = AFXDP_FRAME_SIZE - AFXDP_FRAME_HEADROOM
                              - AFXDP_XDP_HEADROOM;

inline size_t
frame_len(uint32_t seq)
{
    if (seq >= kJumbo) {
        return kJumboLens[(seq - kJumbo) % (sizeof kJumboLens
                                            / sizeof kJumboLens[0])];
    }
    return 60 + (seq * 37) % 1400;
}

// Frame 'seq': broadcast Ethernet header, magic, big-endian sequence
// number, then bytes derived from 'seq'.  frame_len(seq) bytes: from 60 to
// 1459, or jumbo-sized from kJumbo on.
inline std::vector<uint8_t>
make_frame(uint32_t seq)
{
    std::vector<uint8_t> f(frame_len(seq));
    std::memset(&f[0], 0xff, 6);
    const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x01};
    std::memcpy(&f[6], src, 6);
    f[12] = kEthType >> 8;
    f[13] = kEthType & 0xff;
    std::memcpy(&f[14], kMagic, sizeof kMagic);
    uint32_t be = htonl(seq);
    std::memcpy(&f[14 + sizeof kMagic], &be, 4);
    for (size_t i = kHdrLen; i < f.size(); i++) {
        f[i] = uint8_t(seq * 7 + i);
    }
    return f;
}

// Frames 0..n-1 and the packets afxdp_queue_send() takes for them.
struct NumberedPackets {
    explicit NumberedPackets(uint32_t n)
    {
        for (uint32_t i = 0; i < n; i++) {
            frames.push_back(make_frame(i));
        }
        for (const auto &f : frames) {
            pkts.push_back({f.data(), uint32_t(f.size())});
        }
    }
    std::vector<std::vector<uint8_t>> frames;
    std::vector<afxdp_tx_packet> pkts;
};

// The sequence number of a test frame, or -1 for any other packet.
inline int64_t
seq_of(const void *data, size_t len)
{
    auto *p = static_cast<const uint8_t *>(data);
    if (len < kHdrLen || p[12] != kEthType >> 8 || p[13] != (kEthType & 0xff)
        || std::memcmp(&p[14], kMagic, sizeof kMagic)) {
        return -1;
    }
    uint32_t be;
    std::memcpy(&be, &p[14 + sizeof kMagic], 4);
    return ntohl(be);
}

// Checks that 'data' is exactly frame 'seq', byte for byte.
inline ::testing::AssertionResult
is_frame(const void *data, size_t len, uint32_t seq)
{
    std::vector<uint8_t> want = make_frame(seq);
    if (len != want.size()) {
        return ::testing::AssertionFailure()
               << "frame " << seq << ": length " << len << ", want "
               << want.size();
    }
    if (std::memcmp(data, want.data(), len)) {
        return ::testing::AssertionFailure()
               << "frame " << seq << ": content differs";
    }
    return ::testing::AssertionSuccess();
}

// --- Raw AF_PACKET sockets on the peer --------------------------------------

// <linux/virtio_net.h>'s header, which is not C++ (a member named
// 'class'): what a packet socket with PACKET_VNET_HDR takes in front of a
// packet, in this machine's byte order.
struct VirtioNetHdr {
    uint8_t flags;
    uint8_t gso_type;
    uint16_t hdr_len;
    uint16_t gso_size;
    uint16_t csum_start;
    uint16_t csum_offset;
};
constexpr uint8_t kVirtioNeedsCsum = 1;     // VIRTIO_NET_HDR_F_NEEDS_CSUM
constexpr uint8_t kVirtioGsoTcpv4 = 1;      // VIRTIO_NET_HDR_GSO_TCPV4


// A packet socket bound to 'ifname'.  With 'proto' 0 it only sends.
class PacketSocket {
public:
    PacketSocket(const char *ifname, uint16_t proto)
    {
        fd_ = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(proto));
        if (fd_ < 0) {
            error_ = std::string("socket: ") + std::strerror(errno);
            return;
        }
        // Room for bursts of jumbo frames: the default (about 200 KiB)
        // drops the 25th of 40 frames of 9 KiB sent at once.
        int rcvbuf = 8 << 20;
        setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf);
        sockaddr_ll sll = {};
        sll.sll_family = AF_PACKET;
        sll.sll_protocol = htons(proto);
        sll.sll_ifindex = int(if_nametoindex(ifname));
        if (bind(fd_, reinterpret_cast<sockaddr *>(&sll), sizeof sll)) {
            error_ = std::string("bind: ") + std::strerror(errno);
        }
    }
    ~PacketSocket()
    {
        if (fd_ >= 0) {
            close(fd_);
        }
    }
    PacketSocket(const PacketSocket &) = delete;
    PacketSocket &operator=(const PacketSocket &) = delete;

    const std::string &error() const { return error_; }

    // Sends frames first..first+n-1; returns how many went out.
    uint32_t send_frames(uint32_t first, uint32_t n)
    {
        for (uint32_t i = 0; i < n; i++) {
            std::vector<uint8_t> f = make_frame(first + i);
            if (send(fd_, f.data(), f.size(), 0) != ssize_t(f.size())) {
                ADD_FAILURE() << "send frame " << first + i << ": "
                              << std::strerror(errno);
                return i;
            }
        }
        return n;
    }

    // Receives until 'want' test frames arrived or 'ms' milliseconds
    // passed; returns their sequence numbers, checking each one's content
    // (with destination MAC 'dst' instead of the sent one, if given).
    std::vector<uint32_t> receive_frames(size_t want, int ms = 2000,
                                         const uint8_t *dst = nullptr)
    {
        std::vector<uint32_t> seqs;
        std::vector<uint8_t> buf(65536);
        auto deadline = std::chrono::steady_clock::now()
                        + std::chrono::milliseconds(ms);
        while (seqs.size() < want
               && std::chrono::steady_clock::now() < deadline) {
            pollfd pfd = {fd_, POLLIN, 0};
            if (poll(&pfd, 1, 10) <= 0) {
                continue;
            }
            ssize_t n = recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT);
            int64_t seq = n > 0 ? seq_of(buf.data(), size_t(n)) : -1;
            if (seq >= 0 && dst) {
                EXPECT_EQ(std::memcmp(buf.data(), dst, 6), 0)
                    << "frame " << seq << ": destination MAC";
                std::memset(buf.data(), 0xff, 6);   // As sent.
            }
            if (seq >= 0) {
                EXPECT_TRUE(is_frame(buf.data(), size_t(n), uint32_t(seq)));
                seqs.push_back(uint32_t(seq));
            }
        }
        return seqs;
    }

private:
    int fd_ = -1;
    std::string error_;
};

// --- Devices ----------------------------------------------------------------

struct DevCloser {
    void operator()(afxdp_dev *d) const { afxdp_dev_close(d); }
};
using Dev = std::unique_ptr<afxdp_dev, DevCloser>;

inline afxdp_dev_config
config(const char *ifname, afxdp_xdp_mode mode,
       bool need_wakeup = afxdp_need_wakeup_supported())
{
    afxdp_dev_config cfg = {};
    cfg.ifname = ifname;
    afxdp_port_config_default(&cfg.port);
    cfg.port.mode = mode;
    cfg.port.use_need_wakeup = need_wakeup;
    cfg.port.sharing = AFXDP_SHARE_OFF;
    cfg.numa_node = -1;
    cfg.port.ring_size = 256;
    cfg.port.n_frames = 1024;
    cfg.frame_meta_size = 32;
    return cfg;
}

// Opens 'cfg' or fails the test with the library's message.
inline Dev
open_dev(const afxdp_dev_config &cfg)
{
    afxdp_dev *d = nullptr;
    char err[512] = "";
    int r = afxdp_dev_open(&cfg, &d, err, sizeof err);
    EXPECT_EQ(r, 0) << cfg.ifname << " in " << afxdp_mode_name(cfg.port.mode)
                    << ": " << std::strerror(r) << ": " << err;
    return Dev(d);
}

// Opens 'cfg' on an interface where a socket was just closed.  The kernel
// frees a closed AF_XDP socket's hold on its queue only after an RCU grace
// period and a work item, so for a few milliseconds binding the queue
// again fails with EBUSY; retry for up to 1 s.  '*n_busy' gets how many
// attempts failed that way.
inline Dev
open_dev_after_close(const afxdp_dev_config &cfg, int *n_busy = nullptr)
{
    afxdp_dev *d = nullptr;
    char err[512] = "";
    int r = EBUSY;
    int busy = 0;
    for (; busy < 500; busy++) {
        r = afxdp_dev_open(&cfg, &d, err, sizeof err);
        if (r != EBUSY) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_EQ(r, 0) << cfg.ifname << " in " << afxdp_mode_name(cfg.port.mode)
                    << " after " << busy << " EBUSY: "
                    << std::strerror(r) << ": " << err;
    if (n_busy) {
        *n_busy = busy;
    }
    return Dev(d);
}

// The id of the XDP program attached to 'ifname' in any mode, 0 if none.
inline uint32_t
attached_prog_id(const char *ifname)
{
    uint32_t id = 0;
    int err = bpf_xdp_query_id(int(if_nametoindex(ifname)), 0, &id);
    EXPECT_EQ(err, 0) << std::strerror(-err);
    return id;
}

// Every frame of the queue's pool is somewhere, exactly once.
inline void
expect_frames_add_up(afxdp_queue *q, uint32_t in_app)
{
    afxdp_frame_counts c;
    afxdp_queue_get_frames(q, &c);
    EXPECT_EQ(c.in_app, in_app);
    EXPECT_EQ(c.free + c.fill + c.tx + c.tx_kept + c.in_app, c.total)
        << "free " << c.free << " fill " << c.fill << " tx " << c.tx
        << " kept " << c.tx_kept << " in_app " << c.in_app;
    EXPECT_EQ(c.rx_ring + c.fill_ring, c.fill);
}

// 'n' frames wait in the queue's TX ring (or its completion ring), and
// every frame is accounted for, none with the caller.
inline void
expect_waiting_to_send(afxdp_queue *q, uint32_t n)
{
    afxdp_frame_counts c;
    afxdp_queue_get_frames(q, &c);
    EXPECT_EQ(c.tx, n);
    expect_frames_add_up(q, 0);
}

// Receives until 'want' test frames arrived or about 2 s passed.  Test
// frames are appended to 'held' and stay with the caller (a packet of
// several frames as all its entries, head first); anything else goes
// straight back to the pool.
inline void
receive(afxdp_queue *q, size_t want, std::vector<afxdp_rx_frame> *held,
        unsigned *all_events = nullptr)
{
    afxdp_pool *pool = afxdp_queue_pool(q);
    size_t got = 0;
    for (int i = 0; i < 2000 && got < want; i++) {
        afxdp_rx_frame frames[32];
        int qfill = -1, error = 0;
        unsigned events = 0;
        size_t n = afxdp_queue_recv(q, frames, 32, &qfill, &events, &error);
        EXPECT_GE(qfill, 0);
        if (events & AFXDP_EV_RX_WAKEUP_ERR) {
            ADD_FAILURE() << "RX wakeup: " << std::strerror(error);
        }
        if (all_events) {
            *all_events |= events;
        }
        for (size_t k = 0; k < n; k += frames[k].n_frames) {
            const afxdp_rx_frame &head = frames[k];
            ASSERT_GE(head.n_frames, 1u) << "entry " << k << " of " << n
                                         << " continues nothing";
            ASSERT_LE(k + head.n_frames, n) << "a packet cut short";
            if (seq_of(head.data, head.len) >= 0) {
                held->insert(held->end(), &frames[k],
                             &frames[k + head.n_frames]);
                got++;
            } else {
                for (size_t f = k; f < k + head.n_frames; f++) {
                    afxdp_pool_put(pool, frames[f].data);
                }
            }
        }
        if (n == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
}

// Log lines the library wrote during the test, "level|text".
inline std::mutex log_mutex;
inline std::vector<std::string> log_lines;

inline void
capture_log(afxdp_log_level level, const char *msg)
{
    static const char *const names[] = {"dbg", "info", "warn", "err"};
    std::lock_guard<std::mutex> g(log_mutex);
    log_lines.push_back(std::string(names[level]) + "|" + msg);
}

inline bool
logged(const std::string &line)
{
    std::lock_guard<std::mutex> g(log_mutex);
    for (const auto &l : log_lines) {
        if (l == line) {
            return true;
        }
    }
    return false;
}

// Skips a test of the fast path in a build without its XDP program.
#define SKIP_WITHOUT_FAST_PATH_PROGRAM()                                    \
    if (!afxdp_fast_path_built())                                           \
    GTEST_SKIP() << "built without the fast path's XDP program "            \
                 << "(configure found no clang for BPF)"

// A fresh veth pair for each test; skipped where that is impossible.
class Veth : public ::testing::Test {
protected:
    void SetUp() override
    {
        {
            std::lock_guard<std::mutex> g(log_mutex);
            log_lines.clear();
        }
        if (!net_.skip_reason().empty()) {
            GTEST_SKIP() << net_.skip_reason();
        }
        afxdp_set_log_handler(capture_log, AFXDP_LOG_INFO);
        if (!afxdp_need_wakeup_supported()) {
            // A build without need_wakeup warns when it is asked for.
            allow_log("built without need_wakeup support");
        }
    }
    void TearDown() override
    {
        afxdp_set_log_handler(nullptr, AFXDP_LOG_INFO);
        // As OVS's check_logs: any warning or error the test did not
        // expect fails it.
        std::lock_guard<std::mutex> g(log_mutex);
        for (const auto &l : log_lines) {
            if (l.rfind("warn|", 0) && l.rfind("err|", 0)) {
                continue;
            }
            bool expected = false;
            for (const auto &a : allowed_) {
                expected = expected || l.find(a) != std::string::npos;
            }
            EXPECT_TRUE(expected) << "unexpected log line: " << l;
        }
    }

    // Lets warnings and errors containing 'text' pass TearDown's check.
    void allow_log(const std::string &text) { allowed_.push_back(text); }

    // On a kernel without multi-buffer AF_XDP (before Linux 6.6), opening
    // 'cfg', whose MTU needs it, fails and says why; the test is then
    // skipped (true).  Elsewhere false, and nothing is opened.
    bool skip_without_multi_buffer(const afxdp_dev_config &cfg)
    {
        char why[256];
        if (afxdp_max_mtu(why, sizeof why) > AFXDP_MAX_MTU_ONE_FRAME) {
            return false;
        }
        afxdp_dev *d = nullptr;
        char err[512] = "";
        EXPECT_NE(afxdp_dev_open(&cfg, &d, err, sizeof err), 0);
        EXPECT_EQ(d, nullptr);
        EXPECT_NE(std::strstr(err, "needs multi-buffer AF_XDP"), nullptr)
            << err;
        EXPECT_NE(std::strstr(err, "Linux 6.6"), nullptr) << err;
        afxdp_dev_close(d);
        [&] { GTEST_SKIP() << why << "; the port says: " << err; }();
        return true;
    }

    VethNetns net_;   // Outlives every device the test opens.
    std::vector<std::string> allowed_;
};

// The same, once per mode and need_wakeup setting.
struct ModeParam {
    afxdp_xdp_mode mode;
    bool need_wakeup;
};

inline std::string
param_name(const ::testing::TestParamInfo<ModeParam> &info)
{
    std::string s = afxdp_mode_name(info.param.mode);
    s += info.param.need_wakeup ? "_NeedWakeup" : "_NoNeedWakeup";
    return s;
}

class VethMode : public Veth,
                 public ::testing::WithParamInterface<ModeParam> {};


// The queue's statistics now.
inline afxdp_queue_stats
stats_of(afxdp_queue *q)
{
    afxdp_queue_stats st;
    afxdp_queue_get_stats(q, &st);
    return st;
}

// --- Packet hints and fast-path frames -------------------------------------


const uint16_t kVlan = 10;

// A UDP/IPv4 frame of flow 'flow' (its source port), numbered 'seq' in
// its payload (kMagic, then the number).
inline std::vector<uint8_t>
udp_frame(uint16_t flow, uint32_t seq)
{
    std::vector<uint8_t> f(14 + 20 + 8 + sizeof kMagic + 4, 0);
    std::memset(&f[0], 0xff, 6);
    f[6] = 0x02;
    f[11] = 0x01;
    f[12] = 0x08;                           // IPv4.
    uint8_t *ip = &f[14];
    ip[0] = 0x45;
    uint16_t ip_len = htons(uint16_t(f.size() - 14));
    std::memcpy(&ip[2], &ip_len, 2);
    ip[8] = 64;
    ip[9] = 17;                             // UDP.
    const uint8_t addrs[8] = {10, 0, 0, 1, 10, 0, 0, 2};
    std::memcpy(&ip[12], addrs, 8);
    uint8_t *udp = &ip[20];
    uint16_t ports[2] = {htons(flow), htons(9)};
    std::memcpy(udp, ports, 4);
    uint16_t udp_len = htons(uint16_t(f.size() - 34));
    std::memcpy(&udp[4], &udp_len, 2);
    std::memcpy(&udp[8], kMagic, sizeof kMagic);
    uint32_t be = htonl(seq);
    std::memcpy(&udp[8 + sizeof kMagic], &be, 4);
    return f;
}

// The number of a frame udp_frame() made, or -1.
inline int64_t
udp_seq_of(const void *data, size_t len)
{
    const uint8_t *p = static_cast<const uint8_t *>(data);
    if (len != 14 + 20 + 8 + sizeof kMagic + 4 || p[12] != 0x08
        || p[13] != 0 || std::memcmp(p + 42, kMagic, sizeof kMagic)) {
        return -1;
    }
    uint32_t be;
    std::memcpy(&be, p + 42 + sizeof kMagic, 4);
    return ntohl(be);
}

// Receives whatever arrives for about 'ms' milliseconds, up to 'want'
// packets, each copied out with its hash; the frames go back at once.
struct Received {
    std::vector<uint8_t> data;
    bool has_hash;
    uint32_t hash;
    bool has_mark;
    uint32_t mark;
};
inline std::vector<Received>
receive_copies(afxdp_queue *q, size_t want, int ms = 2000)
{
    std::vector<Received> got;
    afxdp_pool *pool = afxdp_queue_pool(q);
    for (int i = 0; i < ms && got.size() < want; i++) {
        afxdp_rx_frame frames[32];
        int error = 0;
        unsigned events = 0;
        size_t n = afxdp_queue_recv(q, frames, 32, nullptr, &events, &error);
        for (size_t k = 0; k < n; k++) {
            const uint8_t *d = static_cast<const uint8_t *>(frames[k].data);
            got.push_back({std::vector<uint8_t>(d, d + frames[k].len),
                           frames[k].has_rx_hash, frames[k].rx_hash,
                           frames[k].has_flow_mark, frames[k].flow_mark});
            afxdp_pool_put(pool, frames[k].data);
        }
        if (n == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    return got;
}

class Hints : public Veth {
protected:
    // Opens end A in 'mode'; '*info' gets its state.
    Dev open(afxdp_xdp_mode mode, bool rx_hints, afxdp_dev_info *info)
    {
        afxdp_dev_config cfg = config(net_.a(), mode);
        cfg.port.rx_hints = rx_hints;
        Dev d = open_dev(cfg);
        if (d) {
            afxdp_dev_get_info(d.get(), info);
        }
        return d;
    }
};


}  // namespace afxdp_test

#endif  // AFXDP_TESTS_VETH_TEST_HH
