// Option parsing: strict, with messages that name the accepted values.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "afxdp.h"
#include "compat.hh"

const char *afxdp_mode_name_of(afxdp_xdp_mode) noexcept;   // device.cc

extern "C" const char *
afxdp_mode_name(enum afxdp_xdp_mode m) noexcept
{
    return afxdp_mode_name_of(m);
}

extern "C" int
afxdp_parse_mode(const char *s, enum afxdp_xdp_mode *mode, char *err,
                 size_t errlen) noexcept
{
    for (unsigned m = 0; s && m < AFXDP_MODE_N; m++) {
        if (!strcasecmp(s, afxdp_mode_name_of(afxdp_xdp_mode(m)))) {
            *mode = afxdp_xdp_mode(m);
            return 0;
        }
    }
    std::snprintf(err, errlen, "invalid value '%s' (accepted: best-effort, "
                  "native-with-zerocopy, native, generic)", s ? s : "");
    return EINVAL;
}

extern "C" int
afxdp_parse_bool(const char *s, bool *value, char *err, size_t errlen) noexcept
{
    if (s && !std::strcmp(s, "true")) {
        *value = true;
        return 0;
    }
    if (s && !std::strcmp(s, "false")) {
        *value = false;
        return 0;
    }
    std::snprintf(err, errlen, "invalid value '%s' (accepted: true, false)",
                  s ? s : "");
    return EINVAL;
}

extern "C" int
afxdp_parse_uint(const char *s, unsigned min, unsigned max, unsigned *value,
                 char *err, size_t errlen) noexcept
{
    char *end = nullptr;
    errno = 0;
    unsigned long v = 0;
    bool ok = s && *s >= '0' && *s <= '9';
    if (ok) {
        v = std::strtoul(s, &end, 10);
        ok = !errno && !*end && v >= min && v <= max;
    }
    if (!ok) {
        std::snprintf(err, errlen, "invalid value '%s' (accepted: an "
                      "integer from %u to %u)", s ? s : "", min, max);
        return EINVAL;
    }
    *value = unsigned(v);
    return 0;
}

extern "C" int
afxdp_parse_ring_size(const char *s, unsigned *value, char *err,
                      size_t errlen) noexcept
{
    unsigned v;
    if (afxdp_parse_uint(s, AFXDP_MIN_RING_SIZE, AFXDP_MAX_RING_SIZE, &v,
                         err, errlen) || (v & (v - 1))) {
        std::snprintf(err, errlen, "invalid value '%s' (accepted: a power "
                      "of two from %u to %u)", s ? s : "",
                      unsigned(AFXDP_MIN_RING_SIZE),
                      unsigned(AFXDP_MAX_RING_SIZE));
        return EINVAL;
    }
    *value = v;
    return 0;
}

extern "C" bool
afxdp_need_wakeup_supported(void) noexcept
{
    return afxdp::compat::kNeedWakeupBuilt;
}

namespace {

// Whether this kernel knows XDP_USE_SG, and if not why not.  bind() checks
// the flags before it looks for the interface: a flag it knows gets as far
// as "no such device" (interface index 0), one it does not is EINVAL.
struct MultiBufferProbe {
    MultiBufferProbe() noexcept
    {
        int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            std::snprintf(why, sizeof why, "cannot open an AF_XDP socket to "
                          "ask the kernel: %s", std::strerror(errno));
            return;
        }
        sockaddr_xdp sxdp = {};
        sxdp.sxdp_family = AF_XDP;
        sxdp.sxdp_flags = afxdp::compat::kBindMultiBuffer;
        int err = bind(fd, reinterpret_cast<sockaddr *>(&sxdp), sizeof sxdp)
                  ? errno : 0;
        close(fd);
        supported = err == ENODEV;
        if (!supported) {
            std::snprintf(why, sizeof why, "the kernel does not know "
                          "XDP_USE_SG (multi-buffer AF_XDP, Linux 6.6)%s%s",
                          err == EINVAL ? "" : ": ",
                          err == EINVAL ? "" : std::strerror(err));
        }
    }
    bool supported = false;
    char why[160] = "";
};

}  // namespace

extern "C" unsigned
afxdp_max_mtu(char *why, size_t whylen) noexcept
{
    static const MultiBufferProbe probe;
    if (whylen) {
        std::snprintf(why, whylen, "%s", probe.why);
    }
    return probe.supported ? AFXDP_MAX_MTU_MULTI_BUFFER
                           : AFXDP_MAX_MTU_ONE_FRAME;
}

extern "C" unsigned
afxdp_device_rx_queues(const char *ifname) noexcept
{
    char path[128];
    std::snprintf(path, sizeof path, "/sys/class/net/%s/queues", ifname);
    DIR *dir = opendir(path);
    if (!dir) {
        return 0;
    }
    unsigned n = 0;
    while (const dirent *e = readdir(dir)) {
        n += !std::strncmp(e->d_name, "rx-", 3);
    }
    closedir(dir);
    return n;
}
