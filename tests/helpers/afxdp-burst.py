#!/usr/bin/env python3
"""Sends or receives numbered Ethernet frames, for ovs-afxdp's tests.

  afxdp-burst.py send IFACE COUNT    COUNT frames as fast as a loop can go
  afxdp-burst.py recv IFACE COUNT    prints each frame's number, one a line,
                                     until COUNT arrived or 10 s passed

The frames are broadcast, of an experimental EtherType (0x88b5), 60 bytes
long, with a 4-byte sequence number after the header: nothing in the
kernel answers them, and order and loss are both visible.
"""
import socket
import struct
import sys
import time

ETHERTYPE = 0x88B5


def frame(seq):
    header = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + struct.pack(
        "!H", ETHERTYPE)
    return (header + struct.pack("!I", seq)).ljust(60, b"\0")


def send(iface, count):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    for seq in range(count):
        s.send(frame(seq))


def recv(iface, count):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETHERTYPE))
    # Room for the whole burst: it may arrive in one go.
    s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE
    s.bind((iface, ETHERTYPE))
    s.settimeout(0.5)
    # The sender waits for this file before it starts.
    open("recv.ready", "w").close()
    got, deadline = 0, time.time() + 10
    while got < count and time.time() < deadline:
        try:
            data = s.recv(2048)
        except socket.timeout:
            continue
        if len(data) >= 18 and struct.unpack("!H", data[12:14])[0] == ETHERTYPE:
            print(struct.unpack("!I", data[14:18])[0], flush=True)
            got += 1


if __name__ == "__main__":
    what, iface, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    {"send": send, "recv": recv}[what](iface, count)
