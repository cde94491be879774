// The C API's edge: every entry is noexcept, converts the core's negative
// errno to OVS's positive errno once, and accepts NULL where afxdp.h says.
#include "afxdp.h"
#include "afxdp-offload.h"

#include <cerrno>
#include <cstdio>
#include <net/if.h>

#include "device.hh"
#include "netdev_nl.hh"
#include "xdp_prog.hh"

extern "C" int
afxdp_dev_open(const struct afxdp_dev_config *cfg, struct afxdp_dev **devp,
               char *err, size_t errlen) noexcept
{
    *devp = nullptr;
    if (errlen) {
        err[0] = '\0';
    }
    auto d = afxdp_dev::open(*cfg);
    if (!d.ok()) {
        if (errlen) {
            std::snprintf(err, errlen, "%s", d.error().why);
        }
        return -d.error().error;
    }
    *devp = d.take().release();
    return 0;
}

extern "C" void
afxdp_dev_close(struct afxdp_dev *dev) noexcept
{
    delete dev;
}

extern "C" int
afxdp_remove_stale_program(const char *ifname) noexcept
{
    int ifindex = int(if_nametoindex(ifname));
    if (!ifindex) {
        return ENODEV;
    }
    return -afxdp::remove_our_program(ifindex);
}

extern "C" void
afxdp_dev_get_info(const struct afxdp_dev *dev,
                   struct afxdp_dev_info *info) noexcept
{
    dev->info(info);
}

extern "C" bool
afxdp_dev_takes_mtu(const struct afxdp_dev *dev, unsigned mtu) noexcept
{
    return dev && mtu <= dev->max_mtu();
}

extern "C" bool
afxdp_dev_prog_attached(const struct afxdp_dev *dev) noexcept
{
    return dev && dev->prog_attached();
}

extern "C" bool
afxdp_xdp_target_ok(int ifindex, const char *ifname, char *why,
                    size_t whylen) noexcept
{
    const afxdp::Failure f = afxdp::check_xdp_target(ifindex, ifname);
    if (whylen) {
        std::snprintf(why, whylen, "%s", f.why);
    }
    return !f;
}

extern "C" bool
afxdp_fast_path_built(void) noexcept
{
    return afxdp::FastPath::built();
}

extern "C" void
afxdp_dev_get_fast_path(const struct afxdp_dev *dev,
                        struct afxdp_fast_path_stats *out) noexcept
{
    dev->fast_path_stats(out);
}

extern "C" int
afxdp_dev_flow_put(struct afxdp_dev *dev, const uint32_t ufid[4],
                   const struct afxdp_flow_match *match,
                   const struct afxdp_flow_action *actions, size_t n_actions,
                   uint32_t mark, enum afxdp_offload_refusal *refusal) noexcept
{
    return -dev->flow_put(ufid, *match, actions, n_actions, mark, refusal);
}

extern "C" int
afxdp_dev_flow_put_counted(struct afxdp_dev *dev, const uint32_t ufid[4],
                           const struct afxdp_flow_match *match,
                           const struct afxdp_flow_action *actions,
                           size_t n_actions, uint32_t mark,
                           enum afxdp_offload_refusal *refusal,
                           struct afxdp_flow_counts *counts) noexcept
{
    return -dev->flow_put(ufid, *match, actions, n_actions, mark, refusal,
                          counts);
}

extern "C" int
afxdp_dev_flow_del(struct afxdp_dev *dev, const uint32_t ufid[4]) noexcept
{
    return -dev->flow_del(ufid);
}

extern "C" int
afxdp_dev_flow_del_counted(struct afxdp_dev *dev, const uint32_t ufid[4],
                           struct afxdp_flow_counts *counts) noexcept
{
    return -dev->flow_del(ufid, counts);
}

extern "C" int
afxdp_dev_flow_stats(const struct afxdp_dev *dev, const uint32_t ufid[4],
                     struct afxdp_flow_stats *stats) noexcept
{
    return -dev->flow_stats(ufid, stats);
}

extern "C" int
afxdp_dev_fast_path_target(struct afxdp_dev *dev, int ifindex,
                           bool add) noexcept
{
    return -dev->fast_path_target(ifindex, add);
}

extern "C" bool
afxdp_dev_fast_path_target_lost(const struct afxdp_dev *dev, int ifindex,
                                uint64_t *lost) noexcept
{
    return dev->fast_path_target_lost(ifindex, lost);
}

extern "C" void
afxdp_dev_targets_run(struct afxdp_dev *dev) noexcept
{
    dev->targets_run();
}

extern "C" void
afxdp_dev_targets_drop(struct afxdp_dev *dev, int ifindex) noexcept
{
    dev->targets_drop(ifindex);
}

extern "C" bool
afxdp_dev_target_on(const struct afxdp_dev *dev, int ifindex) noexcept
{
    return dev->targets().on(ifindex);
}

extern "C" void
afxdp_dev_targets_describe(const struct afxdp_dev *dev, char *buf,
                           size_t size) noexcept
{
    dev->targets().describe(buf, size);
}

extern "C" bool
afxdp_dev_status_changed(struct afxdp_dev *dev) noexcept
{
    return dev->take_status_changed();
}

extern "C" struct afxdp_queue *
afxdp_dev_queue(struct afxdp_dev *dev, unsigned qid) noexcept
{
    return dev ? dev->queue(qid) : nullptr;
}

extern "C" size_t
afxdp_queue_recv(struct afxdp_queue *q, struct afxdp_rx_frame *frames,
                 size_t max, int *qfill, unsigned *events, int *error) noexcept
{
    return q->recv(frames, max, qfill, events, error);
}

extern "C" size_t
afxdp_queue_send(struct afxdp_queue *q, const struct afxdp_tx_packet *pkts,
                 size_t n, unsigned *events, int *error) noexcept
{
    return q->send(pkts, n, events, error);
}

extern "C" bool
afxdp_queue_sends_in_place(const struct afxdp_queue *q) noexcept
{
    return q->sends_in_place();
}

extern "C" int
afxdp_queue_fd(const struct afxdp_queue *q) noexcept
{
    return q->fd();
}

extern "C" struct afxdp_pool *
afxdp_queue_pool(struct afxdp_queue *q) noexcept
{
    return q->pool();
}

extern "C" void *
afxdp_pool_frame_meta(struct afxdp_pool *pool, uint32_t index) noexcept
{
    return pool->meta(index);
}

extern "C" void
afxdp_rx_gather(struct afxdp_pool *pool, const struct afxdp_rx_frame *head,
                void *dst) noexcept
{
    pool->gather(head, static_cast<uint8_t *>(dst));
}

extern "C" void
afxdp_pool_put(struct afxdp_pool *pool, const void *data) noexcept
{
    pool->put_from_app(&data, 1);
}

extern "C" void
afxdp_pool_put_n(struct afxdp_pool *pool, const void *const *data,
                 size_t n) noexcept
{
    pool->put_from_app(data, n);
}

extern "C" void
afxdp_queue_kick_owed(struct afxdp_queue *q) noexcept
{
    q->kick_if_owed();
}

extern "C" void
afxdp_queue_get_stats(const struct afxdp_queue *q,
                      struct afxdp_queue_stats *stats) noexcept
{
    *stats = q->stats();
}

extern "C" int
afxdp_queue_get_xdp_stats(const struct afxdp_queue *q,
                          struct afxdp_xdp_stats *stats) noexcept
{
    return -q->xdp_stats(stats);
}

extern "C" void
afxdp_queue_get_frames(struct afxdp_queue *q,
                       struct afxdp_frame_counts *counts) noexcept
{
    q->frame_counts(counts);
}

extern "C" void
afxdp_queue_get_wakeup_flags(struct afxdp_queue *q, bool *fill,
                             bool *tx) noexcept
{
    q->wakeup_flags(fill, tx);
}

extern "C" unsigned
afxdp_retired_pools(void) noexcept
{
    return afxdp_pool::retired_count();
}
