// The marks a port's fast path writes in front of a packet for OVS
// (partial offload), and the one place they become OVS's marks again.
//
// OVS 3.1 to 3.6 give a flow mark freed by one flow to the next flow at
// once, and look a mark up among every port's flows.  A packet that waits
// in an RX ring with the mark of a flow just deleted would then be run
// with another flow's actions.  So the program never writes OVS's mark: it
// writes a wire mark, the flow's counter slot and that slot's generation,
// and the socket hands OVS the flow's mark only while the wire mark is
// still that flow's, in this port's own table.  Anything else arrives
// unmarked (OVS then looks the packet up in full, which is always right)
// and counts as rx_flow_marks_stale.
//
// A wire mark comes back only after its slot was given 2^18 times; freed
// slots queue behind every other (FlowTable), so that is millions of flow
// changes, where a packet waits in a ring for milliseconds.
#ifndef AFXDP_MARKS_HH
#define AFXDP_MARKS_HH

#include <atomic>
#include <cstdint>
#include <memory>

namespace afxdp {

class FlowMarks {
public:
    static constexpr unsigned kSlotBits = 14;         // FlowTable::kMaxFlows.
    static constexpr unsigned kGenerationBits = 18;
    static constexpr uint32_t kSlots = 1u << kSlotBits;

    FlowMarks();

    // The flow in counter slot 'slot' has OVS's mark 'mark': the wire mark
    // the program is to write for it.  The same flow put again with the
    // same mark keeps its wire mark (its packets in flight are its own);
    // a new flow, or a new mark, takes the slot's next generation.
    uint32_t give(uint32_t slot, uint32_t mark) noexcept;
    // The flow in 'slot' left: its wire mark is stale from now on.
    void take(uint32_t slot) noexcept;
    // Every flow left.
    void take_all() noexcept;
    // OVS's mark for wire mark 'wire', if its flow is still there.  Called
    // from PMD threads while give() and take() run on another.
    bool find(uint32_t wire, uint32_t *mark) const noexcept;

private:
    // Per slot: bit 63 in use, the generation above bit 32, OVS's mark
    // below.
    static constexpr uint64_t kInUse = uint64_t(1) << 63;
    std::unique_ptr<std::atomic<uint64_t>[]> slots_;
};

}  // namespace afxdp

#endif  // AFXDP_MARKS_HH
