// libFuzzer harness: the C API entry points of afxdp.h that take input
// without a live device, called as root without touching a real interface.
//
// Input (missing bytes read as zero):
//   byte 0      flags: bit 0 use_need_wakeup, bits 1-2 the kind of name
//               (0, 3: "afxdpfz" + suffix cut to IFNAMSIZ-1 bytes, 1: empty,
//               2: "afxdpfz" + suffix padded past IFNAMSIZ-1, up to 64)
//               bits 3-4 sharing, bit 5 coalesce_tx_kicks, bit 6 rx_hints,
//               bit 7 offload with the port's fast_path
//   byte 1      mode (any value: C callers may pass any)
//   byte 2      log level for afxdp_set_log_handler (low 2 bits)
//   bytes 3-6   n_queues       bytes 7-10  ring_size
//   bytes 11-14 n_frames (modulo 4097: memory stays small were it used)
//   bytes 15-16 errlen (modulo 301)
//   bytes 17-18 numa_node (signed)   bytes 19-20 frame_meta_size
//   bytes 21-24 qid for afxdp_dev_queue
//   the rest    the name's suffix, up to a NUL
//
// afxdp_dev_open() must fail on such a name: with a positive errno (EINVAL
// for an invalid configuration, ENODEV for no such device), no device, and
// a non-empty NUL-terminated message that names the interface (when the
// configuration is valid: see kStrictNaming) and never passes errlen; it
// must leak no memory (LeakSanitizer, after each input), no file
// descriptor, and no retired pool.
//
// Before any call the harness makes sure the name is no interface of this
// machine; if it is one, the input is skipped.

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <net/if.h>
#include <string>
#include <unistd.h>

#include "afxdp.h"
#include "fuzz-check.hh"

using fuzz::call_with_err;
using fuzz::quote;

namespace {

const char kNamePrefix[] = "afxdpfz";

// Every failure message names the interface (AFXDP_FUZZ_STRICT=0 relaxes
// that for the invalid-configuration messages).
bool kStrictNaming = true;

afxdp_log_level log_min;
unsigned log_calls;

void
log_handler(afxdp_log_level level, const char *msg)
{
    FUZZ_CHECK(level >= log_min && level <= AFXDP_LOG_ERR,
               "logged at level " + std::to_string(int(level)) + " below "
               + std::to_string(int(log_min)));
    FUZZ_CHECK(msg && std::strlen(msg) < 4096, "log message");
    log_calls++;
}

// The lowest free file descriptor: any descriptor leaked by a call takes
// it, so it changes.
int
lowest_free_fd()
{
    int fd = dup(2);
    FUZZ_CHECK(fd >= 0, "dup");
    close(fd);
    return fd;
}

std::string
make_name(unsigned kind, const std::string &suffix)
{
    std::string name;
    switch (kind) {
    case 1:
        return "";
    case 2:
        name = kNamePrefix + suffix;
        while (name.size() < IFNAMSIZ) {
            name += 'x';
        }
        return name.substr(0, 64);
    default:
        name = kNamePrefix + suffix;
        return name.substr(0, IFNAMSIZ - 1);
    }
}

void
check_open_fails(const afxdp_dev_config &cfg, size_t errlen)
{
    const char *ifname = cfg.ifname;
    const afxdp_port_config &p = cfg.port;
    bool valid = p.n_queues >= 1 && p.n_queues <= AFXDP_MAX_QUEUES
                 && p.mode < AFXDP_MODE_N
                 && p.ring_size >= AFXDP_MIN_RING_SIZE
                 && p.ring_size <= AFXDP_MAX_RING_SIZE
                 && !(p.ring_size & (p.ring_size - 1))
                 && p.n_frames >= 2 * p.ring_size
                 && p.n_frames <= AFXDP_MAX_FRAMES
                 && p.sharing <= AFXDP_SHARE_OFF;
    afxdp_dev *dev;
    auto out = call_with_err(
        [&](char *err, size_t len) {
            dev = reinterpret_cast<afxdp_dev *>(uintptr_t(0x1));
            int r = afxdp_dev_open(&cfg, &dev, err, len);
            FUZZ_CHECK(!dev, "afxdp_dev_open failed, yet set a device");
            return r;
        },
        errlen, 1024);

    std::string what = "afxdp_dev_open(" + quote(ifname) + ", n_queues "
                       + std::to_string(cfg.port.n_queues) + ", mode "
                       + std::to_string(int(cfg.port.mode)) + ", ring "
                       + std::to_string(cfg.port.ring_size) + ", frames "
                       + std::to_string(cfg.port.n_frames) + ")";
    FUZZ_CHECK(out.ret > 0, what + " returned " + std::to_string(out.ret)
               + " on a device that does not exist");
    FUZZ_CHECK(out.ret == (valid ? ENODEV : EINVAL),
               what + " returned " + std::to_string(out.ret) + " ("
               + std::strerror(out.ret) + "): " + quote(out.msg.c_str()));
    if (valid || kStrictNaming) {
        FUZZ_CHECK(*ifname == '\0'
                   || out.msg.find(ifname) != std::string::npos,
                   what + ": message does not name the interface: "
                   + quote(out.msg.c_str()));
    }
}

}  // namespace

extern "C" int
LLVMFuzzerInitialize(int *, char ***)
{
    const char *strict = std::getenv("AFXDP_FUZZ_STRICT");
    kStrictNaming = !strict || std::strcmp(strict, "0");
    return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz::Reader in(data, size);
    uint8_t flags = in.take<uint8_t>();
    unsigned mode = in.take<uint8_t>();
    log_min = afxdp_log_level(in.take<uint8_t>() & 3);
    afxdp_dev_config cfg = {};
    cfg.port.use_need_wakeup = flags & 1;
    cfg.port.mode = afxdp_xdp_mode(mode);
    cfg.port.sharing = afxdp_sharing((flags >> 3) & 3);
    cfg.port.coalesce_tx_kicks = flags & 32;
    cfg.port.rx_hints = flags & 64;
    cfg.offload = cfg.port.fast_path = flags & 128;
    cfg.port.n_queues = in.take<uint32_t>();
    cfg.port.ring_size = in.take<uint32_t>();
    cfg.port.n_frames = in.take<uint32_t>() % 4097;
    size_t errlen = in.take<uint16_t>() % (fuzz::kMaxErrlen + 1);
    cfg.numa_node = int16_t(in.take<uint16_t>());
    cfg.frame_meta_size = in.take<uint16_t>();
    unsigned qid = in.take<uint32_t>();
    std::string name = make_name((flags >> 1) & 3, in.rest_until_nul());
    cfg.ifname = name.c_str();

    // Never touch a real interface.
    if (!name.empty() && if_nametoindex(name.c_str())) {
        return 0;
    }

    afxdp_set_log_handler(log_handler, log_min);
    int fd_before = lowest_free_fd();
    unsigned retired_before = afxdp_retired_pools();

    check_open_fails(cfg, errlen);

    // Without an ifname: an invalid configuration, not a crash.
    afxdp_dev_config noname = cfg;
    noname.ifname = nullptr;
    afxdp_dev *dev = nullptr;
    char err[64];
    int r = afxdp_dev_open(&noname, &dev, err, sizeof err);
    FUZZ_CHECK(r == EINVAL && !dev && std::memchr(err, 0, sizeof err) && *err,
               "afxdp_dev_open(NULL ifname) returned " + std::to_string(r));

    r = afxdp_remove_stale_program(name.c_str());
    FUZZ_CHECK(r > 0, "afxdp_remove_stale_program(" + quote(name.c_str())
               + ") returned " + std::to_string(r));

    FUZZ_CHECK(afxdp_device_rx_queues(name.c_str()) == 0,
               "afxdp_device_rx_queues(" + quote(name.c_str()) + ")");

    // Destroy functions accept NULL; afxdp_dev_queue(NULL) is NULL.
    afxdp_dev_close(nullptr);
    FUZZ_CHECK(!afxdp_dev_queue(nullptr, qid), "afxdp_dev_queue(NULL)");

    const char *mode_name = afxdp_mode_name(cfg.port.mode);
    FUZZ_CHECK(mode_name && *mode_name, "afxdp_mode_name");

    FUZZ_CHECK(lowest_free_fd() == fd_before,
               "a file descriptor leaked: lowest free was "
               + std::to_string(fd_before) + ", now "
               + std::to_string(lowest_free_fd()));
    FUZZ_CHECK(afxdp_retired_pools() == retired_before
               && retired_before == 0,
               "retired pools: " + std::to_string(retired_before) + " -> "
               + std::to_string(afxdp_retired_pools()));
    afxdp_set_log_handler(nullptr, AFXDP_LOG_INFO);
    return 0;
}
