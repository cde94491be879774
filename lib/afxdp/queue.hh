// One AF_XDP queue: a UMEM with its fill and completion rings, a socket
// with its RX and TX rings, the frames, and the counters that say what
// happened.  This is struct afxdp_queue.
//
// The hot path is split the way DPDK's af_xdp driver does it: recv() =
// refill + burst + wakeup (queue_rx.cc); send() = reap + bursts + kick
// (queue_tx.cc).  Opening and closing are in queue.cc, what the queue
// tells about itself in queue_stats.cc, the kicks a thread defers in
// kick.cc.
#ifndef AFXDP_QUEUE_HH
#define AFXDP_QUEUE_HH

#include <atomic>
#include <cstdint>
#include <memory>

#include "afxdp.h"
#include "compat.hh"
#include "frames.hh"
#include "kick.hh"
#include "l4csum.hh"
#include "marks.hh"
#include "ring.hh"
#include "result.hh"

namespace afxdp {

struct QueueConfig {
    const char *ifname;
    unsigned qid;
    uint16_t bind_flags;      // XDP_COPY or XDP_ZEROCOPY.
    bool zero_copy_mode;      // TX completes asynchronously.
    bool use_need_wakeup;     // Ask for XDP_USE_NEED_WAKEUP.
    bool multi_buffer;        // Ask for XDP_USE_SG: packets may span
                              // several frames.
    unsigned mtu_needs_multi_buffer;  // Nonzero: the interface's MTU,
                                      // too large for one frame: without
                                      // XDP_USE_SG the queue fails.
    bool in_place_copy_mode;  // Send shared frames in place in copy mode.
    bool coalesce_kicks;      // Let a kick wait for the next burst (copy
                              // mode; see TxKicker).
    bool busy_polled;         // RX polled in a busy loop: what it receives
                              // may be sent with a deferred kick.
    std::shared_ptr<const FlowMarks> marks;  // The fast path's, whose
                              // wire marks become OVS's (marks.hh); none:
                              // a mark in front of a packet is not taken.
    bool rx_meta;             // Our program puts an RxMeta (hints.hh) in
                              // front of each packet.
    bool csum_finish;         // Finish TCP and UDP checksums a sender on
                              // this host left partial (l4csum.hh).
    unsigned gso_mtu;         // Nonzero: cut a TCP packet longer than
                              // this MTU admits (a local sender's GSO
                              // packet, which generic XDP passes whole)
                              // into segments (l4csum.hh's TcpCut).
    unsigned ring_size;
    afxdp_pool *pool;         // The frames, possibly shared with queues of
                              // other devices; registered as this socket's
                              // own UMEM.
    bool memlock_charged;     // No CAP_IPC_LOCK: RLIMIT_MEMLOCK applies.
};

// Why a queue could not be opened: one value, from the step that failed
// to the device that decides what to try next.
// 'why' is for the log: the step, and the kernel's answer.
struct QueueFailure : Failure {
    QueueFailure() = default;
    QueueFailure(const Failure &f) : Failure(f) {}   // NOLINT: implicit.

    bool at_umem = false;     // Registering the pool's memory as this
                              // socket's UMEM is what failed (a kernel may
                              // refuse memory another socket registered).
};

// libxdp's handles, deleted in the order the kernel needs.
struct XskUmemDeleter {
    void operator()(xsk_umem *u) const noexcept { xsk_umem__delete(u); }
};
struct XskSocketDeleter {
    void operator()(xsk_socket *s) const noexcept { xsk_socket__delete(s); }
};

}  // namespace afxdp

struct afxdp_queue {
public:
    // Creates the UMEM and the socket and fills the fill ring.  When the
    // kernel refuses XDP_USE_SG (before 6.6, or a zero-copy driver without
    // it) or XDP_USE_NEED_WAKEUP (before 5.4), binds again without it and
    // says so in multi_buffer_reason() or need_wakeup_reason().
    static afxdp::Result<std::unique_ptr<afxdp_queue>, afxdp::QueueFailure>
    create(const afxdp::QueueConfig &) noexcept;
    ~afxdp_queue();
    afxdp_queue(const afxdp_queue &) = delete;
    afxdp_queue &operator=(const afxdp_queue &) = delete;

    size_t recv(afxdp_rx_frame *out, size_t max, int *qfill,
                unsigned *events, int *error) noexcept;
    size_t send(const afxdp_tx_packet *pkts, size_t n, unsigned *events,
                int *error) noexcept;

    int fd() const noexcept;
    afxdp_pool *pool() const noexcept { return pool_; }
    bool need_wakeup_in_use() const noexcept { return need_wakeup_; }
    bool multi_buffer_in_use() const noexcept { return multi_buffer_; }
    // Why multi-buffer is not in use although asked; "" otherwise.
    const char *multi_buffer_reason() const noexcept { return mb_reason_; }
    bool sends_in_place() const noexcept { return in_place_; }
    bool coalesces_kicks() const noexcept { return kicker_ != nullptr; }
    // Why kicks are not coalesced although asked; "" if they are or were
    // not asked.
    const char *coalesce_reason() const noexcept { return coalesce_reason_; }
    // From any thread: pays a kick some thread still owes (the backstop
    // for a thread that stopped polling the RX queue it deferred on).
    void kick_if_owed() noexcept;
    const char *need_wakeup_reason() const noexcept { return nw_reason_; }
    bool zero_copy_confirmed() const noexcept;
    afxdp_queue_stats stats() const noexcept;
    int xdp_stats(afxdp_xdp_stats *) const noexcept;   // 0 or -errno.
    void frame_counts(afxdp_frame_counts *) noexcept;
    void wakeup_flags(bool *fill, bool *tx) const noexcept;

private:
    afxdp_queue() = default;

    // Setup (queue.cc).
    int bind_socket(const afxdp::QueueConfig &, uint16_t bind_flags,
                    afxdp::QueueFailure *) noexcept;
    int bind_with_retries(const afxdp::QueueConfig &,
                          afxdp::QueueFailure *) noexcept;
    int bind_waiting(const afxdp::QueueConfig &, uint16_t bind_flags,
                     afxdp::QueueFailure *) noexcept;
    void setup_coalescing(const afxdp::QueueConfig &) noexcept;

    // Receive side (queue_rx.cc).
    void refill(unsigned *events) noexcept;
    // Hands on the hints our program left in front of the 'n' entries.
    void read_meta(afxdp_rx_frame *, uint32_t n) noexcept;
    void finish_csums(afxdp_rx_frame *, uint32_t n) noexcept;
    void hand_over(afxdp_rx_frame *, uint32_t n) noexcept;
    void rx_wakeup_if_needed(unsigned *events, int *error) noexcept;
    uint32_t whole_packets(uint32_t *first, uint32_t n, uint32_t max)
        noexcept;
    uint32_t drop_rx_frames(uint32_t first, uint32_t n) noexcept;
    bool take_oversize(afxdp_rx_frame *, uint32_t head, uint32_t end)
        noexcept;
    uint32_t emit_segments(afxdp_rx_frame *, uint32_t room) noexcept;
    size_t recv_segments(afxdp_rx_frame *, size_t max, int *qfill,
                         unsigned *events) noexcept;
    uint32_t read_burst(afxdp_rx_frame *, uint32_t first, uint32_t n,
                        uint32_t *taken) noexcept;

    // Send side (queue_tx.cc).  A burst goes through sort_burst() (in
    // place, to copy, or dropped), take_copy_frames(), reserve_burst()
    // (ring slots; the tail is dropped if the ring stays full) and
    // write_burst().
    struct Burst;
    size_t send_burst(const afxdp_tx_packet *pkts, uint32_t n,
                      unsigned *events, int *error) noexcept;
    bool send_multi_frame(const afxdp_tx_packet &, unsigned *events,
                          int *error) noexcept;
    uint32_t take_frames(uint32_t n, uint32_t *out, unsigned *events)
        noexcept;
    void untake_frames(const uint32_t *frames, uint32_t n) noexcept;
    void sort_burst(const afxdp_tx_packet *pkts, uint32_t n,
                    Burst *) noexcept;
    void take_copy_frames(Burst *, unsigned *events) noexcept;
    uint32_t reserve_burst(Burst *, uint32_t *first, unsigned *events,
                           int *error) noexcept;
    void write_burst(const afxdp_tx_packet *pkts, const Burst &,
                     uint32_t first) noexcept;
    uint32_t reserve_tx(uint32_t n, uint32_t *first, unsigned *events,
                        int *error) noexcept;
    void kick_tx(unsigned *events, int *error) noexcept;
    void kick_or_defer(unsigned *events, int *error) noexcept;
    void reap_completions(unsigned *events) noexcept;
    uint32_t take_kept(uint32_t n, uint32_t *out) noexcept;

    // The destructor closes the socket, then the UMEM, then takes back
    // from the pool the frames the kernel held for this queue.
    afxdp_pool *pool_ = nullptr;            // The device's reference.
    uint8_t slot_ = 0;                      // Our tag in the pool.
    // ring_size frame numbers each: one for the receive side (refill), one
    // for the send side (reaping completions), which OVS runs on two
    // threads at once.
    std::unique_ptr<uint32_t[]> rx_scratch_;
    std::unique_ptr<uint32_t[]> tx_scratch_;
    // Frames the completion ring gave back, kept (LIFO) for the next
    // copies this queue sends, so that a burst usually takes its frames
    // from here and not from the pool, which other queues and threads
    // lock.  Send side only.  They stay tagged with slot_: closing the
    // queue gives them back with the frames of its rings.
    std::unique_ptr<uint32_t[]> kept_;
    uint32_t kept_max_ = 0;
    std::atomic<uint32_t> n_kept_{0};    // Stored by the send side, read
                                         // by frame_counts().
    xsk_ring_prod lib_fill_{};              // libxdp's ring handles, which
    xsk_ring_cons lib_comp_{};              // it keeps pointers to while
    xsk_ring_cons lib_rx_{};                // the socket is being created.
    xsk_ring_prod lib_tx_{};
    std::unique_ptr<xsk_umem, afxdp::XskUmemDeleter> umem_;
    std::unique_ptr<xsk_socket, afxdp::XskSocketDeleter> xsk_;

    afxdp::FillRing fill_;
    afxdp::CompletionRing comp_;
    afxdp::RxRing rx_;
    afxdp::TxRing tx_;

    bool need_wakeup_ = false;       // XDP_USE_NEED_WAKEUP bound.
    bool multi_buffer_ = false;      // XDP_USE_SG bound.
    bool rx_dropping_ = false;       // The RX ring's next frames continue
                                     // a packet being dropped.
    char mb_reason_[96] = "";        // Why multi-buffer is off, if asked.
    bool zero_copy_mode_ = false;    // Mode asked for zero-copy.
    bool in_place_ = false;          // Frames of pool_ are sent in place.
    char nw_reason_[96] = "";        // Why need_wakeup is off, if asked.
    afxdp::TxKicker *kicker_ = nullptr;  // Our reference; null: kicks are
                                         // not coalesced.
    char coalesce_reason_[96] = "";  // Why not, if asked.
    bool filled_ = false;            // The fill ring was filled once.
    bool busy_polled_ = false;       // QueueConfig::busy_polled.
    bool rx_meta_ = false;           // QueueConfig::rx_meta.
    bool csum_finish_ = false;       // QueueConfig::csum_finish.
    // TCP segmentation on receive: the packet being cut, copied out of
    // its frames, and the next segment to hand out (seg_cut_.n: none).
    // The longest packet cut: 64 KiB of IP (Linux's GSO limit, but for
    // BIG TCP) and its Ethernet header with two tags.
    static constexpr size_t kSegBufSize = 65536 + 22;
    unsigned gso_mtu_ = 0;           // QueueConfig::gso_mtu.
    std::unique_ptr<uint8_t[]> seg_buf_;
    afxdp::TcpCut seg_cut_{};
    size_t seg_next_ = 0;
    std::shared_ptr<const afxdp::FlowMarks> marks_;  // QueueConfig::marks.
    uint32_t in_kernel_rx_ = 0;      // Frames in the fill or RX ring.
    uint32_t in_kernel_tx_ = 0;      // Frames in the TX or completion ring.
    afxdp_queue_stats stats_{};
};

#endif  // AFXDP_QUEUE_HH
