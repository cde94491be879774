// Shared by the libFuzzer harnesses in tests/fuzz: reading the fuzzer's
// bytes, and checking what an entry point wrote into its 'err' buffer.
//
// Every check ends in __builtin_trap() on violation, after printing what
// was violated, so that libFuzzer saves the input as a crash.
#ifndef AFXDP_FUZZ_CHECK_HH
#define AFXDP_FUZZ_CHECK_HH

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sanitizer/asan_interface.h>
#include <string>
#include <vector>

namespace fuzz {

[[noreturn]] inline void
fail(const char *what, const std::string &detail = "")
{
    std::fprintf(stderr, "\nINVARIANT VIOLATED: %s\n", what);
    if (!detail.empty()) {
        std::fprintf(stderr, "  %s\n", detail.c_str());
    }
    std::fflush(stderr);
    __builtin_trap();
}

#define FUZZ_CHECK(COND, DETAIL)                                        \
    do {                                                                \
        if (!(COND)) {                                                  \
            ::fuzz::fail(#COND " (" __FILE__ ":" FUZZ_STR(__LINE__) ")", \
                         (DETAIL));                                     \
        }                                                               \
    } while (0)
#define FUZZ_STR(X) FUZZ_STR2(X)
#define FUZZ_STR2(X) #X

// Printable form of a string, for messages.
inline std::string
quote(const char *s)
{
    if (!s) {
        return "(null)";
    }
    std::string out = "\"";
    for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\') {
            out += char(*p);
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", *p);
            out += hex;
        }
    }
    return out + "\"";
}

// Takes fixed-size fields from the front of the input; missing bytes read
// as zero, so that every input, even empty, is valid.
class Reader {
public:
    Reader(const uint8_t *data, size_t size) : p_(data), end_(data + size) {}

    template <typename T>
    T take()
    {
        T v = 0;
        for (size_t i = 0; i < sizeof(T); i++) {
            uint8_t b = p_ < end_ ? *p_++ : 0;
            v = T(v | T(b) << (8 * i));   // Little-endian.
        }
        return v;
    }

    // The rest of the input, split at NUL bytes.  An input ending in a
    // NUL does not yield an empty string after it.
    std::vector<std::string> strings()
    {
        std::vector<std::string> out;
        while (p_ < end_) {
            const uint8_t *nul =
                static_cast<const uint8_t *>(std::memchr(p_, 0, end_ - p_));
            const uint8_t *stop = nul ? nul : end_;
            out.emplace_back(reinterpret_cast<const char *>(p_), stop - p_);
            p_ = nul ? nul + 1 : end_;
        }
        return out;
    }

    std::string rest_until_nul()
    {
        std::string s;
        while (p_ < end_ && *p_) {
            s += char(*p_++);
        }
        return s;
    }

private:
    const uint8_t *p_;
    const uint8_t *end_;
};

constexpr size_t kMaxErrlen = 300;   // Fuzzed errlen: 0..kMaxErrlen.
constexpr size_t kGuard = 64;        // Canary bytes after 'errlen'.
constexpr unsigned char kCanary = 0xA5;

struct Outcome {
    int ret;
    std::string msg;   // The whole message (empty if none was written).
};

// Calls 'call(err, errlen)' twice: once with room for any message, once
// with the fuzzed 'errlen' (0..kMaxErrlen) followed by guard bytes.  Checks
// that both calls return the same, that a success writes no message at all,
// and that a failure writes a NUL-terminated message that never passes
// 'errlen' and is, cut to 'errlen - 1' bytes, the same message as with
// room for all of it.  'room' is how much the whole message may need.
template <typename Call>
Outcome
call_with_err(Call &&call, size_t errlen, size_t room)
{
    // Reused across calls: a fresh allocation per call would make ASan's
    // allocator most of the fuzzer's time.
    static std::vector<unsigned char> big_buf, small_buf;
    if (big_buf.size() < room + kGuard) {
        big_buf.resize(room + kGuard);
    }
    if (small_buf.size() < errlen + kGuard) {
        small_buf.resize(errlen + kGuard);
    }
    unsigned char *big = big_buf.data();
    unsigned char *small = small_buf.data();
    const size_t big_size = room + kGuard, small_size = errlen + kGuard;

    // Past errlen the buffer is poisoned during the call, so ASan stops at
    // the first byte written there; the canaries check it again after.
    std::memset(big, kCanary, big_size);
    ASAN_POISON_MEMORY_REGION(big + room, big_buf.size() - room);
    int r1 = call(reinterpret_cast<char *>(big), room);
    ASAN_UNPOISON_MEMORY_REGION(big + room, big_buf.size() - room);

    std::memset(small, kCanary, small_size);
    ASAN_POISON_MEMORY_REGION(small + errlen, small_buf.size() - errlen);
    int r2 = call(reinterpret_cast<char *>(small), errlen);
    ASAN_UNPOISON_MEMORY_REGION(small + errlen, small_buf.size() - errlen);

    FUZZ_CHECK(r1 == r2, "same call, different results: "
               + std::to_string(r1) + " vs " + std::to_string(r2));
    for (size_t i = errlen; i < small_size; i++) {
        FUZZ_CHECK(small[i] == kCanary, "wrote byte " + std::to_string(i)
                   + " of an err buffer of errlen " + std::to_string(errlen));
    }
    for (size_t i = room; i < big_size; i++) {
        FUZZ_CHECK(big[i] == kCanary, "wrote past errlen " +
                   std::to_string(room));
    }
    if (r1 == 0) {
        for (size_t i = 0; i < big_size; i++) {
            FUZZ_CHECK(big[i] == kCanary, "success wrote into err");
        }
        for (size_t i = 0; i < small_size; i++) {
            FUZZ_CHECK(small[i] == kCanary, "success wrote into err");
        }
        return {0, ""};
    }

    const void *nul = std::memchr(big, 0, room);
    FUZZ_CHECK(nul, "message not NUL-terminated within errlen "
               + std::to_string(room));
    std::string msg(reinterpret_cast<const char *>(big));
    FUZZ_CHECK(!msg.empty(), "failure with an empty message");

    if (errlen == 0) {
        for (size_t i = 0; i < small_size; i++) {
            FUZZ_CHECK(small[i] == kCanary, "errlen 0, yet err was written");
        }
    } else {
        FUZZ_CHECK(std::memchr(small, 0, errlen),
                   "message not NUL-terminated within errlen "
                   + std::to_string(errlen));
        std::string cut(reinterpret_cast<const char *>(small));
        FUZZ_CHECK(cut == msg.substr(0, errlen - 1),
                   "truncated message " + quote(cut.c_str())
                   + " is not the start of " + quote(msg.c_str()));
    }
    return {r1, msg};
}

}  // namespace fuzz

#endif  // AFXDP_FUZZ_CHECK_HH
