// Tier 2 (real kernel, root only): a port's policy (afxdp-port.h) with
// real devices: wrong options kept out, when a reopen is asked and
// needed, what a failed open leaves, a port waiting for an interface
// another port had, the ports sharing a UMEM told of a new one, and
// afxdp/show's text.

#include <gtest/gtest.h>

#include <net/if.h>

#include <map>

#include "afxdp-port.h"
#include "veth-test.hh"

using namespace afxdp_test;

namespace {

// What a port asked of its embedder.
struct Asked {
    int status_changed = 0;
    int reconfigure = 0;
};

const afxdp_port_hooks kHooks = {
    [](void *aux) { static_cast<Asked *>(aux)->status_changed++; },
    [](void *aux) { static_cast<Asked *>(aux)->reconfigure++; },
};

using Options = std::map<std::string, std::string>;

const char *
lookup(const void *args, const char *key)
{
    const Options &o = *static_cast<const Options *>(args);
    auto it = o.find(key);
    return it == o.end() ? nullptr : it->second.c_str();
}

void
add_pair(void *aux, const char *key, const char *value)
{
    (*static_cast<std::map<std::string, std::string> *>(aux))
        [key ? key : ""] += value;
}

class Port : public Veth {
protected:
    void TearDown() override
    {
        for (auto &[port, ifindex] : ports_) {
            afxdp_port_destroy(port, ifindex);
        }
        Veth::TearDown();
    }
    afxdp_port *create(const char *name, Asked *asked)
    {
        afxdp_port *p = afxdp_port_create(name, &kHooks, asked);
        EXPECT_TRUE(p);
        ports_.emplace_back(p, ifindex(name));
        return p;
    }
    static int ifindex(const char *name)
    {
        return int(if_nametoindex(name));
    }
    // Sets 'opts' (generic mode, small rings, and the test's) on 'p'.
    int set(afxdp_port *p, const char *name, Options opts)
    {
        opts.emplace("xdp-mode", "generic");
        opts.emplace("ring_size", "256");
        opts.emplace("umem_frames", "1024");
        char err[512] = "";
        int error = afxdp_port_set_options(p, lookup, &opts, ifindex(name),
                                           err, sizeof err);
        last_err_ = err;
        return error;
    }
    int open(afxdp_port *p, const char *name)
    {
        afxdp_dev_config base = {};
        base.numa_node = -1;
        base.frame_meta_size = 32;
        return afxdp_port_open(p, &base, ifindex(name));
    }
    std::map<std::string, std::string> status(afxdp_port *p)
    {
        std::map<std::string, std::string> m;
        afxdp_port_status(p, "offload off", add_pair, &m);
        return m;
    }

    std::vector<std::pair<afxdp_port *, int>> ports_;
    std::string last_err_;
};

}  // namespace

TEST_F(Port, WrongOptionsKeepARunningPortAsItWasAndRefuseANewOne)
{
    Asked asked;
    afxdp_port *p = create(net_.a(), &asked);
    allow_log("option xdp-mode");
    allow_log("keeping the previous configuration");

    EXPECT_EQ(set(p, net_.a(), {{"xdp-mode", "warp"}}), EINVAL);
    EXPECT_NE(last_err_.find("xdp-mode"), std::string::npos) << last_err_;
    EXPECT_EQ(status(p).count("config_error"), 0u) << "never configured";

    ASSERT_EQ(set(p, net_.a(), {}), 0);
    ASSERT_EQ(open(p, net_.a()), 0);
    EXPECT_EQ(status(p)["xdp_mode"], "generic");
    EXPECT_EQ(set(p, net_.a(), {{"xdp-mode", "warp"}}), 0);
    EXPECT_TRUE(logged(std::string("err|") + net_.a()
                       + ": keeping the previous configuration."));
    EXPECT_NE(status(p)["config_error"].find("xdp-mode"), std::string::npos);
    EXPECT_FALSE(afxdp_port_needs_open(p, ifindex(net_.a()), 1500, false))
        << "the options it runs with are the good ones";
    ASSERT_EQ(set(p, net_.a(), {}), 0);
    EXPECT_EQ(status(p).count("config_error"), 0u);
}

TEST_F(Port, AReopenIsAskedAndNeededExactlyWhenSomethingItOpenedWithChanged)
{
    Asked asked;
    afxdp_port *p = create(net_.a(), &asked);
    const int ifi = ifindex(net_.a());
    ASSERT_EQ(set(p, net_.a(), {}), 0);
    EXPECT_TRUE(afxdp_port_needs_open(p, ifi, 1500, false)) << "not open";
    ASSERT_EQ(open(p, net_.a()), 0);
    EXPECT_TRUE(afxdp_port_dev(p));
    EXPECT_FALSE(afxdp_port_needs_open(p, ifi, 1500, false));
    EXPECT_TRUE(afxdp_port_needs_open(p, ifi + 1000, 1500, false))
        << "another interface";
    EXPECT_TRUE(afxdp_port_needs_open(p, ifi, 1500, true)) << "offload on";
    EXPECT_TRUE(afxdp_port_offload_differs(p, true));
    EXPECT_FALSE(afxdp_port_offload_differs(p, false));

    asked = {};
    ASSERT_EQ(set(p, net_.a(), {}), 0);
    EXPECT_EQ(asked.reconfigure, 0) << "the same options";
    ASSERT_EQ(set(p, net_.a(), {{"ring_size", "512"}}), 0);
    EXPECT_EQ(asked.reconfigure, 1);
    EXPECT_TRUE(afxdp_port_needs_open(p, ifi, 1500, false));
    ASSERT_EQ(open(p, net_.a()), 0);
    EXPECT_EQ(status(p)["ring_size"], "512");
    EXPECT_GE(asked.status_changed, 1);
    EXPECT_FALSE(afxdp_port_needs_open(p, ifi, 1500, false));
}

TEST_F(Port, AFailedOpenLeavesThePortDownSayingWhy)
{
    Asked asked;
    afxdp_port *p = create("afxdp-none0", &asked);
    allow_log("afxdp-none0");
    ASSERT_EQ(set(p, net_.a(), {{"n_rxq", "2"}}), 0);
    EXPECT_NE(open(p, "afxdp-none0"), 0);
    EXPECT_EQ(afxdp_port_dev(p), nullptr);
    EXPECT_EQ(afxdp_port_n_queues(p), 2u);
    auto st = status(p);
    EXPECT_NE(st["afxdp_error"].find("afxdp-none0: no such network "
                                     "interface"), std::string::npos)
        << st["afxdp_error"];
    EXPECT_TRUE(logged("err|afxdp-none0: AF_XDP device reconfiguration "
                       "failed: the port is down until its configuration "
                       "changes."));
    std::map<std::string, std::string> show;
    ASSERT_EQ(afxdp_ports_show("afxdp-none0", nullptr, add_pair, &show), 0);
    EXPECT_EQ(show[""].rfind("afxdp-none0:\n  not running: afxdp-none0: no "
                             "such network interface", 0), 0u) << show[""];
    EXPECT_EQ(afxdp_ports_show("afxdp-nothing", nullptr, add_pair, &show),
              ENOENT);
}

TEST_F(Port, APortWaitingForItsInterfaceIsAskedToReopenWhenItIsFree)
{
    Asked first_asked, second_asked;
    afxdp_port *first = create(net_.a(), &first_asked);
    afxdp_port *second = create(net_.a(), &second_asked);
    allow_log("already opened for AF_XDP by another port");
    allow_log("AF_XDP device reconfiguration failed");
    ASSERT_EQ(set(first, net_.a(), {}), 0);
    ASSERT_EQ(set(second, net_.a(), {}), 0);
    second_asked = {};
    ASSERT_EQ(open(first, net_.a()), 0);
    EXPECT_EQ(open(second, net_.a()), EBUSY);
    EXPECT_EQ(second_asked.reconfigure, 0);

    EXPECT_TRUE(afxdp_port_close(first));
    EXPECT_FALSE(afxdp_port_close(first));
    EXPECT_EQ(second_asked.reconfigure, 1);
    EXPECT_TRUE(logged(std::string("info|") + net_.a() + ": the port that "
                       "had the interface let it go: opening it."));
}

TEST_F(Port, PortsSharingAUmemAreToldOfEachOtherAndShown)
{
    Asked a_asked, b_asked;
    afxdp_port *a = create(net_.a(), &a_asked);
    afxdp_port *b = create(net_.b(), &b_asked);
    ASSERT_EQ(set(a, net_.a(), {{"shared_umem", "true"}}), 0);
    ASSERT_EQ(set(b, net_.b(), {{"shared_umem", "true"}}), 0);
    ASSERT_EQ(open(a, net_.a()), 0);
    a_asked = {};
    ASSERT_EQ(open(b, net_.b()), 0);
    EXPECT_EQ(status(b)["umem_shared_by"], "2");
    EXPECT_EQ(a_asked.status_changed, 1) << "a's umem_shared_by changed";

    std::map<std::string, std::string> show;
    ASSERT_EQ(afxdp_ports_show(nullptr, nullptr, add_pair, &show), 0);
    const std::string &text = show[""];
    const size_t at_a = text.find(std::string(net_.a()) + ":\n  xdp mode: ");
    const size_t at_b = text.find(std::string(net_.b()) + ":\n  xdp mode: ");
    EXPECT_NE(at_a, std::string::npos) << text;
    EXPECT_LT(at_a, at_b) << "in the order they were made";
    EXPECT_NE(text.find("used by 2 ports"), std::string::npos);
    EXPECT_NE(text.find("\nclosed UMEMs waiting for frames held by OVS: "),
              std::string::npos);
    afxdp_umem_frames u;
    ASSERT_EQ(afxdp_ports_frames(net_.b(), &u), 0);
    EXPECT_EQ(u.free + u.in_kernel + u.kept + u.in_ovs, u.total);
    EXPECT_EQ(afxdp_ports_frames("afxdp-nothing", &u), ENOENT);

    a_asked = {};
    EXPECT_TRUE(afxdp_port_close(b));
    EXPECT_EQ(a_asked.status_changed, 1) << "b left the UMEM";
}

// The shim finds a netdev's port by the netdev on every call, from any
// thread, and from the hooks, which run under the ports' lock: the
// lookup takes only a lock of its own.
TEST_F(Port, APortIsFoundByItsOwnerAlsoFromItsHooks)
{
    struct Owner {
        afxdp_port *found_in_hook = nullptr;
        int calls = 0;
    } owner, stranger;
    static const afxdp_port_hooks hooks = {
        [](void *aux) {
            auto *o = static_cast<Owner *>(aux);
            o->found_in_hook = afxdp_port_find(aux);
            o->calls++;
        },
        nullptr,
    };
    afxdp_port *p = afxdp_port_create(net_.a(), &hooks, &owner);
    ASSERT_TRUE(p);
    ports_.emplace_back(p, ifindex(net_.a()));
    EXPECT_EQ(afxdp_port_find(&owner), p);
    EXPECT_EQ(afxdp_port_find(&stranger), nullptr);

    allow_log("a second port for one object");
    EXPECT_EQ(afxdp_port_create(net_.b(), &hooks, &owner), nullptr);
    EXPECT_EQ(afxdp_port_find(&owner), p) << "the first one stays";

    ASSERT_EQ(set(p, net_.a(), {}), 0);
    ASSERT_EQ(open(p, net_.a()), 0);
    EXPECT_GT(owner.calls, 0) << "an open changes the status";
    EXPECT_EQ(owner.found_in_hook, p);

    ports_.clear();
    afxdp_port_destroy(p, ifindex(net_.a()));
    EXPECT_EQ(afxdp_port_find(&owner), nullptr);
    afxdp_port_destroy(nullptr, 0);   // As the shim may, for no port.
}
