// A port's redirect targets (see targets.hh).
#include "targets.hh"

#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "log.hh"
#include "netdev_nl.hh"

namespace afxdp {

int64_t
monotonic_ms() noexcept
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Asks the kernel whether 't' takes XDP frames now and puts the devmap in
// step: true if that changed.
bool
RedirectTargets::check(Devmap &devmap, Target &t, int64_t now_ms) noexcept
{
    // 't.name' is its port's, an afxdp port's interface's name.
    const Failure f = generic_ ? check_interface_is(t.ifindex, t.name.c_str())
                               : check_xdp_target(t.ifindex, t.name.c_str());
    const char *why = f.why;
    bool ok = !f;
    uint64_t lost = 0;
    const bool withdrawn = t.ok && devmap.lost(t.ifindex, &lost);

    t.checked_ms = now_ms;
    if (withdrawn) {
        // XDP took it out at the first bulk the kernel failed to send
        // there: back only if the kernel says it takes redirects again.
        // (A veth whose peer is down says so, and fails the next bulk:
        // once a check, counted in redirect_lost, seldom said.)
        if (!lost_logged_ || now_ms - lost_logged_ms_ >= kLostLogEveryMs) {
            lost_logged_ = true;
            lost_logged_ms_ = now_ms;
            log(AFXDP_LOG_INFO, "%s: the kernel refused XDP redirects to %s "
                "(%" PRIu64 " frames lost so far); they went through OVS "
                "since.", port_.c_str(), t.name.c_str(), lost);
        }
    } else if (ok == t.ok && t.why == why) {
        return false;
    }
    if (ok) {
        ok = !devmap.add(t.ifindex);
    } else {
        devmap.remove(t.ifindex);
    }
    if (ok != t.ok) {
        log(AFXDP_LOG_INFO, "%s: XDP redirects to %s %s%s%s.", port_.c_str(),
            t.name.c_str(), ok ? "on" : "off: its packets go through OVS",
            why[0] ? ": " : "", why);
    }
    t.ok = ok;
    t.why = why;
    return true;
}

bool
RedirectTargets::add(Devmap &devmap, const afxdp_flow_action *actions,
                     size_t n, int64_t now_ms) noexcept
{
    std::lock_guard<std::mutex> g(mutex_);
    bool changed = false;
    for (size_t i = 0; i < n; i++) {
        const afxdp_flow_action &a = actions[i];
        if (a.type != AFXDP_ACTION_OUTPUT || !a.output.xdp_target) {
            continue;
        }
        Target *t = nullptr;
        for (Target &known : targets_) {
            if (known.ifindex == a.output.ifindex) {
                t = &known;
            }
        }
        if (!t) {
            targets_.push_back(Target{a.output.ifindex,
                                      a.output.name ? a.output.name : "",
                                      false, "", now_ms});
            changed |= check(devmap, targets_.back(), now_ms);
            changed = true;   // A new line in the status.
        } else if (!t->ok && now_ms - t->checked_ms >= kRecheckOnPutMs) {
            changed |= check(devmap, *t, now_ms);
        }
    }
    return changed;
}

void
RedirectTargets::set_generic(bool generic) noexcept
{
    std::lock_guard<std::mutex> g(mutex_);
    generic_ = generic;
    ran_ = false;
}

bool
RedirectTargets::run(Devmap &devmap, int64_t now_ms) noexcept
{
    std::lock_guard<std::mutex> g(mutex_);
    if (ran_ && now_ms - ran_ms_ < kCheckEveryMs) {
        return false;
    }
    ran_ = true;
    ran_ms_ = now_ms;
    bool changed = false;
    for (Target &t : targets_) {
        changed |= check(devmap, t, now_ms);
    }
    return changed;
}

bool
RedirectTargets::drop(Devmap &devmap, int ifindex) noexcept
{
    std::lock_guard<std::mutex> g(mutex_);
    for (auto it = targets_.begin(); it != targets_.end(); ++it) {
        if (it->ifindex == ifindex) {
            devmap.remove(ifindex);
            targets_.erase(it);
            return true;
        }
    }
    return false;
}

bool
RedirectTargets::on(int ifindex) const noexcept
{
    std::lock_guard<std::mutex> g(mutex_);
    for (const Target &t : targets_) {
        if (t.ifindex == ifindex) {
            return t.ok;
        }
    }
    return false;
}

void
RedirectTargets::describe(char *buf, size_t size) const noexcept
{
    std::lock_guard<std::mutex> g(mutex_);
    size_t len = 0;
    if (size) {
        buf[0] = '\0';
    }
    for (const Target &t : targets_) {
        if (len >= size) {
            break;
        }
        int n = std::snprintf(buf + len, size - len, "%s%s %s%s%s",
                              len ? ", " : "", t.name.c_str(),
                              t.ok ? "on" : "off", t.why.empty() ? "" : ": ",
                              t.why.c_str());
        len += n > 0 ? size_t(n) : 0;
    }
}

}  // namespace afxdp
