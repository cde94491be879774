// The flows of one port as the XDP program's maps hold them (flow.hh's
// FlowTable), and the key's masking and hash.
#include "flow.hh"

#include <cerrno>
#include <cstring>

namespace afxdp {

afxdp_flow_key
masked(const afxdp_flow_key &key, const afxdp_flow_key &mask)
{
    afxdp_flow_key out;
    const auto *k = reinterpret_cast<const uint8_t *>(&key);
    const auto *m = reinterpret_cast<const uint8_t *>(&mask);
    auto *o = reinterpret_cast<uint8_t *>(&out);
    for (size_t i = 0; i < sizeof out; i++) {
        o[i] = k[i] & m[i];
    }
    return out;
}

bool
key_equal(const afxdp_flow_key &a, const afxdp_flow_key &b)
{
    return !std::memcmp(&a, &b, sizeof a);
}

uint64_t
fp_key_hash(const afxdp_flow_key &key)
{
    static_assert(sizeof key % 8 == 0, "the key is hashed in 64-bit words");
    return afxdp_fp_key_hash(&key);
}

int
FlowTable::slot_of(const afxdp_flow_key &mask) const
{
    for (size_t i = 0; i < kMaxMasks; i++) {
        if (mask_refs_[i] && key_equal(masks_[i], mask)) {
            return int(i);
        }
    }
    return -1;
}

int
FlowTable::put(const Ufid &ufid, const XdpFlow &flow)
{
    // The program's flow map has one entry per mask and masked key's
    // hash: another flow there refuses this one.
    const uint64_t hash = fp_key_hash(flow.key);
    int slot = slot_of(flow.mask);
    if (slot >= 0) {
        auto same = by_key_.find({uint32_t(slot), hash});
        if (same != by_key_.end() && same->second != ufid) {
            return -EEXIST;
        }
    }
    auto old = flows_.find(ufid);
    if (old == flows_.end() && flows_.size() >= kMaxFlows) {
        return -ENOSPC;
    }
    if (slot < 0) {
        // The lowest free slot; or the one a replaced flow was the last
        // to use, which is free once it goes.
        for (size_t i = 0; i < kMaxMasks && slot < 0; i++) {
            if (!mask_refs_[i]) {
                slot = int(i);
            }
        }
        if (slot < 0 && old != flows_.end()
            && mask_refs_[old->second.mask_slot] == 1) {
            slot = int(old->second.mask_slot);
        }
        if (slot < 0) {
            return -ENOSPC;
        }
    }
    // A counter slot freed last is the one a packet still in flight on
    // another CPU may yet count in: take never-used ones first, then the
    // one freed longest ago.
    uint32_t stats;
    if (old != flows_.end()) {
        stats = old->second.stats_slot;
        mask_refs_[old->second.mask_slot]--;
        by_key_.erase({old->second.mask_slot,
                       fp_key_hash(old->second.flow.key)});
    } else if (next_stats_ < kMaxFlows) {
        stats = next_stats_++;
    } else {
        stats = free_stats_.front();
        free_stats_.pop_front();
    }
    masks_[slot] = flow.mask;
    mask_refs_[slot]++;
    flows_[ufid] = Entry{flow, uint32_t(slot), stats};
    by_key_[{uint32_t(slot), hash}] = ufid;
    return 0;
}

int
FlowTable::del(const Ufid &ufid)
{
    auto it = flows_.find(ufid);
    if (it == flows_.end()) {
        return -ENOENT;
    }
    mask_refs_[it->second.mask_slot]--;
    by_key_.erase({it->second.mask_slot, fp_key_hash(it->second.flow.key)});
    free_stats_.push_back(it->second.stats_slot);
    flows_.erase(it);
    return 0;
}

const FlowTable::Entry *
FlowTable::entry(const Ufid &ufid) const
{
    auto it = flows_.find(ufid);
    return it == flows_.end() ? nullptr : &it->second;
}

const XdpFlow *
FlowTable::find(const Ufid &ufid) const
{
    const Entry *e = entry(ufid);
    return e ? &e->flow : nullptr;
}

size_t
FlowTable::n_masks() const
{
    size_t n = 0;
    for (size_t refs : mask_refs_) {
        n += refs != 0;
    }
    return n;
}

uint32_t
FlowTable::mask_slots() const
{
    uint32_t n = 0;
    for (size_t i = 0; i < kMaxMasks; i++) {
        if (mask_refs_[i]) {
            n = uint32_t(i + 1);
        }
    }
    return n;
}

const afxdp_flow_key *
FlowTable::mask_at(uint32_t slot) const
{
    return slot < kMaxMasks && mask_refs_[slot] ? &masks_[slot] : nullptr;
}

const XdpFlow *
FlowTable::lookup(const afxdp_flow_key &packet) const
{
    const uint32_t n = mask_slots();
    for (uint32_t slot = 0; slot < n; slot++) {
        if (!mask_refs_[slot]) {
            continue;
        }
        afxdp_flow_key k = masked(packet, masks_[slot]);
        auto it = by_key_.find({slot, fp_key_hash(k)});
        if (it != by_key_.end()) {
            const XdpFlow &f = flows_.at(it->second).flow;
            if (key_equal(f.key, k)) {
                return &f;
            }
        }
    }
    return nullptr;
}

}  // namespace afxdp
