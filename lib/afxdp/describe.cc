// What the fast path makes of a megaflow, in one line (flow.hh's
// describe(), afxdp-offload.h's afxdp_flow_describe()), and the refusals'
// names.
#include "flow.hh"

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>

namespace afxdp {

namespace {

// How each field of afxdp_flow_key is written, in the key's order.
// nw_src and nw_dst are IPv6 addresses where the flow's dl_type is IPv6,
// IPv4 (the first four bytes) otherwise.
#define AFXDP_KEY_FORMATS            \
    KEY_FORMAT(dl_dst, kMac)         \
    KEY_FORMAT(dl_src, kMac)         \
    KEY_FORMAT(dl_type, kHex)        \
    KEY_FORMAT(vlan_tci, kHex)       \
    KEY_FORMAT(nw_src, kAddress)     \
    KEY_FORMAT(nw_dst, kAddress)     \
    KEY_FORMAT(ipv6_label, kHex)     \
    KEY_FORMAT(nw_proto, kDecimal)   \
    KEY_FORMAT(nw_tos, kHex)         \
    KEY_FORMAT(nw_ttl, kDecimal)     \
    KEY_FORMAT(nw_frag, kDecimal)    \
    KEY_FORMAT(tp_src, kDecimal)     \
    KEY_FORMAT(tp_dst, kDecimal)     \
    KEY_FORMAT(arp_sha, kMac)        \
    KEY_FORMAT(arp_tha, kMac)        \
    KEY_FORMAT(tcp_flags, kHex)      \
    KEY_FORMAT(vlan_tpid, kHex)

enum class Format { kMac, kHex, kDecimal, kAddress };

// A field of 'n' bytes in network order as a number.
uint64_t
be_value(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        v = v << 8 | p[i];
    }
    return v;
}

std::string
format_value(const uint8_t *p, size_t n, Format f, bool ipv6)
{
    char buf[INET6_ADDRSTRLEN + 1];
    switch (f) {
    case Format::kMac:
        std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x",
                      p[0], p[1], p[2], p[3], p[4], p[5]);
        break;
    case Format::kAddress:
        inet_ntop(ipv6 ? AF_INET6 : AF_INET, p, buf, sizeof buf);
        break;
    case Format::kHex:
        std::snprintf(buf, sizeof buf, "%#llx",
                      (unsigned long long) be_value(p, n));
        break;
    case Format::kDecimal:
        std::snprintf(buf, sizeof buf, "%llu",
                      (unsigned long long) be_value(p, n));
        break;
    }
    return buf;
}

// "name=value" or "name=value/mask" for a field the mask touches.
void
describe_field(std::string &out, const char *name, const void *value,
               const void *mask, size_t n, Format f, bool ipv6)
{
    const auto *v = static_cast<const uint8_t *>(value);
    const auto *m = static_cast<const uint8_t *>(mask);
    if (f == Format::kAddress && !ipv6) {
        n = 4;
    }
    bool any = false, whole = true;
    for (size_t i = 0; i < n; i++) {
        any |= m[i] != 0;
        whole &= m[i] == 0xff;
    }
    if (!any) {
        return;
    }
    out += name;
    out += '=';
    out += format_value(v, n, f, ipv6);
    if (!whole) {
        out += '/';
        out += format_value(m, n, f, ipv6);
    }
    out += ' ';
}

std::string
describe_eth(const char *name, const std::array<uint8_t, 6> &value,
             const std::array<uint8_t, 6> &mask)
{
    std::string out;
    describe_field(out, name, value.data(), mask.data(), 6, Format::kMac,
                   false);
    if (!out.empty()) {
        out.pop_back();
        out.insert(0, ",");
    }
    return out;
}

// ",set_ipv4(tos=0x10/0xfc,ttl=63)": each field the set writes, "/mask"
// where the mask is not whole.
std::string
describe_set_ip(const XdpFlow &f)
{
    const bool v4 = f.set_ip == 4;
    std::string out = v4 ? ",set_ipv4(" : ",set_ipv6(";
    std::string addrs;
    if (v4) {
        describe_field(addrs, "src", &f.nw_src, &f.nw_src_mask, 4,
                       Format::kAddress, false);
        describe_field(addrs, "dst", &f.nw_dst, &f.nw_dst_mask, 4,
                       Format::kAddress, false);
    } else {
        describe_field(addrs, "src", f.ipv6_src.data(),
                       f.ipv6_src_mask.data(), 16, Format::kAddress, true);
        describe_field(addrs, "dst", f.ipv6_dst.data(),
                       f.ipv6_dst_mask.data(), 16, Format::kAddress, true);
        // The label's whole mask is its 20 bits.
        uint32_t label_mask = f.ipv6_label_mask;
        if (label_mask == htonl(0xfffff)) {
            label_mask = 0xffffffff;
        }
        describe_field(addrs, "label", &f.ipv6_label, &label_mask, 4,
                       Format::kHex, true);
    }
    for (char &c : addrs) {
        c = c == ' ' ? ',' : c;
    }
    out += addrs;
    const struct {
        const char *name;
        uint8_t value, mask;
    } fields[] = {{v4 ? "tos" : "tclass", f.nw_tos, f.nw_tos_mask},
                  {v4 ? "ttl" : "hlimit", f.nw_ttl, f.nw_ttl_mask}};
    const char *sep = "";
    if (out.back() == ',') {
        out.pop_back();
        sep = ",";
    }
    for (const auto &x : fields) {
        if (x.mask || (!v4 && x.value)) {
            char buf[32];
            std::snprintf(buf, sizeof buf, x.mask == 0xff ? "%s%s=%u"
                                                          : "%s%s=%u/%#x",
                          sep, x.name, x.value, x.mask);
            out += buf;
            sep = ",";
        }
    }
    return out + ")";
}

// ",set_tcp(dst=9)": each port the set writes (OVS ors a value in
// under any mask), "/mask" where the mask is not whole.
std::string
describe_set_l4(const XdpFlow &f)
{
    std::string out = f.set_l4 == 6 ? ",set_tcp("
                      : f.set_l4 == 17 ? ",set_udp(" : ",set_sctp(";
    const struct {
        const char *name;
        uint16_t value, mask;
    } ports[] = {{"src", f.tp_src, f.tp_src_mask},
                 {"dst", f.tp_dst, f.tp_dst_mask}};
    const char *sep = "";
    for (const auto &x : ports) {
        const unsigned value = ntohs(x.value), mask = ntohs(x.mask);
        if (value | mask) {
            char buf[48];
            std::snprintf(buf, sizeof buf, mask == 0xffff ? "%s%s=%u"
                                                          : "%s%s=%u/%#x",
                          sep, x.name, value, mask);
            out += buf;
            sep = ",";
        }
    }
    return out + ")";
}

}  // namespace

std::string
describe(const Translation &t)
{
    const XdpFlow &f = t.flow;
    const bool ipv6 = f.mask.dl_type == 0xffff
                      && f.key.dl_type == to_be16(0x86dd);
    std::string out;
    if (t.offloadable()) {
#define KEY_FORMAT(FIELD, FORMAT)                                           \
        describe_field(out, #FIELD, &f.key.FIELD, &f.mask.FIELD,            \
                       sizeof f.key.FIELD, Format::FORMAT, ipv6);
        AFXDP_KEY_FORMATS
#undef KEY_FORMAT
    }
    out += "-> ";
    if (!t.full()) {
        out += t.offloadable() ? "ovs(" : "userspace(";
        out += afxdp_offload_refusal_name(t.refusal);
        if (t.detail) {
            out += ": ";
            out += t.detail;
        }
        return out + ")";
    }
    if (f.verdict == Verdict::kDrop) {
        return out + "drop";
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "redirect(ifindex=%d", f.ifindex);
    out += buf;
    switch (f.vlan) {
    case VlanOp::kNone:
        break;
    case VlanOp::kPop:
        out += ",pop_vlan";
        break;
    case VlanOp::kPush:
    case VlanOp::kReplace:
        std::snprintf(buf, sizeof buf, ",%s_vlan(tpid=%#x,tci=%#x)",
                      f.vlan == VlanOp::kPush ? "push" : "replace",
                      f.tpid, f.tci);
        out += buf;
        break;
    }
    out += describe_eth("eth_src", f.eth_src, f.eth_src_mask);
    out += describe_eth("eth_dst", f.eth_dst, f.eth_dst_mask);
    if (f.set_ip) {
        out += describe_set_ip(f);
    }
    if (f.set_l4) {
        out += describe_set_l4(f);
    }
    return out + ")";
}

}  // namespace afxdp

extern "C" {

enum afxdp_offload_refusal
afxdp_flow_describe(const struct afxdp_flow_match *match,
                    const struct afxdp_flow_action *actions,
                    size_t n_actions, char *buf, size_t size) noexcept
{
    try {
        afxdp::Translation t = afxdp::translate(*match, actions, n_actions,
                                                0);
        if (size) {
            std::snprintf(buf, size, "%s", afxdp::describe(t).c_str());
        }
        return t.refusal;
    } catch (...) {     // std::bad_alloc: an empty line.
        if (size) {
            buf[0] = '\0';
        }
        return AFXDP_REFUSED_action;
    }
}

const char *
afxdp_offload_refusal_name(enum afxdp_offload_refusal r) noexcept
{
    switch (r) {
#define AFXDP_REFUSAL(NAME, TEXT) case AFXDP_REFUSED_##NAME: return #NAME;
        AFXDP_OFFLOAD_REFUSALS
#undef AFXDP_REFUSAL
    case AFXDP_REFUSED_N:
        break;
    }
    return "none";
}

const char *
afxdp_offload_refusal_text(enum afxdp_offload_refusal r) noexcept
{
    switch (r) {
#define AFXDP_REFUSAL(NAME, TEXT) case AFXDP_REFUSED_##NAME: return TEXT;
        AFXDP_OFFLOAD_REFUSALS
#undef AFXDP_REFUSAL
    case AFXDP_REFUSED_N:
        break;
    }
    return "offloaded";
}

}  // extern "C"
