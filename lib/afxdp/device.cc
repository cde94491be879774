#include "device.hh"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <linux/capability.h>
#include <mutex>
#include <net/if.h>
#include <new>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hints.hh"
#include "log.hh"
#include "netdev_nl.hh"

using afxdp::Result;

namespace {

// What each mode asks of bind() and of the XDP attach, in one table.
struct ModeSpec {
    const char *name;
    uint16_t bind_flags;
    uint32_t xdp_flags;
};

// Indexed by enum afxdp_xdp_mode, in its order.
const ModeSpec kModes[AFXDP_MODE_N] = {
    {"best-effort", 0, 0},
    {"native-with-zerocopy", XDP_ZEROCOPY,
                              XDP_FLAGS_DRV_MODE},
    {"native", XDP_COPY, XDP_FLAGS_DRV_MODE},
    {"generic", XDP_COPY, XDP_FLAGS_SKB_MODE},
};

// The interface's MTU now, or 0 if it cannot be read.
unsigned
interface_mtu(const char *ifname) noexcept
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return 0;
    }
    ifreq ifr = {};
    std::strncpy(ifr.ifr_name, ifname, sizeof ifr.ifr_name - 1);
    unsigned mtu = ioctl(fd, SIOCGIFMTU, &ifr) ? 0 : unsigned(ifr.ifr_mtu);
    close(fd);
    return mtu;
}

// UMEM pages are charged to RLIMIT_MEMLOCK unless we hold CAP_IPC_LOCK.
// Raise the limit only in that case, and only as far as needed; say
// nothing unless it fails, and then only what the operator can act on.
void
ensure_memlock(size_t bytes) noexcept
{
    if (afxdp::compat::have_capability(CAP_IPC_LOCK)) {
        return;
    }
    rlimit r;
    if (getrlimit(RLIMIT_MEMLOCK, &r) || r.rlim_cur == RLIM_INFINITY
        || r.rlim_cur >= bytes) {
        return;
    }
    rlimit want = r;
    want.rlim_cur = r.rlim_max == RLIM_INFINITY || r.rlim_max >= bytes
                    ? bytes : r.rlim_max;
    if (setrlimit(RLIMIT_MEMLOCK, &want)) {
        afxdp::log(AFXDP_LOG_INFO, "raising RLIMIT_MEMLOCK to %zu bytes "
                   "failed (%s); UMEM registration may fail without "
                   "CAP_IPC_LOCK", bytes, std::strerror(errno));
    }
}

// Interfaces open in this process.  A handful at most: a plain array.
std::mutex claims_mutex;
int claims[256];

}  // namespace

bool
afxdp_dev::Claim::take(int ifindex) noexcept
{
    std::lock_guard<std::mutex> g(claims_mutex);
    int *free_slot = nullptr;
    for (int &c : claims) {
        if (c == ifindex) {
            return false;
        }
        if (!c && !free_slot) {
            free_slot = &c;
        }
    }
    if (!free_slot) {
        return false;
    }
    *free_slot = ifindex_ = ifindex;
    return true;
}

afxdp_dev::Claim::~Claim()
{
    std::lock_guard<std::mutex> g(claims_mutex);
    for (int &c : claims) {
        if (ifindex_ && c == ifindex_) {
            c = 0;
        }
    }
}

const char *
afxdp_mode_name_of(afxdp_xdp_mode m) noexcept
{
    return m < AFXDP_MODE_N ? kModes[m].name : "unknown";
}

void
afxdp_dev::PoolRef::reset(afxdp_pool *p, uint32_t demand) noexcept
{
    if (pool_) {
        pool_->release(demand_);
    }
    pool_ = p;
    demand_ = demand;
}

afxdp::Failure
afxdp_dev::take_pool(const afxdp_dev_config &cfg, bool share) noexcept
{
    uint32_t demand = n_frames_ * n_queues_;
    bool created;
    auto p = afxdp_pool::acquire(demand, cfg.frame_meta_size, cfg.numa_node,
                                 share, cfg.frame_meta_init, &created);
    if (!p.ok()) {
        return afxdp::fail(p.error(), "allocating %u UMEM frames failed: %s",
                           demand, std::strerror(-p.error()));
    }
    pool_.reset(p.value(), demand);
    afxdp::log(AFXDP_LOG_DBG, "%s: %s UMEM %u (%u frames)", cfg.ifname,
               created ? "new" : "joined", p.value()->id(),
               p.value()->n_frames());
    return {};
}

const afxdp::XskProgram &
afxdp_dev::program_for(const afxdp_dev_config &cfg, afxdp_xdp_mode mode)
    noexcept
{
    hinted_prog_ = afxdp::XskProgram();
    if (!cfg.port.rx_hints) {
        hash_why_ = vlan_why_ = "options:rx_hints is false";
        return prog_;
    }
    if (mode == AFXDP_MODE_GENERIC) {
        hash_why_ = vlan_why_ = "generic XDP mode has no packet hints "
                                "(they need native mode)";
        return prog_;
    }
    if (hints_failed_[0]) {
        return prog_;   // Failed in an earlier mode: reasons already set.
    }
    if (!hint_support_asked_) {
        // Only for a native mode: generic never needs the kernel's BTF.
        hint_support_ = afxdp::rx_hint_support(ifindex_);
        hint_support_asked_ = true;
    }
    hash_why_ = hint_support_.hash_why;
    vlan_why_ = hint_support_.vlan_why;
    if (!hint_support_.hints) {
        return prog_;
    }
    auto p = prog_.with_hints(ifindex_, hint_support_);
    if (!p.ok()) {
        char why[96];
        std::snprintf(why, sizeof why, "loading the XDP program with packet "
                      "hints failed: %s", std::strerror(-p.error()));
        without_hints(cfg, why);
        return prog_;
    }
    hinted_prog_ = p.take();
    return hinted_prog_;
}

void
afxdp_dev::without_hints(const afxdp_dev_config &cfg, const char *why)
    noexcept
{
    std::snprintf(hints_failed_, sizeof hints_failed_, "%s", why);
    if (hint_support_.hints & afxdp::kHintHash) {
        hash_why_ = hints_failed_;
    }
    if (hint_support_.hints & afxdp::kHintVlan) {
        vlan_why_ = hints_failed_;
    }
    hinted_prog_ = afxdp::XskProgram();
    afxdp::log(AFXDP_LOG_WARN, "%s: %s; going on without packet hints",
               cfg.ifname, why);
}

bool
afxdp_dev::load_fast_path(const afxdp_dev_config &cfg,
                          const afxdp::XskProgram &prog) noexcept
{
    // With the hints of the program it stands in for (none in generic
    // mode), bound to the device as that one is.
    auto fp = afxdp::FastPath::load(prog.map_fd(), prog.hints(), ifindex_,
                                    n_queues_, csum_finish_);
    if (!fp.ok()) {
        without_fast_path(cfg, fp.error().why);
        return false;
    }
    if (!fp.value().writes_meta()) {
        afxdp::log(AFXDP_LOG_INFO, "%s: XDP fast path without flow marks: "
                   "%s; a flow XDP cannot execute whole stays in OVS",
                   cfg.ifname, afxdp::kNoXdpMetaWhy);
    }
    std::lock_guard<std::mutex> g(fast_path_mutex_);
    fast_path_ = fp.take();
    return true;
}

void
afxdp_dev::without_fast_path(const afxdp_dev_config &cfg, const char *why)
    noexcept
{
    {
        std::lock_guard<std::mutex> g(fast_path_mutex_);
        fast_path_ = afxdp::FastPath();
    }
    if (!std::strcmp(fast_path_why_, why)) {
        return;   // Said already, for an earlier mode.
    }
    std::snprintf(fast_path_why_, sizeof fast_path_why_, "%s", why);
    afxdp::log(AFXDP_LOG_WARN, "%s: %s; going on without the XDP fast "
               "path", cfg.ifname, why);
}

afxdp::QueueFailure
afxdp_dev::try_mode(const afxdp_dev_config &cfg, afxdp_xdp_mode mode) noexcept
{
    const ModeSpec &spec = kModes[mode];
    const afxdp::XskProgram *prog = &program_for(cfg, mode);
    // The fast path stands in for the program of this mode, with its
    // hints and its socket map: a packet it does not handle goes where
    // that program sends it.  Never lose the port for it.
    auto attach = [&](int prog_fd, uint32_t prog_id) {
        return afxdp::XdpAttachment::attach(ifindex_, cfg.ifname, prog_fd,
                                            prog_id, spec.xdp_flags);
    };
    bool fast = fast_path_requested_ && load_fast_path(cfg, *prog);
    auto att = fast ? attach(fast_path_.prog_fd(), fast_path_.prog_id())
                    : attach(prog->prog_fd(), prog->id());
    if (!att.ok() && fast) {
        without_fast_path(cfg, afxdp::fail(0, "%s XDP mode: %s", spec.name,
                                           att.error().why).why);
        fast = false;
        att = attach(prog->prog_fd(), prog->id());
    }
    if (!att.ok() && prog->hints()) {
        // Never lose the port for a hint: try the plain program.
        without_hints(cfg, att.error().why);
        prog = &prog_;
        att = attach(prog->prog_fd(), prog->id());
    }
    if (!att.ok()) {
        return att.error();
    }
    attachment_ = att.take();

    for (unsigned q = 0; q < n_queues_; q++) {
        afxdp::QueueConfig qc = {};
        qc.ifname = cfg.ifname;
        qc.qid = q;
        qc.bind_flags = spec.bind_flags;
        qc.zero_copy_mode = mode == AFXDP_MODE_NATIVE_ZC;
        qc.use_need_wakeup = cfg.port.use_need_wakeup;
        // Packets of several frames only reach a socket through a program
        // that takes them.
        qc.multi_buffer = prog->has_frags();
        // Hints and marks both come as metadata in front of the packet.
        const bool fast_meta = fast && fast_path_.writes_meta();
        qc.rx_meta = prog->hints() != 0 || fast_meta;
        if (fast_meta) {
            qc.marks = fast_path_.marks();
        }
        qc.mtu_needs_multi_buffer = mtu_ > AFXDP_MAX_MTU_ONE_FRAME
                                    ? mtu_ : 0;
        qc.in_place_copy_mode = cfg.port.sharing == AFXDP_SHARE_IN_PLACE;
        qc.coalesce_kicks = cfg.port.coalesce_tx_kicks;
        qc.busy_polled = cfg.busy_polled;
        qc.csum_finish = csum_finish_;
        // The same senders' GSO packets, which generic mode passes whole.
        qc.gso_mtu = csum_finish_ ? mtu_ : 0;
        qc.ring_size = ring_size_;
        qc.pool = pool_.get();
        qc.memlock_charged = !afxdp::compat::have_capability(CAP_IPC_LOCK);
        auto queue = afxdp_queue::create(qc);
        if (!queue.ok()) {
            for (unsigned i = 0; i < q; i++) {
                queues_[i].reset();
            }
            attachment_ = afxdp::XdpAttachment();
            return queue.error();
        }
        queues_[q] = queue.take();
        int err = prog->add_socket(q, queues_[q]->fd());
        if (err) {
            for (unsigned i = 0; i <= q; i++) {
                queues_[i].reset();
            }
            attachment_ = afxdp::XdpAttachment();
            return afxdp::fail(err, "adding queue %u's socket to the XSKMAP "
                               "failed: %s", q, std::strerror(-err));
        }
    }
    fast_path_active_ = fast;
    attached_id_ = fast ? fast_path_.prog_id() : prog->id();
    if (fast) {
        attach_fast_path_tc(cfg, mode);
    }
    return {};
}

// Generic mode passes XDP the kernel's packets whole, GSO and partial
// checksums included, which the fast path's TC half redirects as they
// are (bpf/handoff.h).  Without it they go to OVS, as before.
void
afxdp_dev::attach_fast_path_tc(const afxdp_dev_config &cfg,
                               afxdp_xdp_mode mode) noexcept
{
    targets_.set_generic(mode == AFXDP_MODE_GENERIC);
    std::lock_guard<std::mutex> g(fast_path_mutex_);
    if (mode != AFXDP_MODE_GENERIC) {
        std::snprintf(fast_path_tc_why_, sizeof fast_path_tc_why_, "%s",
                      "not needed in native mode, where XDP meets no GSO "
                      "packet");
        return;
    }
    afxdp::Failure f = fast_path_.attach_tc(ifindex_);
    if (f) {
        std::snprintf(fast_path_tc_why_, sizeof fast_path_tc_why_, "%s",
                      f.why);
        afxdp::log(AFXDP_LOG_WARN, "%s: %s; redirects of GSO packets and "
                   "of partial checksums go through OVS", cfg.ifname, f.why);
        return;
    }
    fast_path_tc_why_[0] = '\0';
}

afxdp::QueueFailure
afxdp_dev::try_mode_sharing(const afxdp_dev_config &cfg, afxdp_xdp_mode mode)
    noexcept
{
    afxdp::QueueFailure f = try_mode(cfg, mode);
    if (!f || !f.at_umem || pool_.get()->devices() < 2) {
        return f;
    }
    // The kernel would not register memory another device's sockets have
    // registered too.  The port must still work: give it frames of its
    // own, and copy what other ports send it.
    const afxdp::QueueFailure shared = f;
    const afxdp::Failure p = take_pool(cfg, false);
    if (p) {
        // No frames to spare: the sharing's refusal is the news.
        afxdp::log(AFXDP_LOG_DBG, "%s: no UMEM of its own either: %s",
                   cfg.ifname, p.why);
        return shared;
    }
    f = try_mode(cfg, mode);
    if (!f || !f.at_umem) {
        // Registered alone, not shared (whatever else failed).
        const afxdp::Failure reason = afxdp::fail(0, "sharing refused: %s",
                                                  shared.why);
        std::memcpy(share_reason_, reason.why, sizeof share_reason_);
        afxdp::log(AFXDP_LOG_WARN, "%s: UMEM sharing with other ports "
                   "failed (%s): this port uses a UMEM of its own, and "
                   "packets between it and other ports are copied.",
                   cfg.ifname, shared.why);
    } else {
        // Not the sharing, then: go on as if it had been private.
        afxdp::log(AFXDP_LOG_DBG, "%s: with a UMEM of its own too: %s",
                   cfg.ifname, f.why);
    }
    return f;
}

void
afxdp_dev::opened(const afxdp_dev_config &cfg, afxdp_xdp_mode mode) noexcept
{
    mode_ = mode;
    if (cfg.port.mode == AFXDP_MODE_BEST_EFFORT) {
        afxdp::log(AFXDP_LOG_INFO, "%s: %s XDP mode will be in use.",
                   cfg.ifname, kModes[mode].name);
    }
    const char *reason = queues_[0]->need_wakeup_reason();
    if (cfg.port.use_need_wakeup && reason[0]) {
        afxdp::log(AFXDP_LOG_WARN, "%s: need_wakeup requested but not in "
                   "use: %s.", cfg.ifname, reason);
    }
    if (segment_reason()[0]) {
        afxdp::log(AFXDP_LOG_INFO, "%s: %s.", cfg.ifname, segment_reason());
    }
    const char *creason = queues_[0]->coalesce_reason();
    if (cfg.port.coalesce_tx_kicks && creason[0]) {
        // Every send then kicks, as without the option: worth knowing,
        // not a fault.
        afxdp::log(AFXDP_LOG_INFO, "%s: TX kicks are not coalesced: %s.",
                   cfg.ifname, creason);
    }
}

afxdp::Failure
afxdp_dev::open_in_modes(const afxdp_dev_config &cfg) noexcept
{
    afxdp_xdp_mode first = cfg.port.mode, last = cfg.port.mode;
    if (cfg.port.mode == AFXDP_MODE_BEST_EFFORT) {
        first = AFXDP_MODE_NATIVE_ZC;
        last = AFXDP_MODE_GENERIC;
    }
    afxdp::QueueFailure f = afxdp::fail(-EINVAL, "no XDP mode to try");
    for (unsigned m = first; m <= last; m++) {
        f = try_mode_sharing(cfg, afxdp_xdp_mode(m));
        if (!f) {
            opened(cfg, afxdp_xdp_mode(m));
            return {};
        }
        // With an MTU that needs multi-buffer, best-effort may end in a
        // slower mode for want of it there: say why each one failed.
        afxdp::log(mtu_ > AFXDP_MAX_MTU_ONE_FRAME ? AFXDP_LOG_INFO
                                                  : AFXDP_LOG_DBG,
                   "%s: %s XDP mode failed: %s", cfg.ifname, kModes[m].name,
                   f.why);
    }
    if (cfg.port.mode == AFXDP_MODE_BEST_EFFORT) {
        return afxdp::fail(f.error, "%s: no XDP mode works; last tried "
                           "generic: %s", cfg.ifname, f.why);
    }
    return afxdp::fail(f.error, "%s: %s XDP mode failed: %s", cfg.ifname,
                       kModes[cfg.port.mode].name, f.why);
}

Result<std::unique_ptr<afxdp_dev>, afxdp::Failure>
afxdp_dev::open(const afxdp_dev_config &cfg) noexcept
{
    using R = Result<std::unique_ptr<afxdp_dev>, afxdp::Failure>;
    if (!cfg.ifname) {
        return R::failure(afxdp::fail(-EINVAL, "no interface name given"));
    }
    afxdp::Failure f;
    if (afxdp_port_config_check(cfg.ifname, &cfg.port, f.why,
                                sizeof f.why)) {
        f.error = -EINVAL;
        return R::failure(f);
    }
    std::unique_ptr<afxdp_dev> d(new (std::nothrow) afxdp_dev);
    if (!d) {
        return R::failure(afxdp::fail(-ENOMEM, "%s: out of memory",
                                      cfg.ifname));
    }
    d->ifindex_ = int(if_nametoindex(cfg.ifname));
    d->name_ = cfg.ifname;
    d->targets_.set_port(cfg.ifname);
    if (!d->ifindex_) {
        int e = errno;
        return R::failure(afxdp::fail(-e, "%s: no such network interface "
                                      "(%s)", cfg.ifname, std::strerror(e)));
    }
    if (!d->claim_.take(d->ifindex_)) {
        return R::failure(afxdp::fail(-EBUSY, "%s: already opened for "
                                      "AF_XDP by another port of this "
                                      "process", cfg.ifname));
    }
    d->n_queues_ = cfg.port.n_queues;
    d->ring_size_ = cfg.port.ring_size;
    d->n_frames_ = cfg.port.n_frames;
    d->need_wakeup_requested_ = cfg.port.use_need_wakeup;
    d->coalesce_requested_ = cfg.port.coalesce_tx_kicks;
    d->fast_path_requested_ = cfg.offload && cfg.port.fast_path;
    f = d->take_pool(cfg, cfg.port.sharing != AFXDP_SHARE_OFF);
    if (f) {
        return R::failure(afxdp::fail(f.error, "%s: %s", cfg.ifname, f.why));
    }
    // Each socket registers the whole pool as its UMEM.
    ensure_memlock(d->pool_.get()->area_size() * cfg.port.n_queues);

    // A packet longer than one frame needs multi-buffer: an MTU above
    // that rules out every mode where it does not work.
    d->mtu_ = interface_mtu(cfg.ifname);
    d->csum_finish_ = afxdp::local_senders_may_leave_csums(
        int(if_nametoindex(cfg.ifname)));
    auto prog = afxdp::XskProgram::load(AFXDP_MAX_QUEUES);
    if (!prog.ok()) {
        return R::failure(afxdp::fail(prog.error(), "%s: loading the XDP "
                                      "program failed: %s", cfg.ifname,
                                      std::strerror(-prog.error())));
    }
    d->prog_ = prog.take();
    char mb_why[afxdp::kWhyLen] = "";
    if (d->mtu_ > AFXDP_MAX_MTU_ONE_FRAME
        && (!d->prog_.has_frags()
            || afxdp_max_mtu(mb_why, sizeof mb_why)
               == AFXDP_MAX_MTU_ONE_FRAME)) {
        return R::failure(afxdp::fail(
            -EMSGSIZE, "%s: MTU %u needs multi-buffer AF_XDP (up to %u "
            "without), and %s", cfg.ifname, d->mtu_, AFXDP_MAX_MTU_ONE_FRAME,
            !d->prog_.has_frags() ? "this kernel cannot load an XDP program "
                                    "for packets of several buffers (Linux "
                                    "5.18)" : mb_why));
    }
    f = d->open_in_modes(cfg);
    if (f) {
        return R::failure(f);
    }
    return R(std::move(d));
}

void
afxdp_dev::info(afxdp_dev_info *out) const noexcept
{
    *out = {};
    out->mode_in_use = mode_;
    out->zero_copy = n_queues_ && queues_[0]->zero_copy_confirmed();
    out->need_wakeup_requested = need_wakeup_requested_;
    out->need_wakeup_in_use = n_queues_ && queues_[0]->need_wakeup_in_use();
    out->need_wakeup_reason = n_queues_ ? queues_[0]->need_wakeup_reason()
                                        : "";
    if (!afxdp::compat::kNeedWakeupBuilt) {
        out->need_wakeup_reason = "built without need_wakeup support";
    } else if (!need_wakeup_requested_) {
        out->need_wakeup_reason = "";
    }
    out->ifindex = ifindex_;
    out->prog_attached = attachment_.still_attached();
    out->n_queues = n_queues_;
    out->ring_size = ring_size_;
    out->n_frames = n_frames_;
    out->prog_id = attached_id_;
    afxdp_pool *p = pool_.get();
    out->umem_id = p ? p->id() : 0;
    out->umem_frames = p ? p->n_frames() : 0;
    out->umem_devices = p ? p->devices() : 0;
    out->umem_share_reason = share_reason_;
    out->coalesce_tx_kicks_requested = coalesce_requested_;
    out->coalesce_tx_kicks_in_use = n_queues_
                                    && queues_[0]->coalesces_kicks();
    out->coalesce_tx_kicks_reason = n_queues_ && coalesce_requested_
                                    ? queues_[0]->coalesce_reason() : "";
    out->multi_buffer = n_queues_ && queues_[0]->multi_buffer_in_use();
    out->multi_buffer_reason
        = out->multi_buffer ? ""
          : !prog_.has_frags() ? "kernel cannot load an XDP program for "
                                 "multi-buffer packets (Linux 5.18)"
          : n_queues_ ? queues_[0]->multi_buffer_reason() : "";
    out->max_mtu = max_mtu();
    const unsigned hints = attached_program().hints();
    out->rx_hash = hints & afxdp::kHintHash;
    out->rx_hash_reason = out->rx_hash ? "" : hash_why_;
    out->rx_vlan = hints & afxdp::kHintVlan;
    out->rx_vlan_reason = out->rx_vlan ? "" : vlan_why_;
    out->rx_csum_finish = csum_finish_;
    out->rx_segment = csum_finish_ && out->multi_buffer;
    out->rx_segment_reason = segment_reason();
}

// Why a local sender's GSO packets cannot be received, where they may
// come: generic XDP hands one over whole, and without multi-buffer
// AF_XDP no frame holds it.
const char *
afxdp_dev::segment_reason() const noexcept
{
    if (!csum_finish_ || mode_ != AFXDP_MODE_GENERIC || !n_queues_
        || queues_[0]->multi_buffer_in_use()) {
        return "";
    }
    return "generic mode without multi-buffer AF_XDP (Linux 6.6): TCP "
           "packets a sender on this host hands over with GSO are longer "
           "than a frame and lost; turn GSO off on the peer "
           "(ethtool -K PEER gso off tso off, in its namespace) or use "
           "xdp-mode=native";
}

bool
afxdp_dev::prog_lost() noexcept
{
    if (prog_lost_said_ || prog_attached()) {
        return false;
    }
    prog_lost_said_ = true;
    afxdp::log(AFXDP_LOG_WARN, "%s: our XDP program is no longer attached "
               "(another process detached or replaced it): the port "
               "receives nothing.  Change any of its options, or delete "
               "and add it, to attach it again.", name_.c_str());
    return true;
}
