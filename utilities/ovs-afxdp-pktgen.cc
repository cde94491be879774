// ovs-afxdp-pktgen: traffic generator and sink for the benchmark.
//
//   ovs-afxdp-pktgen gen IFNAME SECONDS [--size N] [--flows N]
//                        [--dst-mac MAC] [--skb]
//       Transmits UDP frames out of IFNAME for SECONDS with an XDP program
//       run by BPF_PROG_RUN on live frames (BPF_F_TEST_XDP_LIVE_FRAMES):
//       the program returns XDP_TX, which the kernel turns into a transmit
//       on IFNAME, so no socket and no stack is involved.  With --flows N
//       the program rewrites the UDP source port of each frame, cycling
//       over N values packet by packet.
//       With --skb, transmits through a packet socket instead (sendmmsg,
//       bypassing the qdisc), slower: each frame then reaches a veth peer
//       as a socket buffer, as from any sender through the stack, and not
//       as an XDP frame.  veth gives XDP programs an RX hash for those
//       only.  A kernel that refuses live frames (some builds answer
//       EPERM even to root) gets the packet socket too, and a line on
//       stderr saying so.
//       Prints "sent PACKETS SECONDS MPPS".
//
//   ovs-afxdp-pktgen sink IFNAME SECONDS
//       Attaches an XDP program to IFNAME that counts and drops every
//       frame, waits SECONDS (or until SIGINT or SIGTERM), and prints
//       "received PACKETS SECONDS MPPS".
//
//   ovs-afxdp-pktgen redirect IN OUT SECONDS
//       The benchmark's bare XDP forwarder: attaches to IN a program that
//       redirects every frame to OUT through a one-slot devmap (no parsing,
//       no lookup but the map's, no counting), waits SECONDS and detaches
//       it.  The sink behind OUT counts what arrives.
//
//   ovs-afxdp-pktgen cost [REPEAT]
//       What each packet costs in XDP, with no traffic and no other work:
//       the kernel runs each program REPEAT times (default 2000000) on one
//       64-byte UDP packet (BPF_PROG_TEST_RUN) and says the mean time a
//       run.  The bare forwarder's program above, then the fast path's
//       (lib/afxdp/fastpath.bpf.c) on a packet that meets a redirecting
//       megaflow as OVS installs it for `in_port=A,actions=output:B`, on
//       one that meets none, and on one whose flow is in the fourth mask
//       slot in use.  Then, with a fresh frame for each run (REPEAT / 20
//       runs of one, each timed by the kernel alone), as a rewrite needs:
//       the bare forwarder, that hit, and flows that also set the UDP
//       destination port, or SCTP's (its CRC32c changed) at 64 and 1518
//       bytes.  Seven rounds, interleaved; prints each case's fastest and
//       median round in ns, and its fastest over the bare forwarder's.
//
// All need root (BPF) and a veth (or any device with XDP support).  They
// run in whatever network namespace they are started in.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/if.h>
#include <csignal>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>
#include <algorithm>

#include "fastpath.hh"

namespace {

using Clock = std::chrono::steady_clock;

int
fail(const char *what, int err)
{
    std::fprintf(stderr, "ovs-afxdp-pktgen: %s: %s\n", what,
                 std::strerror(err < 0 ? -err : err));
    return 1;
}

int
load(const bpf_insn *insns, size_t n, const char *name)
{
    LIBBPF_OPTS(bpf_prog_load_opts, opts);
    int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, name, "GPL", insns, n, &opts);
    if (fd < 0) {
        // Once more with the verifier's log, to say why.
        static char log[16384];
        LIBBPF_OPTS(bpf_prog_load_opts, lopts, .log_level = 1,
                    .log_size = sizeof log, .log_buf = log);
        bpf_prog_load(BPF_PROG_TYPE_XDP, name, "GPL", insns, n, &lopts);
        std::fprintf(stderr, "ovs-afxdp-pktgen: verifier: %s\n", log);
    }
    return fd;
}

// r0 = bpf_map_lookup_elem(map, &(u32){0}): the first slot of a per-CPU
// counter array (the key is built on the stack; r1-r5 are clobbered).
std::vector<bpf_insn>
lookup_slot0(int map)
{
    return {
        {BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0},
        {BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0},
        {BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4},
        {BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map},
        {0, 0, 0, 0, 0},
        {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem},
    };
}

// Prints "WHAT PACKETS SECONDS MPPS" for 'n' packets since 'start'.
void
report(const char *what, uint64_t n, Clock::time_point start)
{
    double secs = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("%s %llu %.3f %.3f\n", what, (unsigned long long) n, secs,
                n / secs / 1e6);
}

uint16_t
ip_checksum(const void *p, size_t len)
{
    const uint16_t *w = static_cast<const uint16_t *>(p);
    uint32_t sum = 0;
    for (size_t i = 0; i < len / 2; i++) {
        sum += w[i];
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return uint16_t(~sum);
}

// An Ethernet/IPv4/UDP frame of 'size' bytes (without FCS), source port
// 'sport'.  Addresses 10.99.0.1 -> 10.99.0.2; the UDP checksum is 0.
std::vector<uint8_t>
make_frame(size_t size, uint16_t sport, const uint8_t dst_mac[6])
{
    std::vector<uint8_t> f(size < 60 ? 60 : size, 0);
    auto *eth = reinterpret_cast<ethhdr *>(f.data());
    std::memcpy(eth->h_dest, dst_mac, 6);
    const uint8_t src[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
    std::memcpy(eth->h_source, src, 6);
    eth->h_proto = htons(ETH_P_IP);
    auto *ip = reinterpret_cast<iphdr *>(eth + 1);
    ip->version = 4;
    ip->ihl = 5;
    ip->ttl = 64;
    ip->protocol = IPPROTO_UDP;
    ip->tot_len = htons(uint16_t(f.size() - sizeof *eth));
    ip->saddr = htonl(0x0a630001);
    ip->daddr = htonl(0x0a630002);
    ip->check = ip_checksum(ip, sizeof *ip);
    auto *udp = reinterpret_cast<udphdr *>(ip + 1);
    udp->source = htons(sport);
    udp->dest = htons(5001);
    udp->len = htons(uint16_t(f.size() - sizeof *eth - sizeof *ip));
    return f;
}

bool
parse_mac(const char *s, uint8_t mac[6])
{
    unsigned b[6];
    if (std::sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3],
                    &b[4], &b[5]) != 6) {
        return false;
    }
    for (int i = 0; i < 6; i++) {
        mac[i] = uint8_t(b[i]);
    }
    return true;
}

// What gen() returns when the kernel will not run live frames at all.
constexpr int kLiveFramesRefused = -1;

int
gen(const char *ifname, double seconds, size_t size, unsigned flows,
    const uint8_t dst_mac[6])
{
    int ifindex = int(if_nametoindex(ifname));
    if (!ifindex) {
        return fail(ifname, errno);
    }
    // One flow: return XDP_TX, and the live-frames runner transmits the
    // frame on 'ifindex'.  N flows: the program also rewrites the UDP
    // source port of every frame to 1024 + (n++ % N), n being a per-CPU
    // counter, so consecutive packets belong to different flows (live
    // frames keep what the program wrote; the UDP checksum is 0).
    int map = -1;
    std::vector<bpf_insn> insns;
    if (flows > 1) {
        LIBBPF_OPTS(bpf_map_create_opts, mopts);
        map = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "afxdp_pktgen", 4, 8,
                             1, &mopts);
        if (map < 0) {
            return fail("creating the flow counter map", map);
        }
        const int16_t kSportOff = sizeof(ethhdr) + sizeof(iphdr);
        // r6 = ctx; r0 = the counter; if !r0 goto tx.
        insns = {{BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0}};
        for (const bpf_insn &i : lookup_slot0(map)) {
            insns.push_back(i);
        }
        const std::vector<bpf_insn> rest = {
            {BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 13, 0},
            // r7 = *r0; *r0 = r7 + 1; r7 = htons(1024 + r7 % flows).
            {BPF_LDX | BPF_MEM | BPF_DW, 7, 0, 0, 0},
            {BPF_ALU64 | BPF_MOV | BPF_X, 8, 7, 0, 0},
            {BPF_ALU64 | BPF_ADD | BPF_K, 8, 0, 0, 1},
            {BPF_STX | BPF_MEM | BPF_DW, 0, 8, 0, 0},
            {BPF_ALU64 | BPF_MOD | BPF_K, 7, 0, 0, int32_t(flows)},
            {BPF_ALU64 | BPF_ADD | BPF_K, 7, 0, 0, 1024},
            {BPF_ALU | BPF_END | BPF_TO_BE, 7, 0, 0, 16},
            // if data + sport + 2 > data_end goto tx; *(u16 *) sport = r7.
            {BPF_LDX | BPF_MEM | BPF_W, 2, 6, 0, 0},
            {BPF_LDX | BPF_MEM | BPF_W, 3, 6, 4, 0},
            {BPF_ALU64 | BPF_MOV | BPF_X, 4, 2, 0, 0},
            {BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, kSportOff + 2},
            {BPF_JMP | BPF_JGT | BPF_X, 4, 3, 1, 0},
            {BPF_STX | BPF_MEM | BPF_H, 2, 7, kSportOff, 0},
        };
        insns.insert(insns.end(), rest.begin(), rest.end());
    }
    insns.push_back({BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_TX});
    insns.push_back({BPF_JMP | BPF_EXIT, 0, 0, 0, 0});
    int prog = load(insns.data(), insns.size(), "afxdp_pktgen");
    if (prog < 0) {
        return fail("loading the generator program", prog);
    }
    std::vector<uint8_t> frame = make_frame(size, 1024, dst_mac);
    xdp_md ctx = {};
    ctx.ingress_ifindex = uint32_t(ifindex);

    // Each run ends in the kernel with an RCU grace period
    // (synchronize_rcu() as the live frames' memory model goes): tens of
    // milliseconds on an idle VM, which left the generator's core idle
    // half the time when each run sent 64 Ki frames.  So each run is
    // sized to last about half a second at the rate the last one reached,
    // and to end near the deadline.
    int repeat = 1 << 16;
    uint64_t sent = 0;
    auto start = Clock::now();
    auto end = start + std::chrono::duration<double>(seconds);
    for (auto now = start; now < end; now = Clock::now()) {
        ctx.data_end = uint32_t(frame.size());   // The kernel insists.
        LIBBPF_OPTS(bpf_test_run_opts, opts,
                    .data_in = frame.data(),
                    .data_size_in = uint32_t(frame.size()),
                    .ctx_in = &ctx,
                    .ctx_size_in = sizeof ctx,
                    .repeat = repeat,
                    .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
                    .batch_size = 64);
        int err = bpf_prog_test_run_opts(prog, &opts);
        if (err && !sent && (err == -EPERM || err == -EOPNOTSUPP)) {
            std::fprintf(stderr, "ovs-afxdp-pktgen: this kernel refuses "
                         "BPF_PROG_RUN with live frames (%s): sending "
                         "through a packet socket (--skb) instead\n",
                         std::strerror(-err));
            close(prog);
            if (map >= 0) {
                close(map);
            }
            return kLiveFramesRefused;
        }
        if (err) {
            return fail("BPF_PROG_RUN with live frames", err);
        }
        sent += uint64_t(repeat);
        auto after = Clock::now();
        double took = std::chrono::duration<double>(after - now).count();
        double left = std::chrono::duration<double>(end - after).count();
        double rate = repeat / std::max(took, 1e-6);
        repeat = int(std::clamp(rate * std::min(0.5, left), 4096.0,
                                double(1 << 26)));
    }
    report("sent", sent, start);
    close(prog);
    if (map >= 0) {
        close(map);
    }
    return 0;
}

// gen --skb: the same frames through a packet socket, one per flow in
// turn, in batches of 64 per sendmmsg().
int
gen_skb(const char *ifname, double seconds, size_t size, unsigned flows,
        const uint8_t dst_mac[6])
{
    int ifindex = int(if_nametoindex(ifname));
    if (!ifindex) {
        return fail(ifname, errno);
    }
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return fail("packet socket", errno);
    }
    int one = 1;
    setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
    sockaddr_ll sll = {};
    sll.sll_family = AF_PACKET;
    sll.sll_ifindex = ifindex;
    if (bind(fd, reinterpret_cast<sockaddr *>(&sll), sizeof sll)) {
        return fail("binding the packet socket", errno);
    }
    std::vector<std::vector<uint8_t>> frames;
    for (unsigned i = 0; i < (flows ? flows : 1); i++) {
        frames.push_back(make_frame(size, uint16_t(1024 + i), dst_mac));
    }
    constexpr unsigned kBatch = 64;
    iovec iov[kBatch];
    mmsghdr msgs[kBatch] = {};
    uint64_t sent = 0;
    size_t next = 0;
    auto start = Clock::now();
    auto end = start + std::chrono::duration<double>(seconds);
    while (Clock::now() < end) {
        for (unsigned i = 0; i < kBatch; i++) {
            std::vector<uint8_t> &f = frames[next++ % frames.size()];
            iov[i] = {f.data(), f.size()};
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        int n = sendmmsg(fd, msgs, kBatch, 0);
        if (n < 0 && errno != ENOBUFS && errno != EAGAIN) {
            return fail("sendmmsg", errno);
        }
        sent += n > 0 ? uint64_t(n) : 0;
    }
    report("sent", sent, start);
    close(fd);
    return 0;
}

int
sink(const char *ifname, double seconds)
{
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop, nullptr);
    int ifindex = int(if_nametoindex(ifname));
    if (!ifindex) {
        return fail(ifname, errno);
    }
    LIBBPF_OPTS(bpf_map_create_opts, mopts);
    int map = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "afxdp_sink", 4, 8, 1,
                             &mopts);
    if (map < 0) {
        return fail("creating the counter map", map);
    }
    // p = the counter; if (p) *p += 1; return XDP_DROP.
    std::vector<bpf_insn> count = lookup_slot0(map);
    const std::vector<bpf_insn> rest = {
        {BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3, 0},
        {BPF_LDX | BPF_MEM | BPF_DW, 1, 0, 0, 0},
        {BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, 1},
        {BPF_STX | BPF_MEM | BPF_DW, 0, 1, 0, 0},
        {BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_DROP},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    count.insert(count.end(), rest.begin(), rest.end());
    int prog = load(count.data(), count.size(), "afxdp_sink");
    if (prog < 0) {
        return fail("loading the sink program", prog);
    }
    int err = bpf_xdp_attach(ifindex, prog, XDP_FLAGS_DRV_MODE, nullptr);
    if (err) {
        return fail("attaching the sink program", err);
    }
    int ncpu = libbpf_num_possible_cpus();
    std::vector<uint64_t> values(size_t(ncpu > 0 ? ncpu : 1));
    auto total = [&]() {
        uint32_t key = 0;
        uint64_t sum = 0;
        if (!bpf_map_lookup_elem(map, &key, values.data())) {
            for (uint64_t v : values) {
                sum += v;
            }
        }
        return sum;
    };
    uint64_t before = total();
    auto start = Clock::now();
    // SECONDS, or less if SIGINT or SIGTERM comes first (blocked above, so
    // that it ends only this wait).
    timespec wait;
    wait.tv_sec = time_t(seconds);
    wait.tv_nsec = long((seconds - double(wait.tv_sec)) * 1e9);
    sigtimedwait(&stop, nullptr, &wait);
    uint64_t got = total() - before;
    report("received", got, start);
    bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, nullptr);
    return 0;
}

// The bare forwarder's program: return bpf_redirect_map(map, 0, XDP_DROP).
int
bare_redirect_prog(int map)
{
    const bpf_insn insns[] = {
        {BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map},
        {0, 0, 0, 0, 0},
        {BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 0},
        {BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, XDP_DROP},
        {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    return load(insns, sizeof insns / sizeof insns[0], "afxdp_redirect");
}

// A one-slot devmap holding 'ifindex'.
int
one_slot_devmap(uint32_t ifindex)
{
    LIBBPF_OPTS(bpf_map_create_opts, mopts);
    int map = bpf_map_create(BPF_MAP_TYPE_DEVMAP, "afxdp_redirect", 4, 4, 1,
                             &mopts);
    if (map < 0) {
        return map;
    }
    uint32_t key = 0;
    int err = bpf_map_update_elem(map, &key, &ifindex, BPF_ANY);
    if (err) {
        close(map);
        return err;
    }
    return map;
}

int
redirect(const char *in, const char *out, double seconds)
{
    int in_ifindex = int(if_nametoindex(in));
    if (!in_ifindex) {
        return fail(in, errno);
    }
    uint32_t out_ifindex = if_nametoindex(out);
    if (!out_ifindex) {
        return fail(out, errno);
    }
    int map = one_slot_devmap(out_ifindex);
    if (map < 0) {
        return fail("creating the devmap with OUT", map);
    }
    int prog = bare_redirect_prog(map);
    if (prog < 0) {
        return fail("loading the redirect program", prog);
    }
    int err = bpf_xdp_attach(in_ifindex, prog, XDP_FLAGS_DRV_MODE, nullptr);
    if (err) {
        return fail("attaching the redirect program", err);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    bpf_xdp_detach(in_ifindex, XDP_FLAGS_DRV_MODE, nullptr);
    std::printf("redirected %s -> %s for %.3f s\n", in, out, seconds);
    close(prog);
    close(map);
    return 0;
}

// The mean time of one run of 'prog' on 'frame', over 'repeat' runs in
// the kernel; 'want' is the verdict it must give.  Negative errno on
// failure.
int64_t
run_ns(int prog, std::vector<uint8_t> frame, int repeat, uint32_t want)
{
    xdp_md ctx = {};
    ctx.data_end = uint32_t(frame.size());
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame.data(),
                .data_size_in = uint32_t(frame.size()), .ctx_in = &ctx,
                .ctx_size_in = sizeof ctx, .repeat = repeat);
    int err = bpf_prog_test_run_opts(prog, &opts);
    if (err) {
        return err;
    }
    if (opts.retval != want) {
        std::fprintf(stderr, "ovs-afxdp-pktgen: verdict %u, want %u\n",
                     opts.retval, want);
        return -EPROTO;
    }
    return opts.duration;
}

// The mean time of one run of 'prog' on a fresh copy of 'frame', over
// 'n' runs of one each (a program that rewrites the frame then finds it
// as it came, each time); the kernel times each run alone.  Negative
// errno on failure.
int64_t
run_fresh_ns(int prog, const std::vector<uint8_t> &frame, int n,
             uint32_t want)
{
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
        int64_t ns = run_ns(prog, frame, 1, want);
        if (ns < 0) {
            return ns;
        }
        sum += ns;
    }
    return (sum + n / 2) / n;
}

// An SCTP packet instead of the UDP one make_frame() builds: the same
// addresses, ports 1024 -> 5001, its checksum whatever the bytes give.
std::vector<uint8_t>
make_sctp_frame(size_t size, const uint8_t dst_mac[6])
{
    std::vector<uint8_t> f = make_frame(size, 1024, dst_mac);
    auto *ip = reinterpret_cast<iphdr *>(f.data() + sizeof(ethhdr));
    ip->protocol = IPPROTO_SCTP;
    ip->check = 0;
    ip->check = ip_checksum(ip, sizeof *ip);
    uint8_t *sctp = reinterpret_cast<uint8_t *>(ip + 1);
    const uint8_t vtag_and_csum[8] = {0x12, 0x34, 0x56, 0x78,
                                      0x9a, 0xbc, 0xde, 0xf0};
    std::memcpy(sctp + 4, vtag_and_csum, sizeof vtag_and_csum);
    return f;
}

// The fast path with the megaflow OVS installs for
// `in_port=A,actions=output:B`, after 'others' flows of other masks (on
// the UDP source port, which the frame's misses): that flow then sits in
// mask slot 'others', and a packet meeting it costs 'others' + 1 lookups.
// The redirect target is the loopback device: the program only names it.
afxdp::Result<afxdp::FastPath>
cost_fast_path(const std::vector<uint8_t> &frame, uint32_t others,
               void (*edit)(afxdp::XdpFlow &) = nullptr)
{
    using namespace afxdp;
    auto r = FastPath::load(-1);
    if (!r.ok()) {
        std::fprintf(stderr, "ovs-afxdp-pktgen: the fast path: %s\n",
                     r.error().why);
        return afxdp::Result<FastPath>::failure(r.error().error);
    }
    FastPath fp = r.take();
    int err = fp.add_target(1);
    // recirc_id(0),in_port(A),eth_type(0x0800),ipv4(frag=no), actions:B.
    XdpFlow f;
    f.mask.dl_type = 0xffff;
    f.mask.nw_frag = 0x3;
    std::memcpy(&f.key.dl_type, &frame[12], 2);
    f.verdict = Verdict::kRedirect;
    f.ifindex = 1;
    if (edit) {
        edit(f);
    }
    for (uint32_t i = 0; !err && i < others; i++) {
        XdpFlow g = f;
        g.mask.tp_src = htons(uint16_t(0xffff >> i));
        g.key.tp_src = htons(uint16_t(100 + i)) & g.mask.tp_src;
        err = fp.put({2 + i, 0, 0, 0}, g);
    }
    err = err ? err : fp.put({1, 0, 0, 0}, f);
    if (err) {
        std::fprintf(stderr, "ovs-afxdp-pktgen: putting the flows: %s\n",
                     std::strerror(-err));
        return Result<FastPath>::failure(err);
    }
    return Result<FastPath>(std::move(fp));
}

int
cost(int repeat)
{
    const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 2};
    std::vector<uint8_t> frame = make_frame(64 - 4, 1024, mac);
    int map = one_slot_devmap(1);
    if (map < 0) {
        return fail("creating the devmap with lo", map);
    }
    int bare = bare_redirect_prog(map);
    if (bare < 0) {
        return fail("loading the redirect program", bare);
    }
    auto one = cost_fast_path(frame, 0);
    auto four = cost_fast_path(frame, 3);
    if (!one.ok() || !four.ok()) {
        return 1;
    }
    // A flow that also sets the destination port, as OVS installs it for
    // `udp,actions=set_field:7->udp_dst,output:B` (the protocol matched);
    // and for SCTP.
    auto set_udp = [](afxdp::XdpFlow &f) {
        f.mask.nw_proto = 0xff;
        f.key.nw_proto = IPPROTO_UDP;
        f.set_l4 = IPPROTO_UDP;
        f.tp_dst = htons(7);
        f.tp_dst_mask = 0xffff;
    };
    auto set_sctp = [](afxdp::XdpFlow &f) {
        f.mask.nw_proto = 0xff;
        f.key.nw_proto = IPPROTO_SCTP;
        f.set_l4 = IPPROTO_SCTP;
        f.tp_dst = htons(7);
        f.tp_dst_mask = 0xffff;
    };
    auto udp_set = cost_fast_path(frame, 0, set_udp);
    auto sctp_set = cost_fast_path(frame, 0, set_sctp);
    if (!udp_set.ok() || !sctp_set.ok()) {
        return 1;
    }
    std::vector<uint8_t> udp_csum = frame;   // A UDP checksum to update.
    udp_csum[14 + 20 + 6] = 0x5a;
    const std::vector<uint8_t> sctp = make_sctp_frame(64 - 4, mac);
    const std::vector<uint8_t> sctp_big = make_sctp_frame(1518 - 4, mac);
    std::vector<uint8_t> other = frame;
    other[14 + 6] = 0x20;   // A first fragment (MF): no flow has frag=first.
    struct Case {
        const char *name;
        int prog;
        const std::vector<uint8_t> &frame;
        uint32_t verdict;
        std::vector<int64_t> ns;
    } cases[] = {
        {"bare devmap redirect", bare, frame, XDP_REDIRECT, {}},
        {"fast path, 1 mask: redirected", one.value().prog_fd(), frame,
         XDP_REDIRECT, {}},
        {"fast path, 1 mask: no flow (to the socket)", one.value().prog_fd(),
         other, XDP_PASS, {}},
        {"fast path, 4 masks: redirected by the 4th",
         four.value().prog_fd(), frame, XDP_REDIRECT, {}},
    };
    // A rewrite is done once on a frame run again and again (the second
    // run finds the port it sets): these run each frame once, fresh.
    Case fresh[] = {
        {"bare devmap redirect", bare, frame, XDP_REDIRECT, {}},
        {"fast path, 1 mask: redirected", one.value().prog_fd(), frame,
         XDP_REDIRECT, {}},
        {"UDP destination port set, 64 B", udp_set.value().prog_fd(),
         udp_csum, XDP_REDIRECT, {}},
        {"SCTP destination port set, 64 B", sctp_set.value().prog_fd(),
         sctp, XDP_REDIRECT, {}},
        {"SCTP destination port set, 1518 B", sctp_set.value().prog_fd(),
         sctp_big, XDP_REDIRECT, {}},
    };
    const int fresh_runs = std::max(repeat / 20, 1);
    for (int round = 0; round < 7; round++) {
        for (Case &c : cases) {
            int64_t ns = run_ns(c.prog, c.frame, repeat, c.verdict);
            if (ns < 0) {
                return fail(c.name, int(ns));
            }
            c.ns.push_back(ns);
        }
        for (Case &c : fresh) {
            int64_t ns = run_fresh_ns(c.prog, c.frame, fresh_runs, c.verdict);
            if (ns < 0) {
                return fail(c.name, int(ns));
            }
            c.ns.push_back(ns);
        }
    }
    // The fastest round is the one least disturbed by the rest of the
    // machine; the median says how steady the rounds were.  Each table's
    // first case is its bare forwarder.
    auto print = [](const char *title, Case *table, size_t n) {
        std::printf("%-46s %8s %8s %10s\n", title, "fastest", "median",
                    "over bare");
        int64_t base = 0;
        for (size_t i = 0; i < n; i++) {
            Case &c = table[i];
            std::sort(c.ns.begin(), c.ns.end());
            base = i ? base : c.ns[0];
            std::printf("%-46s %8lld %8lld %+10lld\n", c.name,
                        (long long) c.ns[0],
                        (long long) c.ns[c.ns.size() / 2],
                        (long long) (c.ns[0] - base));
        }
    };
    print("ns a packet", cases, sizeof cases / sizeof cases[0]);
    std::printf("\n");
    print("ns a fresh frame (a run each, timed alone)", fresh,
          sizeof fresh / sizeof fresh[0]);
    close(bare);
    close(map);
    return 0;
}

int
usage()
{
    std::fprintf(stderr,
                 "usage: ovs-afxdp-pktgen gen IFNAME SECONDS [--size N] "
                 "[--flows N] [--dst-mac MAC] [--skb]\n"
                 "       ovs-afxdp-pktgen sink IFNAME SECONDS\n"
                 "       ovs-afxdp-pktgen redirect IN OUT SECONDS\n"
                 "       ovs-afxdp-pktgen cost [REPEAT]\n");
    return 2;
}

}  // namespace

int
main(int argc, char **argv)
{
    if (argc == 5 && std::string(argv[1]) == "redirect") {
        double seconds = std::atof(argv[4]);
        return seconds > 0 ? redirect(argv[2], argv[3], seconds) : usage();
    }
    if ((argc == 2 || argc == 3) && std::string(argv[1]) == "cost") {
        long repeat = argc == 3 ? std::atol(argv[2]) : 2000000;
        return repeat > 0 && repeat <= 1000000000 ? cost(int(repeat)) : usage();
    }
    if (argc < 4) {
        return usage();
    }
    std::string cmd = argv[1];
    const char *ifname = argv[2];
    double seconds = std::atof(argv[3]);
    if (seconds <= 0) {
        return usage();
    }
    if (cmd == "sink" && argc == 4) {
        return sink(ifname, seconds);
    }
    if (cmd != "gen") {
        return usage();
    }
    size_t size = 64;
    unsigned flows = 1;
    uint8_t mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
    bool skb = false;
    for (int i = 4; i < argc; i += 2) {
        std::string opt = argv[i];
        if (opt == "--skb") {
            skb = true;
            i--;
            continue;
        }
        if (i + 1 >= argc) {
            return usage();
        }
        if (opt == "--size") {
            size = size_t(std::atoi(argv[i + 1]));
        } else if (opt == "--flows") {
            flows = unsigned(std::atoi(argv[i + 1]));
        } else if (opt == "--dst-mac") {
            if (!parse_mac(argv[i + 1], mac)) {
                return usage();
            }
        } else {
            return usage();
        }
    }
    // Our frames are 'size' bytes on the wire including a 4-byte FCS.
    size_t len = size >= 64 ? size - 4 : 60;
    int r = skb ? kLiveFramesRefused : gen(ifname, seconds, len, flows, mac);
    return r == kLiveFramesRefused ? gen_skb(ifname, seconds, len, flows, mac)
                                   : r;
}
