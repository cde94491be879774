// Tier 2 (kernel, no traffic): the XDP fast path's parser
// (lib/afxdp/bpf/parse.h, run alone by fastpath-test.bpf.c's
// afxdp_parse_test) against a reference written here from what Open
// vSwitch's miniflow_extract() does with the same bytes; and the SCTP
// checksum's change, for every length.
//
// The parser must give, for every packet it takes, exactly the key OVS
// would (the same values, zero where OVS extracts nothing), and punt
// exactly the packets it says it punts.  Both are checked on hand-made
// packets of every kind it knows and on thousands of mutations of them
// (lengths, versions, header lengths, flags, protocols, truncations).

#include <gtest/gtest.h>

#include "fastpath-test.hh"

using namespace afxdp_fp_test;

namespace {

class FastPathParser : public FastPathTestProgram {
protected:
    FastPathParser() : FastPathTestProgram("afxdp_parse_test") {}

    void SetUp() override
    {
        FastPathTestProgram::SetUp();
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        map_fd_ = bpf_map__fd(bpf_object__find_map_by_name(obj_, "parse_out"));
        ASSERT_GE(map_fd_, 0);
    }

    // The kernel's run of the parser over 'pkt'.
    ParseResult run(const Bytes &pkt)
    {
        ParseResult r;
        std::memset(&r, 0xee, sizeof r);   // Stale bytes would show.
        uint32_t zero = 0;
        EXPECT_EQ(bpf_map_update_elem(map_fd_, &zero, &r, BPF_ANY), 0);
        Bytes data = pkt;
        LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = data.data(),
                    .data_size_in = uint32_t(data.size()), .repeat = 1);
        int err = bpf_prog_test_run_opts(prog_fd_, &opts);
        EXPECT_EQ(err, 0) << "test run of a " << pkt.size() << "-byte packet";
        EXPECT_EQ(opts.retval, uint32_t(XDP_PASS));
        EXPECT_EQ(bpf_map_lookup_elem(map_fd_, &zero, &r), 0);
        return r;
    }

    // Parser and reference agree on 'pkt'; false (and a failure that
    // shows both) if not.
    bool agree(const Bytes &pkt, const std::string &what)
    {
        Expect want = reference(pkt);
        ParseResult got = run(pkt);
        if (got.verdict != want.verdict()) {
            ADD_FAILURE() << what << ": parser's verdict " << got.verdict
                          << ", reference's " << want.verdict()
                          << " (0 parsed, 1 punted, 2 parsed with an IP "
                          << "header)\n  packet " << hex(pkt.data(), pkt.size());
            return false;
        }
        if (!want.punt && std::memcmp(&got.key, &want.key, sizeof got.key)) {
            ADD_FAILURE() << what << ": keys differ\n  packet    "
                          << hex(pkt.data(), pkt.size()) << "\n  parser    "
                          << hex(&got.key, sizeof got.key) << "\n  reference "
                          << hex(&want.key, sizeof want.key);
            return false;
        }
        return true;
    }

    int map_fd_ = -1;
};

}  // namespace


TEST_F(FastPathParser, EveryKindOfPacketGivesOvsKey)
{
    std::vector<Bytes> t = templates();
    size_t punted = 0;
    for (size_t i = 0; i < t.size(); i++) {
        agree(t[i], "template " + std::to_string(i));
        punted += reference(t[i]).punt;
    }
    // The templates cover both sides.
    EXPECT_GE(punted, 6u);
    EXPECT_LE(punted, t.size() - 20);

    // Spot checks of the reference itself against values written out.
    Expect tcp = reference(ipv4(IPPROTO_TCP, 10));
    EXPECT_EQ(tcp.key.vlan_tci, htons(0x1000 | 10));
    EXPECT_EQ(tcp.key.vlan_tpid, htons(0x8100));
    Expect ad = reference(ipv4(IPPROTO_UDP, 0x10000 | 0x2005));
    EXPECT_EQ(ad.key.vlan_tpid, htons(0x88a8));
    EXPECT_EQ(ad.key.vlan_tci, htons(0x3005));
    EXPECT_EQ(reference(ipv4(IPPROTO_UDP)).key.vlan_tpid, 0);
    EXPECT_EQ(tcp.key.dl_type, htons(0x0800));
    EXPECT_EQ(tcp.key.tp_src, htons(12345));
    EXPECT_EQ(tcp.key.tp_dst, htons(80));
    EXPECT_EQ(tcp.key.tcp_flags, htons(0x012));   // SYN ACK.
    EXPECT_EQ(tcp.key.nw_tos, 0xb8);
    EXPECT_EQ(tcp.key.nw_ttl, 64);
    Expect v6 = reference(ipv6(IPPROTO_ICMPV6));
    EXPECT_EQ(v6.key.ipv6_label, htonl(0xcdef1));
    EXPECT_EQ(v6.key.nw_tos, 0xab);
    EXPECT_EQ(v6.key.tp_src, htons(128));
    Expect later = reference(ipv4(IPPROTO_UDP, -1, 0x00b9));
    EXPECT_EQ(later.key.nw_frag, 3);
    EXPECT_EQ(later.key.tp_src, 0);
}

TEST_F(FastPathParser, TruncatedPacketsGiveOvsKey)
{
    // Every length of every template: OVS's length checks, one by one.
    for (const Bytes &t : templates()) {
        for (size_t len = 14; len <= t.size(); len++) {
            if (!agree(Bytes(t.begin(), t.begin() + len),
                       "cut to " + std::to_string(len))) {
                return;
            }
        }
    }
}

TEST_F(FastPathParser, MutatedPacketsGiveOvsKey)
{
    // Headers with random bytes changed (lengths, versions, protocols,
    // flags, types) and random padding after them.
    std::mt19937 rng(20261202);
    std::vector<Bytes> t = templates();
    size_t failures = 0;
    for (int i = 0; i < 20000 && failures < 5; i++) {
        Bytes p = t[rng() % t.size()];
        int changes = 1 + rng() % 3;
        for (int c = 0; c < changes; c++) {
            size_t at = 12 + rng() % std::min<size_t>(p.size() - 12, 48);
            p[at] = uint8_t(rng());
        }
        p.resize(p.size() + rng() % 8, 0xab);
        failures += !agree(p, "mutation " + std::to_string(i));
    }
}

// ---- The SCTP checksum's change, for every length. ----

namespace {

class FastPathCrc32c : public FastPathTestProgram {
protected:
    FastPathCrc32c() : FastPathTestProgram("afxdp_crc32c_test") {}

    // The program's crc32c_delta(d, len) (in a frame of the least size
    // the kernel runs a program on).
    uint32_t delta(uint32_t d, uint16_t len)
    {
        Bytes in(14, 0), out(14, 0);
        put_le32(&in[0], d);
        in[4] = uint8_t(len);
        in[5] = uint8_t(len >> 8);
        LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in.data(),
                    .data_out = out.data(),
                    .data_size_in = uint32_t(in.size()),
                    .data_size_out = uint32_t(out.size()), .repeat = 1);
        EXPECT_EQ(bpf_prog_test_run_opts(prog_fd_, &opts), 0);
        EXPECT_EQ(opts.retval, uint32_t(XDP_PASS));
        return get_le32(&out[8]);
    }
};

}  // namespace

// What xoring 4 bytes 'd' into the head of a packet of 'len' bytes does
// to its CRC32c (the XDP program's change of an SCTP checksum when the
// ports change) is the bitwise CRC, with no initial or final value, of
// those 4 bytes and len - 4 zero bytes: checked for every length an IP
// header can give, so every entry of both tables of powers is used.
TEST_F(FastPathCrc32c, DeltaOfEveryLengthIsTheBitwiseCrc)
{
    for (uint32_t d : {0x00000001u, 0x80000000u, 0x2d0f9c41u, 0xffffffffu}) {
        uint32_t reg = 0;
        for (int i = 0; i < 4; i++) {
            reg ^= uint8_t(d >> (8 * i));
            for (int bit = 0; bit < 8; bit++) {
                reg = (reg >> 1) ^ (0x82f63b78 & -(reg & 1));
            }
        }
        size_t wrong = 0;
        for (uint32_t len = 4; len < 65536; len++) {
            const uint32_t got = delta(d, uint16_t(len));
            if (got != reg && wrong++ < 5) {
                ADD_FAILURE() << std::hex << "d 0x" << d << std::dec
                              << ", " << len << " bytes: program "
                              << std::hex << got << ", bitwise " << reg;
            }
            for (int bit = 0; bit < 8; bit++) {   // One more zero byte.
                reg = (reg >> 1) ^ (0x82f63b78 & -(reg & 1));
            }
        }
        EXPECT_EQ(wrong, 0u) << "d 0x" << std::hex << d;
    }
}
