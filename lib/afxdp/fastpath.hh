// The XDP fast path of one input interface: our program ovs_afxdp_fast
// (fastpath.bpf.c, built into the core) and its maps (fastpath-maps.h),
// kept equal to a FlowTable of the flows offloaded there.
//
// put() and del() change the maps in an order that never lets a packet
// meet half a change: whatever leaves goes first (a packet then misses and
// goes to OVS, which is always right), whatever arrives goes in after its
// mask and zeroed counters.  A map change that fails (the kernel out of
// memory) would leave maps and table disagreeing: the fast path then
// empties itself, every flow's packets going to OVS, and says so.
#ifndef AFXDP_FASTPATH_HH
#define AFXDP_FASTPATH_HH

#include <cstddef>
#include <cstdint>
#include <memory>

#include "fastpath-maps.h"
#include "fd.hh"
#include "flow.hh"
#include "marks.hh"
#include "result.hh"
#include "xdp_prog.hh"

struct bpf_link;
struct bpf_object;
struct bpf_program;

namespace afxdp {


// What the program counted for one flow since it was put.
struct FastPathFlowStats {
    uint64_t packets = 0;
    uint64_t bytes = 0;
    uint64_t used_ns = 0;   // CLOCK_MONOTONIC of the last hit; 0: none.
    uint16_t tcp_flags = 0; // Of every hit, or'ed: OVS's TCP_FLAGS(), host
                            // order.
};

class FastPath {
public:
    // Whether the core was built with the program (configure found clang
    // with a BPF target); if not, load() fails with -EOPNOTSUPP.
    static bool built() noexcept;

    // Loads the program and creates its maps.  'xsk_map_fd' is the plain
    // program's socket map, which packets for OVS go through; -1 makes
    // one of the program's own (for tests).  With 'hints' (RxHint bits)
    // the program asks the driver of 'ifindex' for them, as the plain
    // program with hints does, and is bound to that device (its native
    // mode only).  Its flows act only on packets of the receive queues
    // OVS polls, 0 .. 'n_queues' - 1 (a test run's packet is on queue 0).
    // With 'local_senders' (a veth or tap) a redirect hit whose checksum
    // a sender on this host left partial goes to the socket instead;
    // a physical NIC's packets never have one, and skip the check.
    static Result<FastPath, Failure> load(int xsk_map_fd, unsigned hints = 0,
                                          int ifindex = 0,
                                          unsigned n_queues = 1,
                                          bool local_senders = true) noexcept;

    // The hints it asks for.
    unsigned hints() const noexcept { return s_.hints; }
    // Whether the packets it gives the socket carry metadata: their hash,
    // and a flow's mark (partial offload).  Not where the kernel lets no
    // XDP program write any (xdp_meta_writable()).
    bool writes_meta() const noexcept { return s_.meta; }

    FastPath() = default;
    FastPath(FastPath &&o) noexcept { swap(o); }
    FastPath &operator=(FastPath &&o) noexcept
    {
        swap(o);
        return *this;
    }
    FastPath(const FastPath &) = delete;
    FastPath &operator=(const FastPath &) = delete;
    ~FastPath();

    int prog_fd() const noexcept { return s_.prog_fd; }
    uint32_t prog_id() const noexcept { return s_.prog_id; }

    // The flow OVS knows by 'ufid', put or replaced.  0, or FlowTable's
    // -ENOSPC and -EEXIST (nothing changed), or a map's error (every flow
    // then out of XDP).  Its counters start at zero; a replaced flow keeps
    // its own.
    int put(const FlowTable::Ufid &ufid, const XdpFlow &flow) noexcept;
    int del(const FlowTable::Ufid &ufid) noexcept;
    int flow_stats(const FlowTable::Ufid &ufid,
                   FastPathFlowStats *stats) const noexcept;
    const FlowTable &flows() const noexcept { return s_.table; }
    // What the program writes for a flow's mark, and OVS's mark for it
    // (marks.hh): for the port's receive queues, which may outlive this.
    std::shared_ptr<const FlowMarks> marks() const noexcept
    {
        return s_.marks;
    }

    // The interfaces flows may redirect to.  A flow whose target is not
    // here sends its packets to OVS (counted as redirect_failed).
    int add_target(int ifindex) noexcept;
    int del_target(int ifindex) noexcept;
    // Whether the watcher took 'ifindex' out of this port's redirects
    // since add_target() last put it in (the kernel failed to send a bulk
    // of them there), and the frames lost so.
    bool target_lost(int ifindex, uint64_t *lost) const noexcept;

    // In generic mode: the program's TC half on 'ifindex''s ingress (a
    // clsact hook, made if there is none), to which XDP leaves the
    // redirects it cannot send whole (bpf/handoff.h): GSO packets and
    // partial checksums then reach their target whole, as through a
    // Linux bridge.  Detached (and the hook removed if it made it) when
    // this is destroyed.
    Failure attach_tc(int ifindex) noexcept;
    bool tc_attached() const noexcept { return s_.tc_ifindex != 0; }

    // afxdp.h's afxdp_fast_path_parse() (fastpath_test.cc): the
    // afxdp_parse_test program's (fastpath-test.bpf.c) verdict on 'len'
    // bytes (0 parsed, 1 punted, 2 parsed with an IP header), or a
    // negative errno.
    static int parse_test(const void *packet, size_t len,
                          afxdp_flow_key *key) noexcept;

    // The program's counters, summed over the CPUs.
    void counters(uint64_t out[AFXDP_FP_N_COUNTERS]) const noexcept;

private:
    void swap(FastPath &o) noexcept;
    // load()'s steps: the object opened and loaded, with the watcher or
    // without (open(): open_object(), set_up(), the load, take_fds()); the
    // watcher attached.
    Failure open(int xsk_map_fd, unsigned hints, int ifindex, bool watch)
        noexcept;
    Failure open_object(unsigned hints, bool watch, bpf_program **prog,
                        bpf_program **clock) noexcept;
    Failure set_up(bpf_program *prog, int xsk_map_fd, unsigned hints,
                   int ifindex) noexcept;
    Failure take_fds(bpf_program *prog, bpf_program *clock, int ifindex)
        noexcept;
    Failure attach_watch() noexcept;
    void detach_tc() noexcept;
    int write_config() noexcept;
    // A hit's time as the program counted it (hit_time() in
    // fastpath.bpf.c) in CLOCK_MONOTONIC ns; 0 if the clock cannot be
    // read.  read_clock() runs afxdp_fp_clock for a new reading.
    uint64_t monotonic_ns(uint64_t hit_time) const noexcept;
    bool read_clock() const noexcept;
    int write_mask(uint32_t slot, const afxdp_flow_key *mask) noexcept;
    int zero_stats(uint32_t slot) noexcept;
    int write_flow(const FlowTable::Entry &e) noexcept;
    int delete_flow(uint32_t mask_slot, const afxdp_flow_key &key) noexcept;
    int remove(const FlowTable::Entry &old, uint32_t keep_slot) noexcept;
    // A map change failed ('err'): the maps and the table may disagree,
    // so both are emptied (the program first told to try no mask).
    void empty(int err) noexcept;

    // Everything but the object, which the destructor closes: swapped
    // whole by a move.
    struct State {
        int prog_fd = -1;
        uint32_t prog_id = 0;
        int config_fd = -1, masks_fd = -1, flows_fd = -1, stats_fd = -1;
        int ports_fd = -1, counters_fd = -1;   // Owned by the object.
        int failing_fd = -1;
        int clock_prog_fd = -1, clock_fd = -1;   // afxdp_fp_clock.
        int tc_prog_fd = -1;         // ovs_afxdp_tc.
        int tc_ifindex = 0;          // Where it is attached; 0: nowhere.
        bool tc_made_hook = false;   // attach_tc() made the clsact hook.
        mutable afxdp_fp_clock clock{};  // Its latest reading...
        mutable bool clock_read = false; // ...if any.
        int ifindex = 0;             // The interface it runs on.
        int n_cpus = 0;              // Per-CPU values in a lookup.
        unsigned hints = 0;
        bool local_senders = true;   // load()'s.
        bool meta = false;           // writes_meta().
        unsigned n_queues = 1;       // The queues OVS polls (fp_config).
        uint64_t generation = 0;     // fp_config's, as last written.
        // Each mask slot as last written, with its generation (0: never
        // written), and the last generation given.
        struct Slot {
            afxdp_flow_key mask{};
            uint32_t in_use = 0;
            uint32_t generation = 0;
        } slots[AFXDP_FP_MAX_MASKS];
        uint32_t mask_generation = 0;
        FlowTable table;
        std::shared_ptr<FlowMarks> marks;   // The table's flows' marks.
    };

    bpf_object *obj_ = nullptr;   // Owns the program and the maps.
    bpf_program *watch_ = nullptr;        // afxdp_fp_watch, if loaded.
    bpf_link *watch_link_ = nullptr;      // Its attachment.
    bpf_program *tc_ = nullptr;           // ovs_afxdp_tc.
    State s_;
};

}  // namespace afxdp

#endif  // AFXDP_FASTPATH_HH
