// ovs-afxdp-fwd: the benchmark's baseline, an AF_XDP forwarder with no
// switch in it.
//
//   ovs-afxdp-fwd IN OUT SECONDS [--mode MODE] [--no-need-wakeup]
//                 [--copy|--in-place] [--ring N] [--no-coalesce]
//
// Opens IN and OUT through the same core OVS runs (lib/afxdp), sharing one
// UMEM as two OVS ports do by default, then for SECONDS receives bursts of
// 32 on IN and sends each burst out of OUT: copied in copy modes, in place
// in zero-copy mode, as OVS ports with options:shared_umem=auto do.
// --in-place sends in place in every mode (shared_umem=true); --copy gives
// each device its own UMEM (shared_umem=false).  TX kicks are coalesced
// as OVS ports do by default (coalesce_tx_kicks); --no-coalesce kicks on
// every burst, as a plain AF_XDP forwarder such as xdpsock's l2fwd does.
// No parsing, no flow lookup, no batching across ports: what
// is left is the AF_XDP cost OVS cannot avoid.  Pin it to the core the PMD
// would use.  Prints "forwarded PACKETS SECONDS MPPS dropped N"; the rate
// is over the whole run, which starts before the traffic does: the
// benchmark reads the sink's rate instead.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "afxdp.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kBurst = 32;

int
usage()
{
    std::fprintf(stderr, "usage: ovs-afxdp-fwd IN OUT SECONDS [--mode MODE] "
                 "[--no-need-wakeup] [--copy|--in-place] [--ring N] "
                 "[--no-coalesce]\n");
    return 2;
}

afxdp_dev *
open_dev(const char *ifname, afxdp_xdp_mode mode, bool nw, bool share,
         bool in_place, unsigned ring, bool coalesce)
{
    afxdp_dev_config cfg = {};
    cfg.ifname = ifname;
    afxdp_port_config_default(&cfg.port);
    cfg.port.mode = mode;
    cfg.port.use_need_wakeup = nw;
    cfg.numa_node = -1;
    cfg.port.sharing = !share ? AFXDP_SHARE_OFF
                       : in_place ? AFXDP_SHARE_IN_PLACE : AFXDP_SHARE_AUTO;
    cfg.port.coalesce_tx_kicks = coalesce;
    cfg.busy_polled = true;
    if (ring) {
        cfg.port.ring_size = ring;
        cfg.port.n_frames = std::max(2 * ring, unsigned(AFXDP_DEFAULT_FRAMES));
    }
    char err[512];
    afxdp_dev *dev = nullptr;
    if (int e = afxdp_dev_open(&cfg, &dev, err, sizeof err)) {
        std::fprintf(stderr, "ovs-afxdp-fwd: %s (%s)\n", err,
                     std::strerror(e));
        return nullptr;
    }
    return dev;
}

}  // namespace

int
main(int argc, char **argv)
{
    if (argc < 4) {
        return usage();
    }
    double seconds = std::atof(argv[3]);
    afxdp_xdp_mode mode = AFXDP_MODE_BEST_EFFORT;
    bool nw = afxdp_need_wakeup_supported();
    bool share = true;
    unsigned ring = 0;
    bool in_place = false;
    bool coalesce = true;
    for (int i = 4; i < argc; i++) {
        std::string opt = argv[i];
        char err[256];
        if (opt == "--mode" && i + 1 < argc) {
            if (afxdp_parse_mode(argv[++i], &mode, err, sizeof err)) {
                std::fprintf(stderr, "ovs-afxdp-fwd: --mode: %s\n", err);
                return 2;
            }
        } else if (opt == "--no-need-wakeup") {
            nw = false;
        } else if (opt == "--ring" && i + 1 < argc) {
            if (afxdp_parse_ring_size(argv[++i], &ring, err, sizeof err)) {
                std::fprintf(stderr, "ovs-afxdp-fwd: --ring: %s\n", err);
                return 2;
            }
        } else if (opt == "--in-place") {
            in_place = true;
        } else if (opt == "--copy") {
            share = false;
        } else if (opt == "--no-coalesce") {
            coalesce = false;
        } else {
            return usage();
        }
    }
    if (seconds <= 0) {
        return usage();
    }
    // Warnings and errors only: the benchmark keeps stdout for the figures.
    afxdp_set_log_handler(nullptr, AFXDP_LOG_WARN);
    afxdp_dev *in = open_dev(argv[1], mode, nw, share, in_place, ring,
                             coalesce);
    afxdp_dev *out = in ? open_dev(argv[2], mode, nw, share, in_place, ring,
                                   coalesce)
                        : nullptr;
    if (!out) {
        afxdp_dev_close(in);
        return 1;
    }
    afxdp_queue *rxq = afxdp_dev_queue(in, 0);
    afxdp_queue *txq = afxdp_dev_queue(out, 0);
    afxdp_pool *pool = afxdp_queue_pool(rxq);
    // In place: the send takes the frames; copied: they are ours to put.
    bool taken = pool == afxdp_queue_pool(txq)
                 && afxdp_queue_sends_in_place(txq);

    afxdp_rx_frame frames[kBurst];
    afxdp_tx_packet pkts[kBurst];
    const void *done[kBurst];
    // Packets of several frames (multi-buffer) are gathered here, one
    // buffer per packet of a burst, and sent copied.
    const size_t kGatherMax = 65536;
    std::vector<uint8_t> gathered(kBurst * kGatherMax);
    unsigned long long forwarded = 0, dropped = 0;
    auto start = Clock::now();
    auto end = start + std::chrono::duration<double>(seconds);
    for (unsigned long iter = 0;; iter++) {
        // The clock is read every 1024 polls, not on every one.
        if (!(iter & 1023) && Clock::now() >= end) {
            break;
        }
        unsigned events = 0;
        int error = 0;
        size_t n = afxdp_queue_recv(rxq, frames, kBurst, nullptr, &events,
                                    &error);
        if (!n) {
            continue;
        }
        size_t n_pkts = 0, n_done = 0;
        for (size_t i = 0; i < n; i += frames[i].n_frames) {
            afxdp_tx_packet &p = pkts[n_pkts];
            if (frames[i].n_frames > 1 && frames[i].len <= kGatherMax) {
                uint8_t *buf = &gathered[n_pkts * kGatherMax];
                afxdp_rx_gather(pool, &frames[i], buf);
                p = {buf, frames[i].len, nullptr};
            } else if (frames[i].n_frames > 1) {
                for (uint32_t k = 0; k < frames[i].n_frames; k++) {
                    afxdp_pool_put(pool, frames[i + k].data);
                }
                dropped++;
                continue;
            } else {
                p = {frames[i].data, frames[i].len, pool};
                done[n_done++] = frames[i].data;
            }
            n_pkts++;
        }
        dropped += afxdp_queue_send(txq, pkts, n_pkts, &events, &error);
        if (!taken) {
            afxdp_pool_put_n(pool, done, n_done);
        }
        forwarded += n_pkts;
    }
    double secs = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("forwarded %llu %.3f %.3f dropped %llu\n", forwarded, secs,
                forwarded / secs / 1e6, dropped);
    afxdp_dev_close(out);
    afxdp_dev_close(in);
    return 0;
}
