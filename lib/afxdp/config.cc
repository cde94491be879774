// A port's configuration: every option's spellings, default and range, the
// rules between options, and what a change costs.  The only place that
// knows them: the shim looks options up, the device checks what it is
// given with afxdp_port_config_check().
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <strings.h>

#include "afxdp.h"

namespace {

// Writes "IFNAME: option NAME: ERR." into 'err'; returns EINVAL.
int
option_error(const char *ifname, const char *name, const char *why,
             char *err, size_t errlen) noexcept
{
    std::snprintf(err, errlen, "%s: option %s: %s.", ifname, name, why);
    return EINVAL;
}

// options:n_rxq.
int
parse_n_queues(const char *ifname, const char *s, unsigned *n, char *err,
               size_t errlen) noexcept
{
    char why[256];
    if (afxdp_parse_uint(s, 1, 0xffffffffu, n, why, sizeof why)) {
        return option_error(ifname, "n_rxq", why, err, errlen);
    }
    if (*n > AFXDP_MAX_QUEUES) {
        // OVS's C port's wording, which OVS's own test suite expects.
        std::snprintf(err, errlen, "%s: Too big 'n_rxq' (%u > %d).", ifname,
                      *n, AFXDP_MAX_QUEUES);
        return EINVAL;
    }
    unsigned have = afxdp_device_rx_queues(ifname);
    if (have && *n > have) {
        // Refused here, the port is refused once; refused when its sockets
        // are made, OVS would remove and re-add it forever.
        std::snprintf(err, errlen, "%s: option n_rxq: %u queues requested "
                      "but the device has %u (accepted: 1 to %u).", ifname,
                      *n, have, have);
        return EINVAL;
    }
    return 0;
}

// options:use_need_wakeup, or OVS's spelling use-need-wakeup (OVS 2.13 to
// 3.6); both may be given if they agree.
int
parse_need_wakeup(const char *ifname, const char *ours, const char *ovs,
                  bool *value, char *err, size_t errlen) noexcept
{
    char why[256];
    bool a = true, b = true;
    if (ours && afxdp_parse_bool(ours, &a, why, sizeof why)) {
        return option_error(ifname, "use_need_wakeup", why, err, errlen);
    }
    if (ovs && afxdp_parse_bool(ovs, &b, why, sizeof why)) {
        return option_error(ifname, "use-need-wakeup", why, err, errlen);
    }
    if (ours && ovs && a != b) {
        std::snprintf(err, errlen, "%s: options use_need_wakeup=%s and "
                      "use-need-wakeup=%s disagree; set one of them.",
                      ifname, ours, ovs);
        return EINVAL;
    }
    if (ours || ovs) {
        *value = ours ? a : b;
    }
    return 0;
}

// options:shared_umem: auto, true or false.
int
parse_sharing(const char *ifname, const char *s, afxdp_sharing *sharing,
              char *err, size_t errlen) noexcept
{
    bool share;
    char why[256];
    if (!strcasecmp(s, "auto")) {
        *sharing = AFXDP_SHARE_AUTO;
    } else if (!afxdp_parse_bool(s, &share, why, sizeof why)) {
        *sharing = share ? AFXDP_SHARE_IN_PLACE : AFXDP_SHARE_OFF;
    } else {
        std::snprintf(err, errlen, "%s: option shared_umem: \"%s\" is not "
                      "\"auto\", \"true\" or \"false\".", ifname, s);
        return EINVAL;
    }
    return 0;
}

}  // namespace

extern "C" void
afxdp_port_config_default(struct afxdp_port_config *cfg) noexcept
{
    cfg->n_queues = 1;
    cfg->mode = AFXDP_MODE_BEST_EFFORT;
    cfg->use_need_wakeup = afxdp_need_wakeup_supported();
    cfg->ring_size = AFXDP_DEFAULT_RING_SIZE;
    cfg->n_frames = AFXDP_DEFAULT_FRAMES;
    cfg->sharing = AFXDP_SHARE_AUTO;
    cfg->coalesce_tx_kicks = true;
    cfg->rx_hints = true;
    cfg->fast_path = true;
}

extern "C" int
afxdp_port_config_parse(const char *ifname, afxdp_option_lookup *lookup,
                        const void *aux, struct afxdp_port_config *out,
                        char *err, size_t errlen) noexcept
{
    afxdp_port_config cfg;
    afxdp_port_config_default(&cfg);
    auto get = [&](const char *key) { return lookup(aux, key); };
    char why[256];
    const char *s;

    if ((s = get("n_rxq")) && parse_n_queues(ifname, s, &cfg.n_queues, err,
                                             errlen)) {
        return EINVAL;
    }
    if ((s = get("xdp-mode"))
        && afxdp_parse_mode(s, &cfg.mode, why, sizeof why)) {
        return option_error(ifname, "xdp-mode", why, err, errlen);
    }
    if (parse_need_wakeup(ifname, get("use_need_wakeup"),
                          get("use-need-wakeup"), &cfg.use_need_wakeup, err,
                          errlen)) {
        return EINVAL;
    }
    if ((s = get("ring_size"))
        && afxdp_parse_ring_size(s, &cfg.ring_size, why, sizeof why)) {
        return option_error(ifname, "ring_size", why, err, errlen);
    }
    if ((s = get("umem_frames"))) {
        // The fill ring alone may hold ring_size frames; TX needs its own.
        if (afxdp_parse_uint(s, 2 * cfg.ring_size, AFXDP_MAX_FRAMES,
                             &cfg.n_frames, why, sizeof why)) {
            std::snprintf(err, errlen, "%s: option umem_frames: %s; at "
                          "least twice ring_size (%u).", ifname, why,
                          cfg.ring_size);
            return EINVAL;
        }
    } else if (cfg.n_frames < 2 * cfg.ring_size) {
        // Only ring_size given, larger than the default frames allow.
        cfg.n_frames = 2 * cfg.ring_size;
    }
    if ((s = get("shared_umem"))
        && parse_sharing(ifname, s, &cfg.sharing, err, errlen)) {
        return EINVAL;
    }
    if ((s = get("coalesce_tx_kicks"))
        && afxdp_parse_bool(s, &cfg.coalesce_tx_kicks, why, sizeof why)) {
        return option_error(ifname, "coalesce_tx_kicks", why, err, errlen);
    }
    if ((s = get("rx_hints"))
        && afxdp_parse_bool(s, &cfg.rx_hints, why, sizeof why)) {
        return option_error(ifname, "rx_hints", why, err, errlen);
    }
    if ((s = get("xdp_fast_path"))
        && afxdp_parse_bool(s, &cfg.fast_path, why, sizeof why)) {
        return option_error(ifname, "xdp_fast_path", why, err, errlen);
    }
    if (afxdp_port_config_check(ifname, &cfg, err, errlen)) {
        return EINVAL;
    }
    *out = cfg;
    return 0;
}

extern "C" int
afxdp_port_config_check(const char *ifname,
                        const struct afxdp_port_config *cfg, char *err,
                        size_t errlen) noexcept
{
    const unsigned ring = cfg->ring_size;
    if (cfg->n_queues < 1 || cfg->n_queues > AFXDP_MAX_QUEUES) {
        std::snprintf(err, errlen, "%s: %u queues requested (accepted: 1 "
                      "to %d).", ifname, cfg->n_queues, AFXDP_MAX_QUEUES);
    } else if (unsigned(cfg->mode) >= AFXDP_MODE_N) {
        std::snprintf(err, errlen, "%s: invalid XDP mode %u.", ifname,
                      unsigned(cfg->mode));
    } else if (ring < AFXDP_MIN_RING_SIZE || ring > AFXDP_MAX_RING_SIZE
               || (ring & (ring - 1))) {
        std::snprintf(err, errlen, "%s: ring size %u is not a power of two "
                      "from %d to %d.", ifname, ring, AFXDP_MIN_RING_SIZE,
                      AFXDP_MAX_RING_SIZE);
    } else if (cfg->n_frames < 2 * ring || cfg->n_frames > AFXDP_MAX_FRAMES) {
        std::snprintf(err, errlen, "%s: %u UMEM frames per queue (accepted: "
                      "twice the ring size, %u, to %d).", ifname,
                      cfg->n_frames, 2 * ring, AFXDP_MAX_FRAMES);
    } else if (unsigned(cfg->sharing) > AFXDP_SHARE_OFF) {
        std::snprintf(err, errlen, "%s: invalid UMEM sharing %u.", ifname,
                      unsigned(cfg->sharing));
    } else {
        return 0;
    }
    return EINVAL;
}

extern "C" bool
afxdp_port_config_needs_reopen(const struct afxdp_port_config *a,
                               const struct afxdp_port_config *b) noexcept
{
    // Every option is a property of the sockets, of their UMEM or of the
    // XDP program.
    return a->n_queues != b->n_queues || a->mode != b->mode
           || a->use_need_wakeup != b->use_need_wakeup
           || a->ring_size != b->ring_size || a->n_frames != b->n_frames
           || a->sharing != b->sharing
           || a->coalesce_tx_kicks != b->coalesce_tx_kicks
           || a->rx_hints != b->rx_hints || a->fast_path != b->fast_path;
}
