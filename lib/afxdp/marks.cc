#include "marks.hh"

namespace afxdp {

namespace {

constexpr uint32_t kGenerationMask = (1u << FlowMarks::kGenerationBits) - 1;

uint32_t
generation_of(uint64_t v)
{
    return uint32_t(v >> 32) & kGenerationMask;
}

}  // namespace

FlowMarks::FlowMarks() : slots_(new std::atomic<uint64_t>[kSlots])
{
    for (uint32_t i = 0; i < kSlots; i++) {
        slots_[i].store(0, std::memory_order_relaxed);
    }
}

uint32_t
FlowMarks::give(uint32_t slot, uint32_t mark) noexcept
{
    slot &= kSlots - 1;
    uint64_t v = slots_[slot].load(std::memory_order_relaxed);
    uint32_t gen = generation_of(v);
    if (!(v & kInUse) || uint32_t(v) != mark) {
        gen = (gen + 1) & kGenerationMask;
        // Release: a PMD that finds the new generation finds its mark.
        slots_[slot].store(kInUse | uint64_t(gen) << 32 | mark,
                           std::memory_order_release);
    }
    return gen << kSlotBits | slot;
}

void
FlowMarks::take(uint32_t slot) noexcept
{
    slot &= kSlots - 1;
    // The generation stays, so that the slot's next flow gets a new one.
    slots_[slot].fetch_and(~kInUse, std::memory_order_release);
}

void
FlowMarks::take_all() noexcept
{
    for (uint32_t i = 0; i < kSlots; i++) {
        take(i);
    }
}

bool
FlowMarks::find(uint32_t wire, uint32_t *mark) const noexcept
{
    uint64_t v = slots_[wire & (kSlots - 1)].load(std::memory_order_acquire);
    if (!(v & kInUse) || generation_of(v) != wire >> kSlotBits) {
        return false;
    }
    *mark = uint32_t(v);
    return true;
}

}  // namespace afxdp
