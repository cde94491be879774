// Tier 1 (no kernel): the option parsers of the C API (options.cc).
//
// Proves that each parser accepts exactly the documented spellings, stores
// nothing and returns EINVAL for anything else, and that its error text
// quotes the rejected value and names the accepted ones, so an operator
// can fix the setting from the log line alone.  Also that mode names and
// the mode parser agree with each other.

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/utsname.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "afxdp.h"

namespace {

const char kModesText[] =
    "(accepted: best-effort, native-with-zerocopy, native, generic)";

// Parses 's' as a mode; on failure returns AFXDP_MODE_N and the message.
afxdp_xdp_mode
mode_of(const char *s, std::string *err = nullptr)
{
    char buf[256] = "untouched";
    afxdp_xdp_mode m = AFXDP_MODE_N;
    int r = afxdp_parse_mode(s, &m, buf, sizeof buf);
    EXPECT_TRUE(r == 0 || r == EINVAL);
    if (r == 0) {
        EXPECT_STREQ(buf, "untouched") << "no message on success";
    } else {
        EXPECT_EQ(m, AFXDP_MODE_N) << "nothing stored on failure";
    }
    if (err) {
        *err = r ? buf : "";
    }
    return r ? AFXDP_MODE_N : m;
}

// Parses 's' with afxdp_parse_uint in [min, max]; returns the errno and
// fills '*value' (left at 12345 on failure) and '*err'.
int
uint_of(const char *s, unsigned min, unsigned max, unsigned *value,
        std::string *err = nullptr)
{
    char buf[256] = "";
    *value = 12345;
    int r = afxdp_parse_uint(s, min, max, value, buf, sizeof buf);
    if (err) {
        *err = buf;
    }
    return r;
}

}  // namespace

// --- afxdp_mode_name --------------------------------------------------------

TEST(Options, ModeNames)
{
    EXPECT_STREQ(afxdp_mode_name(AFXDP_MODE_BEST_EFFORT), "best-effort");
    EXPECT_STREQ(afxdp_mode_name(AFXDP_MODE_NATIVE_ZC),
                 "native-with-zerocopy");
    EXPECT_STREQ(afxdp_mode_name(AFXDP_MODE_NATIVE), "native");
    EXPECT_STREQ(afxdp_mode_name(AFXDP_MODE_GENERIC), "generic");
    EXPECT_STREQ(afxdp_mode_name(AFXDP_MODE_N), "unknown");
    EXPECT_STREQ(afxdp_mode_name(afxdp_xdp_mode(1000)), "unknown");
}

// --- afxdp_parse_mode -------------------------------------------------------

TEST(Options, ParseModeAcceptsAllFourNames)
{
    EXPECT_EQ(mode_of("best-effort"), AFXDP_MODE_BEST_EFFORT);
    EXPECT_EQ(mode_of("native-with-zerocopy"), AFXDP_MODE_NATIVE_ZC);
    EXPECT_EQ(mode_of("native"), AFXDP_MODE_NATIVE);
    EXPECT_EQ(mode_of("generic"), AFXDP_MODE_GENERIC);
}

TEST(Options, ParseModeRoundTripsModeName)
{
    for (unsigned m = 0; m < AFXDP_MODE_N; m++) {
        EXPECT_EQ(mode_of(afxdp_mode_name(afxdp_xdp_mode(m))),
                  afxdp_xdp_mode(m));
    }
}

TEST(Options, ParseModeIgnoresCase)
{
    EXPECT_EQ(mode_of("Native"), AFXDP_MODE_NATIVE);
    EXPECT_EQ(mode_of("GENERIC"), AFXDP_MODE_GENERIC);
    EXPECT_EQ(mode_of("Best-Effort"), AFXDP_MODE_BEST_EFFORT);
    EXPECT_EQ(mode_of("Native-With-ZeroCopy"), AFXDP_MODE_NATIVE_ZC);
}

TEST(Options, ParseModeRejectsOthers)
{
    const char *bad[] = {"", "nativ", "natives", " native", "native ",
                         "best_effort", "zerocopy", "skb", "drv"};
    for (const char *s : bad) {
        std::string err;
        EXPECT_EQ(mode_of(s, &err), AFXDP_MODE_N) << "'" << s << "'";
        EXPECT_EQ(err, std::string("invalid value '") + s + "' "
                       + kModesText);
    }
}

TEST(Options, ParseModeRejectsNull)
{
    std::string err;
    EXPECT_EQ(mode_of(nullptr, &err), AFXDP_MODE_N);
    EXPECT_EQ(err, std::string("invalid value '' ") + kModesText);
}

TEST(Options, ParseModeTruncatesTheMessageSafely)
{
    char buf[12];
    std::memset(buf, 'x', sizeof buf);
    afxdp_xdp_mode m;
    EXPECT_EQ(afxdp_parse_mode("bogus", &m, buf, sizeof buf), EINVAL);
    EXPECT_STREQ(buf, "invalid val");
    // No room at all: nothing written, still EINVAL.
    EXPECT_EQ(afxdp_parse_mode("bogus", &m, nullptr, 0), EINVAL);
}

// --- afxdp_parse_bool -------------------------------------------------------

TEST(Options, ParseBoolAcceptsTrueAndFalse)
{
    char err[128] = "";
    bool v = false;
    EXPECT_EQ(afxdp_parse_bool("true", &v, err, sizeof err), 0);
    EXPECT_TRUE(v);
    EXPECT_EQ(afxdp_parse_bool("false", &v, err, sizeof err), 0);
    EXPECT_FALSE(v);
    EXPECT_STREQ(err, "");
}

TEST(Options, ParseBoolIsStrict)
{
    // Only the lower-case words, as OVS's smap_get_bool() writes them:
    // no case folding, no numbers, no yes/no, no surrounding space.
    const char *bad[] = {"maybe", "", "1x", "1", "0", "TRUE", "True",
                         "FALSE", "yes", "no", "on", " true", "true ",
                         "truex", "t"};
    for (const char *s : bad) {
        char err[128] = "";
        bool v = true;
        EXPECT_EQ(afxdp_parse_bool(s, &v, err, sizeof err), EINVAL)
            << "'" << s << "'";
        EXPECT_TRUE(v) << "nothing stored for '" << s << "'";
        EXPECT_EQ(std::string(err), std::string("invalid value '") + s
                                    + "' (accepted: true, false)");
    }
}

TEST(Options, ParseBoolRejectsNull)
{
    char err[128] = "";
    bool v = false;
    EXPECT_EQ(afxdp_parse_bool(nullptr, &v, err, sizeof err), EINVAL);
    EXPECT_FALSE(v);
    EXPECT_STREQ(err, "invalid value '' (accepted: true, false)");
}

// --- afxdp_parse_uint -------------------------------------------------------

TEST(Options, ParseUintAcceptsTheRangeInclusive)
{
    unsigned v;
    EXPECT_EQ(uint_of("1", 1, 16, &v), 0);
    EXPECT_EQ(v, 1u);
    EXPECT_EQ(uint_of("16", 1, 16, &v), 0);
    EXPECT_EQ(v, 16u);
    EXPECT_EQ(uint_of("0", 0, 0, &v), 0);
    EXPECT_EQ(v, 0u);
    EXPECT_EQ(uint_of("2048", 64, 16384, &v), 0);
    EXPECT_EQ(v, 2048u);
    EXPECT_EQ(uint_of("4294967295", 0, UINT_MAX, &v), 0);
    EXPECT_EQ(v, UINT_MAX);
    // Decimal always: a leading zero is not octal.
    EXPECT_EQ(uint_of("010", 0, 100, &v), 0);
    EXPECT_EQ(v, 10u);
}

TEST(Options, ParseUintRejectsOutOfRange)
{
    unsigned v;
    std::string err;
    EXPECT_EQ(uint_of("0", 1, 16, &v, &err), EINVAL);
    EXPECT_EQ(v, 12345u);
    EXPECT_EQ(err, "invalid value '0' (accepted: an integer from 1 to 16)");
    EXPECT_EQ(uint_of("17", 1, 16, &v, &err), EINVAL);
    EXPECT_EQ(err,
              "invalid value '17' (accepted: an integer from 1 to 16)");
    // Just past 32 bits: fits in unsigned long, not in unsigned.
    EXPECT_EQ(uint_of("4294967296", 0, UINT_MAX, &v), EINVAL);
    EXPECT_EQ(v, 12345u);
    // Past 64 bits: strtoul overflows (ERANGE).
    EXPECT_EQ(uint_of("99999999999999999999", 0, UINT_MAX, &v, &err),
              EINVAL);
    EXPECT_EQ(v, 12345u);
    EXPECT_EQ(err, "invalid value '99999999999999999999' (accepted: an "
                   "integer from 0 to 4294967295)");
    // strtoul would wrap a negative number to a huge positive one.
    EXPECT_EQ(uint_of("18446744073709551615", 0, UINT_MAX, &v), EINVAL);
}

TEST(Options, ParseUintRejectsNonNumbers)
{
    const char *bad[] = {"", "-1", "-0", "+1", "1x", "x1", " 1", "1 ",
                         "\t1", "0x10", "1.5", "1e3", "one"};
    for (const char *s : bad) {
        unsigned v;
        std::string err;
        EXPECT_EQ(uint_of(s, 0, 1000, &v, &err), EINVAL) << "'" << s << "'";
        EXPECT_EQ(v, 12345u) << "nothing stored for '" << s << "'";
        EXPECT_EQ(err, std::string("invalid value '") + s
                       + "' (accepted: an integer from 0 to 1000)");
    }
}

TEST(Options, ParseUintRejectsNull)
{
    unsigned v;
    std::string err;
    EXPECT_EQ(uint_of(nullptr, 1, 2, &v, &err), EINVAL);
    EXPECT_EQ(v, 12345u);
    EXPECT_EQ(err, "invalid value '' (accepted: an integer from 1 to 2)");
}

TEST(Options, ParseUintIgnoresAStaleErrno)
{
    // A caller's leftover errno must not make a good value fail.
    unsigned v;
    errno = ERANGE;
    EXPECT_EQ(uint_of("7", 0, 10, &v), 0);
    EXPECT_EQ(v, 7u);
}

// --- afxdp_parse_ring_size --------------------------------------------------

TEST(Options, ParseRingSizeAcceptsPowersOfTwoInRange)
{
    for (unsigned v = AFXDP_MIN_RING_SIZE; v <= AFXDP_MAX_RING_SIZE; v *= 2) {
        char s[16], err[128] = "";
        unsigned got = 0;
        std::snprintf(s, sizeof s, "%u", v);
        EXPECT_EQ(afxdp_parse_ring_size(s, &got, err, sizeof err), 0) << s;
        EXPECT_EQ(got, v);
    }
}

TEST(Options, ParseRingSizeRejectsOthersAndSaysWhatIsAccepted)
{
    for (const char *s : {"0", "32", "100", "2047", "32768", "-512", "512k",
                          "", " 512", "0x200", "4294967296"}) {
        char err[128] = "";
        unsigned got = 777;
        EXPECT_EQ(afxdp_parse_ring_size(s, &got, err, sizeof err), EINVAL)
            << s;
        EXPECT_EQ(got, 777u) << "left alone on failure";
        EXPECT_NE(std::string(err).find("power of two from 64 to 16384"),
                  std::string::npos) << err;
    }
    char err[8];
    unsigned got;
    EXPECT_EQ(afxdp_parse_ring_size(nullptr, &got, err, sizeof err), EINVAL);
    EXPECT_EQ(std::strlen(err), sizeof err - 1) << "truncated, terminated";
}

// The MTU limit follows what the running kernel can do: multi-buffer
// AF_XDP came with Linux 6.6.  Opening an AF_XDP socket needs
// CAP_NET_RAW; without it the probe can only say why it does not know.
TEST(Options, MaxMtuIsAJumboFrameFromLinux66On)
{
    utsname u;
    ASSERT_EQ(uname(&u), 0);
    unsigned major = 0, minor = 0;
    ASSERT_EQ(std::sscanf(u.release, "%u.%u", &major, &minor), 2);
    bool has_sg = major > 6 || (major == 6 && minor >= 6);

    char why[256] = "untouched";
    unsigned mtu = afxdp_max_mtu(why, sizeof why);
    if (geteuid() != 0) {
        GTEST_SKIP() << "not root: the probe cannot open an AF_XDP socket";
    }
    if (has_sg) {
        EXPECT_EQ(mtu, unsigned(AFXDP_MAX_MTU_MULTI_BUFFER));
        EXPECT_STREQ(why, "");
    } else {
        EXPECT_EQ(mtu, unsigned(AFXDP_MAX_MTU_ONE_FRAME));
        EXPECT_NE(std::strstr(why, "XDP_USE_SG"), nullptr) << why;
    }
    // Asked once: the same answer, the same text.
    char again[256] = "";
    EXPECT_EQ(afxdp_max_mtu(again, sizeof again), mtu);
    EXPECT_STREQ(again, why);
    EXPECT_EQ(afxdp_max_mtu(nullptr, 0), mtu);
    // A short buffer gets what fits, terminated.
    char four[4] = "xyz";
    afxdp_max_mtu(four, sizeof four);
    EXPECT_EQ(std::strlen(four), std::min<size_t>(std::strlen(why), 3));
    EXPECT_EQ(AFXDP_MAX_MTU_ONE_FRAME, 3694);
}
