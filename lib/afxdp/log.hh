// Logging from the core goes to whoever embeds it (OVS's vlog through the
// shim, stderr in the tests).  Messages are short, stable sentences that
// tests may grep.
#ifndef AFXDP_LOG_HH
#define AFXDP_LOG_HH

#include "afxdp.h"

namespace afxdp {

// printf-style; never allocates, truncates at 512 bytes.
void log(afxdp_log_level level, const char *fmt, ...) noexcept
    __attribute__((format(printf, 2, 3)));

// True when a message at 'level' would go anywhere.
bool log_enabled(afxdp_log_level level) noexcept;

}  // namespace afxdp

#endif  // AFXDP_LOG_HH
