#include "log.hh"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "compat.hh"

namespace afxdp {
namespace {

void
log_to_stderr(enum afxdp_log_level level, const char *msg)
{
    static const char *const names[] = {"dbg", "info", "warn", "err"};
    std::fprintf(stderr, "afxdp|%s|%s\n", names[level], msg);
}

std::atomic<afxdp_log_fn *> handler{log_to_stderr};
std::atomic<int> min_level{AFXDP_LOG_INFO};

}  // namespace

bool
log_enabled(afxdp_log_level level) noexcept
{
    return level >= min_level.load(std::memory_order_relaxed);
}

void
log(afxdp_log_level level, const char *fmt, ...) noexcept
{
    if (!log_enabled(level)) {
        return;
    }
    char buf[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, args);
    va_end(args);
    handler.load(std::memory_order_relaxed)(level, buf);
}

// libbpf and libxdp print through here, at the level they chose, without
// their trailing newline.
void
lib_vprint(afxdp_log_level level, const char *fmt, va_list args) noexcept
{
    if (!log_enabled(level)) {
        return;
    }
    char buf[512];
    std::vsnprintf(buf, sizeof buf, fmt, args);
    size_t n = std::strlen(buf);
    while (n && buf[n - 1] == '\n') {
        buf[--n] = '\0';
    }
    handler.load(std::memory_order_relaxed)(level, buf);
}

int
libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
    lib_vprint(level == LIBBPF_WARN ? AFXDP_LOG_WARN
               : level == LIBBPF_INFO ? AFXDP_LOG_INFO : AFXDP_LOG_DBG,
               fmt, args);
    return 0;
}

#ifdef HAVE_LIBXDP
int
libxdp_print(enum libxdp_print_level level, const char *fmt, va_list args)
{
    lib_vprint(level == LIBXDP_WARN ? AFXDP_LOG_WARN
               : level == LIBXDP_INFO ? AFXDP_LOG_INFO : AFXDP_LOG_DBG,
               fmt, args);
    return 0;
}
#endif

}  // namespace afxdp

extern "C" void
afxdp_set_log_handler(afxdp_log_fn *fn, enum afxdp_log_level min) noexcept
{
    afxdp::handler.store(fn ? fn : afxdp::log_to_stderr);
    afxdp::min_level.store(min);
    libbpf_set_print(afxdp::libbpf_print);
#ifdef HAVE_LIBXDP
    libxdp_set_print(afxdp::libxdp_print);
#endif
}
