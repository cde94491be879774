// A port's offloaded flows, from its creation to its destruction
// (afxdp-flows.h's struct afxdp_flows): each megaflow OVS offloaded, kept
// as translated, with where it runs, its mark, its counts and OVS's
// copies of it.  The port's devices come and go (attach, detach); the
// flows stay and go into each new device's fast path.
#ifndef AFXDP_REGISTRY_HH
#define AFXDP_REGISTRY_HH

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "afxdp-flows.h"
#include "flow.hh"

namespace afxdp {

// A flow's match and actions as a shim translated them, the strings they
// point to kept here.
class StoredFlow {
public:
    StoredFlow() = default;
    StoredFlow(const afxdp_flow_match &, const afxdp_flow_action *,
               size_t n);
    StoredFlow(const StoredFlow &) = delete;
    StoredFlow &operator=(const StoredFlow &) = delete;

    const afxdp_flow_match &match() const noexcept { return match_; }
    const afxdp_flow_action *actions() const noexcept
    {
        return actions_.data();
    }
    size_t n_actions() const noexcept { return actions_.size(); }
    // Whether 'actions' do what these do.
    bool same_actions(const afxdp_flow_action *, size_t n) const noexcept;

private:
    afxdp_flow_match match_ = {};
    std::string unparsed_;
    std::vector<afxdp_flow_action> actions_;
    // Each action's name or 'other', at the action's index (null if it
    // has none), each string's characters where the action points.
    std::vector<std::unique_ptr<std::string>> texts_;
};

class FlowRegistry {
public:
    FlowRegistry(const char *port, afxdp_flows_changed_func *, void *aux);
    ~FlowRegistry();
    FlowRegistry(const FlowRegistry &) = delete;
    FlowRegistry &operator=(const FlowRegistry &) = delete;

    // afxdp-flows.h's calls, errno results positive as there.
    void attach(afxdp_dev *) noexcept;
    void detach() noexcept;
    int put(const uint32_t ufid[4], const afxdp_flow_match &,
            const afxdp_flow_action *, size_t n, uint32_t mark,
            const afxdp_flow_copy *, void **previous,
            afxdp_offload_refusal *) noexcept;
    int del(const uint32_t ufid[4], const afxdp_flow_copy *,
            afxdp_flow_stats *) noexcept;
    void flush() noexcept;
    int stats(const uint32_t ufid[4], const void *token,
              const afxdp_flow_stats *told, afxdp_flow_stats *,
              afxdp_flow_where *) noexcept;
    void *marked(uint32_t mark, unsigned pmd_id) const noexcept;
    size_t in_maps(afxdp_flows_each_func *, void *aux) const noexcept;
    void target_gone(int ifindex) noexcept;

    // Marks the registry gives run 1 .. kLastMark, round and round.
    static constexpr uint32_t kLastMark = UINT32_MAX - 1;

private:
    using Ufid = FlowTable::Ufid;
    struct Copy {
        afxdp_flow_copy copy;
        afxdp_flow_stats told;      // What this copy was told last.
    };
    struct Flow {
        Ufid ufid;
        std::unique_ptr<StoredFlow> stored;
        uint32_t mark = 0;
        bool in_maps = false;       // The device took the last put.
        bool full = false;          // XDP executes it whole...
        int target = 0;             // ...redirecting here (0: a drop).
        afxdp_offload_refusal refusal = AFXDP_REFUSED_N;
        afxdp_flow_counts counts = {};
        std::vector<Copy> copies;   // Under refs_mutex_.
    };

    // Puts 'f' into the attached device: 0 or an errno.
    int install(Flow &f) noexcept;
    // XDP's count of 'f' read now.
    void read_xdp(Flow &f) noexcept;
    // What a copy is told now ('*told' in as last told, out as told now).
    void tell(Flow &f, bool is_copy, afxdp_flow_stats *told) noexcept;
    // A mark no flow has: false if none is free.
    bool mark_alloc(uint32_t *mark) noexcept;
    // Out of the maps (if 'from_maps') and of the registry, its copies'
    // references let go of.
    void forget(std::map<Ufid, Flow>::iterator, bool from_maps) noexcept;
    // A put failed 'err': said at most once a second as a warning.
    void warn_put(const Ufid &, int err) noexcept;

    std::string port_;
    afxdp_flows_changed_func *changed_cb_;
    void *changed_aux_;
    mutable std::mutex mutex_;      // All but what refs_mutex_ guards.
    afxdp_dev *dev_ = nullptr;      // Attached, with offload.
    std::map<Ufid, Flow> flows_;
    uint32_t last_mark_ = 0;
    int64_t warned_ms_ = -1000000;
    // A leaf: PMD threads take it for each packet that has a mark.
    mutable std::mutex refs_mutex_;
    std::unordered_map<uint32_t, Flow *> marks_;   // Of marks given here.
};

}  // namespace afxdp

#endif  // AFXDP_REGISTRY_HH
