// An offloaded megaflow's counts as OVS reads them (afxdp-offload.h's
// afxdp_flow_counts): each packet XDP executed told to OVS once.
//
// OVS adds what a copy is told to that copy's own count, and its readers
// (revalidators, dpctl) take a copy's figure as a running total.  So what
// each copy is told must only grow, and the figures of all copies, each
// as last told, must add up to XDP's count: the copy that asks is told
// its last figure plus whatever XDP counted since any copy was told.  The
// sum told then equals XDP's count after each read, and never exceeds it.
#include "afxdp-offload.h"

#include <algorithm>

namespace {

uint64_t
total_packets(const afxdp_flow_counts &c)
{
    return c.ended.n_packets + c.running.n_packets;
}

uint64_t
total_bytes(const afxdp_flow_counts &c)
{
    return c.ended.n_bytes + c.running.n_bytes;
}

}  // namespace

extern "C" {

void
afxdp_flow_counts_end(afxdp_flow_counts *c) noexcept
{
    c->ended.n_packets += c->running.n_packets;
    c->ended.n_bytes += c->running.n_bytes;
    c->ended.used_msec = std::max(c->ended.used_msec, c->running.used_msec);
    c->ended.tcp_flags |= c->running.tcp_flags;
    c->running = {};
}

void
afxdp_flow_counts_read(afxdp_flow_counts *c, const afxdp_flow_stats *now)
    noexcept
{
    // A count that went back is a new one (the flow left the maps and
    // came back): the old one ended as last read.
    if (now->n_packets < c->running.n_packets
        || now->n_bytes < c->running.n_bytes) {
        afxdp_flow_counts_end(c);
    }
    c->running = *now;
}

void
afxdp_flow_counts_tell(afxdp_flow_counts *c, bool is_copy,
                       afxdp_flow_stats *told) noexcept
{
    if (is_copy) {
        // What no copy was told yet.
        uint64_t packets = total_packets(*c), bytes = total_bytes(*c);
        if (packets > c->told_packets) {
            told->n_packets += packets - c->told_packets;
            c->told_packets = packets;
        }
        if (bytes > c->told_bytes) {
            told->n_bytes += bytes - c->told_bytes;
            c->told_bytes = bytes;
        }
    }
    told->used_msec = std::max(c->ended.used_msec, c->running.used_msec);
    told->tcp_flags = c->ended.tcp_flags | c->running.tcp_flags;
}

void
afxdp_flow_counts_untold(const afxdp_flow_counts *c, uint64_t *packets,
                         uint64_t *bytes) noexcept
{
    uint64_t p = total_packets(*c), b = total_bytes(*c);
    *packets = p > c->told_packets ? p - c->told_packets : 0;
    *bytes = b > c->told_bytes ? b - c->told_bytes : 0;
}

}  // extern "C"
