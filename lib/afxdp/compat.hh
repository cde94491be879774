// Version and kernel differences, decided in one place.
//
// configure records what the library (libxdp or an old libbpf) and the
// kernel headers know; the rest of the core reads only the constants below
// and never tests a HAVE_* macro itself.
#ifndef AFXDP_COMPAT_HH
#define AFXDP_COMPAT_HH

#include <config.h>

#include <cstdint>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef HAVE_LIBXDP
#include <xdp/libxdp.h>
#include <xdp/xsk.h>
#else
#include <bpf/xsk.h>
#endif

namespace afxdp::compat {

#ifdef HAVE_XDP_NEED_WAKEUP
// Both xsk.h and linux/if_xdp.h know need_wakeup: rings carry a flags word
// and bind() accepts XDP_USE_NEED_WAKEUP.
inline constexpr bool kNeedWakeupBuilt = true;
inline constexpr uint16_t kBindNeedWakeup = XDP_USE_NEED_WAKEUP;
inline constexpr uint32_t kRingNeedWakeup = XDP_RING_NEED_WAKEUP;
#else
// Without it every ring reads as "needs a wakeup", so we always kick, as
// kernels before 5.4 require.
inline constexpr bool kNeedWakeupBuilt = false;
inline constexpr uint16_t kBindNeedWakeup = 0;
inline constexpr uint32_t kRingNeedWakeup = 0;
#endif

#ifdef HAVE_XDP_STATISTICS_V2
inline constexpr bool kXdpStatisticsV2 = true;
#else
inline constexpr bool kXdpStatisticsV2 = false;
#endif

#ifdef HAVE_XDP_OPTIONS
inline constexpr int kSockoptXdpOptions = XDP_OPTIONS;
inline constexpr uint32_t kXdpOptionsZeroCopy = XDP_OPTIONS_ZEROCOPY;
#else
inline constexpr int kSockoptXdpOptions = -1;
inline constexpr uint32_t kXdpOptionsZeroCopy = 0;
#endif

// XDP_MAX_TX_SKB_BUDGET (Linux 6.17): how many frames one sendto() may
// transmit in copy mode (32 before, and by default).  Older uapi headers
// lack the name; an older kernel rejects the option, which is how we tell.
#ifdef XDP_MAX_TX_SKB_BUDGET
inline constexpr int kSockoptMaxTxSkbBudget = XDP_MAX_TX_SKB_BUDGET;
#else
inline constexpr int kSockoptMaxTxSkbBudget = 9;
#endif

// Multi-buffer AF_XDP (Linux 6.6): the bind flag that lets one packet span
// several frames, and the descriptor option that says "the next descriptor
// continues this packet".  Older uapi headers lack the names; an older
// kernel rejects the bind flag with EINVAL, which is how we tell.
#ifdef XDP_USE_SG
inline constexpr uint16_t kBindMultiBuffer = XDP_USE_SG;
#else
inline constexpr uint16_t kBindMultiBuffer = 1 << 4;
#endif
#ifdef XDP_PKT_CONTD
inline constexpr uint32_t kDescContinues = XDP_PKT_CONTD;
#else
inline constexpr uint32_t kDescContinues = 1 << 0;
#endif
// An XDP program that handles packets in several buffers (Linux 5.18); a
// driver gives a program without it only what fits in one.
#ifdef BPF_F_XDP_HAS_FRAGS
inline constexpr uint32_t kProgHasFrags = BPF_F_XDP_HAS_FRAGS;
#else
inline constexpr uint32_t kProgHasFrags = 1U << 5;
#endif

// A program bound to one device (Linux 6.3), as XDP programs that read
// packet hints with kfuncs must be: attachable in that device's driver
// mode only.
#ifdef BPF_F_XDP_DEV_BOUND_ONLY
inline constexpr uint32_t kProgDevBoundOnly = BPF_F_XDP_DEV_BOUND_ONLY;
#else
inline constexpr uint32_t kProgDevBoundOnly = 1U << 6;
#endif

// The flags word of a ring that libxdp/libbpf set up, or nullptr where the
// library predates need_wakeup.
template <typename LibRing>
inline uint32_t *
ring_flags(LibRing &r) noexcept
{
#ifdef HAVE_XDP_NEED_WAKEUP
    return r.flags;
#else
    (void) r;
    return nullptr;
#endif
}

// CAP_PERFMON (Linux 5.8), which older kernel headers lack.
inline constexpr unsigned kCapPerfmon = 38;

// Whether this process has capability 'cap' in its effective set.
inline bool
have_capability(unsigned cap) noexcept
{
    __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (syscall(SYS_capget, &header, data)) {
        return false;
    }
    return cap / 32 < _LINUX_CAPABILITY_U32S_3
           && (data[cap / 32].effective & (1u << (cap % 32)));
}

}  // namespace afxdp::compat

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#endif  // AFXDP_COMPAT_HH
