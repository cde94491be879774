/*
 * ovs-afxdp core: the C API.
 *
 * With afxdp-port.h (a port's policy), afxdp-report.h (what it shows),
 * afxdp-offload.h and afxdp-flows.h (the fast path), this is all the OVS
 * shims (lib/netdev-afxdp.c, lib/netdev-offload-afxdp.c) see of the C++
 * core; this header: a device's sockets, queues and frames.  None
 * includes an OVS header and OVS includes no C++.
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
 * AFXDP_MAX_MTU_ONE_FRAME, and then 'why' (unless 'whylen' is 0) says
 * why; else 'why' gets "".  Asks the kernel once.  A port whose interface has an MTU above
 * AFXDP_MAX_MTU_ONE_FRAME opens only in a mode where multi-buffer works
 * (see afxdp_dev_open()). */
unsigned afxdp_max_mtu(char *why, size_t whylen) AFXDP_NOEXCEPT;

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
    bool rx_csum_finish;             /* TCP and UDP checksums that a sender
                                      * on this host left for the device
                                      * to finish are finished (a veth or
                                      * tap: rx_csum_finished counts them). */
    bool rx_segment;                 /* TCP packets longer than the MTU
                                      * that such a sender hands over with
                                      * GSO (a veth's peer keeps it in
                                      * generic mode) are cut into
                                      * segments (rx_segmented). */
    const char *rx_segment_reason;   /* Why not, where a sender's GSO
                                      * packets may come (a veth or tap in
                                      * generic mode); else "". */
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
    /* Packets taken from the RX ring by afxdp_queue_recv, each handed to  \
     * the caller but for those cut into segments (rx_segmented). */       \
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
    /* Of rx_packets, TCP and UDP packets whose checksum a sender on this   \
     * host left for the device to finish (TX checksum offload, Linux's    \
     * default on veth and tap), finished by us (afxdp_dev_info's           \
     * rx_csum_finish). */                                                  \
    AFXDP_STAT(rx_csum_finished)                                            \
    /* Of rx_packets, TCP packets longer than the MTU admits (a sender on  \
     * this host left them for its device to cut, GSO: generic XDP passes \
     * them on whole), cut here into segments. */                          \
    AFXDP_STAT(rx_segmented)                                                \
    /* The segments they were cut into, each received as a packet. */      \
    AFXDP_STAT(rx_segments)                                                 \
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

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* afxdp.h */
