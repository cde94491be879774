// libFuzzer harness: the option parsers of afxdp.h (lib/afxdp/options.cc)
// and a port's whole configuration built from them (lib/afxdp/config.cc).
//
// Input: errlen (2 bytes, little-endian, taken modulo 301), 'min' and 'max'
// for afxdp_parse_uint (4 bytes each), a flags byte (bit 0: also parse
// NULL; bit 1: also call with a NULL err and errlen 0), then strings
// separated by NUL bytes (the first 16 are used).  Every string goes to
// every parser.  Missing bytes read as zero.
//
// Beyond "does not crash", each parser is checked against a reference of
// what afxdp.h and the unit tests promise:
//   - it accepts exactly the documented spellings (differential check
//     against a parser written here from the documentation);
//   - on success it stores the value (within range; a mode whose name
//     round-trips through afxdp_mode_name) and writes no message;
//   - on failure it returns EINVAL, stores nothing, and writes a non-empty,
//     NUL-terminated message that quotes the value, says what is
//     "accepted", and never writes past errlen (0..300, guard bytes after).
// afxdp_device_rx_queues() is called only with names that cannot be real
// interfaces ("afxdpfz" + the string) and must return 0 for them.

#include <cerrno>
#include <climits>
#include <config.h>
#include <cstring>
#include <dirent.h>
#include <string>
#include <strings.h>

#include "afxdp.h"
#include "fuzz-check.hh"

using fuzz::call_with_err;
using fuzz::quote;

namespace {

// The mode names afxdp.h documents, in enum order.
const char *const kModeNames[AFXDP_MODE_N] = {
    "best-effort", "native-with-zerocopy", "native", "generic",
};

const char kNamePrefix[] = "afxdpfz";
const size_t kMaxStrings = 16;

bool no_fuzz_interfaces;   // No /sys/class/net/afxdpfz* exists.

// Whether 's' is a strict decimal number and, if so, its value (saturated
// above UINT_MAX, which no range accepts).
bool
reference_decimal(const char *s, unsigned long long *value)
{
    if (!s || !*s) {
        return false;
    }
    unsigned long long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') {
            return false;
        }
        v = v * 10 + unsigned(*p - '0');
        if (v > UINT_MAX) {
            v = ULLONG_MAX / 16;   // Stays above UINT_MAX from here on.
        }
    }
    *value = v;
    return true;
}

// Room for any message about 's'.
size_t
room_for(const char *s)
{
    return (s ? std::strlen(s) : 0) + 256;
}

// What every failure message must say: the value, in quotes, and the
// accepted ones.
void
check_failure_text(const char *parser, const char *s, const std::string &msg)
{
    std::string quoted = std::string("'") + (s ? s : "") + "'";
    FUZZ_CHECK(msg.find("accepted") != std::string::npos,
               std::string(parser) + ": message without 'accepted': "
               + quote(msg.c_str()));
    FUZZ_CHECK(msg.find(quoted) != std::string::npos,
               std::string(parser) + ": message " + quote(msg.c_str())
               + " does not quote the value " + quote(s));
}

void
fuzz_mode(const char *s, size_t errlen)
{
    afxdp_xdp_mode mode = AFXDP_MODE_N;
    auto out = call_with_err(
        [&](char *err, size_t len) {
            mode = AFXDP_MODE_N;
            return afxdp_parse_mode(s, &mode, err, len);
        },
        errlen, room_for(s));

    int want = -1;
    for (int m = 0; s && m < AFXDP_MODE_N; m++) {
        if (!strcasecmp(s, kModeNames[m])) {
            want = m;
        }
    }
    if (out.ret == 0) {
        FUZZ_CHECK(want >= 0, "afxdp_parse_mode accepted " + quote(s));
        FUZZ_CHECK(mode == want, "afxdp_parse_mode(" + quote(s)
                   + ") gave mode " + std::to_string(int(mode)));
        const char *name = afxdp_mode_name(mode);
        FUZZ_CHECK(name && !strcasecmp(name, s),
                   "mode name " + quote(name) + " for " + quote(s));
        afxdp_xdp_mode again = AFXDP_MODE_N;
        char err[8];
        FUZZ_CHECK(!afxdp_parse_mode(name, &again, err, sizeof err)
                   && again == mode,
                   "mode name " + quote(name) + " does not parse back");
    } else {
        FUZZ_CHECK(out.ret == EINVAL, "afxdp_parse_mode returned "
                   + std::to_string(out.ret));
        FUZZ_CHECK(want < 0, "afxdp_parse_mode rejected " + quote(s));
        FUZZ_CHECK(mode == AFXDP_MODE_N, "failure stored a mode");
        check_failure_text("afxdp_parse_mode", s, out.msg);
    }
}

void
fuzz_bool(const char *s, size_t errlen)
{
    // Never read as a bool unless written: its canary is not a valid bool.
    unsigned char raw = 0x5a;
    auto out = call_with_err(
        [&](char *err, size_t len) {
            raw = 0x5a;
            return afxdp_parse_bool(s, reinterpret_cast<bool *>(&raw), err,
                                    len);
        },
        errlen, room_for(s));

    bool is_true = s && !std::strcmp(s, "true");
    bool is_false = s && !std::strcmp(s, "false");
    if (out.ret == 0) {
        FUZZ_CHECK(is_true || is_false, "afxdp_parse_bool accepted "
                   + quote(s));
        FUZZ_CHECK(raw == (is_true ? 1 : 0), "afxdp_parse_bool(" + quote(s)
                   + ") stored " + std::to_string(raw));
    } else {
        FUZZ_CHECK(out.ret == EINVAL, "afxdp_parse_bool returned "
                   + std::to_string(out.ret));
        FUZZ_CHECK(!is_true && !is_false, "afxdp_parse_bool rejected "
                   + quote(s));
        FUZZ_CHECK(raw == 0x5a, "failure stored a bool");
        check_failure_text("afxdp_parse_bool", s, out.msg);
    }
}

void
fuzz_uint(const char *s, unsigned min, unsigned max, size_t errlen)
{
    const unsigned kUnset = 0xdeadbeef;
    unsigned v = kUnset;
    auto out = call_with_err(
        [&](char *err, size_t len) {
            v = kUnset;
            return afxdp_parse_uint(s, min, max, &v, err, len);
        },
        errlen, room_for(s));

    unsigned long long want;
    bool valid = reference_decimal(s, &want) && want >= min && want <= max;
    auto call = [&] {
        return "afxdp_parse_uint(" + quote(s) + ", " + std::to_string(min)
               + ", " + std::to_string(max) + ")";
    };
    if (out.ret == 0) {
        FUZZ_CHECK(valid, call() + " accepted it");
        FUZZ_CHECK(v == want && v >= min && v <= max,
                   call() + " stored " + std::to_string(v));
    } else {
        FUZZ_CHECK(out.ret == EINVAL, call() + " returned "
                   + std::to_string(out.ret));
        FUZZ_CHECK(!valid, call() + " rejected it");
        FUZZ_CHECK(v == kUnset, call() + ": failure stored a value");
        check_failure_text("afxdp_parse_uint", s, out.msg);
        // It names the range.
        FUZZ_CHECK(out.msg.find(std::to_string(min)) != std::string::npos
                   && out.msg.find(std::to_string(max)) != std::string::npos,
                   call() + ": message does not name the range: "
                   + quote(out.msg.c_str()));
    }
}

void
fuzz_ring_size(const char *s, size_t errlen)
{
    const unsigned kUnset = 0xdeadbeef;
    unsigned v = kUnset;
    auto out = call_with_err(
        [&](char *err, size_t len) {
            v = kUnset;
            return afxdp_parse_ring_size(s, &v, err, len);
        },
        errlen, room_for(s));

    unsigned long long want;
    bool valid = reference_decimal(s, &want) && want >= AFXDP_MIN_RING_SIZE
                 && want <= AFXDP_MAX_RING_SIZE && !(want & (want - 1));
    if (out.ret == 0) {
        FUZZ_CHECK(valid, "afxdp_parse_ring_size accepted " + quote(s));
        FUZZ_CHECK(v == want && v >= AFXDP_MIN_RING_SIZE
                   && v <= AFXDP_MAX_RING_SIZE && !(v & (v - 1)),
                   "afxdp_parse_ring_size(" + quote(s) + ") stored "
                   + std::to_string(v));
    } else {
        FUZZ_CHECK(out.ret == EINVAL, "afxdp_parse_ring_size returned "
                   + std::to_string(out.ret));
        FUZZ_CHECK(!valid, "afxdp_parse_ring_size rejected " + quote(s));
        FUZZ_CHECK(v == kUnset, "afxdp_parse_ring_size: failure stored "
                   + std::to_string(v));
        check_failure_text("afxdp_parse_ring_size", s, out.msg);
        FUZZ_CHECK(out.msg.find("power of two") != std::string::npos,
                   "ring size message does not say 'power of two': "
                   + quote(out.msg.c_str()));
    }
}

void
fuzz_rx_queues(const char *s)
{
    std::string name = std::string(kNamePrefix) + (s ? s : "");
    unsigned n = afxdp_device_rx_queues(name.c_str());
    if (no_fuzz_interfaces) {
        FUZZ_CHECK(n == 0, "afxdp_device_rx_queues(" + quote(name.c_str())
                   + ") = " + std::to_string(n) + " for no such device");
    }
}

// The checks that take no input.
void
check_constants()
{
    for (int m = 0; m < 8; m++) {   // Every value the enum can hold.
        afxdp_xdp_mode mode = afxdp_xdp_mode(m);
        const char *name = afxdp_mode_name(mode);
        FUZZ_CHECK(name && *name, "afxdp_mode_name(" + std::to_string(m)
                   + ") is empty");
        afxdp_xdp_mode back = AFXDP_MODE_N;
        char err[256];
        int r = afxdp_parse_mode(name, &back, err, sizeof err);
        if (m < AFXDP_MODE_N) {
            FUZZ_CHECK(!std::strcmp(name, kModeNames[m]),
                       "afxdp_mode_name(" + std::to_string(m) + ") = "
                       + quote(name));
            FUZZ_CHECK(r == 0 && back == mode, "mode name " + quote(name)
                       + " does not parse back");
        } else {
            FUZZ_CHECK(r == EINVAL, "the name " + quote(name)
                       + " of invalid mode " + std::to_string(m)
                       + " parses as a mode");
        }
    }
#ifdef HAVE_XDP_NEED_WAKEUP
    FUZZ_CHECK(afxdp_need_wakeup_supported(), "need_wakeup built, not said");
#else
    FUZZ_CHECK(!afxdp_need_wakeup_supported(), "need_wakeup said, not built");
#endif
}

// The whole configuration of a port whose options are 'values', each given
// to the option its position names (some twice, some spelled two ways):
// what parses must pass afxdp_port_config_check(), what does not must be
// refused with EINVAL, a sentence naming the interface, and '*cfg' left
// alone.
void
fuzz_port_config(const std::vector<const char *> &values, size_t errlen)
{
    static const char *const kKeys[] = {
        "n_rxq", "xdp-mode", "use_need_wakeup", "use-need-wakeup",
        "ring_size", "umem_frames", "shared_umem", "coalesce_tx_kicks",
        "rx_hints", "xdp_fast_path",
    };
    using Options = std::vector<std::pair<std::string, const char *>>;
    Options opts;
    for (size_t i = 0; i < values.size(); i++) {
        if (values[i]) {
            opts.emplace_back(kKeys[i % (sizeof kKeys / sizeof *kKeys)],
                              values[i]);
        }
    }
    auto lookup = [](const void *aux, const char *key) -> const char * {
        for (const auto &kv : *static_cast<const Options *>(aux)) {
            if (kv.first == key) {       // The first one given counts.
                return kv.second;
            }
        }
        return nullptr;
    };
    afxdp_port_config cfg, before;
    std::memset(&cfg, 0xa5, sizeof cfg);
    before = cfg;
    std::string ifname = std::string(kNamePrefix) + "0";
    auto out = call_with_err(
        [&](char *err, size_t len) {
            return afxdp_port_config_parse(ifname.c_str(), lookup, &opts,
                                           &cfg, err, len);
        },
        errlen, 512);
    if (out.ret == 0) {
        FUZZ_CHECK(afxdp_port_config_check(ifname.c_str(), &cfg, nullptr, 0)
                   == 0, "afxdp_port_config_parse built a configuration "
                   "that afxdp_port_config_check refuses");
        FUZZ_CHECK(!afxdp_port_config_needs_reopen(&cfg, &cfg),
                   "a configuration differs from itself");
    } else {
        FUZZ_CHECK(out.ret == EINVAL, "afxdp_port_config_parse returned "
                   + std::to_string(out.ret));
        FUZZ_CHECK(!std::memcmp(&cfg, &before, sizeof cfg),
                   "a refused configuration was stored");
        FUZZ_CHECK(out.msg.rfind(ifname + ": ", 0) == 0,
                   "the refusal does not start with the interface: "
                   + quote(out.msg.c_str()));
    }
}

}  // namespace

extern "C" int
LLVMFuzzerInitialize(int *, char ***)
{
    no_fuzz_interfaces = true;
    if (DIR *dir = opendir("/sys/class/net")) {
        while (const dirent *e = readdir(dir)) {
            if (!std::strncmp(e->d_name, kNamePrefix, sizeof kNamePrefix - 1)) {
                std::fprintf(stderr, "fuzz-options: interface %s exists: "
                             "not checking afxdp_device_rx_queues()\n",
                             e->d_name);
                no_fuzz_interfaces = false;
            }
        }
        closedir(dir);
    }
    check_constants();
    return 0;
}

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz::Reader in(data, size);
    size_t errlen = in.take<uint16_t>() % (fuzz::kMaxErrlen + 1);
    unsigned min = in.take<uint32_t>();
    unsigned max = in.take<uint32_t>();
    uint8_t flags = in.take<uint8_t>();
    std::vector<std::string> strings = in.strings();

    // More strings per input would only slow the fuzzer down.
    std::vector<const char *> inputs;
    for (size_t i = 0; i < strings.size() && i < kMaxStrings; i++) {
        inputs.push_back(strings[i].c_str());
    }
    if (flags & 1) {
        inputs.push_back(nullptr);   // The unit tests pass NULL too.
    }

    for (const char *s : inputs) {
        fuzz_mode(s, errlen);
        fuzz_bool(s, errlen);
        fuzz_uint(s, min, max, errlen);
        fuzz_uint(s, 0, UINT_MAX, errlen);
        fuzz_uint(s, min < max ? min : max, min < max ? max : min, errlen);
        fuzz_ring_size(s, errlen);
        fuzz_rx_queues(s);
    }
    fuzz_port_config(inputs, errlen);

    // NULL 'err' with errlen 0, as the unit tests call it.
    if (flags & 2) {
        const char *s = inputs.empty() ? "x" : inputs[0];
        afxdp_xdp_mode m;
        bool b;
        unsigned u;
        afxdp_parse_mode(s, &m, nullptr, 0);
        afxdp_parse_bool(s, &b, nullptr, 0);
        afxdp_parse_uint(s, min, max, &u, nullptr, 0);
        afxdp_parse_ring_size(s, &u, nullptr, 0);
    }
    return 0;
}
