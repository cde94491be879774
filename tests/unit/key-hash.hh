// The fast path's own hash of a packet (key_hash() in
// lib/afxdp/bpf/socket.h), written again from its description for the
// tests to check the program against: MurmurHash3's steps over the key's
// two 16-byte address fields (32-bit words as they lie in memory,
// alternately source and destination), its protocol, and its L4 ports as
// they lie in the packet (source in the high half), then MurmurHash3's
// finish with length 40.
#ifndef AFXDP_TESTS_KEY_HASH_HH
#define AFXDP_TESTS_KEY_HASH_HH 1

#include <cstdint>
#include <cstring>

#include "afxdp-offload.h"

namespace afxdp_test {

inline uint32_t
key_hash(const afxdp_flow_key &key)
{
    auto word = [](uint32_t h, uint32_t w) {
        w *= 0xcc9e2d51;
        w = (w << 15) | (w >> 17);
        w *= 0x1b873593;
        h ^= w;
        h = (h << 13) | (h >> 19);
        return h * 5 + 0xe6546b64;
    };
    uint32_t src[4], dst[4];
    std::memcpy(src, key.nw_src, sizeof src);
    std::memcpy(dst, key.nw_dst, sizeof dst);
    uint32_t h = 0;
    for (int i = 0; i < 4; i++) {
        h = word(h, src[i]);
        h = word(h, dst[i]);
    }
    h = word(h, key.nw_proto);
    h = word(h, uint32_t(key.tp_src) << 16 | key.tp_dst);
    h ^= 40;
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    return h ^ (h >> 16);
}

}  // namespace afxdp_test

#endif  // AFXDP_TESTS_KEY_HASH_HH
