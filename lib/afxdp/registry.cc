// A port's offloaded flows (registry.hh; afxdp-flows.h's C API).
#include "registry.hh"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "device.hh"
#include "log.hh"
#include "targets.hh"

namespace afxdp {

namespace {

// Does 'b' do what 'a' does?  Field by field: the shims' structs may
// differ in their padding.
bool
same_action(const afxdp_flow_action &a, const afxdp_flow_action &b) noexcept
{
    if (a.type != b.type) {
        return false;
    }
    switch (a.type) {
    case AFXDP_ACTION_OUTPUT:
        return a.output.ifindex == b.output.ifindex
               && a.output.xdp_target == b.output.xdp_target
               && !std::strcmp(a.output.name ? a.output.name : "",
                               b.output.name ? b.output.name : "");
    case AFXDP_ACTION_DROP:
    case AFXDP_ACTION_POP_VLAN:
        return true;
    case AFXDP_ACTION_PUSH_VLAN:
        return a.push_vlan.tpid == b.push_vlan.tpid
               && a.push_vlan.tci == b.push_vlan.tci;
    case AFXDP_ACTION_SET_ETH:
        return !std::memcmp(&a.set_eth, &b.set_eth, sizeof a.set_eth);
    case AFXDP_ACTION_SET_IP: {
        const auto &x = a.set_ip, &y = b.set_ip;
        return x.version == y.version && x.tos == y.tos
               && x.tos_mask == y.tos_mask && x.ttl == y.ttl
               && x.ttl_mask == y.ttl_mask && x.src == y.src
               && x.src_mask == y.src_mask && x.dst == y.dst
               && x.dst_mask == y.dst_mask
               && !std::memcmp(x.src6, y.src6, sizeof x.src6)
               && !std::memcmp(x.src6_mask, y.src6_mask, sizeof x.src6_mask)
               && !std::memcmp(x.dst6, y.dst6, sizeof x.dst6)
               && !std::memcmp(x.dst6_mask, y.dst6_mask, sizeof x.dst6_mask)
               && x.label == y.label && x.label_mask == y.label_mask;
    }
    case AFXDP_ACTION_SET_L4:
        return a.set_l4.proto == b.set_l4.proto
               && a.set_l4.src == b.set_l4.src
               && a.set_l4.src_mask == b.set_l4.src_mask
               && a.set_l4.dst == b.set_l4.dst
               && a.set_l4.dst_mask == b.set_l4.dst_mask;
    case AFXDP_ACTION_OTHER:
        return !std::strcmp(a.other ? a.other : "", b.other ? b.other : "");
    }
    return false;
}

// A ufid as OVS prints it (UUID_FMT).
struct UfidText {
    explicit UfidText(const FlowTable::Ufid &u) noexcept
    {
        std::snprintf(text, sizeof text, "%08x-%04x-%04x-%04x-%04x%08x",
                      u[0], u[1] >> 16, u[1] & 0xffff, u[2] >> 16,
                      u[2] & 0xffff, u[3]);
    }
    char text[40];
};

}  // namespace

StoredFlow::StoredFlow(const afxdp_flow_match &match,
                       const afxdp_flow_action *actions, size_t n)
    : match_(match), actions_(actions, actions + n)
{
    if (match.unparsed_field) {
        unparsed_ = match.unparsed_field;
        match_.unparsed_field = unparsed_.c_str();
    }
    texts_.resize(n);
    for (size_t i = 0; i < n; i++) {
        afxdp_flow_action &a = actions_[i];
        const char **text = a.type == AFXDP_ACTION_OUTPUT ? &a.output.name
                            : a.type == AFXDP_ACTION_OTHER ? &a.other
                            : nullptr;
        if (text && *text) {
            texts_[i] = std::make_unique<std::string>(*text);
            *text = texts_[i]->c_str();
        }
    }
}

bool
StoredFlow::same_actions(const afxdp_flow_action *actions, size_t n) const
    noexcept
{
    if (n != actions_.size()) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!same_action(actions_[i], actions[i])) {
            return false;
        }
    }
    return true;
}

FlowRegistry::FlowRegistry(const char *port, afxdp_flows_changed_func *cb,
                           void *aux)
    : port_(port ? port : ""), changed_cb_(cb), changed_aux_(aux)
{
}

FlowRegistry::~FlowRegistry()
{
    std::lock_guard<std::mutex> g(mutex_);
    while (!flows_.empty()) {
        forget(flows_.begin(), false);
    }
}

void
FlowRegistry::warn_put(const Ufid &ufid, int err) noexcept
{
    const int64_t now = monotonic_ms();
    const bool warn = now - warned_ms_ >= 1000;
    if (warn) {
        warned_ms_ = now;
    }
    log(warn ? AFXDP_LOG_WARN : AFXDP_LOG_DBG, "%s: flow %s not offloaded "
        "to XDP: %s.", port_.c_str(), UfidText(ufid).text,
        std::strerror(err));
}

int
FlowRegistry::install(Flow &f) noexcept
{
    const StoredFlow &s = *f.stored;
    f.in_maps = f.full = false;
    f.target = 0;
    f.refusal = AFXDP_REFUSED_N;
    if (!dev_) {
        return EOPNOTSUPP;
    }
    const int err = -dev_->flow_put(f.ufid.data(), s.match(), s.actions(),
                                    s.n_actions(), f.mark, &f.refusal,
                                    &f.counts);
    f.in_maps = !err;
    f.full = !err && f.refusal == AFXDP_REFUSED_N;
    for (size_t i = 0; f.full && i < s.n_actions(); i++) {
        if (s.actions()[i].type == AFXDP_ACTION_OUTPUT) {
            f.target = s.actions()[i].output.ifindex;
        }
    }
    if (err == EOPNOTSUPP && s.match().unparsed_field) {
        log(AFXDP_LOG_DBG, "%s: flow %s stays in userspace: it matches on "
            "%s.", port_.c_str(), UfidText(f.ufid).text,
            s.match().unparsed_field);
    } else if (err && err != EOPNOTSUPP) {
        warn_put(f.ufid, err);
    }
    return err;
}

void
FlowRegistry::read_xdp(Flow &f) noexcept
{
    afxdp_flow_stats now;
    if (dev_ && !dev_->flow_stats(f.ufid.data(), &now)) {
        afxdp_flow_counts_read(&f.counts, &now);
    }
}

void
FlowRegistry::tell(Flow &f, bool is_copy, afxdp_flow_stats *told) noexcept
{
    read_xdp(f);
    afxdp_flow_counts_tell(&f.counts, is_copy, told);
}

bool
FlowRegistry::mark_alloc(uint32_t *mark) noexcept
{
    std::lock_guard<std::mutex> g(refs_mutex_);
    for (uint32_t tries = 0; tries < kLastMark; tries++) {
        last_mark_ = last_mark_ >= kLastMark ? 1 : last_mark_ + 1;
        if (!marks_.count(last_mark_)) {
            *mark = last_mark_;
            return true;
        }
    }
    return false;
}

void
FlowRegistry::forget(std::map<Ufid, Flow>::iterator it, bool from_maps)
    noexcept
{
    Flow &f = it->second;
    if (from_maps && dev_) {
        dev_->flow_del(f.ufid.data(), &f.counts);
    }
    {
        std::lock_guard<std::mutex> g(refs_mutex_);
        auto m = marks_.find(f.mark);
        if (m != marks_.end() && m->second == &f) {
            marks_.erase(m);
        }
        for (const Copy &c : f.copies) {
            if (c.copy.unref) {
                c.copy.unref(c.copy.pmd_id, c.copy.reference);
            }
        }
    }
    flows_.erase(it);
}

void
FlowRegistry::attach(afxdp_dev *dev) noexcept
{
    size_t n = 0, failed = 0;
    bool changed;
    {
        std::lock_guard<std::mutex> g(mutex_);
        dev_ = dev;
        for (auto &[ufid, f] : flows_) {
            // Its count ended with the old maps (detach()); the new one
            // starts at zero.
            afxdp_flow_counts_end(&f.counts);
            n++;
            // One that fails stays offloaded for OVS: its packets go
            // through OVS without a mark, which is always right.
            failed += install(f) != 0;
        }
        changed = dev_ && dev_->take_status_changed();
    }
    if (n) {
        log(AFXDP_LOG_INFO, "%s: put %zu offloaded flows into the new XDP "
            "fast path (%zu failed).", port_.c_str(), n, failed);
    }
    if (changed && changed_cb_) {
        changed_cb_(changed_aux_);
    }
}

void
FlowRegistry::detach() noexcept
{
    std::lock_guard<std::mutex> g(mutex_);
    if (!dev_) {
        return;
    }
    for (auto &[ufid, f] : flows_) {
        read_xdp(f);
        afxdp_flow_counts_end(&f.counts);
    }
    dev_ = nullptr;
}

// Each copy puts the megaflow: the first put goes into the maps, the
// others only add their copy, unless the actions changed (a revalidator's
// modification) or the flow is out of the maps (its last put failed: try
// again).  The match is the same: the ufid is its hash.  A flow put again
// with what XDP cannot take leaves the maps and stays, its count so far
// the flow's, as OVS has been told it: an error would have OVS delete the
// offload, and with it that count, from the flow's statistics.
int
FlowRegistry::put(const uint32_t ufid[4], const afxdp_flow_match &match,
                  const afxdp_flow_action *actions, size_t n, uint32_t mark,
                  const afxdp_flow_copy *copy, void **previous,
                  afxdp_offload_refusal *refusal) noexcept
{
    const Ufid id = {ufid[0], ufid[1], ufid[2], ufid[3]};
    int err = 0;
    bool changed = false;
    if (previous) {
        *previous = nullptr;
    }
    {
        std::lock_guard<std::mutex> g(mutex_);
        auto it = flows_.find(id);
        const bool same = copy && it != flows_.end() && it->second.in_maps
                          && it->second.stored->same_actions(actions, n);
        if (!same) {
            const bool is_new = it == flows_.end();
            if (is_new) {
                it = flows_.emplace(id, Flow()).first;
                it->second.ufid = id;
            }
            Flow &f = it->second;
            f.stored = std::make_unique<StoredFlow>(match, actions, n);
            if (mark) {
                f.mark = mark;
            } else if (is_new) {
                if (!mark_alloc(&f.mark)) {
                    flows_.erase(it);
                    return ENOSPC;
                }
                std::lock_guard<std::mutex> r(refs_mutex_);
                marks_[f.mark] = &f;
            }
            err = install(f);
            changed = dev_ && dev_->take_status_changed();
            if (refusal) {
                *refusal = f.refusal;
            }
            if (err && is_new) {
                // Not in the maps: OVS keeps the flow in userspace.
                forget(it, false);
                it = flows_.end();
            } else {
                err = 0;    // Kept, in the maps or out (see above).
            }
        } else if (refusal) {
            *refusal = it->second.refusal;
        }
        if (it != flows_.end() && copy) {
            Flow &f = it->second;
            std::lock_guard<std::mutex> r(refs_mutex_);
            Copy *c = nullptr;
            for (Copy &each : f.copies) {
                if (each.copy.pmd_id == copy->pmd_id) {
                    c = &each;
                }
            }
            if (!c) {
                f.copies.push_back(Copy{*copy, {}});
            } else {
                if (previous) {
                    *previous = c->copy.reference;
                }
                // A copy put again keeps what it was told; one that
                // replaces another starts from nothing.
                if (c->copy.reference != copy->reference) {
                    c->told = {};
                }
                c->copy = *copy;
            }
        }
    }
    if (changed && changed_cb_) {
        changed_cb_(changed_aux_);
    }
    return err;
}

int
FlowRegistry::del(const uint32_t ufid[4], const afxdp_flow_copy *copy,
                  afxdp_flow_stats *stats) noexcept
{
    const Ufid id = {ufid[0], ufid[1], ufid[2], ufid[3]};
    if (stats) {
        *stats = {};
    }
    std::lock_guard<std::mutex> g(mutex_);
    auto it = flows_.find(id);
    if (it == flows_.end()) {
        return ENOENT;
    }
    Flow &f = it->second;
    if (copy) {
        std::lock_guard<std::mutex> r(refs_mutex_);
        auto c = f.copies.begin();
        while (c != f.copies.end()
               && (c->copy.pmd_id != copy->pmd_id
                   || c->copy.reference != copy->reference)) {
            ++c;
        }
        if (c == f.copies.end()) {
            return ENOENT;
        }
        f.copies.erase(c);
        if (!f.copies.empty()) {
            return 0;
        }
    }
    // The last copy, or the flow: out of XDP.
    if (stats) {
        tell(f, false, stats);
    }
    forget(it, true);
    return 0;
}

void
FlowRegistry::flush() noexcept
{
    std::lock_guard<std::mutex> g(mutex_);
    while (!flows_.empty()) {
        forget(flows_.begin(), true);
    }
}

int
FlowRegistry::stats(const uint32_t ufid[4], const void *token,
                    const afxdp_flow_stats *told_by_caller,
                    afxdp_flow_stats *out, afxdp_flow_where *where) noexcept
{
    const Ufid id = {ufid[0], ufid[1], ufid[2], ufid[3]};
    bool changed = false;
    int err = 0;
    {
        std::lock_guard<std::mutex> g(mutex_);
        if (dev_) {
            // OVS's revalidators read every flow: a veth's peer may have
            // lost its XDP program since the targets were last asked.
            dev_->targets_run();
            changed = dev_->take_status_changed();
        }
        auto it = flows_.find(id);
        if (it == flows_.end()) {
            err = ENOENT;
        } else {
            Flow &f = it->second;
            afxdp_flow_stats told = {};
            Copy *c = nullptr;
            if (told_by_caller) {
                told = *told_by_caller;
            } else {
                // The copies change only under mutex_, which we hold.
                std::lock_guard<std::mutex> r(refs_mutex_);
                for (Copy &each : f.copies) {
                    if (each.copy.token == token) {
                        c = &each;
                        told = c->told;
                    }
                }
            }
            tell(f, told_by_caller || c, &told);
            if (c) {
                std::lock_guard<std::mutex> r(refs_mutex_);
                c->told = told;
            }
            *out = told;
            // A flow whose target takes no XDP frames now is not
            // offloaded at all: its packets reach OVS untouched.
            if (dev_ && f.full
                && (!f.target || dev_->targets().on(f.target))) {
                *where = AFXDP_FLOW_IN_XDP;
            } else if (dev_ && f.in_maps && !f.full) {
                *where = AFXDP_FLOW_PARTIAL;
            } else {
                *where = AFXDP_FLOW_IN_OVS;
            }
        }
    }
    if (changed && changed_cb_) {
        changed_cb_(changed_aux_);
    }
    return err;
}

void *
FlowRegistry::marked(uint32_t mark, unsigned pmd_id) const noexcept
{
    std::lock_guard<std::mutex> r(refs_mutex_);
    auto m = marks_.find(mark);
    if (m == marks_.end()) {
        return nullptr;
    }
    for (const Copy &c : m->second->copies) {
        if (c.copy.pmd_id == pmd_id) {
            return c.copy.reference;
        }
    }
    return nullptr;
}

size_t
FlowRegistry::in_maps(afxdp_flows_each_func *cb, void *aux) const noexcept
{
    std::lock_guard<std::mutex> g(mutex_);
    size_t n = 0;
    for (const auto &[ufid, f] : flows_) {
        if (f.in_maps) {
            n++;
            if (cb) {
                cb(ufid.data(), aux);
            }
        }
    }
    return n;
}

void
FlowRegistry::target_gone(int ifindex) noexcept
{
    bool changed = false;
    {
        std::lock_guard<std::mutex> g(mutex_);
        if (dev_ && ifindex > 0) {
            dev_->targets_drop(ifindex);
            changed = dev_->take_status_changed();
        }
    }
    if (changed && changed_cb_) {
        changed_cb_(changed_aux_);
    }
}

}  // namespace afxdp

struct afxdp_flows : afxdp::FlowRegistry {
    using afxdp::FlowRegistry::FlowRegistry;
};

extern "C" {

struct afxdp_flows *
afxdp_flows_create(const char *port, afxdp_flows_changed_func *cb,
                   void *aux) noexcept
{
    return new (std::nothrow) afxdp_flows(port, cb, aux);
}

void
afxdp_flows_destroy(struct afxdp_flows *flows) noexcept
{
    delete flows;
}

void
afxdp_flows_attach(struct afxdp_flows *flows, struct afxdp_dev *dev) noexcept
{
    flows->attach(dev);
}

void
afxdp_flows_detach(struct afxdp_flows *flows) noexcept
{
    flows->detach();
}

int
afxdp_flows_put(struct afxdp_flows *flows, const uint32_t ufid[4],
                const struct afxdp_flow_match *match,
                const struct afxdp_flow_action *actions, size_t n_actions,
                uint32_t mark, const struct afxdp_flow_copy *copy,
                void **previous, enum afxdp_offload_refusal *refusal) noexcept
{
    return flows->put(ufid, *match, actions, n_actions, mark, copy, previous,
                      refusal);
}

int
afxdp_flows_del(struct afxdp_flows *flows, const uint32_t ufid[4],
                const struct afxdp_flow_copy *copy,
                struct afxdp_flow_stats *stats) noexcept
{
    return flows->del(ufid, copy, stats);
}

void
afxdp_flows_flush(struct afxdp_flows *flows) noexcept
{
    flows->flush();
}

int
afxdp_flows_stats(struct afxdp_flows *flows, const uint32_t ufid[4],
                  const void *token, const struct afxdp_flow_stats *told,
                  struct afxdp_flow_stats *stats,
                  enum afxdp_flow_where *where) noexcept
{
    return flows->stats(ufid, token, told, stats, where);
}

void *
afxdp_flows_marked(struct afxdp_flows *flows, uint32_t mark,
                   unsigned pmd_id) noexcept
{
    return flows->marked(mark, pmd_id);
}

size_t
afxdp_flows_in_maps(struct afxdp_flows *flows, afxdp_flows_each_func *cb,
                    void *aux) noexcept
{
    return flows->in_maps(cb, aux);
}

void
afxdp_flows_target_gone(struct afxdp_flows *flows, int ifindex) noexcept
{
    flows->target_gone(ifindex);
}

}  // extern "C"
