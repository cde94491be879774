// The kernel's "netdev" generic netlink family (see netdev_nl.hh).
#include "netdev_nl.hh"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "fd.hh"

namespace afxdp {
namespace {

constexpr char kNetdevFamily[] = "netdev";
constexpr uint8_t kNetdevCmdDevGet = 1;
constexpr uint16_t kNetdevAttrIfindex = 1;

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

}  // namespace

int
netdev_dev_attr(int ifindex, uint16_t attr, uint64_t *value) noexcept
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
    *value = 0;
    err = genl_query(fd.get(), family, kNetdevCmdDevGet, kNetdevAttrIfindex,
                     &ifi, sizeof ifi, attr, value, sizeof *value);
    return err == -ENOENT ? -EOPNOTSUPP : err;
}

bool
xdp_redirect_target_ok(int ifindex, char *why, size_t whylen) noexcept
{
    uint64_t act = 0;
    int err = netdev_dev_attr(ifindex, kNetdevAttrXdpFeatures, &act);
    if (err == -EOPNOTSUPP) {
        std::snprintf(why, whylen, "the kernel does not say whether the "
                      "driver transmits XDP frames (Linux 6.3)");
        return false;
    }
    if (err) {
        std::snprintf(why, whylen, "asking the kernel whether the driver "
                      "transmits XDP frames failed: %s", std::strerror(-err));
        return false;
    }
    if (!(act & kNetdevXdpActNdoXmit)) {
        std::snprintf(why, whylen, "its driver takes no XDP frames now (a "
                      "veth takes them only while its peer has an XDP "
                      "program or GRO on)");
        return false;
    }
    if (whylen) {
        why[0] = '\0';
    }
    return true;
}


}  // namespace afxdp
