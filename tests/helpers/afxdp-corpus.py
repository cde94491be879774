#!/usr/bin/env python3
"""The packets OVS's parser treats specially, for ovs-afxdp's differential
test (tests/afxdp-offload.at, "the same packets ... with the fast path on
and off").

  afxdp-corpus.py send IFACE      sends the corpus once, in order
  afxdp-corpus.py capture IFACE   prints each frame IFACE receives, in
                                  hex, one a line, until killed; writes
                                  IFACE.ready once it listens
  afxdp-corpus.py list            the corpus, a frame a line: its name,
                                  length and bytes

The frames go from 02:00:00:00:00:01 to 02:00:00:00:00:02, addresses no
interface has: a namespace with no address and no IPv6 answers none of
them.  A frame is built whole here, checksums included, so that what
reaches a sink can be compared byte for byte.  A VLAN tag the receiving
veth took out of the frame (its offload) is put back from the packet
socket's auxiliary data, so the capture is the frame as it was sent.
"""
import importlib.util
import os
import socket
import struct
import sys

# SCTP's CRC32c, from the SCTP test's script beside this one.
_spec = importlib.util.spec_from_file_location(
    "afxdp_sctp", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "afxdp-sctp.py"))
_sctp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_sctp)
crc32c = _sctp.crc32c

DST = bytes.fromhex("020000000002")
SRC = bytes.fromhex("020000000001")
V4_A, V4_B, V4_S = "10.1.0.1", "10.1.0.2", "10.0.0.1"
V6_A, V6_B = "fd00::1", "fd00::2"


def csum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def eth(ethertype, payload, tags=()):
    """An Ethernet frame; 'tags' are (TPID, TCI) pairs, outer first."""
    head = DST + SRC
    for tpid, tci in tags:
        head += struct.pack("!HH", tpid, tci)
    return head + struct.pack("!H", ethertype) + payload


def v4(src, dst, proto, l4, ttl=64, tos=0, frag=0, options=b"",
       ihl=None, tot_len=None, bad_csum=False):
    """An IPv4 packet; 'frag' is the flags and offset field."""
    hl = 20 + len(options)
    if ihl is None:
        ihl = hl // 4
    if tot_len is None:
        tot_len = hl + len(l4)
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, tot_len, 0x1234, frag,
                    ttl, proto, 0, socket.inet_aton(src),
                    socket.inet_aton(dst)) + options
    c = csum(h) ^ (0x1111 if bad_csum else 0)
    return h[:10] + struct.pack("!H", c) + h[12:] + l4


def pseudo4(src, dst, proto, length):
    return (socket.inet_aton(src) + socket.inet_aton(dst)
            + struct.pack("!BBH", 0, proto, length))


def pseudo6(src, dst, proto, length):
    return (socket.inet_pton(socket.AF_INET6, src)
            + socket.inet_pton(socket.AF_INET6, dst)
            + struct.pack("!IxxxB", length, proto))


def udp(sport, dport, payload, pseudo=None, zero_csum=False):
    h = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0)
    if zero_csum or pseudo is None:
        return h + payload
    c = csum(pseudo(17, 8 + len(payload)) + h + payload) or 0xFFFF
    return h[:6] + struct.pack("!H", c) + payload


def udp4(sport, dport, payload, src=V4_A, dst=V4_B, zero_csum=False, **ip):
    l4 = udp(sport, dport, payload,
             lambda p, n: pseudo4(src, dst, p, n), zero_csum)
    return v4(src, dst, 17, l4, **ip)


def v6(nh, payload, src=V6_A, dst=V6_B, hlim=64):
    return struct.pack("!IHBB16s16s", 0x60000000, len(payload), nh, hlim,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + payload


def udp6(sport, dport, payload, src=V6_A, dst=V6_B):
    return udp(sport, dport, payload, lambda p, n: pseudo6(src, dst, p, n))


def icmp6(type_, code, body, src=V6_A, dst=V6_B):
    h = struct.pack("!BBH", type_, code, 0) + body
    c = csum(pseudo6(src, dst, 58, len(h)) + h)
    return h[:2] + struct.pack("!H", c) + h[4:]


def tcp4(sport, dport, flags=0x02, src=V4_A, dst=V4_B):
    """A TCP header (no payload), its checksum for src and dst."""
    h = struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 5 << 4, flags, 8192,
                    0, 0)
    c = csum(pseudo4(src, dst, 6, len(h)) + h)
    return h[:16] + struct.pack("!H", c) + h[18:]


def sctp(sport, dport, payload):
    h = struct.pack("!HHII", sport, dport, 0x01020304, 0) + payload
    return h[:8] + struct.pack("<I", crc32c(h)) + h[12:]


def arp(op, sha=SRC, spa=V4_A, tha=b"\0" * 6, tpa=V4_B):
    return struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, sha,
                       socket.inet_aton(spa), tha, socket.inet_aton(tpa))


def nd(type_, target, option):
    """A neighbour solicitation (135) or advertisement (136)."""
    flags = 0x60000000 if type_ == 136 else 0
    return icmp6(type_, 0, struct.pack("!I", flags)
                 + socket.inet_pton(socket.AF_INET6, target) + option,
                 src="fe80::2", dst="ff02::1")


PAYLOAD = bytes(range(20))


def corpus():
    """(name, frame): what OVS's flow_extract() and the XDP parser must
    agree on, or the fast path must leave to OVS."""
    hop_by_hop = struct.pack("!BB", 60, 0) + b"\x01\x04\0\0\0\0"
    dest_opts = struct.pack("!BB", 17, 0) + b"\x01\x04\0\0\0\0"
    frag6_first = struct.pack("!BBHI", 17, 0, 0x0001, 0xabcd)
    frag6_later = struct.pack("!BBHI", 17, 0, 8 << 3, 0xabcd)
    udp6_9 = udp6(1000, 9, PAYLOAD)
    return [
        ("udp4 to port 9", eth(0x0800, udp4(1000, 9, PAYLOAD))),
        ("udp4 to port 9, checksum 0",
         eth(0x0800, udp4(1000, 9, PAYLOAD, zero_csum=True))),
        ("udp4 to port 9, IP checksum wrong",
         eth(0x0800, udp4(1000, 9, PAYLOAD, bad_csum=True))),
        ("udp4 to port 9, IP options",
         eth(0x0800, udp4(1000, 9, PAYLOAD, options=b"\x01\x01\x01\x00"))),
        ("udp4 to port 9, padded to 80 bytes",
         eth(0x0800, udp4(1000, 9, b"pad")).ljust(80, b"\xaa")),
        ("ipv4, header length 4",
         eth(0x0800, udp4(1000, 9, PAYLOAD, ihl=4))),
        ("ipv4, total length beyond the frame",
         eth(0x0800, udp4(1000, 9, PAYLOAD, tot_len=200))),
        ("ipv4, total length below the header",
         eth(0x0800, udp4(1000, 9, PAYLOAD, tot_len=12))),
        ("udp4 to port 7", eth(0x0800, udp4(1000, 7, PAYLOAD))),
        ("udp4 to port 7, TTL 1", eth(0x0800, udp4(1000, 7, PAYLOAD, ttl=1))),
        ("udp4 to port 7, DSCP 46 ECN 2",
         eth(0x0800, udp4(1000, 7, PAYLOAD, tos=0xba))),
        ("ipv4 first fragment",
         eth(0x0800, udp4(1000, 9, PAYLOAD, frag=0x2000))),
        ("ipv4 later fragment",
         eth(0x0800, v4(V4_A, V4_B, 17, PAYLOAD, frag=0x2000 | 8))),
        ("ipv4 last fragment, DF set",
         eth(0x0800, v4(V4_A, V4_B, 17, PAYLOAD, frag=0x4000 | 16))),
        ("udp4, UDP header cut to 4 bytes",
         eth(0x0800, v4(V4_A, V4_B, 17, b"\x03\xe8\x00\x09"))),
        ("tcp4 SYN", eth(0x0800, v4(V4_A, V4_B, 6, tcp4(1000, 80)))),
        ("tcp4, TCP header cut to 10 bytes",
         eth(0x0800, v4(V4_A, V4_B, 6, tcp4(1000, 80)[:10]))),
        ("gre4", eth(0x0800, v4(V4_A, V4_B, 47, b"\0\0\x08\0" + PAYLOAD))),
        ("udp4 from 10.0.0.1",
         eth(0x0800, udp4(1000, 1234, PAYLOAD, src=V4_S))),
        ("icmp4 echo from 10.0.0.1",
         eth(0x0800, v4(V4_S, V4_B, 1, b"\x08\0\xf7\xfe\0\1\0\0"))),
        ("sctp4 to port 5000",
         eth(0x0800, v4(V4_A, V4_B, 132, sctp(4000, 5000, PAYLOAD)))),
        ("udp6 to port 9", eth(0x86dd, v6(17, udp6_9))),
        ("udp6 after hop-by-hop and destination options",
         eth(0x86dd, v6(0, hop_by_hop + dest_opts + udp6_9))),
        ("ipv6 first fragment",
         eth(0x86dd, v6(44, frag6_first + udp6_9))),
        ("ipv6 later fragment",
         eth(0x86dd, v6(44, frag6_later + PAYLOAD))),
        ("ipv6 first fragment after hop-by-hop",
         eth(0x86dd, v6(0, struct.pack("!BB", 44, 0) + b"\x01\x04\0\0\0\0"
                        + frag6_first + udp6_9))),
        ("ipv6, no next header", eth(0x86dd, v6(59, b""))),
        ("neighbour solicitation, source address option",
         eth(0x86dd, v6(58, nd(135, "fe80::1", b"\x01\x01" + SRC),
                        src="fe80::2", dst="ff02::1", hlim=255))),
        ("neighbour advertisement, target address option",
         eth(0x86dd, v6(58, nd(136, "fe80::1", b"\x02\x01" + SRC),
                        src="fe80::2", dst="ff02::1", hlim=255))),
        ("neighbour solicitation, option of length 0",
         eth(0x86dd, v6(58, nd(135, "fe80::1", b"\x01\x00" + SRC),
                        src="fe80::2", dst="ff02::1", hlim=255))),
        ("arp request", eth(0x0806, arp(1))),
        ("arp reply", eth(0x0806, arp(2, tha=DST))),
        ("arp opcode 7", eth(0x0806, arp(7))),
        ("arp opcode 0x0101", eth(0x0806, arp(0x0101))),
        ("vlan 10, udp4 to port 9",
         eth(0x0800, udp4(1000, 9, PAYLOAD), [(0x8100, 10)])),
        ("vlan 20, udp4 to port 9",
         eth(0x0800, udp4(1000, 9, PAYLOAD), [(0x8100, 20)])),
        ("vlan 20 with DEI set, PCP 5",
         eth(0x0800, udp4(1000, 9, PAYLOAD), [(0x8100, 0xb000 | 20)])),
        ("vlan 0, PCP 3", eth(0x0800, udp4(1000, 9, PAYLOAD),
                              [(0x8100, 0x6000)])),
        ("802.1ad vlan 20", eth(0x0800, udp4(1000, 9, PAYLOAD),
                                [(0x88a8, 20)])),
        ("802.1ad 10 over 802.1Q 20 (QinQ)",
         eth(0x0800, udp4(1000, 9, PAYLOAD), [(0x88a8, 10), (0x8100, 20)])),
        ("802.1Q 30 over 802.1Q 40", eth(0x0806, arp(1),
                                         [(0x8100, 30), (0x8100, 40)])),
        ("vlan 50, arp request", eth(0x0806, arp(1), [(0x8100, 50)])),
        ("llc, an 802.3 length", DST + SRC + struct.pack("!H", 46)
         + b"\x42\x42\x03" + bytes(43)),
        ("ethertype 0x88b5", eth(0x88B5, PAYLOAD).ljust(60, b"\0")),
    ]


def send(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    for _, frame in corpus():
        s.send(frame)


SOL_PACKET, PACKET_AUXDATA = 263, 8
TP_STATUS_VLAN_VALID, TP_STATUS_VLAN_TPID_VALID = 0x10, 0x40
PACKET_OUTGOING = 4


def capture(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.setsockopt(socket.SOL_SOCKET, 33, 4 << 20)  # SO_RCVBUFFORCE
    s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    s.bind((iface, 3))  # ETH_P_ALL
    open(iface + ".ready", "w").close()
    while True:
        data, ancillary, _, addr = s.recvmsg(65536, 64)
        if addr[2] == PACKET_OUTGOING:
            continue
        for level, kind, value in ancillary:
            if level != SOL_PACKET or kind != PACKET_AUXDATA:
                continue
            status, _, _, _, _, tci, tpid = struct.unpack("IIIHHHH",
                                                          value[:24])
            if status & TP_STATUS_VLAN_VALID:
                if not status & TP_STATUS_VLAN_TPID_VALID:
                    tpid = 0x8100
                data = data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
        print(data.hex(), flush=True)


def show():
    for name, frame in corpus():
        print("%-50s %4d %s" % (name, len(frame), frame.hex()))


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "list":
        show()
    else:
        {"send": send, "capture": capture}[what](sys.argv[2])
