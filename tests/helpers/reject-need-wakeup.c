/*
 * LD_PRELOAD library for the need_wakeup fallback test.
 *
 * It makes bind() on an AF_XDP socket fail exactly as a kernel without
 * need_wakeup support (before Linux 5.4) does: that kernel's xsk_bind()
 * rejects any sxdp_flags bit it does not know with EINVAL.  Every other
 * bind() goes to libc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/if_xdp.h>
#include <sys/socket.h>

#include "preload.h"

int
bind(int fd, const struct sockaddr *addr, socklen_t len)
{
    PRELOAD_NEXT(bind);
    if (addr && addr->sa_family == AF_XDP
        && len >= sizeof(struct sockaddr_xdp)) {
        const struct sockaddr_xdp *sxdp = (const struct sockaddr_xdp *) addr;

        if (sxdp->sxdp_flags & ~(XDP_SHARED_UMEM | XDP_COPY | XDP_ZEROCOPY)) {
            errno = EINVAL;
            return -1;
        }
    }
    return real_bind(fd, addr, len);
}
