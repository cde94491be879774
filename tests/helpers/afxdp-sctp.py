#!/usr/bin/env python3
"""Sends and checks SCTP packets, for ovs-afxdp's offload tests.

  afxdp-sctp.py send IFACE DST_MAC FIRST COUNT
      COUNT IPv4 SCTP packets, numbered from FIRST, from 10.1.1.1 to
      10.1.1.2, source port 4000, destination port 5000, each with a
      payload of (number * 37) % 1200 bytes after the common header; the
      checksum (CRC32c) right in even-numbered packets, and in odd ones
      wrong by 0x5a5a5a5a.

  afxdp-sctp.py recv IFACE COUNT PORT
      Waits (10 s at most) for COUNT of those packets on IFACE and prints
      "N received, N to port PORT, N checksums as sent": a checksum as
      sent is right in an even-numbered packet and wrong by 0x5a5a5a5a in
      an odd one, whatever rewrote the ports on the way.  It writes
      IFACE.ready once it listens.

No kernel here speaks SCTP: the frames are built and read whole, through
packet sockets, and nothing answers them.
"""
import socket
import struct
import sys
import time

ETH_P_IP = 0x0800
WRONG = 0x5A5A5A5A


def crc32c(data):
    """CRC32c as SCTP uses it (RFC 9260, appendix A), bit by bit: the
    value whose bytes, low first, go in the packet."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def ip_checksum(header):
    total = sum(struct.unpack("!%dH" % (len(header) // 2), header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def packet(src_mac, dst_mac, seq):
    payload = struct.pack("!I", seq) + bytes(
        (seq + i) & 0xFF for i in range((seq * 37) % 1200))
    sctp = struct.pack("!HHII", 4000, 5000, 0x01020304, 0) + payload
    crc = crc32c(sctp)
    if seq % 2:
        crc ^= WRONG
    sctp = sctp[:8] + struct.pack("<I", crc) + sctp[12:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(sctp), seq & 0xFFFF,
                     0x4000, 64, 132, 0, socket.inet_aton("10.1.1.1"),
                     socket.inet_aton("10.1.1.2"))
    ip = ip[:10] + struct.pack("!H", ip_checksum(ip)) + ip[12:]
    return dst_mac + src_mac + struct.pack("!H", ETH_P_IP) + ip + sctp


def send(iface, dst_mac, first, count):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    src_mac = s.getsockname()[4]
    dst = bytes.fromhex(dst_mac.replace(":", ""))
    for seq in range(first, first + count):
        s.send(packet(src_mac, dst, seq))
        time.sleep(0.002)


def recv(iface, count, port):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_IP))
    s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE
    s.bind((iface, ETH_P_IP))
    s.settimeout(0.5)
    open(iface + ".ready", "w").close()
    received = to_port = as_sent = 0
    deadline = time.time() + 10
    while received < count and time.time() < deadline:
        try:
            frame, addr = s.recvfrom(65536)
        except socket.timeout:
            continue
        if addr[2] == socket.PACKET_OUTGOING or len(frame) < 34 + 16:
            continue
        ihl = (frame[14] & 0x0F) * 4
        if frame[14 + 9] != 132:
            continue
        total = struct.unpack("!H", frame[16:18])[0]
        sctp = bytearray(frame[14 + ihl:14 + total])
        sport, dport = struct.unpack("!HH", sctp[:4])
        if sport != 4000:
            continue
        crc = struct.unpack("<I", sctp[8:12])[0]
        seq = struct.unpack("!I", sctp[12:16])[0]
        sctp[8:12] = b"\0\0\0\0"
        right = crc32c(bytes(sctp))
        received += 1
        to_port += dport == port
        as_sent += crc == (right ^ WRONG if seq % 2 else right)
    print("%d received, %d to port %d, %d checksums as sent"
          % (received, to_port, port, as_sent))


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "send":
        send(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif len(sys.argv) == 5 and sys.argv[1] == "recv":
        recv(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
