/* The flow key as the parser writes it: whole 64-bit words, each field
 * shifted to where struct afxdp_flow_key holds it, with checks that the
 * words the parser builds are the struct's. */

#ifndef AFXDP_BPF_KEY_H
#define AFXDP_BPF_KEY_H 1

#include "afxdp-offload.h"
#include "packet.h"

/* The key is written in whole 64-bit words after it is zeroed, each
 * once (word 9, TCP flags and the tag's TPID, twice on TCP's way, the
 * second time with the TPID again).  The lookup reads it back as words
 * straight away (the hash, the cache's compare), and a word load that
 * meets narrower stores to its bytes still in flight gets nothing
 * forwarded from them: it waits until they reach the cache, a stall in
 * every packet's path where the parser wrote fields of one to six
 * bytes.  A word is built in a register from
 * the packet's loads, each placed where its field lies: KEY_AT() shifts a
 * value holding a field's bytes in memory order (a load from the packet,
 * or a field's own type) to the field's bytes within its word, on either
 * byte order. */
typedef __u64 __attribute__((may_alias)) key_word;   /* Aliases the key. */

#define KEY_OFF(FIELD) __builtin_offsetof(struct afxdp_flow_key, FIELD)
#define KEY_SIZE(FIELD) sizeof(((struct afxdp_flow_key *) 0)->FIELD)
#define KEY_WORD(FIELD) (KEY_OFF(FIELD) / 8)
#define KEY_SHIFT(OFF, SIZE)                                            \
    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 8 * ((OFF) % 8)        \
                                               : 64 - 8 * ((OFF) % 8 + (SIZE)))
/* 'SIZE' bytes at byte 'OFF' of the key, in that byte's word. */
#define KEY_BYTES(OFF, SIZE, V) ((__u64) (V) << KEY_SHIFT(OFF, SIZE))
/* A whole field (which lies in one word) in its word. */
#define KEY_AT(FIELD, V) KEY_BYTES(KEY_OFF(FIELD), KEY_SIZE(FIELD), V)

/* The words the parser builds, field by field: each field that one word
 * holds whole, in that word; and where the three that straddle two
 * words (dl_src, arp_sha, and nw_src and nw_dst, of two each) begin. */
#define KEY_IN_WORD(FIELD, N)                                           \
    _Static_assert(KEY_OFF(FIELD) / 8 == (N)                            \
                   && (KEY_OFF(FIELD) + KEY_SIZE(FIELD) - 1) / 8 == (N), \
                   #FIELD " is not in word " #N " of the key")
KEY_IN_WORD(dl_dst, 0);
KEY_IN_WORD(dl_type, 1);
KEY_IN_WORD(vlan_tci, 1);
KEY_IN_WORD(ipv6_label, 6);
KEY_IN_WORD(nw_proto, 6);
KEY_IN_WORD(nw_tos, 6);
KEY_IN_WORD(nw_ttl, 6);
KEY_IN_WORD(nw_frag, 6);
KEY_IN_WORD(tp_src, 7);
KEY_IN_WORD(tp_dst, 7);
KEY_IN_WORD(arp_tha, 8);
KEY_IN_WORD(tcp_flags, 9);
KEY_IN_WORD(vlan_tpid, 9);
_Static_assert(KEY_OFF(dl_src) == 6 && KEY_OFF(nw_src) == 16
               && KEY_OFF(nw_dst) == 32 && KEY_OFF(arp_sha) == 60
               && KEY_OFF(arp_tha) == 66
               && sizeof(struct afxdp_flow_key) == 80,
               "the parser's words follow struct afxdp_flow_key");

/* Four bytes of the packet (two halfword loads: an Ethernet header's
 * bytes lie at even offsets) at byte 'OFF' of the key. */
#define KEY_4(OFF, P) (KEY_BYTES(OFF, 2, load16(P))                     \
                       | KEY_BYTES((OFF) + 2, 2, load16((P) + 2)))

#endif /* AFXDP_BPF_KEY_H */
