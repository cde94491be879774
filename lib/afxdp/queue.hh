// One AF_XDP queue: a UMEM with its fill and completion rings, a socket
// with its RX and TX rings, the frames, and the counters that say what
// happened.  This is struct afxdp_queue.
//
// The hot path is split the way DPDK's af_xdp driver does it: recv() =
// refill + burst + wakeup; send() = reap + copy burst + kick.
#ifndef AFXDP_QUEUE_HH
#define AFXDP_QUEUE_HH

#include <cstdint>
#include <memory>

#include "afxdp.h"
#include "compat.hh"
#include "frames.hh"
#include "ring.hh"
#include "result.hh"

namespace afxdp {

struct QueueConfig {
    const char *ifname;
    unsigned qid;
    uint16_t bind_flags;      // XDP_COPY or XDP_ZEROCOPY.
    bool zero_copy_mode;      // TX completes asynchronously.
    bool use_need_wakeup;     // Ask for XDP_USE_NEED_WAKEUP.
    bool in_place_copy_mode;  // Send shared frames in place in copy mode.
    unsigned ring_size;
    afxdp_pool *pool;         // The frames, possibly shared with queues of
                              // other devices; registered as this socket's
                              // own UMEM.
    bool memlock_charged;     // No CAP_IPC_LOCK: RLIMIT_MEMLOCK applies.
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
    // kernel refuses XDP_USE_NEED_WAKEUP (EINVAL, as kernels before 5.4
    // do), binds again without it and says so in 'nw_reason'.
    // '*umem_failed' (if not NULL) tells whether registering the pool's
    // memory as a UMEM is what failed.
    static afxdp::Result<std::unique_ptr<afxdp_queue>> create(
        const afxdp::QueueConfig &, char *why, size_t whylen,
        bool *umem_failed = nullptr) noexcept;
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
    bool sends_in_place() const noexcept { return in_place_; }
    const char *need_wakeup_reason() const noexcept { return nw_reason_; }
    bool zero_copy_confirmed() const noexcept;
    const afxdp_queue_stats &stats() const noexcept { return stats_; }
    int xdp_stats(afxdp_xdp_stats *) const noexcept;
    void frame_counts(afxdp_frame_counts *) noexcept;
    void wakeup_flags(bool *fill, bool *tx) const noexcept;

private:
    afxdp_queue() = default;

    void refill(unsigned *events) noexcept;
    void rx_wakeup_if_needed(unsigned *events, int *error) noexcept;
    uint32_t reserve_tx(uint32_t n, uint32_t *first, unsigned *events,
                        int *error) noexcept;
    size_t send_burst(const afxdp_tx_packet *pkts, uint32_t n,
                      unsigned *events, int *error) noexcept;
    void kick_tx(unsigned *events, int *error) noexcept;
    void reap_completions(unsigned *events) noexcept;

    // The destructor closes the socket, then the UMEM, then takes back
    // from the pool the frames the kernel held for this queue.
    afxdp_pool *pool_ = nullptr;            // The device's reference.
    uint8_t slot_ = 0;                      // Our tag in the pool.
    std::unique_ptr<uint32_t[]> scratch_;   // ring_size frame numbers.
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
    bool zero_copy_mode_ = false;    // Mode asked for zero-copy.
    bool in_place_ = false;          // Frames of pool_ are sent in place.
    char nw_reason_[96] = "";        // Why need_wakeup is off, if asked.
    bool filled_ = false;            // The fill ring was filled once.
    uint32_t in_kernel_rx_ = 0;      // Frames in the fill or RX ring.
    uint32_t in_kernel_tx_ = 0;      // Frames in the TX or completion ring.
    afxdp_queue_stats stats_{};
};

#endif  // AFXDP_QUEUE_HH
