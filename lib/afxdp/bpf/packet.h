/* Reading a packet in XDP: bounds, loads, and where each header's
 * fields lie.
 *
 * Offsets come from the kernel's header structs (struct iphdr, ipv6hdr,
 * tcphdr, udphdr, icmp6hdr, ethhdr) where a field is whole bytes; the
 * few the UAPI has no struct for (ARP for IPv4, SCTP, VLAN) or that are
 * bits of a byte (IPv4's header length, TCP's data offset) are named
 * here after their RFCs. */

#ifndef AFXDP_BPF_PACKET_H
#define AFXDP_BPF_PACKET_H 1

#include <linux/bpf.h>
#include <linux/icmpv6.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* Byte 'FIELD' of the kernel's 'struct TYPE'. */
#define OFF(TYPE, FIELD) __builtin_offsetof(struct TYPE, FIELD)
/* The size of the kernel's 'struct TYPE', a fixed header, in 32 bits as
 * the lengths it is compared with. */
#define HLEN(TYPE) ((__u32) sizeof(struct TYPE))

/* 802.1Q and 802.1ad: a tag of 4 bytes after the MAC addresses, its TCI
 * then the EtherType it carries. */
#define VLAN_HLEN 4
#define VLAN_TCI 0
#define VLAN_ENCAP_PROTO 2
#define VLAN_CFI 0x1000
#define MACS_LEN (2 * ETH_ALEN)          /* dl_dst and dl_src. */
#define TAGGED_HLEN (ETH_HLEN + VLAN_HLEN)

/* IPv4 (RFC 791): the header's length in bytes from its first byte; the
 * fragment bits (More Fragments, the offset) of frag_off in host order. */
#define IPV4_HLEN(NH) (((NH)[0] & 0x0f) * 4)
#define IPV4_MF 0x2000
#define IPV4_OFFSET 0x1fff

/* IPv6 (RFC 8200): the first word, in host order, is version, traffic
 * class and flow label. */
#define IPV6_VERSION_MASK 0xf0000000
#define IPV6_TCLASS_SHIFT 20
#define IPV6_LABEL_MASK 0x000fffff

/* Extension headers the UAPI does not name (RFC 7401, RFC 5533). */
#define IPPROTO_HIP 139
#define IPPROTO_SHIM6 140

/* TCP (RFC 9293): the data offset is the high nibble of byte 12, and the
 * halfword there holds it with the 12 bits of flags. */
#define TCP_DOFF 12
#define TCP_HLEN(L4) (((L4)[TCP_DOFF] >> 4) * 4)
#define TCP_FLAGS_MASK 0x0fff

/* SCTP (RFC 9260): the ports as TCP's and UDP's, then the verification
 * tag and the CRC32c. */
#define SCTP_HLEN 12
#define SCTP_CSUM 8

/* ICMP and IGMP: type and code, the two bytes OVS keys on, then the
 * checksum; 8 bytes with what follows. */
#define ICMP_HLEN 8

/* ICMPv6 neighbour discovery (RFC 4861): OVS also keys on the target
 * and the link-layer options. */
#define ND_NEIGHBOR_SOLICIT 135
#define ND_NEIGHBOR_ADVERT 136

/* ARP for Ethernet and IPv4 (RFC 826): a fixed header (struct arphdr's
 * fields), then the sender's and target's hardware and IP addresses. */
#define ARP_HRD 0
#define ARP_PRO 2
#define ARP_HLN 4
#define ARP_PLN 5
#define ARP_OP 6
#define ARP_SHA 8
#define ARP_SPA 14
#define ARP_THA 18
#define ARP_TPA 24
#define ARP_ETH_IPV4_LEN 28
#define ARP_HRD_ETHER 1

/* Whether 'n' bytes from 'p' lie inside the packet. */
#define HAVE(P, N, END) ((const __u8 *) (P) + (N) <= (const __u8 *) (END))

/* Packet loads through typed pointers, as XDP programs read struct
 * ethhdr and iphdr: clang then loads a halfword or word at once, where a
 * memcpy from a pointer of unknown alignment is split into bytes (a
 * third of the parser's instructions).  The verifier and JIT take
 * unaligned packet loads where the CPU does; elsewhere the headers lie
 * aligned behind the kernel's NET_IP_ALIGN, which the verifier assumes. */
static __always_inline __u16
load16(const __u8 *p)
{
    return *(const __u16 *) p;
}

static __always_inline __u32
load32(const __u8 *p)
{
    return *(const __u32 *) p;
}

/* 4 bytes at 'p' as a word with the first in the low byte, whatever the
 * machine's order. */
static __always_inline __u32
load_le32(const __u8 *p)
{
    return p[0] | (__u32) p[1] << 8 | (__u32) p[2] << 16
           | (__u32) p[3] << 24;
}

#endif /* AFXDP_BPF_PACKET_H */
