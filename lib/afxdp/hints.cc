#include "hints.hh"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstring>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <mutex>
#include <sys/socket.h>
#include <unistd.h>

#include "fd.hh"

namespace afxdp {
namespace {

// The kernel's "netdev" generic netlink family (linux/netdev.h, which
// older uapi headers lack): its one command and attributes we use.
constexpr char kNetdevFamily[] = "netdev";
constexpr uint8_t kNetdevCmdDevGet = 1;
constexpr uint16_t kNetdevAttrIfindex = 1;
constexpr uint16_t kNetdevAttrRxMetadata = 5;   // u64, Linux 6.8.
constexpr uint64_t kRxMetadataHash = 1 << 1;
constexpr uint64_t kRxMetadataVlanTag = 1 << 2;

// The kfuncs' BTF ids in vmlinux, looked up once: parsing the kernel's
// BTF takes tens of milliseconds.
struct Kfuncs {
    uint32_t hash = 0;
    uint32_t vlan = 0;
};

Kfuncs
kernel_kfuncs() noexcept
{
    static std::once_flag once;
    static Kfuncs k;
    std::call_once(once, [] {
        // Without it libbpf would warn; no BTF means no kfuncs to call.
        if (access("/sys/kernel/btf/vmlinux", R_OK)) {
            return;
        }
        btf *vmlinux = btf__load_vmlinux_btf();
        if (libbpf_get_error(vmlinux)) {
            return;
        }
        int id = btf__find_by_name_kind(vmlinux, "bpf_xdp_metadata_rx_hash",
                                        BTF_KIND_FUNC);
        k.hash = id > 0 ? uint32_t(id) : 0;
        id = btf__find_by_name_kind(vmlinux, "bpf_xdp_metadata_rx_vlan_tag",
                                    BTF_KIND_FUNC);
        k.vlan = id > 0 ? uint32_t(id) : 0;
        btf__free(vmlinux);
    });
    return k;
}

// One generic netlink request with one attribute, and room for its answer.
struct GenlRequest {
    nlmsghdr nlh;
    genlmsghdr genl;
    char attrs[64];
};

size_t
put_attr(char *at, uint16_t type, const void *data, uint16_t len) noexcept
{
    nlattr *a = reinterpret_cast<nlattr *>(at);
    a->nla_type = type;
    a->nla_len = uint16_t(NLA_HDRLEN + len);
    std::memcpy(at + NLA_HDRLEN, data, len);
    return NLA_ALIGN(a->nla_len);
}

// Sends a request for 'cmd' of 'family' with one attribute and finds
// attribute 'want' in the answer: copies up to 'len' bytes of it into
// 'out'.  Returns 0, -ENOENT if the answer lacks it, or -errno.
int
genl_query(int fd, uint16_t family, uint8_t cmd, uint16_t attr,
           const void *data, uint16_t datalen, uint16_t want, void *out,
           size_t len) noexcept
{
    GenlRequest req = {};
    size_t alen = put_attr(req.attrs, attr, data, datalen);
    req.nlh.nlmsg_len = uint32_t(NLMSG_LENGTH(GENL_HDRLEN) + alen);
    req.nlh.nlmsg_type = family;
    req.nlh.nlmsg_flags = NLM_F_REQUEST;
    req.genl.cmd = cmd;
    req.genl.version = 1;
    if (send(fd, &req, req.nlh.nlmsg_len, 0) < 0) {
        return -errno;
    }
    alignas(nlmsghdr) char buf[8192];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0) {
        return -errno;
    }
    nlmsghdr *h = reinterpret_cast<nlmsghdr *>(buf);
    if (!NLMSG_OK(h, size_t(n))) {
        return -EPROTO;
    }
    if (h->nlmsg_type == NLMSG_ERROR) {
        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) {
            return -EPROTO;
        }
        const nlmsgerr *e = static_cast<const nlmsgerr *>(NLMSG_DATA(h));
        return e->error ? e->error : -EPROTO;
    }
    if (h->nlmsg_type != family || h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN)) {
        return -EPROTO;
    }
    const char *p = static_cast<const char *>(NLMSG_DATA(h)) + GENL_HDRLEN;
    const char *end = reinterpret_cast<const char *>(h) + h->nlmsg_len;
    while (p + NLA_HDRLEN <= end) {
        const nlattr *a = reinterpret_cast<const nlattr *>(p);
        if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end) {
            break;
        }
        if ((a->nla_type & NLA_TYPE_MASK) == want) {
            size_t have = a->nla_len - NLA_HDRLEN;
            std::memcpy(out, p + NLA_HDRLEN, have < len ? have : len);
            return 0;
        }
        p += NLA_ALIGN(a->nla_len);
    }
    return -ENOENT;
}

// The RX metadata the driver of 'ifindex' implements (NETDEV_XDP_RX_
// METADATA_* bits), or -EOPNOTSUPP if the kernel does not say.
int
driver_rx_metadata(int ifindex, uint64_t *features) noexcept
{
    Fd fd(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC));
    if (!fd) {
        return -errno;
    }
    timeval tv = {1, 0};
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    uint16_t family = 0;
    int err = genl_query(fd.get(), GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                         CTRL_ATTR_FAMILY_NAME, kNetdevFamily,
                         sizeof kNetdevFamily, CTRL_ATTR_FAMILY_ID, &family,
                         sizeof family);
    if (err) {
        return -EOPNOTSUPP;   // No netdev family: before Linux 6.3.
    }
    uint32_t ifi = uint32_t(ifindex);
    *features = 0;
    err = genl_query(fd.get(), family, kNetdevCmdDevGet, kNetdevAttrIfindex,
                     &ifi, sizeof ifi, kNetdevAttrRxMetadata, features,
                     sizeof *features);
    return err == -ENOENT ? -EOPNOTSUPP : err;
}

}  // namespace

HintSupport
rx_hint_support(int ifindex) noexcept
{
    HintSupport s;
    Kfuncs k = kernel_kfuncs();
    s.hash_kfunc = k.hash;
    s.vlan_kfunc = k.vlan;
    uint64_t features = 0;
    int err = driver_rx_metadata(ifindex, &features);
    if (!k.hash) {
        s.hash_why = "the kernel has no XDP RX hash kfunc (Linux 6.3)";
    } else if (!err && !(features & kRxMetadataHash)) {
        s.hash_why = "the driver does not give XDP programs an RX hash";
    } else {
        s.hints |= kHintHash;
    }
    if (!k.vlan) {
        s.vlan_why = "the kernel has no XDP RX VLAN tag kfunc (Linux 6.8)";
    } else if (err) {
        s.vlan_why = "the kernel does not say whether the driver gives XDP "
                     "programs the VLAN tag";
    } else if (!(features & kRxMetadataVlanTag)) {
        s.vlan_why = "the driver does not give XDP programs the VLAN tag";
    } else {
        s.hints |= kHintVlan;
    }
    return s;
}

}  // namespace afxdp
