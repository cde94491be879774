/*
 * ovs-afxdp core: the C API.
 *
 * This is all the OVS shim (lib/netdev-afxdp.c) sees of the C++ core.  It
 * includes no OVS header and OVS includes no C++.
 *
 * Conventions, as in OVS's netdev-provider.h:
 *   - Functions that can fail return 0 or a positive errno value.  Nothing
 *     here throws; every entry point is noexcept.
 *   - Destroy functions accept NULL.
 *   - Hot-path functions (afxdp_queue_recv, afxdp_queue_send, afxdp_pool_put*)
 *     never allocate, never block and never log above debug level except
 *     rate-limited by the caller; they report rare events in an 'events'
 *     bitmask so the caller can count them (OVS: COVERAGE_INC).
 *   - A queue has a receive side and a send side.  Each is used by one
 *     thread at a time (the caller serializes its recvs, and its sends),
 *     but a recv and a send on the same queue may run at once on two
 *     threads (OVS: one PMD polls the rxq while others send on the txq
 *     under its tx lock).  Pool puts may come from any thread.
 */
#ifndef AFXDP_H
#define AFXDP_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define AFXDP_NOEXCEPT noexcept
extern "C" {
#else
#define AFXDP_NOEXCEPT
#endif

/* Limits and defaults. */
#define AFXDP_MAX_QUEUES 16          /* Largest n_rxq accepted. */
#define AFXDP_FRAME_SIZE 4096        /* Bytes per UMEM frame. */
#define AFXDP_FRAME_HEADROOM 128     /* UMEM headroom before packet data. */
#define AFXDP_XDP_HEADROOM 256       /* XDP_PACKET_HEADROOM, kernel's own. */
#define AFXDP_DEFAULT_RING_SIZE 2048 /* Slots in each of the four rings. */
#define AFXDP_DEFAULT_FRAMES 4096    /* UMEM frames per queue (16 MiB). */
#define AFXDP_MIN_RING_SIZE 64       /* Smallest ring_size accepted. */
#define AFXDP_MAX_RING_SIZE 16384    /* Largest ring_size accepted. */
#define AFXDP_MAX_FRAMES 262144      /* Largest umem_frames (1 GiB). */
#define AFXDP_COALESCED_BURSTS 4     /* Bursts of 32 one coalesced TX kick
                                      * may carry. */
/* The largest MTU a port takes: a packet in one frame (after the headroom
 * and a VLAN Ethernet header), or, with multi-buffer AF_XDP in use
 * (Linux 6.6), a jumbo frame in several. */
#define AFXDP_MAX_MTU_ONE_FRAME (AFXDP_FRAME_SIZE - AFXDP_FRAME_HEADROOM \
                                 - AFXDP_XDP_HEADROOM - 18)
#define AFXDP_MAX_MTU_MULTI_BUFFER 9216
/* With multi-buffer, the longest packet sent (in 16 frames): an interface
 * whose MTU was set higher outside OVS (lo: 65536) carries packets up to
 * this long. */
#define AFXDP_MAX_MULTI_BUFFER_PACKET 65536

/* ------------------------------------------------------------------ */
/* Logging.                                                           */
/* ------------------------------------------------------------------ */

enum afxdp_log_level {
    AFXDP_LOG_DBG,
    AFXDP_LOG_INFO,
    AFXDP_LOG_WARN,
    AFXDP_LOG_ERR,
};

/* Receives each message the core logs at 'min' or above; NULL restores
 * the default (stderr).  Also routes libbpf's and libxdp's messages, with
 * their levels mapped to what they mean for a running port. */
typedef void afxdp_log_fn(enum afxdp_log_level, const char *msg);
void afxdp_set_log_handler(afxdp_log_fn *, enum afxdp_log_level min)
    AFXDP_NOEXCEPT;

/* ------------------------------------------------------------------ */
/* Options.                                                           */
/* ------------------------------------------------------------------ */

/* XDP modes, in the order best-effort tries them.  C++ sees the type C
 * compilers give it, so that any value a C caller passes is valid there. */
enum afxdp_xdp_mode
#ifdef __cplusplus
    : unsigned int
#endif
{
    AFXDP_MODE_BEST_EFFORT,   /* Try native-with-zerocopy, native, generic. */
    AFXDP_MODE_NATIVE_ZC,     /* Driver XDP, zero-copy UMEM. */
    AFXDP_MODE_NATIVE,        /* Driver XDP, frames copied by the kernel. */
    AFXDP_MODE_GENERIC,       /* SKB-based XDP, works on any device. */
    AFXDP_MODE_N
};

/* "best-effort", "native-with-zerocopy", "native" or "generic". */
const char *afxdp_mode_name(enum afxdp_xdp_mode) AFXDP_NOEXCEPT;

/* Each parser returns 0 and stores the value, or EINVAL and writes a
 * sentence for the operator into 'err' (naming the accepted values). */
int afxdp_parse_mode(const char *s, enum afxdp_xdp_mode *mode,
                     char *err, size_t errlen) AFXDP_NOEXCEPT;
int afxdp_parse_bool(const char *s, bool *value,
                     char *err, size_t errlen) AFXDP_NOEXCEPT;
int afxdp_parse_uint(const char *s, unsigned min, unsigned max,
                     unsigned *value, char *err, size_t errlen)
    AFXDP_NOEXCEPT;
/* A ring size: a power of two from AFXDP_MIN_RING_SIZE to
 * AFXDP_MAX_RING_SIZE. */
int afxdp_parse_ring_size(const char *s, unsigned *value,
                          char *err, size_t errlen) AFXDP_NOEXCEPT;

/* The number of RX queues the kernel device 'ifname' has now, or 0 if
 * that cannot be told (no such device, no sysfs). */
unsigned afxdp_device_rx_queues(const char *ifname) AFXDP_NOEXCEPT;

/* The largest MTU an afxdp port may have on this kernel:
 * AFXDP_MAX_MTU_MULTI_BUFFER where it knows multi-buffer AF_XDP, else
 * AFXDP_MAX_MTU_ONE_FRAME, and then '*why' (unless 'why' is NULL) says
 * why.  Asks the kernel once.  A port whose interface has an MTU above
 * AFXDP_MAX_MTU_ONE_FRAME opens only in a mode where multi-buffer works
 * (see afxdp_dev_open()). */
unsigned afxdp_max_mtu(const char **why) AFXDP_NOEXCEPT;

/* True if this build knows XDP_USE_NEED_WAKEUP. */
bool afxdp_need_wakeup_supported(void) AFXDP_NOEXCEPT;

/* ------------------------------------------------------------------ */
/* A port's configuration: the whole option policy, in one place.     */
/* ------------------------------------------------------------------ */

/* options:shared_umem. */
enum afxdp_sharing
#ifdef __cplusplus
    : unsigned int
#endif
{
    AFXDP_SHARE_AUTO,        /* Share; send in place only from zero-copy
                              * sockets, copy in copy modes. */
    AFXDP_SHARE_IN_PLACE,    /* Share; send in place in every mode. */
    AFXDP_SHARE_OFF,         /* A UMEM of the port's own; always copy. */
};

/* Everything a port's options decide, each with its value in force: the
 * defaults are filled in, nothing is left "unset". */
struct afxdp_port_config {
    unsigned n_queues;             /* options:n_rxq; 1..AFXDP_MAX_QUEUES. */
    enum afxdp_xdp_mode mode;      /* options:xdp-mode. */
    bool use_need_wakeup;          /* options:use_need_wakeup (or
                                    * use-need-wakeup). */
    unsigned ring_size;            /* options:ring_size; a power of two. */
    unsigned n_frames;             /* options:umem_frames, per queue; at
                                    * least twice ring_size. */
    enum afxdp_sharing sharing;    /* options:shared_umem. */
    bool coalesce_tx_kicks;        /* options:coalesce_tx_kicks. */
    bool rx_hints;                 /* options:rx_hints: in native mode, ask
                                    * the driver for the packet's RSS hash
                                    * and the VLAN tag it stripped, where
                                    * kernel and driver give them. */
    bool fast_path;                /* options:xdp_fast_path: with flow
                                    * offload on (afxdp_dev_config.offload),
                                    * run the XDP fast path on this port.
                                    * False opts the port out. */
};

/* The configuration of a port that sets no option. */
void afxdp_port_config_default(struct afxdp_port_config *) AFXDP_NOEXCEPT;

/* The value of the port's option 'key', or NULL if it is not set (OVS: an
 * smap_get() on the interface's options). */
typedef const char *afxdp_option_lookup(const void *aux, const char *key);

/* Builds '*cfg' from the options of interface 'ifname' that 'lookup'
 * finds (with 'aux'): each option's spellings, default and range, and the
 * rules between options (umem_frames at least twice ring_size; n_rxq at
 * most the queues the device has now).  Returns 0, or EINVAL with a
 * sentence for the operator in 'err' that names the interface, the option
 * and the accepted values; '*cfg' is then unchanged. */
int afxdp_port_config_parse(const char *ifname, afxdp_option_lookup *lookup,
                            const void *aux, struct afxdp_port_config *cfg,
                            char *err, size_t errlen) AFXDP_NOEXCEPT;

/* The rules between values, for a configuration built by other means:
 * returns 0, or EINVAL with a sentence in 'err' naming 'ifname'. */
int afxdp_port_config_check(const char *ifname,
                            const struct afxdp_port_config *,
                            char *err, size_t errlen) AFXDP_NOEXCEPT;

/* True if a port running with 'a' must close and reopen its sockets to run
 * with 'b' (today: whenever they differ at all). */
bool afxdp_port_config_needs_reopen(const struct afxdp_port_config *a,
                                    const struct afxdp_port_config *b)
    AFXDP_NOEXCEPT;

/* ------------------------------------------------------------------ */
/* Devices and queues.                                                */
/* ------------------------------------------------------------------ */

struct afxdp_dev;     /* An interface: XDP program attachment + queues. */
struct afxdp_queue;   /* One queue: socket, UMEM, four rings, stats. */
struct afxdp_pool;    /* UMEM frames: of one device, or shared by
                       * several (afxdp_dev_config.share_umem). */

/* How to open a device: the port's configuration and what the embedder
 * adds.  In 'port':
 *   - n_queues sockets, queue 0 up;
 *   - sharing: other than AFXDP_SHARE_OFF, take frames from one UMEM
 *     shared with other devices of this process (same NUMA node), so that
 *     packets received on one can be sent on another in place, not
 *     copied.  In zero-copy mode a shared frame is always sent in place;
 *     in copy modes only with AFXDP_SHARE_IN_PLACE: the kernel copies the
 *     frame anyway, through its own 4 KiB mapping of the UMEM, and that
 *     copy costs more from a frame just received than from one of a few
 *     hot TX frames we copy into (measured on veth);
 *   - coalesce_tx_kicks: in copy modes, let a send that follows a receive
 *     on the same thread leave its TX kick to the next bursts, so that one
 *     sendto() carries up to AFXDP_COALESCED_BURSTS of them (see
 *     afxdp_queue_send()).  Needs Linux 6.17 (XDP_MAX_TX_SKB_BUDGET);
 *     ignored in zero-copy mode, where the driver drains the TX ring
 *     after one kick. */
struct afxdp_dev_config {
    const char *ifname;       /* Linux interface name. */
    struct afxdp_port_config port;   /* Checked again by afxdp_dev_open(). */
    int numa_node;            /* Where UMEM memory goes; -1: anywhere. */
    size_t frame_meta_size;   /* Caller's per-frame metadata bytes. */
    bool busy_polled;         /* A thread polls the RX queues in a loop
                               * that comes back within microseconds (OVS:
                               * a PMD thread), so a send of what it just
                               * received may leave its kick to its next
                               * poll.  False (OVS: afxdp-nonpmd, polled by
                               * the main thread, which may then sleep):
                               * sends that follow never defer. */
    /* Called once for each new pool, before any of its frames is handed
     * out, to prepare the caller's metadata of its 'n_frames' frames; may
     * be NULL. */
    void (*frame_meta_init)(struct afxdp_pool *, unsigned n_frames);
    bool offload;             /* Flow offload is on (OVS: other_config:
                               * hw-offload): with port.fast_path, our XDP
                               * program is the fast path's, which runs
                               * the flows put with afxdp_dev_flow_put(). */
};

/* Opens 'cfg->ifname': attaches our XDP program in the requested mode (or
 * the first that works, for best-effort), creates one socket per queue and
 * fills each fill ring.  On failure returns a positive errno, writes why
 * into 'err' and leaves the interface as it found it.  An interface is
 * open at most once per process (EBUSY).  May wait up to 200 ms for a
 * queue that a socket closed just before still holds. */
int afxdp_dev_open(const struct afxdp_dev_config *cfg, struct afxdp_dev **,
                   char *err, size_t errlen) AFXDP_NOEXCEPT;

/* Closes the sockets and detaches our XDP program.  The frames the
 * device's rings held go back to its pool.  Frames still held by the
 * caller stay valid: a pool no device uses any more is freed when its last
 * frame comes back through afxdp_pool_put*(). */
void afxdp_dev_close(struct afxdp_dev *) AFXDP_NOEXCEPT;

/* True while our XDP program is still the one attached to the device in
 * its mode: another process may detach or replace it at any time, and no
 * event says so.  One netlink query. */
bool afxdp_dev_prog_attached(const struct afxdp_dev *) AFXDP_NOEXCEPT;

/* Detaches an XDP program of ours from 'ifname', whatever attached it (a
 * crashed earlier process, or a fatal signal now).  Async-signal tolerant:
 * only system calls.  Returns 0, ENOENT if none of ours is attached. */
int afxdp_remove_stale_program(const char *ifname) AFXDP_NOEXCEPT;

struct afxdp_dev_info {
    enum afxdp_xdp_mode mode_in_use;     /* Never BEST_EFFORT once open. */
    bool zero_copy;                  /* Kernel confirms zero-copy. */
    bool need_wakeup_requested;      /* As configured. */
    bool need_wakeup_in_use;         /* As bound. */
    const char *need_wakeup_reason;  /* Why they differ; "" if they don't. */
    int ifindex;                     /* The interface as opened. */
    bool prog_attached;              /* Our program is still attached
                                      * (another process may remove or
                                      * replace it); asks the kernel. */
    unsigned n_queues;
    unsigned ring_size;
    unsigned n_frames;               /* Per queue, as configured. */
    uint32_t prog_id;                /* Our XDP program's id. */
    uint32_t umem_id;                /* The pool's number in this process:
                                      * devices with the same number share
                                      * their frames. */
    unsigned umem_frames;            /* Frames in that pool. */
    unsigned umem_devices;           /* Devices using it now. */
    const char *umem_share_reason;   /* Why sharing was requested and this
                                      * device has a pool of its own; "" if
                                      * not so. */
    bool coalesce_tx_kicks_requested;    /* As configured. */
    bool coalesce_tx_kicks_in_use;
    const char *coalesce_tx_kicks_reason;  /* Why they differ; "" if they
                                            * don't. */
    bool multi_buffer;               /* Packets may span several frames
                                      * (XDP_USE_SG bound, and our program
                                      * takes them). */
    const char *multi_buffer_reason; /* Why not, if not; "" if so. */
    unsigned max_mtu;                /* AFXDP_MAX_MTU_MULTI_BUFFER with
                                      * multi_buffer, else
                                      * AFXDP_MAX_MTU_ONE_FRAME. */
    bool rx_hash;                    /* Packets come with the driver's RSS
                                      * hash where it has one
                                      * (afxdp_rx_frame.has_rx_hash). */
    const char *rx_hash_reason;      /* Why not, if not; "" if so. */
    bool rx_vlan;                    /* A VLAN tag the driver stripped is
                                      * put back into the frame. */
    const char *rx_vlan_reason;      /* Why not, if not; "" if so. */
};
void afxdp_dev_get_info(const struct afxdp_dev *, struct afxdp_dev_info *)
    AFXDP_NOEXCEPT;

/* True if the device, as open, takes packets of an 'mtu' (false: reopen it
 * for that MTU, and the open chooses a mode with multi-buffer). */
bool afxdp_dev_takes_mtu(const struct afxdp_dev *, unsigned mtu)
    AFXDP_NOEXCEPT;

struct afxdp_queue *afxdp_dev_queue(struct afxdp_dev *, unsigned qid)
    AFXDP_NOEXCEPT;

/* A received frame handed to the caller.  The caller owns it until it calls
 * afxdp_pool_put*() with any address inside it. */
struct afxdp_rx_frame {
    void *data;         /* First byte of the packet. */
    uint32_t len;       /* Packet length. */
    uint32_t index;     /* Frame number in the pool. */
    void *meta;         /* The caller's metadata for this frame (see
                         * afxdp_pool_frame_meta()), already prefetched. */
    uint32_t n_frames;  /* 1: the packet is this frame.  More (multi-buffer
                         * only): the packet is this frame and the next
                         * n_frames - 1 entries, 'len' is the whole
                         * packet's length, and afxdp_rx_gather() copies it
                         * out.  0: a frame that continues the packet of an
                         * earlier entry ('len' is this frame's part). */
    bool has_rx_hash;   /* The packet has an RSS hash: the driver's (only
                         * with afxdp_dev_info.rx_hash) or, where the
                         * driver gave none, the fast path's own for every
                         * packet it parsed: */
    uint32_t rx_hash;   /* ...this one. */
    bool has_flow_mark; /* The fast path found the packet's megaflow and
                         * could not execute it (partial offload): */
    uint32_t flow_mark; /* ...the mark it was put with. */
};

/* Copies the packet of 'head' (an entry with n_frames > 1, followed by its
 * frames) to 'dst' (head->len bytes) and gives all its frames back to
 * 'pool'. */
void afxdp_rx_gather(struct afxdp_pool *pool,
                     const struct afxdp_rx_frame *head, void *dst)
    AFXDP_NOEXCEPT;

/* Bits of the 'events' out-parameters: rare things worth counting. */
enum {
    AFXDP_EV_RX_WAKEUP = 1 << 0,      /* poll() woke the kernel for RX. */
    AFXDP_EV_RX_WAKEUP_ERR = 1 << 1,  /* ...and failed; errno in *error. */
    AFXDP_EV_FILL_EMPTY = 1 << 2,     /* Fill ring found empty. */
    AFXDP_EV_FILL_SHORT = 1 << 3,     /* No free frame to refill with. */
    AFXDP_EV_TX_RING_FULL = 1 << 4,   /* TX ring had no room at first. */
    AFXDP_EV_TX_DROP = 1 << 5,        /* Packets dropped on TX. */
    AFXDP_EV_TX_KICK_ERR = 1 << 6,    /* sendto() failed; errno in *error. */
    AFXDP_EV_CQ_EMPTY = 1 << 7,       /* Completion ring had nothing. */
};

/* Receives up to 'max' frames, whole packets only (a packet of several
 * frames is there with all of them, or not yet).  Returns how many entries
 * (0: nothing now).  Refills the fill ring first, and when nothing arrived
 * and the kernel asked for it (need_wakeup) wakes it with poll(timeout 0).
 * '*qfill', unless 'qfill' is NULL, gets the frames still waiting in the
 * RX ring.  '*error' gets an errno when an EV_*_ERR event is set. */
size_t afxdp_queue_recv(struct afxdp_queue *, struct afxdp_rx_frame *,
                        size_t max, int *qfill, unsigned *events,
                        int *error) AFXDP_NOEXCEPT;

/* One packet to send.  If the queue sends in place
 * (afxdp_queue_sends_in_place()) and 'pool' is the queue's own pool (see
 * afxdp_queue_pool()), 'data' is inside a frame the caller received from
 * it, and the frame goes on the TX ring as it is: the send takes the frame
 * back, sent or dropped, and the caller must not put it.  Otherwise the
 * packet is copied into a free frame and stays the caller's. */
struct afxdp_tx_packet {
    const void *data;
    uint32_t len;
    const struct afxdp_pool *pool;   /* The frame's pool, or NULL. */
};

/* Sends 'n' packets, reaping completions and kicking the kernel as needed.
 * Returns how many were dropped (0 if all were queued); the reason is in
 * the queue's stats and in 'events'.  '*error' gets an errno worth logging
 * (0 if none).
 *
 * With coalesce_tx_kicks in use, a send made by a thread right after
 * afxdp_queue_recv() returned packets to it may leave the kick owed by that
 * thread (tx_kicks_deferred), so that the next bursts from that RX queue
 * go out with it, in one sendto().  The thread pays it in a send on this
 * queue once a few bursts wait (AFXDP_COALESCED_BURSTS) or the packets
 * came from elsewhere, in its next afxdp_queue_recv() on that RX queue that
 * finds nothing or that brings that many bursts, after 64 recv calls on
 * other queues, or when it exits.  A thread that stops receiving
 * altogether leaves it to afxdp_queue_kick_owed(). */
size_t afxdp_queue_send(struct afxdp_queue *, const struct afxdp_tx_packet *,
                        size_t n, unsigned *events, int *error)
    AFXDP_NOEXCEPT;

/* From any thread, now and then (OVS: with the statistics, every few
 * seconds): makes a kick that a thread still owes the queue. */
void afxdp_queue_kick_owed(struct afxdp_queue *) AFXDP_NOEXCEPT;

/* True if the queue sends frames of its own pool in place (see struct
 * afxdp_tx_packet); fixed while the queue exists. */
bool afxdp_queue_sends_in_place(const struct afxdp_queue *) AFXDP_NOEXCEPT;

/* The socket's file descriptor (for rxq_wait-style polling). */
int afxdp_queue_fd(const struct afxdp_queue *) AFXDP_NOEXCEPT;

struct afxdp_pool *afxdp_queue_pool(struct afxdp_queue *) AFXDP_NOEXCEPT;

/* The caller's metadata for frame 'index' (cfg.frame_meta_size bytes,
 * zeroed at open, aligned for any type). */
void *afxdp_pool_frame_meta(struct afxdp_pool *, uint32_t index)
    AFXDP_NOEXCEPT;

/* Returns received frames to their pool, from any thread.  'data' may point
 * anywhere inside the frame.  The last put on a closed device's pool frees
 * its memory. */
void afxdp_pool_put(struct afxdp_pool *, const void *data) AFXDP_NOEXCEPT;
void afxdp_pool_put_n(struct afxdp_pool *, const void *const *data, size_t n)
    AFXDP_NOEXCEPT;

/* ------------------------------------------------------------------ */
/* Statistics.                                                        */
/* ------------------------------------------------------------------ */

/* Our per-queue counters.  Each moves exactly when its comment says. */
#define AFXDP_QUEUE_STATS                                                   \
    /* Packets handed to the caller by afxdp_queue_recv. */                 \
    AFXDP_STAT(rx_packets)                                                  \
    /* Of those, packets in more than one frame (multi-buffer). */          \
    AFXDP_STAT(rx_multi_frame)                                              \
    /* Received packets dropped because they span more frames than one     \
     * afxdp_queue_recv() may return. */                                    \
    AFXDP_STAT(rx_dropped_too_many_frames)                                  \
    /* Of rx_packets, packets that came with an RSS hash: the driver's,    \
     * or the fast path's own where the driver gave none. */                \
    AFXDP_STAT(rx_hash)                                                     \
    /* Of rx_packets, packets whose VLAN tag the driver had stripped and    \
     * our XDP program put back into the frame. */                          \
    AFXDP_STAT(rx_vlan_restored)                                            \
    /* Of rx_packets, packets whose stripped VLAN tag our XDP program could \
     * not put back (no headroom): they arrive untagged. */                 \
    AFXDP_STAT(rx_vlan_lost)                                                \
    /* Of rx_packets, packets the XDP fast path found the megaflow of and  \
     * handed over with its mark (afxdp_rx_frame.has_flow_mark). */        \
    AFXDP_STAT(rx_flow_marks)                                               \
    /* Of rx_packets, packets that came with the mark of a flow deleted or \
     * changed since XDP marked them: handed over unmarked, so that OVS     \
     * looks them up in full (they might otherwise run another flow's      \
     * actions, one that took the mark meanwhile). */                      \
    AFXDP_STAT(rx_flow_marks_stale)                                         \
    /* poll() calls made because the fill ring's need_wakeup flag was set   \
     * and the RX ring was empty. */                                        \
    AFXDP_STAT(rx_wakeups)                                                  \
    /* Of those, calls that returned an error. */                           \
    AFXDP_STAT(rx_wakeup_errors)                                            \
    /* Receive calls that found the fill ring empty (the kernel may have    \
     * dropped for want of frames). */                                      \
    AFXDP_STAT(fill_ring_empty)                                             \
    /* Refills that found no free frame in the pool. */                     \
    AFXDP_STAT(fill_no_frames)                                              \
    /* Packets queued on the TX ring. */                                    \
    AFXDP_STAT(tx_packets)                                                  \
    /* Of those, packets sent in place from a frame of the shared UMEM,     \
     * without a copy. */                                                   \
    AFXDP_STAT(tx_in_place)                                                 \
    /* Of those, packets copied into more than one frame (multi-buffer). */ \
    AFXDP_STAT(tx_multi_frame)                                              \
    /* afxdp_queue_send() calls that queued at least one packet. */         \
    AFXDP_STAT(tx_batches)                                                  \
    /* sendto() calls made to kick TX. */                                   \
    AFXDP_STAT(tx_kicks)                                                    \
    /* Kicks not made because need_wakeup was in use and the TX ring's      \
     * flag was clear. */                                                   \
    AFXDP_STAT(tx_kicks_skipped)                                            \
    /* Extra sendto() calls made to drain the TX ring in copy mode. */      \
    AFXDP_STAT(tx_kick_retries)                                             \
    /* sendto() calls, late kicks included, that failed with an errno      \
     * other than EAGAIN, EBUSY or ENOBUFS. */                             \
    AFXDP_STAT(tx_kick_errors)                                              \
    /* Sends that left their kick owed, to be paid with the next burst's    \
     * (coalesce_tx_kicks). */                                              \
    AFXDP_STAT(tx_kicks_deferred)                                           \
    /* Owed kicks paid without a send: the RX queue came up empty, the      \
     * debt grew old, or afxdp_queue_kick_owed() found it. */               \
    AFXDP_STAT(tx_kicks_late)                                               \
    /* Sends that found the TX ring without room for the whole batch. */    \
    AFXDP_STAT(tx_ring_full)                                                \
    /* Packets dropped because the TX ring stayed full. */                  \
    AFXDP_STAT(tx_dropped_ring_full)                                        \
    /* Packets dropped because no free UMEM frame was left. */              \
    AFXDP_STAT(tx_dropped_no_frames)                                        \
    /* Packets dropped because they do not fit in a frame (with            \
     * multi-buffer: longer than AFXDP_MAX_MULTI_BUFFER_PACKET). */         \
    AFXDP_STAT(tx_dropped_too_long)                                         \
    /* Of the drops for want of frames or of TX ring room, multi-frame      \
     * packets (which need all their frames and slots at once). */          \
    AFXDP_STAT(tx_multi_dropped)                                            \
    /* Frames returned by the completion ring. */                           \
    AFXDP_STAT(tx_completions)                                              \
    /* Frames copied into that the queue had kept from its own completions \
     * rather than taken from the UMEM's shared pool. */                    \
    AFXDP_STAT(tx_frames_reused)

struct afxdp_queue_stats {
#define AFXDP_STAT(NAME) uint64_t NAME;
    AFXDP_QUEUE_STATS
#undef AFXDP_STAT
};

/* The kernel's XDP_STATISTICS, all six counters. */
#define AFXDP_XDP_STATS                                                     \
    AFXDP_STAT(rx_dropped)                                                  \
    AFXDP_STAT(rx_invalid_descs)                                            \
    AFXDP_STAT(tx_invalid_descs)                                            \
    AFXDP_STAT(rx_ring_full)                                                \
    AFXDP_STAT(rx_fill_ring_empty_descs)                                    \
    AFXDP_STAT(tx_ring_empty_descs)

struct afxdp_xdp_stats {
#define AFXDP_STAT(NAME) uint64_t NAME;
    AFXDP_XDP_STATS
#undef AFXDP_STAT
    unsigned n_valid;   /* How many of the above the kernel filled in. */
};

void afxdp_queue_get_stats(const struct afxdp_queue *,
                           struct afxdp_queue_stats *) AFXDP_NOEXCEPT;
int afxdp_queue_get_xdp_stats(const struct afxdp_queue *,
                              struct afxdp_xdp_stats *) AFXDP_NOEXCEPT;

/* Where each frame of a queue's pool is now. */
struct afxdp_frame_counts {
    uint32_t total;      /* Frames in the UMEM. */
    uint32_t free;       /* In the pool. */
    uint32_t fill;       /* Given to the kernel, fill or RX ring. */
    uint32_t tx;         /* On the TX or completion ring. */
    uint32_t in_app;     /* Handed to the caller, not yet put back. */
    uint32_t rx_ring;    /* Of 'fill', waiting in the RX ring. */
    uint32_t fill_ring;  /* Of 'fill', in the fill ring. */
    uint32_t tx_kept;    /* Completed, kept by the queue for its next
                          * sends.  free + fill + tx + tx_kept + in_app
                          * (over every queue using the UMEM) = total. */
};
void afxdp_queue_get_frames(struct afxdp_queue *, struct afxdp_frame_counts *)
    AFXDP_NOEXCEPT;

/* The need_wakeup flags the kernel has set right now in the fill ring and
 * the TX ring (both true when need_wakeup is not in use: every call then
 * needs a syscall). */
void afxdp_queue_get_wakeup_flags(struct afxdp_queue *, bool *fill,
                                  bool *tx) AFXDP_NOEXCEPT;

/* UMEMs of closed queues still waiting for frames OVS holds.  Zero once
 * traffic has stopped: anything else is a leaked frame. */
unsigned afxdp_retired_pools(void) AFXDP_NOEXCEPT;

/* ------------------------------------------------------------------ */
/* Flow offload: megaflows our XDP program executes.                  */
/* ------------------------------------------------------------------ */

/* The packet fields our XDP program parses, laid out as it stores them:
 * a megaflow's match is one of these for the values and one for the
 * mask.  Values are as OVS's struct flow holds them (multi-byte fields
 * in network byte order), and a field the packet does not have is zero,
 * as OVS's flow extraction leaves it: so a masked compare here decides
 * exactly what OVS's classifier decides on the same fields.  80 bytes, no
 * holes: the program hashes and compares it whole. */
struct afxdp_flow_key {
    uint8_t dl_dst[6];
    uint8_t dl_src[6];
    uint16_t dl_type;        /* After the VLAN tag, if any. */
    uint16_t vlan_tci;       /* OVS's convention: 0x1000 (CFI) set if the
                              * packet has a tag; 0 if none. */
    uint8_t nw_src[16];      /* IPv4 and ARP SPA: first 4 bytes. IPv6. */
    uint8_t nw_dst[16];      /* IPv4 and ARP TPA: first 4 bytes. IPv6. */
    uint32_t ipv6_label;
    uint8_t nw_proto;        /* ARP: the opcode's low byte. */
    uint8_t nw_tos;          /* DSCP and ECN. */
    uint8_t nw_ttl;          /* TTL, or IPv6 hop limit. */
    uint8_t nw_frag;         /* OVS's FLOW_NW_FRAG_ANY (1), _LATER (2). */
    uint16_t tp_src;         /* TCP/UDP/SCTP port; ICMP type. */
    uint16_t tp_dst;         /* TCP/UDP/SCTP port; ICMP code. */
    uint8_t arp_sha[6];
    uint8_t arp_tha[6];
    uint16_t tcp_flags;
    uint16_t vlan_tpid;      /* The tag's TPID (0x8100, 0x88a8); 0 if
                              * none.  OVS's vlans[0].tpid. */
    uint8_t pad[4];          /* Zero in key and mask. */
};

/* A megaflow's match.  in_port is the device the flow is put on. */
struct afxdp_flow_match {
    struct afxdp_flow_key key;
    struct afxdp_flow_key mask;
    /* The first field of the megaflow's mask that afxdp_flow_key cannot
     * hold (tunnel, conntrack, metadata, MPLS, a second VLAN, ...), named
     * for the operator; NULL if none.  Such a flow is not offloaded. */
    const char *unparsed_field;
};

enum afxdp_flow_action_type {
    AFXDP_ACTION_OUTPUT,     /* To 'output'. */
    AFXDP_ACTION_DROP,       /* OVS's explicit drop: must come last. */
    AFXDP_ACTION_PUSH_VLAN,  /* 'push_vlan'. */
    AFXDP_ACTION_POP_VLAN,
    AFXDP_ACTION_SET_ETH,    /* 'set_eth': masked Ethernet addresses. */
    AFXDP_ACTION_SET_IP,     /* A masked set of IPv4 addresses, TOS and
                              * TTL, or of IPv6 traffic class and hop
                              * limit. */
    AFXDP_ACTION_SET_L4,     /* A masked set of TCP or UDP ports. */
    AFXDP_ACTION_OTHER,      /* Anything else: 'other' names it. */
};

struct afxdp_flow_action {
    enum afxdp_flow_action_type type;
    union {
        struct {
            int ifindex;          /* The target interface. */
            bool xdp_target;      /* It is an afxdp port that takes XDP
                                   * redirects now (see afxdp_dev_info). */
            const char *name;     /* For messages. */
        } output;
        struct {
            uint16_t tpid;        /* 0x8100 or 0x88a8, host order. */
            uint16_t tci;         /* Host order; CFI (0x1000) as OVS sets
                                   * it, ignored. */
        } push_vlan;
        struct {
            uint8_t src[6], src_mask[6];
            uint8_t dst[6], dst_mask[6];
        } set_eth;
        /* OVS's masked set of ipv4(src,dst,tos,ttl) or
         * ipv6(src,dst,label,tclass,hlimit), the other fields neither set
         * nor masked (a shim makes anything else OTHER).  As OVS executes
         * them (odp-execute.c): IPv4 writes the source as src | (old &
         * ~src_mask) only where src_mask is nonzero and the address
         * changes, updating the header's checksum and a TCP or UDP
         * checksum behind it, then the destination, the TOS and the TTL
         * the same way (the last two with the header's checksum only).
         * IPv6 computes every field as value | (old & ~mask) whatever the
         * masks; it writes the source, then the destination, only if it
         * changes, updating the TCP, UDP or ICMPv6 checksum behind the
         * header, then the traffic class, the label and the hop limit. */
        struct {
            uint8_t version;      /* 4 or 6. */
            uint8_t tos, tos_mask;   /* IPv6: the traffic class. */
            uint8_t ttl, ttl_mask;   /* IPv6: the hop limit. */
            uint32_t src, src_mask;  /* IPv4, network byte order. */
            uint32_t dst, dst_mask;  /* IPv4, network byte order. */
            uint8_t src6[16], src6_mask[16];   /* IPv6. */
            uint8_t dst6[16], dst6_mask[16];   /* IPv6. */
            uint32_t label, label_mask;   /* IPv6, network byte order: the
                                           * low 20 bits. */
        } set_ip;
        /* OVS's masked set of tcp(src,dst), udp(src,dst) or
         * sctp(src,dst): each port as value | (old & ~mask), the L4
         * checksum updated for each port that changes (a UDP checksum of
         * 0 left 0, one that becomes 0 written 0xffff; SCTP's CRC32c
         * changed by as much as the packet's, a wrong one staying
         * wrong), where the packet has an L4 header OVS's checks pass. */
        struct {
            uint8_t proto;        /* 6 (TCP), 17 (UDP) or 132 (SCTP). */
            uint16_t src, src_mask;  /* Network byte order. */
            uint16_t dst, dst_mask;  /* Network byte order. */
        } set_l4;
        const char *other;        /* "ct", "recirc", "userspace", ... */
    };
};

/* Why a megaflow is not executed in XDP, each counted per port.  With
 * 'match_field' the flow goes to userspace as if there were no fast path;
 * with every other reason it is partially offloaded: the XDP program
 * still finds it and hands its mark to OVS with the packet. */
#define AFXDP_OFFLOAD_REFUSALS                                              \
    /* The match uses a field our XDP program does not parse. */            \
    AFXDP_REFUSAL(match_field, "match on a field XDP does not parse")       \
    /* An action XDP cannot execute exactly: conntrack, recirculation,      \
     * meters, sampling, userspace, tunnels, setting other fields. */        \
    AFXDP_REFUSAL(action, "an action XDP cannot execute")                   \
    /* More than one output (a flood, a mirror): XDP sends a packet to one  \
     * place. */                                                            \
    AFXDP_REFUSAL(several_outputs, "more than one output")                  \
    /* Output to a port that is not an afxdp port taking XDP redirects. */  \
    AFXDP_REFUSAL(output_target, "output to a port XDP cannot redirect to") \
    /* A VLAN push or pop where the match leaves open whether the packet    \
     * is tagged, or that would make two tags. */                           \
    AFXDP_REFUSAL(vlan, "VLAN push or pop on a tag the match leaves open")  \
    /* Actions after a drop. */                                             \
    AFXDP_REFUSAL(after_drop, "actions after a drop")

enum afxdp_offload_refusal {
#define AFXDP_REFUSAL(NAME, TEXT) AFXDP_REFUSED_##NAME,
    AFXDP_OFFLOAD_REFUSALS
#undef AFXDP_REFUSAL
    AFXDP_REFUSED_N
};

/* The refusal's counter name ("match_field") and its sentence. */
const char *afxdp_offload_refusal_name(enum afxdp_offload_refusal)
    AFXDP_NOEXCEPT;
const char *afxdp_offload_refusal_text(enum afxdp_offload_refusal)
    AFXDP_NOEXCEPT;

/* What the fast path would make of a megaflow, with no device: one line
 * into 'buf' ('size' bytes, NUL-terminated, cut if longer) with the
 * fields its masked key holds and what XDP does, for example
 *   "dl_type=0x800 nw_dst=10.0.0.2 -> redirect(ifindex=5,pop_vlan)"
 *   "dl_type=0x800 -> ovs(action: ct)"          (partial offload)
 *   "-> userspace(match_field: ct_state)"       (not put at all)
 * and returns the refusal, AFXDP_REFUSED_N if XDP executes it whole.  For
 * tests of a shim's translation and for diagnostics. */
enum afxdp_offload_refusal afxdp_flow_describe(
    const struct afxdp_flow_match *, const struct afxdp_flow_action *,
    size_t n_actions, char *buf, size_t size) AFXDP_NOEXCEPT;

/* The fast path's XDP parser run by the kernel on one packet's 'len'
 * bytes (BPF_PROG_TEST_RUN of its afxdp_parse_test program, loaded once
 * per process), for tests that hold it against OVS's own parser: 0 and
 * the packet's key in '*key' where it parsed the packet, 1 where it
 * punts the packet to OVS (a second VLAN tag, MPLS, ...), or a negative
 * errno (no program in this build, not root). */
int afxdp_fast_path_parse(const void *packet, size_t len,
                          struct afxdp_flow_key *key) AFXDP_NOEXCEPT;

/* What the fast path's XDP program did with each packet: exactly one of
 * these per packet, except that a packet handed to OVS with its flow's
 * mark counts as 'marked' only if a socket took it.  A hit XDP does not
 * carry out goes to OVS untouched, counted as the reason, and OVS then
 * does what the flow says. */
#define AFXDP_FP_COUNTERS                                                   \
    AFXDP_FP_COUNTER(unpolled,                                            \
                     "packets of a receive queue OVS does not poll, to "    \
                     "the kernel's stack as without the fast path")         \
    AFXDP_FP_COUNTER(punted,                                              \
                     "packets the parser cannot describe, to OVS")          \
    AFXDP_FP_COUNTER(missed, "packets no offloaded flow matched, to OVS")   \
    AFXDP_FP_COUNTER(changing,                                            \
                     "packets that met a flow or mask while the core "      \
                     "rewrote it, to OVS")                                  \
    AFXDP_FP_COUNTER(redirected,                                          \
                     "packets a flow redirected to another interface")      \
    AFXDP_FP_COUNTER(dropped, "packets a flow dropped")                     \
    AFXDP_FP_COUNTER(marked, "packets to OVS with their flow's mark")       \
    AFXDP_FP_COUNTER(redirect_failed,                                     \
                     "hits whose target takes no redirect, to OVS")         \
    AFXDP_FP_COUNTER(multi_buffer,                                        \
                     "redirect hits of several buffers, to OVS")            \
    AFXDP_FP_COUNTER(rewrite_failed,                                      \
                     "hits with no room for a VLAN tag, to OVS")           \
    AFXDP_FP_COUNTER(ip_unparsed,                                         \
                     "hits whose flow sets IP fields, of a packet whose IP " \
                     "header OVS's parser takes as none, to OVS")           \
    AFXDP_FP_COUNTER(redirect_lost,                                       \
                     "redirected frames the target's driver refused, lost " \
                     "(the target then taken out of XDP)")                  \
    AFXDP_FP_COUNTER(cache_filled,                                        \
                     "packets whose flow was found in the mask slots, not " \
                     "in the exact-match cache, and cached")

enum afxdp_fp_counter {
#define AFXDP_FP_COUNTER(NAME, TEXT) AFXDP_FP_##NAME,
    AFXDP_FP_COUNTERS
#undef AFXDP_FP_COUNTER
    AFXDP_FP_N_COUNTERS
};

/* True if this build has the fast path's XDP program (configure found a
 * clang that compiles BPF programs); if not, a device opened with offload
 * runs without it and says so. */
bool afxdp_fast_path_built(void) AFXDP_NOEXCEPT;

/* A device's XDP fast path. */
struct afxdp_fast_path_stats {
    bool requested;              /* Offload on, and the port opted in. */
    bool active;                 /* Its program is the one attached. */
    const char *reason;          /* Requested and not active: why; else "". */
    bool marks;                  /* Active, and the packets of a flow XDP
                                  * cannot execute whole reach OVS with
                                  * its mark (partial offload); if not,
                                  * such a flow is not put at all. */
    const char *marks_reason;    /* Active without marks: why; else "". */
    unsigned flows;              /* Megaflows in the program's maps. */
    unsigned masks;              /* Their distinct masks (at most 32). */
    uint64_t packets[AFXDP_FP_N_COUNTERS];  /* The program's counters. */
    uint64_t refused[AFXDP_REFUSED_N];      /* Puts not fully offloaded,
                                             * by reason. */
    uint64_t put_failed;         /* Puts the maps had no room for, or that
                                  * the kernel refused. */
    /* Counted by XDP after OVS's last read of a flow it then deleted. */
    uint64_t untold_packets;
    uint64_t untold_bytes;
};
void afxdp_dev_get_fast_path(const struct afxdp_dev *,
                             struct afxdp_fast_path_stats *) AFXDP_NOEXCEPT;

/* Puts (or replaces) the megaflow OVS knows by 'ufid' into the device's
 * fast path: the device is its in_port.  'refusal' gets why XDP does not
 * execute it whole (AFXDP_REFUSED_N if it does).  Returns:
 *   0           in the program's maps: executed in XDP, or, with a
 *               refusal, found there and handed to OVS with 'mark'
 *               (partial offload);
 *   EOPNOTSUPP  not in the maps: the fast path is not active, or the
 *               match needs a field XDP does not parse (match_field);
 *   ENOSPC      the maps are full (32 masks, 16384 flows);
 *   EEXIST      another flow has the same mask and masked key;
 *   else        the kernel's error.
 * On any error the flow (and any it replaced) is not in the maps. */
int afxdp_dev_flow_put(struct afxdp_dev *, const uint32_t ufid[4],
                       const struct afxdp_flow_match *,
                       const struct afxdp_flow_action *, size_t n_actions,
                       uint32_t mark, enum afxdp_offload_refusal *refusal)
    AFXDP_NOEXCEPT;

struct afxdp_flow_counts;
/* The same, for a flow whose counts OVS is told through 'counts': XDP's
 * count of the flow stays whole across the put.  A put that takes the
 * flow out of the maps reads its count a last time and ends it; a put
 * that starts a new count (the flow was not in the maps) ends the old. */
int afxdp_dev_flow_put_counted(struct afxdp_dev *, const uint32_t ufid[4],
                               const struct afxdp_flow_match *,
                               const struct afxdp_flow_action *,
                               size_t n_actions, uint32_t mark,
                               enum afxdp_offload_refusal *refusal,
                               struct afxdp_flow_counts *) AFXDP_NOEXCEPT;

/* Takes the flow out of the fast path: 0, or ENOENT. */
int afxdp_dev_flow_del(struct afxdp_dev *, const uint32_t ufid[4])
    AFXDP_NOEXCEPT;
/* The same, for a flow whose counts OVS was told through 'counts' (read a
 * last time here): what XDP counted after OVS's last read, which OVS
 * never asks for, is counted in the device's afxdp_fast_path_stats. */
int afxdp_dev_flow_del_counted(struct afxdp_dev *, const uint32_t ufid[4],
                               struct afxdp_flow_counts *) AFXDP_NOEXCEPT;

/* What XDP did for a flow since it was put: packets and bytes it dropped
 * or redirected (those it handed to OVS, OVS counts), when, and the TCP
 * flags they carried. */
struct afxdp_flow_stats {
    uint64_t n_packets;
    uint64_t n_bytes;
    long long used_msec;     /* CLOCK_MONOTONIC milliseconds (OVS's
                              * time_msec()) of the last; 0 if none. */
    uint16_t tcp_flags;      /* Of all of them, or'ed, in host order, as
                              * OVS's dpif_flow_stats has them (its
                              * fin_timeout action acts on a FIN or RST
                              * among them). */
};
int afxdp_dev_flow_stats(const struct afxdp_dev *, const uint32_t ufid[4],
                         struct afxdp_flow_stats *) AFXDP_NOEXCEPT;

/* One offloaded megaflow's counts as OVS reads them, kept by the shim for
 * each flow it put (zeroed when it first puts it).  The rule: every packet
 * XDP executed for the megaflow is told to OVS exactly once, whatever
 * puts, deletes, reopens and copies come (flow_counts.cc):
 *   - XDP counts a flow from when it is put into the maps until they
 *     close: a flow put again keeps its count.  Only when its maps close
 *     (the port reopens) does that count end, read a last time, and join
 *     'ended'; the flow's next count starts at zero.
 *   - OVS keeps one copy of a megaflow per PMD thread that installed it,
 *     asks for the offload's counts once per copy, and adds what a copy is
 *     told to that copy's own count, each a running total.  A copy is told
 *     what it was told last plus what XDP counted since any copy was last
 *     told: each copy's figure only grows, and the copies' figures add up
 *     to XDP's count.
 * 'used_msec' and 'tcp_flags' go to every copy alike. */
struct afxdp_flow_counts {
    struct afxdp_flow_stats ended;    /* XDP's counts that ended. */
    struct afxdp_flow_stats running;  /* The count running now, as last
                                       * read. */
    /* Of ended + running, what the copies were told. */
    uint64_t told_packets;
    uint64_t told_bytes;
};

/* XDP's running count read now ('now', as afxdp_dev_flow_stats() gave).
 * A count lower than the last read is a new one: the old one ended. */
void afxdp_flow_counts_read(struct afxdp_flow_counts *,
                            const struct afxdp_flow_stats *now)
    AFXDP_NOEXCEPT;
/* The running count ended (its maps closed), as last read. */
void afxdp_flow_counts_end(struct afxdp_flow_counts *) AFXDP_NOEXCEPT;
/* What a copy of the megaflow is told now: '*told' comes in as what it
 * was told last (zeros for a new copy) and goes out as what to tell it.
 * 'is_copy' false: a reader that is no copy, told no packets. */
void afxdp_flow_counts_tell(struct afxdp_flow_counts *, bool is_copy,
                            struct afxdp_flow_stats *told) AFXDP_NOEXCEPT;
/* What XDP counted that no copy was told: packets after OVS's last read
 * of a megaflow it deletes (its API asks for no final count). */
void afxdp_flow_counts_untold(const struct afxdp_flow_counts *,
                              uint64_t *packets, uint64_t *bytes)
    AFXDP_NOEXCEPT;

/* Whether packets the fast path redirects to interface 'ifindex' get out
 * now: it is still the interface named 'ifname' (an index a deleted
 * interface freed may go to the next one made or moved in; NULL: any),
 * and its driver transmits XDP frames (a veth only while its peer has an
 * XDP program or GRO on; some other drivers only with an XDP program
 * attached in native mode).  False with the reason in 'why' (also where
 * the kernel cannot say, before Linux 6.3).  Asks the kernel each time:
 * the answers change with the interface and its peer. */
bool afxdp_xdp_target_ok(int ifindex, const char *ifname, char *why,
                         size_t whylen) AFXDP_NOEXCEPT;

/* Lets the device's flows redirect to interface 'ifindex' (add), or no
 * longer (a flow's packets for it then go to OVS).  Add only a target
 * afxdp_xdp_target_ok() accepts: a redirect the driver refuses is lost.
 * 0, or an errno. */
int afxdp_dev_fast_path_target(struct afxdp_dev *, int ifindex, bool add)
    AFXDP_NOEXCEPT;

/* Whether the device's fast path took 'ifindex' out of its redirects by
 * itself since it was last added: the kernel failed to send a bulk of
 * them there (a veth whose peer lost its XDP program and GRO), before any
 * check could say so.  '*lost': the frames lost so.  The caller asks the
 * kernel again (afxdp_xdp_target_ok()) and adds it back, or leaves it
 * out. */
bool afxdp_dev_fast_path_target_lost(const struct afxdp_dev *, int ifindex,
                                     uint64_t *lost) AFXDP_NOEXCEPT;

/* The interfaces the device's flows redirect to, each in its fast path's
 * redirects exactly while the kernel says it takes XDP frames: asked when
 * a put flow first names it (its output.xdp_target set), again when a
 * flow to one that took none is put (at most every 10 ms), and every
 * target at most every 100 ms by afxdp_dev_targets_run(), which a caller
 * makes as it reads its flows (OVS's revalidators: a veth's peer may lose
 * its XDP program at any time).  A target the watcher took out is put
 * back there if the kernel takes it again. */
void afxdp_dev_targets_run(struct afxdp_dev *) AFXDP_NOEXCEPT;
/* 'ifindex''s port is gone: out of the device's targets and redirects,
 * whatever its flows still say. */
void afxdp_dev_targets_drop(struct afxdp_dev *, int ifindex) AFXDP_NOEXCEPT;
/* Whether the device's flows redirect to 'ifindex' now. */
bool afxdp_dev_target_on(const struct afxdp_dev *, int ifindex)
    AFXDP_NOEXCEPT;
/* "p1 on, p2 off: why": each target, its state and why it is off; "" if
 * none.  Cut to 'size' bytes, NUL included: AFXDP_TARGETS_DESCRIBED holds
 * a few. */
#define AFXDP_TARGETS_DESCRIBED 1024
void afxdp_dev_targets_describe(const struct afxdp_dev *, char *buf,
                                size_t size) AFXDP_NOEXCEPT;
/* Whether a target's state changed (and with it what the two above say)
 * since the last call: the caller then shows the port's status again. */
bool afxdp_dev_status_changed(struct afxdp_dev *) AFXDP_NOEXCEPT;

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* afxdp.h */
