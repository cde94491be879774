// One port of ours as OVS sees it (afxdp-port.h): its options, its
// device, its flows, and what other ports learn when it opens or closes.
// Every port is in one list under one lock: a port's opening and closing
// concern the ports sharing its UMEM or waiting for its interface.
#include "afxdp-port.h"

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "log.hh"

struct afxdp_port {
    std::string name;
    afxdp_port_hooks hooks;
    void *aux;
    afxdp_flows *flows = nullptr;      // From creation to destruction.
    afxdp_dev *dev = nullptr;          // While open.
    bool configured = false;           // Options taken once.
    afxdp_port_config requested;       // The latest options taken.
    afxdp_port_config applied;         // At the last open attempt.
    bool opened_once = false;          // An open was attempted...
    int ifindex = 0;                   // ...on this interface (a negative
                                       // errno if it had none),
    bool offload_applied = false;      // with flow offload on or off.
    std::string open_error;            // Why it failed, if it did,
    int open_errno = 0;                // and its errno.
    std::string config_error;          // The last option rejected.
};

namespace {

std::mutex &
ports_mutex()
{
    static std::mutex m;
    return m;
}

// Every port, in creation order.  Under ports_mutex().
std::vector<afxdp_port *> &
ports()
{
    static std::vector<afxdp_port *> v;
    return v;
}

// Each port by its embedder's object, under a leaf lock of its own: the
// lookup of every call must not wait for a port's open.
std::mutex &
by_aux_mutex()
{
    static std::mutex m;
    return m;
}

std::unordered_map<const void *, afxdp_port *> &
by_aux()
{
    static std::unordered_map<const void *, afxdp_port *> m;
    return m;
}

void
status_changed(afxdp_port *p)
{
    if (p->hooks.status_changed) {
        p->hooks.status_changed(p->aux);
    }
}

// afxdp_flows_changed_func: a redirect target's state changed.
void
flows_changed(void *port)
{
    status_changed(static_cast<afxdp_port *>(port));
}

// A port joined or left UMEM 'umem_id': the status of the other ports on
// it (umem_shared_by, umem_total_frames) changed too.
void
umem_peers_changed(const afxdp_port *self, uint32_t umem_id)
{
    for (afxdp_port *p : ports()) {
        afxdp_dev_info info;
        if (p == self || !p->dev) {
            continue;
        }
        afxdp_dev_get_info(p->dev, &info);
        if (info.umem_id == umem_id) {
            status_changed(p);
        }
    }
}

// A port refused because another port of ours had interface 'ifindex'
// (EBUSY) opens once that one lets it go: the other was a port on its way
// out (a type change, a rename), or a second port on one interface whose
// first port has now gone.
void
wake_waiters(int ifindex)
{
    for (afxdp_port *p : ports()) {
        if (!p->dev && p->open_errno == EBUSY && p->ifindex == ifindex) {
            afxdp::log(AFXDP_LOG_INFO, "%s: the port that had the interface "
                       "let it go: opening it.", p->name.c_str());
            if (p->hooks.reconfigure) {
                p->hooks.reconfigure(p->aux);
            }
        }
    }
}

bool
close_locked(afxdp_port *p)
{
    if (!p->dev) {
        return false;
    }
    // Its flows' XDP counts end as read now.
    afxdp_flows_detach(p->flows);
    afxdp_dev_info info;
    afxdp_dev_get_info(p->dev, &info);
    afxdp::log(AFXDP_LOG_INFO, "%s: Removing xdp program.", p->name.c_str());
    afxdp_dev_close(p->dev);
    p->dev = nullptr;
    umem_peers_changed(p, info.umem_id);
    wake_waiters(p->ifindex);
    return true;
}

// The frames of UMEM 'umem_id' over every port.
afxdp_umem_frames
umem_frames(uint32_t umem_id)
{
    afxdp_umem_frames u = {};
    u.umem_id = umem_id;
    for (afxdp_port *p : ports()) {
        if (p->dev) {
            afxdp_umem_frames_add(&u, p->dev);
        }
    }
    return u;
}

void
show_locked(afxdp_port *p, const char *offload_off, afxdp_pair_func *fn,
            void *aux)
{
    std::string head = p->name + ":\n";
    if (!p->dev) {
        head += "  not running: ";
        head += p->open_error.empty() ? "not configured yet" : p->open_error;
        head += "\n";
        fn(aux, nullptr, head.c_str());
        return;
    }
    fn(aux, nullptr, head.c_str());
    afxdp_dev_info info;
    afxdp_dev_get_info(p->dev, &info);
    const afxdp_umem_frames u = umem_frames(info.umem_id);
    afxdp_dev_show(p->dev, p->offload_applied ? nullptr : offload_off, &u,
                   fn, aux);
}

}  // namespace

extern "C" {

struct afxdp_port *
afxdp_port_create(const char *name, const struct afxdp_port_hooks *hooks,
                  void *aux) noexcept
{
    afxdp_port *p = new (std::nothrow) afxdp_port;
    if (!p) {
        return nullptr;
    }
    p->name = name;
    p->hooks = *hooks;
    p->aux = aux;
    afxdp_port_config_default(&p->requested);
    p->applied = p->requested;
    p->flows = afxdp_flows_create(name, flows_changed, p);
    if (!p->flows) {
        delete p;
        return nullptr;
    }
    {
        std::lock_guard<std::mutex> g(by_aux_mutex());
        if (!by_aux().emplace(aux, p).second) {
            afxdp::log(AFXDP_LOG_ERR, "%s: a second port for one object",
                       name);
            afxdp_flows_destroy(p->flows);
            delete p;
            return nullptr;
        }
    }
    std::lock_guard<std::mutex> g(ports_mutex());
    ports().push_back(p);
    return p;
}

struct afxdp_port *
afxdp_port_find(const void *aux) noexcept
{
    std::lock_guard<std::mutex> g(by_aux_mutex());
    auto it = by_aux().find(aux);
    return it == by_aux().end() ? nullptr : it->second;
}

void
afxdp_port_destroy(struct afxdp_port *p, int ifindex) noexcept
{
    if (!p) {
        return;
    }
    {
        std::lock_guard<std::mutex> g(by_aux_mutex());
        by_aux().erase(p->aux);
    }
    {
        std::lock_guard<std::mutex> g(ports_mutex());
        close_locked(p);
        auto &v = ports();
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (*it == p) {
                v.erase(it);
                break;
            }
        }
        // No more redirects to it, whatever the other ports' flows still
        // say until OVS deletes them.
        for (afxdp_port *other : v) {
            afxdp_flows_target_gone(other->flows, ifindex);
        }
    }
    afxdp_flows_destroy(p->flows);
    delete p;
}

int
afxdp_port_set_options(struct afxdp_port *p, afxdp_option_lookup *lookup,
                       const void *args, int ifindex, char *err,
                       size_t errlen) noexcept
{
    afxdp_port_config cfg;
    const int error = afxdp_port_config_parse(p->name.c_str(), lookup, args,
                                              &cfg, err, errlen);
    bool reopen;
    {
        std::lock_guard<std::mutex> g(ports_mutex());
        if (error) {
            afxdp::log(AFXDP_LOG_ERR, "%s", err);
            if (!p->configured) {
                return EINVAL;
            }
            // A running port keeps its settings: OVS would otherwise
            // delete it.  The status says what was rejected.
            afxdp::log(AFXDP_LOG_ERR, "%s: keeping the previous "
                       "configuration.", p->name.c_str());
            p->config_error = err;
            return 0;
        }
        p->configured = true;
        p->config_error.clear();
        reopen = afxdp_port_config_needs_reopen(&p->requested, &cfg)
                 // The interface went away or came back (OVS's bridge
                 // sets the options again when interfaces change): reopen
                 // on the interface that has the name now.
                 || (p->opened_once && p->ifindex != ifindex);
        p->requested = cfg;
    }
    if (reopen && p->hooks.reconfigure) {
        p->hooks.reconfigure(p->aux);
    }
    return 0;
}

bool
afxdp_port_needs_open(const struct afxdp_port *p, int ifindex, unsigned mtu,
                      bool offload) noexcept
{
    std::lock_guard<std::mutex> g(ports_mutex());
    return !p->dev || p->ifindex != ifindex
           || afxdp_port_config_needs_reopen(&p->applied, &p->requested)
           || p->offload_applied != offload
           || !afxdp_dev_takes_mtu(p->dev, mtu);
}

int
afxdp_port_open(struct afxdp_port *p, const struct afxdp_dev_config *base,
                int ifindex) noexcept
{
    std::lock_guard<std::mutex> g(ports_mutex());
    close_locked(p);
    p->applied = p->requested;
    afxdp::log(AFXDP_LOG_INFO, "%s: Setting XDP mode to %s.", p->name.c_str(),
               afxdp_mode_name(p->applied.mode));

    afxdp_dev_config cfg = *base;
    cfg.ifname = p->name.c_str();
    cfg.port = p->applied;
    p->open_error.clear();
    p->open_errno = 0;
    p->ifindex = ifindex;
    p->opened_once = true;
    p->offload_applied = cfg.offload;
    char err[512];
    const int error = afxdp_dev_open(&cfg, &p->dev, err, sizeof err);
    if (error) {
        // An error for OVS would make its datapath remove the port, and
        // the bridge add it back, failing again, forever.  The port stays
        // without sockets (receiving nothing, dropping what it is given
        // to send), says why, and tries again when its options change.
        afxdp::log(AFXDP_LOG_ERR, "%s", err);
        p->open_error = err;
        p->open_errno = error;
        afxdp::log(AFXDP_LOG_ERR, "%s: AF_XDP device reconfiguration failed: "
                   "the port is down until its configuration changes.",
                   p->name.c_str());
        status_changed(p);
        return error;
    }

    afxdp_dev_info info;
    afxdp_dev_get_info(p->dev, &info);
    umem_peers_changed(p, info.umem_id);
    const unsigned have = afxdp_device_rx_queues(p->name.c_str());
    if (have > info.n_queues) {
        afxdp::log(AFXDP_LOG_WARN, "%s: the device has %u RX queues but "
                   "n_rxq is %u: what it steers to the others goes to the "
                   "kernel's stack, not to OVS.", p->name.c_str(), have,
                   info.n_queues);
    }
    if (p->offload_applied) {
        // New maps: the flows OVS offloaded go in again.
        afxdp_flows_attach(p->flows, p->dev);
    }
    status_changed(p);
    return 0;
}

bool
afxdp_port_close(struct afxdp_port *p) noexcept
{
    std::lock_guard<std::mutex> g(ports_mutex());
    return close_locked(p);
}

struct afxdp_dev *
afxdp_port_dev(struct afxdp_port *p) noexcept
{
    std::lock_guard<std::mutex> g(ports_mutex());
    return p->dev;
}

unsigned
afxdp_port_n_queues(const struct afxdp_port *p) noexcept
{
    std::lock_guard<std::mutex> g(ports_mutex());
    return p->applied.n_queues;
}

struct afxdp_flows *
afxdp_port_flows(struct afxdp_port *p) noexcept
{
    return p->flows;
}

bool
afxdp_port_offload_differs(const struct afxdp_port *p, bool offload)
    noexcept
{
    std::lock_guard<std::mutex> g(ports_mutex());
    return p->opened_once && p->offload_applied != offload;
}

bool
afxdp_port_prog_lost(struct afxdp_port *p, int ifindex) noexcept
{
    std::lock_guard<std::mutex> g(ports_mutex());
    if (p->dev && p->ifindex == ifindex && afxdp_dev_prog_lost(p->dev)) {
        status_changed(p);
        return true;
    }
    return false;
}

void
afxdp_port_status(struct afxdp_port *p, const char *offload_off,
                  afxdp_pair_func *fn, void *aux) noexcept
{
    std::lock_guard<std::mutex> g(ports_mutex());
    if (p->dev) {
        afxdp_dev_status(p->dev, p->offload_applied ? nullptr : offload_off,
                         fn, aux);
    } else if (!p->open_error.empty()) {
        fn(aux, "afxdp_error", p->open_error.c_str());
    }
    if (!p->config_error.empty()) {
        fn(aux, "config_error", p->config_error.c_str());
    }
}

uint64_t
afxdp_port_tx_dropped(struct afxdp_port *p) noexcept
{
    std::lock_guard<std::mutex> g(ports_mutex());
    uint64_t dropped = 0;
    if (!p->dev) {
        return 0;
    }
    afxdp_dev_info info;
    afxdp_dev_get_info(p->dev, &info);
    for (unsigned q = 0; q < info.n_queues; q++) {
        afxdp_queue *queue = afxdp_dev_queue(p->dev, q);
        afxdp_queue_stats qs;
        afxdp_queue_kick_owed(queue);
        afxdp_queue_get_stats(queue, &qs);
        dropped += qs.tx_dropped_ring_full + qs.tx_dropped_no_frames
                   + qs.tx_dropped_too_long;
    }
    return dropped;
}

void
afxdp_port_counters(struct afxdp_port *p, afxdp_counter_func *fn, void *aux)
    noexcept
{
    std::lock_guard<std::mutex> g(ports_mutex());
    if (p->dev) {
        afxdp_dev_counters(p->dev, fn, aux);
    }
}

void
afxdp_port_get_config(struct afxdp_port *p, afxdp_pair_func *fn,
                      void *aux) noexcept
{
    std::lock_guard<std::mutex> g(ports_mutex());
    afxdp_port_config applied;
    afxdp_port_config_default(&applied);
    const char *mode = "unspecified", *in_use = "unspecified";
    if (p->opened_once) {
        applied = p->applied;
        mode = afxdp_mode_name(applied.mode);
    }
    if (p->dev) {
        afxdp_dev_info info;
        afxdp_dev_get_info(p->dev, &info);
        in_use = afxdp_mode_name(info.mode_in_use);
    }
    fn(aux, "xdp-mode", mode);
    fn(aux, "xdp-mode-in-use", in_use);
    fn(aux, "use-need-wakeup", applied.use_need_wakeup ? "true" : "false");
}

int
afxdp_ports_show(const char *name, const char *offload_off,
                 afxdp_pair_func *fn, void *aux) noexcept
{
    std::lock_guard<std::mutex> g(ports_mutex());
    bool found = false;
    for (afxdp_port *p : ports()) {
        if (!name || p->name == name) {
            found = true;
            show_locked(p, offload_off, fn, aux);
        }
    }
    if (!name) {
        char line[80];
        std::snprintf(line, sizeof line, "closed UMEMs waiting for frames "
                      "held by OVS: %u\n", afxdp_retired_pools());
        fn(aux, nullptr, line);
    }
    return name && !found ? ENOENT : 0;
}

int
afxdp_ports_frames(const char *name, struct afxdp_umem_frames *u) noexcept
{
    std::lock_guard<std::mutex> g(ports_mutex());
    for (afxdp_port *p : ports()) {
        if (p->dev && p->name == name) {
            afxdp_dev_info info;
            afxdp_dev_get_info(p->dev, &info);
            *u = umem_frames(info.umem_id);
            return 0;
        }
    }
    return ENOENT;
}

}  // extern "C"
