// The kernel's "netdev" generic netlink family, and rtnetlink where the
// kernel has no such family (see netdev_nl.hh).
#include "netdev_nl.hh"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/net_namespace.h>
#include <linux/sockios.h>
#include <mutex>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <utility>
#include <vector>

#include "fd.hh"
#include "log.hh"

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

// Attribute 'type' among those from 'p' to 'end', or nullptr.
const nlattr *
find_attr(const char *p, const char *end, uint16_t type) noexcept
{
    while (p + NLA_HDRLEN <= end) {
        const nlattr *a = reinterpret_cast<const nlattr *>(p);
        if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end) {
            return nullptr;
        }
        if ((a->nla_type & NLA_TYPE_MASK) == type) {
            return a;
        }
        p += NLA_ALIGN(a->nla_len);
    }
    return nullptr;
}

const char *
attr_data(const nlattr *a) noexcept
{
    return reinterpret_cast<const char *>(a) + NLA_HDRLEN;
}

const char *
attr_end(const nlattr *a) noexcept
{
    return reinterpret_cast<const char *>(a) + a->nla_len;
}

template <typename T>
T
attr_get(const nlattr *a, T none) noexcept
{
    T v = none;
    if (a && a->nla_len >= NLA_HDRLEN + sizeof v) {
        std::memcpy(&v, attr_data(a), sizeof v);
    }
    return v;
}

// A netlink socket of 'protocol' that waits at most a second for an
// answer.
Fd
nl_socket(int protocol) noexcept
{
    Fd fd(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol));
    if (fd) {
        timeval tv = {1, 0};
        setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    return fd;
}

// Sends request 'req' and receives its answer into 'buf': 0 with
// '*answer' its first message, of type 'type' and with at least 'len'
// bytes of payload, or -errno (the kernel's error, or -EPROTO).
int
nl_transact(int fd, const nlmsghdr *req, char *buf, size_t size,
            uint16_t type, size_t len, const nlmsghdr **answer) noexcept
{
    if (send(fd, req, req->nlmsg_len, 0) < 0) {
        return -errno;
    }
    ssize_t n = recv(fd, buf, size, 0);
    if (n < 0) {
        return -errno;
    }
    const nlmsghdr *h = reinterpret_cast<const nlmsghdr *>(buf);
    if (!NLMSG_OK(h, size_t(n))) {
        return -EPROTO;
    }
    if (h->nlmsg_type == NLMSG_ERROR) {
        const nlmsgerr *e = static_cast<const nlmsgerr *>(NLMSG_DATA(h));
        return h->nlmsg_len >= NLMSG_LENGTH(sizeof *e) && e->error
               ? e->error : -EPROTO;
    }
    if (h->nlmsg_type != type || h->nlmsg_len < NLMSG_LENGTH(len)) {
        return -EPROTO;
    }
    *answer = h;
    return 0;
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
    alignas(nlmsghdr) char buf[8192];
    const nlmsghdr *h = nullptr;
    int err = nl_transact(fd, &req.nlh, buf, sizeof buf, family,
                          GENL_HDRLEN, &h);
    if (err) {
        return err;
    }
    const char *p = static_cast<const char *>(NLMSG_DATA(h)) + GENL_HDRLEN;
    const char *end = reinterpret_cast<const char *>(h) + h->nlmsg_len;
    if (const nlattr *a = find_attr(p, end, want)) {
        size_t have = a->nla_len - NLA_HDRLEN;
        std::memcpy(out, attr_data(a), have < len ? have : len);
        return 0;
    }
    return -ENOENT;
}

// What rtnetlink says about a link, as far as a veth's redirects need.
struct Link {
    bool up = false;
    bool veth = false;
    bool tun = false;          // A tun or tap device.
    bool xdp_native = false;   // An XDP program attached in native mode.
    int peer = 0;              // A veth's peer (IFLA_LINK), or 0.
    int peer_nsid = -1;        // Its namespace's id, if not this one.
    char name[IFNAMSIZ] = "";
};

// Link 'ifindex' of namespace 'nsid' (-1: this one) into '*out': 0 or
// -errno.
int
rtnl_link(int ifindex, int nsid, Link *out) noexcept
{
    Fd fd = nl_socket(NETLINK_ROUTE);
    if (!fd) {
        return -errno;
    }
    struct {
        nlmsghdr nlh;
        ifinfomsg ifi;
        char attrs[16];
    } req = {};
    size_t alen = 0;
    if (nsid >= 0) {
        int32_t id = nsid;
        alen = put_attr(req.attrs, IFLA_TARGET_NETNSID, &id, sizeof id);
    }
    req.nlh.nlmsg_len = uint32_t(NLMSG_LENGTH(sizeof req.ifi) + alen);
    req.nlh.nlmsg_type = RTM_GETLINK;
    req.nlh.nlmsg_flags = NLM_F_REQUEST;
    req.ifi.ifi_family = AF_UNSPEC;
    req.ifi.ifi_index = ifindex;
    alignas(nlmsghdr) char buf[16384];
    const nlmsghdr *h = nullptr;
    int err = nl_transact(fd.get(), &req.nlh, buf, sizeof buf, RTM_NEWLINK,
                          sizeof(ifinfomsg), &h);
    if (err) {
        return err;
    }
    const ifinfomsg *ifi = static_cast<const ifinfomsg *>(NLMSG_DATA(h));
    const char *p = reinterpret_cast<const char *>(ifi)
                    + NLMSG_ALIGN(sizeof *ifi);
    const char *end = reinterpret_cast<const char *>(h) + h->nlmsg_len;
    *out = Link();
    out->up = ifi->ifi_flags & IFF_UP;
    const nlattr *a = find_attr(p, end, IFLA_IFNAME);
    if (a) {
        std::snprintf(out->name, sizeof out->name, "%.*s",
                      int(a->nla_len - NLA_HDRLEN), attr_data(a));
    }
    out->peer = attr_get<int32_t>(find_attr(p, end, IFLA_LINK), 0);
    out->peer_nsid = attr_get<int32_t>(find_attr(p, end, IFLA_LINK_NETNSID),
                                       -1);
    if ((a = find_attr(p, end, IFLA_LINKINFO))) {
        const nlattr *kind = find_attr(attr_data(a), attr_end(a),
                                       IFLA_INFO_KIND);
        out->veth = kind && !std::strncmp(attr_data(kind), "veth",
                                          kind->nla_len - NLA_HDRLEN);
        out->tun = kind && !std::strncmp(attr_data(kind), "tun",
                                         kind->nla_len - NLA_HDRLEN);
    }
    if ((a = find_attr(p, end, IFLA_XDP))) {
        uint8_t mode = attr_get<uint8_t>(
            find_attr(attr_data(a), attr_end(a), IFLA_XDP_ATTACHED),
            XDP_ATTACHED_NONE);
        out->xdp_native = mode == XDP_ATTACHED_DRV
                          || (mode == XDP_ATTACHED_MULTI
                              && find_attr(attr_data(a), attr_end(a),
                                           IFLA_XDP_DRV_PROG_ID));
    }
    return 0;
}

// The id this namespace gives the namespace file 'nsfd' names
// (RTM_GETNSID): -1 if it has assigned it none (this namespace itself,
// one no device of ours was ever linked to) or on error.
int
netns_id(int nsfd) noexcept
{
    Fd fd = nl_socket(NETLINK_ROUTE);
    if (!fd) {
        return -1;
    }
    alignas(nlmsghdr) char req[64] = {};
    nlmsghdr *nlh = reinterpret_cast<nlmsghdr *>(req);
    char *body = static_cast<char *>(NLMSG_DATA(nlh));
    reinterpret_cast<rtgenmsg *>(body)->rtgen_family = AF_UNSPEC;
    uint32_t ns = uint32_t(nsfd);
    size_t alen = put_attr(body + NLMSG_ALIGN(sizeof(rtgenmsg)), NETNSA_FD,
                           &ns, sizeof ns);
    nlh->nlmsg_len = uint32_t(NLMSG_LENGTH(NLMSG_ALIGN(sizeof(rtgenmsg)))
                              + alen);
    nlh->nlmsg_type = RTM_GETNSID;
    nlh->nlmsg_flags = NLM_F_REQUEST;
    alignas(nlmsghdr) char buf[256];
    const nlmsghdr *h = nullptr;
    if (nl_transact(fd.get(), nlh, buf, sizeof buf, RTM_NEWNSID,
                    sizeof(rtgenmsg), &h)) {
        return -1;
    }
    const char *p = static_cast<const char *>(NLMSG_DATA(h))
                    + NLMSG_ALIGN(sizeof(rtgenmsg));
    const char *end = reinterpret_cast<const char *>(h) + h->nlmsg_len;
    return attr_get<int32_t>(find_attr(p, end, NETNSA_NSID), -1);
}

// A datagram socket in the namespace file 'nsfd' names: the calling
// thread enters it for the socket() call and goes back to its own
// (setns() moves only the calling thread, and a socket stays in the
// namespace it was made in).  -1 if entering fails (no CAP_SYS_ADMIN).
// Not a thread of its own for it: on a loaded machine waiting for one to
// run cost up to 40 ms a check, ten checks a second per target, and
// stalled OVS's revalidator.  A thread that cannot go back aborts, as it
// would otherwise go on in another namespace.
int
socket_in(int nsfd) noexcept
{
    Fd self(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!self || setns(nsfd, CLONE_NEWNET)) {
        return -1;
    }
    int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (setns(self.get(), CLONE_NEWNET)) {
        log(AFXDP_LOG_ERR, "cannot go back to this thread's network "
            "namespace after asking another's about a veth peer: %s",
            std::strerror(errno));
        std::abort();
    }
    return sock;
}

// Namespace 'nsid''s file, opened, if 'path' names it: else -1.  Opened
// without blocking (a FIFO left in /run/netns would hang the caller), and
// kept only if a regular file, which a namespace's file is.
int
open_if_netns(const char *path, int nsid) noexcept
{
    Fd ns(open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    struct stat st;
    return ns && !fstat(ns.get(), &st) && S_ISREG(st.st_mode)
           && netns_id(ns.get()) == nsid ? ns.release() : -1;
}

// Where each namespace the core looked for was found, or when it was
// not: so that the checks, every 100 ms for each target, do not walk
// /proc each time, whatever the number of peers' namespaces.
class NetnsPaths {
public:
    // 'nsid''s file, opened from the path it was found at: -1 if it
    // moved (-EAGAIN in '*err': walk again) or was not found lately
    // (-ENOENT).
    int open_known(int nsid, int *err) noexcept
    {
        std::lock_guard<std::mutex> lock(mutex_);
        Entry *e = find(nsid);
        if (e && e->path[0]) {
            int fd = open_if_netns(e->path, nsid);
            if (fd >= 0) {
                return fd;
            }
            e->path[0] = '\0';
        } else if (e && now_ms() < e->retry_ms) {
            *err = -ENOENT;
            return -1;
        }
        *err = -EAGAIN;
        return -1;
    }

    // Remembers where 'nsid' was found, or ('path' null) that it was not:
    // looked for again after kRetryMs.
    void note(int nsid, const char *path) noexcept
    {
        std::lock_guard<std::mutex> lock(mutex_);
        Entry *e = find(nsid);
        if (!e) {
            e = &entries_[next_++ % kEntries];
            e->nsid = nsid;
        }
        e->retry_ms = path ? 0 : now_ms() + kRetryMs;
        if (!path || std::snprintf(e->path, sizeof e->path, "%s", path)
                     >= int(sizeof e->path)) {
            e->path[0] = '\0';
        }
    }

private:
    static constexpr int kEntries = 32;
    static constexpr long long kRetryMs = 5000;
    struct Entry {
        int nsid = -1;
        char path[128] = "";
        long long retry_ms = 0;
    };

    Entry *find(int nsid) noexcept
    {
        for (Entry &e : entries_) {
            if (e.nsid == nsid) {
                return &e;
            }
        }
        return nullptr;
    }

    static long long now_ms() noexcept
    {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
    }

    std::mutex mutex_;
    Entry entries_[kEntries];
    unsigned next_ = 0;
};

NetnsPaths netns_paths;

// The file of the namespace this one knows by 'nsid', opened: among the
// namespaces `ip netns` names (/run/netns) first, then those of running
// processes (/proc/PID/ns/net, each namespace asked once), or where it
// was found before.  -1 with -errno in '*err' if none is found: -ENOENT,
// also for 5 s after a walk that found none.
int
open_netns(int nsid, int *err) noexcept
{
    int fd = netns_paths.open_known(nsid, err);
    if (fd >= 0 || *err != -EAGAIN) {
        return fd;
    }
    struct stat self;
    if (stat("/proc/thread-self/ns/net", &self)) {
        *err = -errno;
        return -1;
    }
    // Namespaces are told apart by device and inode; each asked once.
    std::vector<std::pair<dev_t, ino_t>> asked = {{self.st_dev, self.st_ino}};
    char path[PATH_MAX];
    for (const char *dir : {"/run/netns", "/proc"}) {
        DIR *d = opendir(dir);
        if (!d) {
            continue;
        }
        const bool procs = dir[1] == 'p';
        while (fd < 0) {
            const dirent *e = readdir(d);
            if (!e) {
                break;
            }
            if (e->d_name[0] == '.'
                || (procs && !std::isdigit((unsigned char) e->d_name[0]))) {
                continue;
            }
            std::snprintf(path, sizeof path, procs ? "%s/%s/ns/net" : "%s/%s",
                          dir, e->d_name);
            struct stat st;
            if (stat(path, &st)
                || std::find(asked.begin(), asked.end(),
                             std::make_pair(st.st_dev, st.st_ino))
                   != asked.end()) {
                continue;
            }
            asked.emplace_back(st.st_dev, st.st_ino);
            fd = open_if_netns(path, nsid);
        }
        closedir(d);
        if (fd >= 0) {
            netns_paths.note(nsid, path);
            return fd;
        }
    }
    netns_paths.note(nsid, nullptr);
    *err = -ENOENT;
    return -1;
}

// Whether GRO is on for 'ifname' of the namespace this one knows by
// 'nsid' (-1: this one), with ethtool's ioctl on a socket made there,
// into '*on': 0, or -errno if it could not be asked (-ENOENT: the
// namespace was not found; -EPERM: it could not be entered).
int
gro_on(const char *ifname, int nsid, bool *on) noexcept
{
    Fd fd;
    *on = false;
    if (nsid < 0) {
        fd = Fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    } else {
        int err = 0;
        Fd ns(open_netns(nsid, &err));
        if (!ns) {
            return err;
        }
        fd = Fd(socket_in(ns.get()));
    }
    if (!fd) {
        return -errno;
    }
    ethtool_value v = {ETHTOOL_GGRO, 0};
    ifreq ifr = {};
    std::snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
    ifr.ifr_data = reinterpret_cast<char *>(&v);
    if (ioctl(fd.get(), SIOCETHTOOL, &ifr)) {
        return -errno;
    }
    *on = v.data;
    return 0;
}

// The netdev family's id on netlink socket 'fd', or 0 if the kernel has
// none (before Linux 6.3).  Asked once: where the family is, it is built
// in, so the answer holds for the kernel's life; where it is not, each
// question makes the kernel look for a module of that name, and run
// modprobe for it (request_module()): a process for each check of a
// redirect target, which the revalidators make as they dump the flows.
// Under an emulated CPU each took over the socket's second, and a dump
// of 11 flows 7 s, long enough for OVS to delete the flows that saw few
// packets (should_revalidate()).  A kernel that has the family answers
// from its table at once: a question that fails, or times out while the
// kernel looks for a module, means none.
uint16_t
netdev_family(int fd) noexcept
{
    // 0: not asked yet; -1: none; else the id.  Two threads that ask at
    // once get the same answer.
    static std::atomic<int> known{0};
    int v = known.load(std::memory_order_relaxed);
    if (!v) {
        uint16_t id = 0;
        int err = genl_query(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                             CTRL_ATTR_FAMILY_NAME, kNetdevFamily,
                             sizeof kNetdevFamily, CTRL_ATTR_FAMILY_ID, &id,
                             sizeof id);
        v = !err && id ? id : -1;
        known.store(v, std::memory_order_relaxed);
    }
    return v > 0 ? uint16_t(v) : 0;
}

}  // namespace

int
netdev_dev_attr(int ifindex, uint16_t attr, uint64_t *value) noexcept
{
    Fd fd = nl_socket(NETLINK_GENERIC);
    if (!fd) {
        return -errno;
    }
    const uint16_t family = netdev_family(fd.get());
    if (!family) {
        return -EOPNOTSUPP;   // No netdev family: before Linux 6.3.
    }
    uint32_t ifi = uint32_t(ifindex);
    *value = 0;
    int err = genl_query(fd.get(), family, kNetdevCmdDevGet,
                         kNetdevAttrIfindex, &ifi, sizeof ifi, attr, value,
                         sizeof *value);
    return err == -ENOENT ? -EOPNOTSUPP : err;
}

Failure
check_veth_peer_takes_xdp(int ifindex) noexcept
{
    Link dev, peer;
    int err = rtnl_link(ifindex, -1, &dev);
    if (!err && !dev.veth) {
        return fail(-EOPNOTSUPP, "the kernel does not say whether the "
                    "driver transmits XDP frames (Linux 6.3), except for "
                    "veth");
    }
    if (!err) {
        err = dev.peer ? rtnl_link(dev.peer, dev.peer_nsid, &peer) : -ENOENT;
    }
    if (err) {
        return fail(err, "asking the kernel about the veth's peer failed: "
                    "%s", std::strerror(-err));
    }
    if (!peer.up) {
        return fail(-ENETDOWN, "its veth peer is down");
    }
    bool gro = false;
    err = peer.xdp_native ? 0 : gro_on(peer.name, dev.peer_nsid, &gro);
    if (peer.xdp_native || gro) {
        return Failure{};
    }
    if (err) {
        return fail(err, "the kernel does not say whether the driver "
                    "transmits XDP frames (Linux 6.3), and the veth peer's "
                    "GRO could not be read: %s",
                    err == -ENOENT ? "its network namespace was found "
                                     "neither in /run/netns nor as a "
                                     "process's"
                                   : std::strerror(-err));
    }
    return fail(-EOPNOTSUPP, "its driver takes no XDP frames now (a veth "
                "takes them only while its peer has an XDP program or GRO "
                "on%s)", dev.peer_nsid < 0 ? ""
                : "; before Linux 6.3 the peer's GRO is read in its "
                  "namespace, found in /run/netns or a process's");
}

Failure
check_interface_is(int ifindex, const char *name) noexcept
{
    char now[IF_NAMESIZE] = "";
    if (!if_indextoname(unsigned(ifindex), now)) {
        return fail(-ENODEV, "interface %d is gone", ifindex);
    }
    if (std::strcmp(now, name)) {
        return fail(-ENODEV, "interface %d is %s now, not %s", ifindex, now,
                    name);
    }
    return Failure{};
}

Failure
check_xdp_redirect_target(int ifindex) noexcept
{
    uint64_t act = 0;
    int err = netdev_dev_attr(ifindex, kNetdevAttrXdpFeatures, &act);
    if (err == -EOPNOTSUPP) {
        return check_veth_peer_takes_xdp(ifindex);
    }
    if (err) {
        return fail(err, "asking the kernel whether the driver transmits "
                    "XDP frames failed: %s", std::strerror(-err));
    }
    if (!(act & kNetdevXdpActNdoXmit)) {
        return fail(-EOPNOTSUPP, "its driver takes no XDP frames now (a veth "
                    "takes them only while its peer has an XDP program or "
                    "GRO on)");
    }
    return Failure{};
}

Failure
check_xdp_target(int ifindex, const char *name) noexcept
{
    Failure f = name ? check_interface_is(ifindex, name) : Failure{};
    return f ? f : check_xdp_redirect_target(ifindex);
}

bool
local_senders_may_leave_csums(int ifindex) noexcept
{
    Link dev;
    return !rtnl_link(ifindex, -1, &dev) && (dev.veth || dev.tun);
}

}  // namespace afxdp
