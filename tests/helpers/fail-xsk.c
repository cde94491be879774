/*
 * LD_PRELOAD library for the AF_XDP fault tests (tests/afxdp-faults.at).
 *
 * While the file named by $AFXDP_FAULT_FILE exists, its first word says
 * which AF_XDP call fails, as the kernel would make it fail:
 *
 *   umem    setsockopt(SOL_XDP, XDP_UMEM_REG) fails with ENOMEM (the UMEM
 *           cannot be pinned: RLIMIT_MEMLOCK or memory pressure);
 *   umem-shared
 *           the same, but only for memory that a socket still open has
 *           registered already (a kernel that would not let two sockets
 *           register one UMEM area);
 *   socket  socket(AF_XDP, ...) fails with EMFILE (out of descriptors);
 *   bind    bind() of an AF_XDP socket fails with ENOMEM
 *           (socket made, UMEM registered and rings mapped, then the bind
 *           fails, so every resource made so far must be released).
 *
 * Without the variable, without the file, or for any other call, libc's
 * function runs.  The file is looked at on every call, so a test turns the
 * fault on and off while ovs-vswitchd runs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_xdp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "preload.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

/* True if the fault file exists and starts with 'what'. */
static int
fault_is(const char *what)
{
    const char *path = getenv("AFXDP_FAULT_FILE");
    char buf[32];
    ssize_t n;
    int fd;

    if (!path || !path[0]) {
        return 0;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    return !strncmp(buf, what, strlen(what));
}

int
socket(int domain, int type, int protocol)
{
    PRELOAD_NEXT(socket);
    if (domain == AF_XDP && fault_is("socket")) {
        errno = EMFILE;
        return -1;
    }
    return real_socket(domain, type, protocol);
}

/* UMEM areas registered by sockets still open: the descriptor and the
 * area's address, for "umem-shared".  Descriptors are small numbers. */
#define MAX_FDS 4096
static unsigned long long registered[MAX_FDS];

static int
registered_elsewhere(unsigned long long addr)
{
    for (int i = 0; i < MAX_FDS; i++) {
        if (registered[i] == addr) {
            return 1;
        }
    }
    return 0;
}

int
setsockopt(int fd, int level, int optname, const void *optval,
           socklen_t optlen)
{
    PRELOAD_NEXT(setsockopt);
    if (level == SOL_XDP && optname == XDP_UMEM_REG) {
        unsigned long long addr = optval
            ? ((const struct xdp_umem_reg *) optval)->addr : 0;

        /* "umem-shared" first: "umem" is a prefix of it. */
        if (fault_is("umem-shared")) {
            if (registered_elsewhere(addr)) {
                errno = EINVAL;
                return -1;
            }
        } else if (fault_is("umem")) {
            errno = ENOMEM;
            return -1;
        }
        int r = real_setsockopt(fd, level, optname, optval, optlen);
        if (!r && fd >= 0 && fd < MAX_FDS) {
            registered[fd] = addr;
        }
        return r;
    }
    return real_setsockopt(fd, level, optname, optval, optlen);
}

int
close(int fd)
{
    PRELOAD_NEXT(close);
    if (fd >= 0 && fd < MAX_FDS) {
        registered[fd] = 0;
    }
    return real_close(fd);
}

int
bind(int fd, const struct sockaddr *addr, socklen_t len)
{
    PRELOAD_NEXT(bind);
    if (addr && addr->sa_family == AF_XDP && fault_is("bind")) {
        errno = ENOMEM;
        return -1;
    }
    return real_bind(fd, addr, len);
}
