// What a port shows its operator (afxdp-report.h): status keys, afxdp/show
// text, counters, UMEM frames.
#include "afxdp-report.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "device.hh"

namespace {

// A value as the status shows it.
class Value {
public:
    explicit Value(const char *s) : text_(s ? s : "") {}
    const char *c_str() const noexcept { return text_.c_str(); }

private:
    std::string text_;
};

Value
tf(bool b)
{
    return Value(b ? "true" : "false");
}

Value
num(uint64_t n)
{
    char buf[24];
    std::snprintf(buf, sizeof buf, "%" PRIu64, n);
    return Value(buf);
}

Value
str(const char *s)
{
    return Value(s);
}

// What the status and afxdp/show read of one device.
struct Facts {
    Facts(afxdp_dev &d, const char *offload_off) noexcept
    {
        d.info(&i);
        d.fast_path_stats(&fp);
        d.targets().describe(targets, sizeof targets);
        tx_in_place = i.n_queues && afxdp_queue_sends_in_place(d.queue(0));
        // Why the port runs without the fast path, "" if it runs it.
        fast_path_off = fp.active ? ""
                        : fp.requested ? fp.reason
                        : offload_off ? offload_off
                        : "options:xdp_fast_path is false";
    }
    afxdp_dev_info i;
    afxdp_fast_path_stats fp;
    char targets[AFXDP_TARGETS_DESCRIBED];
    bool tx_in_place;
    const char *fast_path_off;
};

// A running port's status, key by key in order: the key, whether it is
// shown (a reason only where there is one), and its value from the
// device's Facts 'f'.  A new key is one line here.
#define AFXDP_STATUS_KEYS                                                   \
    KEY("xdp_mode", true, str(afxdp_mode_name(f.i.mode_in_use)))            \
    /* OVS 3.3+'s own key for the same. */                                  \
    KEY("xdp-mode", true, str(afxdp_mode_name(f.i.mode_in_use)))            \
    KEY("zero_copy", true, tf(f.i.zero_copy))                               \
    KEY("use_need_wakeup", true, tf(f.i.need_wakeup_requested))             \
    KEY("need_wakeup_in_use", true, tf(f.i.need_wakeup_in_use))             \
    KEY("need_wakeup_reason", f.i.need_wakeup_reason[0],                    \
        str(f.i.need_wakeup_reason))                                        \
    KEY("n_rxq", true, num(f.i.n_queues))                                   \
    KEY("ring_size", true, num(f.i.ring_size))                              \
    KEY("umem_frames", true, num(f.i.n_frames))                             \
    KEY("umem_id", true, num(f.i.umem_id))                                  \
    KEY("umem_total_frames", true, num(f.i.umem_frames))                    \
    KEY("umem_shared_by", true, num(f.i.umem_devices))                      \
    KEY("tx_in_place", true, tf(f.tx_in_place))                             \
    KEY("umem_share_reason", f.i.umem_share_reason[0],                      \
        str(f.i.umem_share_reason))                                         \
    KEY("coalesce_tx_kicks", true, tf(f.i.coalesce_tx_kicks_in_use))        \
    KEY("coalesce_tx_kicks_reason", f.i.coalesce_tx_kicks_reason[0],        \
        str(f.i.coalesce_tx_kicks_reason))                                  \
    KEY("multi_buffer", true, tf(f.i.multi_buffer))                         \
    KEY("multi_buffer_reason", f.i.multi_buffer_reason[0],                  \
        str(f.i.multi_buffer_reason))                                       \
    KEY("max_mtu", true, num(f.i.max_mtu))                                  \
    KEY("rx_hash", true, tf(f.i.rx_hash))                                   \
    KEY("rx_hash_reason", f.i.rx_hash_reason[0], str(f.i.rx_hash_reason))   \
    KEY("rx_vlan", true, tf(f.i.rx_vlan))                                   \
    KEY("rx_vlan_reason", f.i.rx_vlan_reason[0], str(f.i.rx_vlan_reason))   \
    KEY("rx_csum_finish", true, tf(f.i.rx_csum_finish))                     \
    KEY("rx_segment", true, tf(f.i.rx_segment))                             \
    KEY("rx_segment_reason", f.i.rx_segment_reason[0],                      \
        str(f.i.rx_segment_reason))                                         \
    KEY("xdp_prog_id", true, num(f.i.prog_id))                              \
    KEY("xdp_prog_attached", true, tf(f.i.prog_attached))                   \
    KEY("xdp_fast_path", true, tf(f.fp.active))                             \
    KEY("xdp_fast_path_reason", !f.fp.active, str(f.fast_path_off))         \
    KEY("xdp_redirect_targets", f.fp.active && f.targets[0],                \
        str(f.targets))                                                     \
    KEY("xdp_flow_marks", f.fp.active, tf(f.fp.marks))                      \
    KEY("xdp_flow_marks_reason", f.fp.active && !f.fp.marks,                \
        str(f.fp.marks_reason))                                             \
    KEY("xdp_fast_path_tc", f.fp.active, tf(f.fp.tc))                       \
    KEY("xdp_fast_path_tc_reason", f.fp.active && !f.fp.tc,                 \
        str(f.fp.tc_reason))

// afxdp/show's text, built line by line.
class Text {
public:
    void line(const char *fmt, ...) __attribute__((format(printf, 2, 3)))
    {
        char buf[AFXDP_TARGETS_DESCRIBED + 64];
        va_list args;
        va_start(args, fmt);
        std::vsnprintf(buf, sizeof buf, fmt, args);
        va_end(args);
        text_ += buf;
        text_ += '\n';
    }
    // "  NAME:   VALUE", the counters' column.
    void counter(const char *indent, const char *prefix, const char *name,
                 uint64_t value)
    {
        std::string label = std::string(prefix) + name + ":";
        line("%s%-28s %" PRIu64, indent, label.c_str(), value);
    }
    const char *c_str() const noexcept { return text_.c_str(); }

private:
    std::string text_;
};

// ": why" after a state, if there is a why.
const char *
sep(const char *why)
{
    return why[0] ? ": " : "";
}

void
show_fast_path(Text &t, const Facts &f)
{
    const afxdp_fast_path_stats &fp = f.fp;
    if (!fp.active) {
        t.line("  xdp fast path: off: %s", f.fast_path_off);
        return;
    }
    t.line("  xdp fast path: on, %u flows, %u masks, %" PRIu64 " puts failed",
           fp.flows, fp.masks, fp.put_failed);
    if (!fp.marks) {
        t.line("    no flow marks: %s", fp.marks_reason);
    }
    if (fp.tc) {
        t.line("    tc half: on (GSO packets and partial checksums "
               "redirected whole)");
    } else {
        t.line("    tc half: off: %s", fp.tc_reason);
    }
    t.line("    counted after OVS's last read: %" PRIu64 " packets, %" PRIu64
           " bytes", fp.untold_packets, fp.untold_bytes);
    t.line("    redirect targets: %s", f.targets[0] ? f.targets : "none");
#define AFXDP_FP_COUNTER(NAME, TEXT)                                        \
    t.counter("    ", "", #NAME, fp.packets[AFXDP_FP_##NAME]);
    AFXDP_FP_COUNTERS
#undef AFXDP_FP_COUNTER
#define AFXDP_REFUSAL(NAME, TEXT)                                           \
    t.counter("    ", "refused_", #NAME, fp.refused[AFXDP_REFUSED_##NAME]);
    AFXDP_OFFLOAD_REFUSALS
#undef AFXDP_REFUSAL
}

// Each counter of queue 'q': the queue's own (AFXDP_QUEUE_STATS), then
// the kernel's ('kernel': AFXDP_XDP_STATS, those it gives).
template <typename Fn>
void
each_counter(afxdp_queue *q, Fn &&fn)
{
    afxdp_queue_stats qs;
    afxdp_xdp_stats xs;

    afxdp_queue_get_stats(q, &qs);
#define AFXDP_STAT(NAME) fn(false, #NAME, qs.NAME);
    AFXDP_QUEUE_STATS
#undef AFXDP_STAT
    if (!afxdp_queue_get_xdp_stats(q, &xs)) {
        unsigned k = 0;
#define AFXDP_STAT(NAME)                                                    \
        if (k++ < xs.n_valid) {                                             \
            fn(true, #NAME, xs.NAME);                                       \
        }
        AFXDP_XDP_STATS
#undef AFXDP_STAT
    }
}

void
show_queue(Text &t, afxdp_queue *q, unsigned qid)
{
    afxdp_frame_counts fc;
    bool fill_wakeup, tx_wakeup;

    afxdp_queue_get_frames(q, &fc);
    afxdp_queue_get_wakeup_flags(q, &fill_wakeup, &tx_wakeup);
    t.line("  queue %u:", qid);
    t.line("    needs wakeup now: fill ring %s, tx ring %s",
           fill_wakeup ? "yes" : "no", tx_wakeup ? "yes" : "no");
    t.line("    frames: fill ring %" PRIu32 ", rx ring %" PRIu32
           ", tx/completion %" PRIu32 ", kept for sending %" PRIu32,
           fc.fill_ring, fc.rx_ring, fc.tx, fc.tx_kept);
    each_counter(q, [&](bool kernel, const char *name, uint64_t value) {
        t.counter("    ", kernel ? "xdp_" : "", name, value);
    });
}

}  // namespace

extern "C" {

void
afxdp_dev_status(struct afxdp_dev *dev, const char *offload_off,
                 afxdp_pair_func *fn, void *aux) noexcept
{
    const Facts f(*dev, offload_off);
#define KEY(NAME, SHOWN, VALUE)                                             \
    if (SHOWN) {                                                            \
        fn(aux, NAME, (VALUE).c_str());                                     \
    }
    AFXDP_STATUS_KEYS
#undef KEY
}

void
afxdp_umem_frames_add(struct afxdp_umem_frames *u, struct afxdp_dev *dev)
    noexcept
{
    afxdp_dev_info info;
    dev->info(&info);
    if (info.umem_id != u->umem_id) {
        return;
    }
    afxdp_frame_counts f = {};
    for (unsigned q = 0; q < info.n_queues; q++) {
        afxdp_queue_get_frames(dev->queue(q), &f);
        u->in_kernel += f.fill + f.tx;
        u->kept += f.tx_kept;
    }
    if (info.n_queues) {
        // The pool-wide counts are the same from any of its queues.
        u->total = f.total;
        u->free = f.free;
        u->in_ovs = f.in_app;
    }
}

void
afxdp_dev_show(struct afxdp_dev *dev, const char *offload_off,
               const struct afxdp_umem_frames *u, afxdp_pair_func *fn,
               void *aux) noexcept
{
    const Facts f(*dev, offload_off);
    const afxdp_dev_info &i = f.i;
    Text t;
    t.line("  xdp mode: %s%s, xdp program id %" PRIu32,
           afxdp_mode_name(i.mode_in_use), i.zero_copy ? " (zero-copy)" : "",
           i.prog_id);
    t.line("  need_wakeup: requested %s, in use %s%s%s",
           i.need_wakeup_requested ? "true" : "false",
           i.need_wakeup_in_use ? "true" : "false",
           sep(i.need_wakeup_reason), i.need_wakeup_reason);
    t.line("  coalesce_tx_kicks: requested %s, in use %s%s%s",
           i.coalesce_tx_kicks_requested ? "true" : "false",
           i.coalesce_tx_kicks_in_use ? "true" : "false",
           sep(i.coalesce_tx_kicks_reason), i.coalesce_tx_kicks_reason);
    t.line("  multi-buffer: in use %s, max MTU %u%s%s",
           i.multi_buffer ? "true" : "false", i.max_mtu,
           sep(i.multi_buffer_reason), i.multi_buffer_reason);
    t.line("  packet hints: RX hash %s%s%s, VLAN tag %s%s%s",
           i.rx_hash ? "in use" : "not in use", sep(i.rx_hash_reason),
           i.rx_hash_reason, i.rx_vlan ? "in use" : "not in use",
           sep(i.rx_vlan_reason), i.rx_vlan_reason);
    t.line("  queues: %u, ring size %u, UMEM frames %u (%u KiB) per queue",
           i.n_queues, i.ring_size, i.n_frames,
           i.n_frames * (AFXDP_FRAME_SIZE / 1024));
    t.line("  UMEM %" PRIu32 ": %u frames (%u MiB), used by %u port%s%s%s",
           i.umem_id, i.umem_frames,
           i.umem_frames / (1024 * 1024 / AFXDP_FRAME_SIZE), i.umem_devices,
           i.umem_devices == 1 ? "" : "s",
           i.umem_share_reason[0] ? "; " : "", i.umem_share_reason);
    t.line("  UMEM %" PRIu32 " frames: total %" PRIu32 ", free %" PRIu32
           ", in kernel rings %" PRIu64 ", kept for sending %" PRIu64
           ", in OVS %" PRIu32, u->umem_id, u->total, u->free, u->in_kernel,
           u->kept, u->in_ovs);
    show_fast_path(t, f);
    for (unsigned q = 0; q < i.n_queues; q++) {
        show_queue(t, dev->queue(q), q);
    }
    fn(aux, nullptr, t.c_str());
}

void
afxdp_dev_counters(struct afxdp_dev *dev, afxdp_counter_func *fn, void *aux)
    noexcept
{
    afxdp_dev_info info;
    dev->info(&info);
    for (unsigned qid = 0; qid < info.n_queues; qid++) {
        each_counter(dev->queue(qid),
                     [&](bool, const char *name, uint64_t value) {
                         char full[64];
                         std::snprintf(full, sizeof full, "xsk_queue_%u_%s",
                                       qid, name);
                         fn(aux, full, value);
                     });
    }
}

bool
afxdp_dev_prog_lost(struct afxdp_dev *dev) noexcept
{
    return dev->prog_lost();
}

}  // extern "C"
