// Tier 1 (no kernel, no root): a port's whole configuration (config.cc).
//
// The option policy lives in the core once: each option's spellings,
// default and range, the rules between options, and what a change costs.
// These tests feed it whole sets of options, as OVS's smap would, and check
// the configuration it builds or the sentence it gives the operator.

#include <cerrno>
#include <cstring>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "afxdp.h"

namespace {

using Options = std::map<std::string, std::string>;

const char *
lookup(const void *aux, const char *key)
{
    const auto &opts = *static_cast<const Options *>(aux);
    auto it = opts.find(key);
    return it == opts.end() ? nullptr : it->second.c_str();
}

// Parses 'opts' for interface "ut0"; returns the errno and fills '*cfg'
// (left as it was on failure) and '*err'.
int
parse(const Options &opts, afxdp_port_config *cfg, std::string *err = nullptr)
{
    char buf[512] = "";
    int r = afxdp_port_config_parse("ut0", lookup, &opts, cfg, buf,
                                    sizeof buf);
    if (err) {
        *err = buf;
    }
    return r;
}

// The configuration 'opts' gives; fails the test if they are refused.
afxdp_port_config
config_of(const Options &opts)
{
    afxdp_port_config cfg;
    std::string err;
    EXPECT_EQ(parse(opts, &cfg, &err), 0) << err;
    return cfg;
}

// The message 'opts' are refused with; fails the test if they are not, or
// if the refusal changed the configuration it was given.
std::string
refusal_of(const Options &opts)
{
    afxdp_port_config cfg, before;
    std::memset(&cfg, 0x5a, sizeof cfg);
    before = cfg;
    std::string err;
    EXPECT_EQ(parse(opts, &cfg, &err), EINVAL);
    EXPECT_EQ(std::memcmp(&cfg, &before, sizeof cfg), 0)
        << "a refused configuration is not stored";
    EXPECT_EQ(err.rfind("ut0: ", 0), 0u) << "names the interface: " << err;
    return err;
}

bool
same(const afxdp_port_config &a, const afxdp_port_config &b)
{
    return !afxdp_port_config_needs_reopen(&a, &b);
}

}  // namespace

TEST(PortConfig, NoOptionsGiveTheDefaults)
{
    afxdp_port_config cfg = config_of({});
    EXPECT_EQ(cfg.n_queues, 1u);
    EXPECT_EQ(cfg.mode, AFXDP_MODE_BEST_EFFORT);
    EXPECT_EQ(cfg.use_need_wakeup, afxdp_need_wakeup_supported());
    EXPECT_EQ(cfg.ring_size, unsigned(AFXDP_DEFAULT_RING_SIZE));
    EXPECT_EQ(cfg.n_frames, unsigned(AFXDP_DEFAULT_FRAMES));
    EXPECT_EQ(cfg.sharing, AFXDP_SHARE_AUTO);
    EXPECT_TRUE(cfg.coalesce_tx_kicks);
    EXPECT_TRUE(cfg.rx_hints);
    EXPECT_TRUE(cfg.fast_path);

    afxdp_port_config def;
    afxdp_port_config_default(&def);
    EXPECT_TRUE(same(cfg, def));
    EXPECT_EQ(afxdp_port_config_check("ut0", &def, nullptr, 0), 0);
}

TEST(PortConfig, EveryOptionAtOnce)
{
    afxdp_port_config cfg = config_of({{"n_rxq", "4"},
                                       {"xdp-mode", "GENERIC"},
                                       {"use_need_wakeup", "false"},
                                       {"ring_size", "512"},
                                       {"umem_frames", "1024"},
                                       {"shared_umem", "true"},
                                       {"coalesce_tx_kicks", "false"},
                                       {"rx_hints", "false"},
                                       {"xdp_fast_path", "false"}});
    EXPECT_EQ(cfg.n_queues, 4u);
    EXPECT_EQ(cfg.mode, AFXDP_MODE_GENERIC);
    EXPECT_FALSE(cfg.use_need_wakeup);
    EXPECT_EQ(cfg.ring_size, 512u);
    EXPECT_EQ(cfg.n_frames, 1024u);
    EXPECT_EQ(cfg.sharing, AFXDP_SHARE_IN_PLACE);
    EXPECT_FALSE(cfg.coalesce_tx_kicks);
    EXPECT_FALSE(cfg.rx_hints);
    EXPECT_FALSE(cfg.fast_path);
}

TEST(PortConfig, UnknownOptionsAreNotOurs)
{
    // OVS passes every option of the interface; others are not refused.
    EXPECT_TRUE(same(config_of({{"something-else", "x"}}), config_of({})));
}

TEST(PortConfig, NeedWakeupTakesBothSpellingsThatMustAgree)
{
    EXPECT_FALSE(config_of({{"use_need_wakeup", "false"}}).use_need_wakeup);
    EXPECT_FALSE(config_of({{"use-need-wakeup", "false"}}).use_need_wakeup);
    EXPECT_FALSE(config_of({{"use_need_wakeup", "false"},
                            {"use-need-wakeup", "false"}}).use_need_wakeup);
    EXPECT_TRUE(config_of({{"use_need_wakeup", "true"},
                           {"use-need-wakeup", "true"}}).use_need_wakeup);
    EXPECT_EQ(refusal_of({{"use_need_wakeup", "true"},
                          {"use-need-wakeup", "false"}}),
              "ut0: options use_need_wakeup=true and use-need-wakeup=false "
              "disagree; set one of them.");
    EXPECT_EQ(refusal_of({{"use-need-wakeup", "1x"}}),
              "ut0: option use-need-wakeup: invalid value '1x' (accepted: "
              "true, false).");
}

TEST(PortConfig, UmemFramesAtLeastTwiceTheRing)
{
    // Given alone, a larger ring brings the frames it needs.
    afxdp_port_config cfg = config_of({{"ring_size", "4096"}});
    EXPECT_EQ(cfg.ring_size, 4096u);
    EXPECT_EQ(cfg.n_frames, 8192u);
    // A smaller ring keeps the default frames.
    EXPECT_EQ(config_of({{"ring_size", "64"}}).n_frames,
              unsigned(AFXDP_DEFAULT_FRAMES));
    EXPECT_EQ(config_of({{"ring_size", "64"}, {"umem_frames", "128"}})
                  .n_frames, 128u);
    // Given both, the rule holds against the ring given.
    EXPECT_EQ(refusal_of({{"ring_size", "1024"}, {"umem_frames", "2047"}}),
              "ut0: option umem_frames: invalid value '2047' (accepted: an "
              "integer from 2048 to 262144); at least twice ring_size "
              "(1024).");
    // And against the default ring when only the frames are given.
    EXPECT_NE(refusal_of({{"umem_frames", "4095"}}).find("(2048)"),
              std::string::npos);
}

TEST(PortConfig, QueuesWithinOurLimit)
{
    EXPECT_EQ(config_of({{"n_rxq", "16"}}).n_queues, 16u);
    // OVS's C port's wording, which OVS's own tests expect.
    EXPECT_EQ(refusal_of({{"n_rxq", "17"}}), "ut0: Too big 'n_rxq' (17 > 16).");
    EXPECT_EQ(refusal_of({{"n_rxq", "0"}}),
              "ut0: option n_rxq: invalid value '0' (accepted: an integer "
              "from 1 to 4294967295).");
}

TEST(PortConfig, SharingValues)
{
    EXPECT_EQ(config_of({{"shared_umem", "auto"}}).sharing, AFXDP_SHARE_AUTO);
    EXPECT_EQ(config_of({{"shared_umem", "AUTO"}}).sharing, AFXDP_SHARE_AUTO);
    EXPECT_EQ(config_of({{"shared_umem", "true"}}).sharing,
              AFXDP_SHARE_IN_PLACE);
    EXPECT_EQ(config_of({{"shared_umem", "false"}}).sharing,
              AFXDP_SHARE_OFF);
    EXPECT_EQ(refusal_of({{"shared_umem", "maybe"}}),
              "ut0: option shared_umem: \"maybe\" is not \"auto\", \"true\" "
              "or \"false\".");
}

TEST(PortConfig, EachBadValueNamesItsOption)
{
    const struct {
        const char *key, *value, *says;
    } cases[] = {
        {"xdp-mode", "turbo", "option xdp-mode: invalid value 'turbo'"},
        {"ring_size", "100", "option ring_size: invalid value '100'"},
        {"umem_frames", "lots", "option umem_frames: invalid value 'lots'"},
        {"coalesce_tx_kicks", "sometimes",
         "option coalesce_tx_kicks: invalid value 'sometimes'"},
        {"use_need_wakeup", "", "option use_need_wakeup: invalid value ''"},
        {"rx_hints", "maybe", "option rx_hints: invalid value 'maybe'"},
        {"xdp_fast_path", "on", "option xdp_fast_path: invalid value 'on'"},
        {"n_rxq", "abc", "option n_rxq: invalid value 'abc'"},
    };
    for (const auto &c : cases) {
        std::string err = refusal_of({{c.key, c.value}});
        EXPECT_NE(err.find(c.says), std::string::npos) << err;
        EXPECT_EQ(err.back(), '.') << "a sentence: " << err;
    }
}

TEST(PortConfig, EveryChangeNeedsAReopenAndNothingElseDoes)
{
    const afxdp_port_config base = config_of({});
    EXPECT_FALSE(afxdp_port_config_needs_reopen(&base, &base));
    EXPECT_TRUE(same(base, config_of({{"n_rxq", "1"},
                                      {"xdp-mode", "best-effort"},
                                      {"shared_umem", "auto"}})))
        << "spelling out the defaults changes nothing";
    for (const Options &o : {Options{{"n_rxq", "2"}},
                             Options{{"xdp-mode", "native"}},
                             Options{{"use_need_wakeup",
                                      afxdp_need_wakeup_supported()
                                      ? "false" : "true"}},
                             Options{{"ring_size", "1024"}},
                             Options{{"umem_frames", "8192"}},
                             Options{{"shared_umem", "false"}},
                             Options{{"coalesce_tx_kicks", "false"}},
                             Options{{"rx_hints", "false"}},
                             Options{{"xdp_fast_path", "false"}}}) {
        afxdp_port_config changed = config_of(o);
        EXPECT_TRUE(afxdp_port_config_needs_reopen(&base, &changed))
            << o.begin()->first;
        EXPECT_TRUE(afxdp_port_config_needs_reopen(&changed, &base))
            << o.begin()->first;
    }
}

TEST(PortConfig, CheckRefusesWhatNoOptionCouldGive)
{
    afxdp_port_config good;
    afxdp_port_config_default(&good);
    afxdp_port_config bad[] = {good, good, good, good, good, good, good};
    bad[0].n_queues = 0;
    bad[1].n_queues = AFXDP_MAX_QUEUES + 1;
    bad[2].mode = AFXDP_MODE_N;
    bad[3].ring_size = 100;
    bad[4].n_frames = 2 * good.ring_size - 1;
    bad[5].n_frames = AFXDP_MAX_FRAMES + 1;
    bad[6].sharing = afxdp_sharing(AFXDP_SHARE_OFF + 1);
    for (const auto &cfg : bad) {
        char err[256] = "";
        EXPECT_EQ(afxdp_port_config_check("ut0", &cfg, err, sizeof err),
                  EINVAL);
        EXPECT_EQ(std::strncmp(err, "ut0: ", 5), 0) << err;
    }
}
