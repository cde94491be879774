#!/usr/bin/env python3
"""Runs a command as a child subreaper and reaps every orphan at once.

    afxdp-reap.py COMMAND [ARG...]

The test suites start ovs-vswitchd and ovsdb-server with --detach: when
one exits, its parent is init, and until init reaps it the zombie still
answers `kill -0`, which is how OVS's macros wait for a daemon to stop.
Where init reaps late (in the microVM these tests run in, every 2 s or
so), every test waits 2-4 s for nothing.  Made a subreaper
(PR_SET_CHILD_SUBREAPER), this process adopts the detached daemons
instead, reaps each the moment it exits, and exits with COMMAND's status.
"""

import ctypes
import os
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        # Not fatal: the suite runs as it would without us, only slower.
        print("afxdp-reap: prctl(PR_SET_CHILD_SUBREAPER): %s"
              % os.strerror(ctypes.get_errno()), file=sys.stderr)
    child = os.fork()
    if child == 0:
        try:
            os.execvp(sys.argv[1], sys.argv[1:])
        except OSError as e:
            print("afxdp-reap: %s: %s" % (sys.argv[1], e.strerror),
                  file=sys.stderr)
            os._exit(127)
    # Interrupts reach the command (make, the suite) and it decides.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: os.kill(child, s))
    status = None
    while status is None:
        try:
            pid, st = os.wait()
        except InterruptedError:
            continue
        if pid == child:
            status = os.waitstatus_to_exitcode(st)
    # Daemons still running outlive us (init adopts them), as they would
    # have without us.
    sys.exit(status if status >= 0 else 128 - status)


if __name__ == "__main__":
    main()
