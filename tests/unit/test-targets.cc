// Tier 3 (kernel, veths): a port's redirect targets (lib/afxdp/targets.hh)
// asked of the real kernel about real veths, with the devmap's changes
// recorded.  The devmap itself is the fast path's, tested with traffic in
// test-socket.cc (RedirectsToAnotherInterfaceInXdp); here the policy:
// when a target is asked, what it says, and what it changes.
#include <cstring>
#include <mutex>
#include <net/if.h>
#include <string>
#include <unistd.h>
#include <vector>

#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include "afxdp.h"
#include "afxdp-offload.h"
#include "netns.hh"
#include "targets.hh"
#include "xdp-progs.hh"

namespace {

using afxdp::RedirectTargets;

// The devmap's changes, in order: "+N" added, "-N" removed.
class RecordedDevmap final : public RedirectTargets::Devmap {
public:
    int add(int ifindex) noexcept override
    {
        changes.push_back("+" + std::to_string(ifindex));
        return 0;
    }
    void remove(int ifindex) noexcept override
    {
        changes.push_back("-" + std::to_string(ifindex));
    }
    bool lost(int, uint64_t *n) noexcept override
    {
        *n = lost_frames;
        return lost_frames > 0;
    }

    std::vector<std::string> changes;
    uint64_t lost_frames = 0;   // What the watcher says, if not 0.
};

std::mutex log_mutex;
std::vector<std::string> log_lines;

void
capture_log(afxdp_log_level, const char *msg)
{
    std::lock_guard<std::mutex> g(log_mutex);
    log_lines.push_back(msg);
}

class Targets : public ::testing::Test {
protected:
    void SetUp() override
    {
        if (!net_.skip_reason().empty()) {
            GTEST_SKIP() << net_.skip_reason();
        }
        a_ = int(if_nametoindex(net_.a()));
        b_ = int(if_nametoindex(net_.b()));
        char why[256];
        if (!afxdp_xdp_target_ok(a_, nullptr, why, sizeof why)
            && std::strstr(why, "Linux 6.3")) {
            GTEST_SKIP() << why;
        }
        targets_.set_port("in0");
        std::lock_guard<std::mutex> g(log_mutex);
        log_lines.clear();
        afxdp_set_log_handler(capture_log, AFXDP_LOG_INFO);
    }
    void TearDown() override
    {
        afxdp_set_log_handler(nullptr, AFXDP_LOG_INFO);
        if (pass_fd_ >= 0) {
            bpf_xdp_detach(b_, XDP_FLAGS_DRV_MODE, nullptr);
            close(pass_fd_);
        }
    }

    // A flow's output to A, by the name 'name'.
    afxdp_flow_action output_to_a(const char *name, bool xdp_target = true)
    {
        afxdp_flow_action act = {};
        act.type = AFXDP_ACTION_OUTPUT;
        act.output.ifindex = a_;
        act.output.xdp_target = xdp_target;
        act.output.name = name;
        return act;
    }
    // A's peer gets an XDP program: A takes XDP frames.
    void peer_takes_xdp()
    {
        pass_fd_ = afxdp_test::attach_xdp_pass(b_);
        ASSERT_GE(pass_fd_, 0) << std::strerror(-pass_fd_);
    }
    std::string described() const
    {
        char buf[AFXDP_TARGETS_DESCRIBED];
        targets_.describe(buf, sizeof buf);
        return buf;
    }
    bool logged(const std::string &text) const
    {
        std::lock_guard<std::mutex> g(log_mutex);
        for (const std::string &l : log_lines) {
            if (l.find(text) != std::string::npos) {
                return true;
            }
        }
        return false;
    }

    afxdp_test::VethNetns net_;
    int a_ = 0, b_ = 0, pass_fd_ = -1;
    RecordedDevmap devmap_;
    RedirectTargets targets_;
};

TEST_F(Targets, ATargetIsOnExactlyWhileTheKernelSaysItTakesXdpFrames)
{
    const afxdp_flow_action out = output_to_a(net_.a());
    const std::string a = std::to_string(a_);
    EXPECT_TRUE(targets_.add(devmap_, &out, 1, 1000)) << "a new target";
    EXPECT_FALSE(targets_.on(a_));
    EXPECT_EQ(devmap_.changes, std::vector<std::string>{"-" + a});
    EXPECT_EQ(described().rfind(std::string(net_.a()) + " off: ", 0), 0u)
        << described();
    EXPECT_NE(described().find("peer has an XDP program or GRO"),
              std::string::npos) << described();

    EXPECT_FALSE(targets_.run(devmap_, 1000)) << "nothing changed";
    peer_takes_xdp();
    EXPECT_FALSE(targets_.run(devmap_, 1000 + RedirectTargets::kCheckEveryMs
                                       - 1)) << "asked again too soon";
    EXPECT_FALSE(targets_.on(a_));
    EXPECT_TRUE(targets_.run(devmap_, 1000 + RedirectTargets::kCheckEveryMs));
    EXPECT_TRUE(targets_.on(a_));
    EXPECT_EQ(devmap_.changes, (std::vector<std::string>{"-" + a, "+" + a}));
    EXPECT_EQ(described(), std::string(net_.a()) + " on");
    EXPECT_TRUE(logged("in0: XDP redirects to " + std::string(net_.a())
                       + " on."));

    // The peer loses its program: off at the next round, and said.
    ASSERT_EQ(bpf_xdp_detach(b_, XDP_FLAGS_DRV_MODE, nullptr), 0);
    EXPECT_TRUE(targets_.run(devmap_, 1000
                                      + 2 * RedirectTargets::kCheckEveryMs));
    EXPECT_FALSE(targets_.on(a_));
    EXPECT_EQ(devmap_.changes.back(), "-" + a);
    EXPECT_TRUE(logged("in0: XDP redirects to " + std::string(net_.a())
                       + " off: its packets go through OVS: "));
}

TEST_F(Targets, AFlowToATargetThatTookNoneAsksAgainAtMostEvery10Ms)
{
    const afxdp_flow_action out = output_to_a(net_.a());
    ASSERT_TRUE(targets_.add(devmap_, &out, 1, 1000));
    ASSERT_FALSE(targets_.on(a_));
    peer_takes_xdp();
    EXPECT_FALSE(targets_.add(devmap_, &out, 1,
                              1000 + RedirectTargets::kRecheckOnPutMs - 1));
    EXPECT_FALSE(targets_.on(a_));
    EXPECT_TRUE(targets_.add(devmap_, &out, 1,
                             1000 + RedirectTargets::kRecheckOnPutMs));
    EXPECT_TRUE(targets_.on(a_));
    // On: another flow's put asks nothing.
    const size_t n = devmap_.changes.size();
    EXPECT_FALSE(targets_.add(devmap_, &out, 1, 5000));
    EXPECT_EQ(devmap_.changes.size(), n);
}

TEST_F(Targets, ATargetTheWatcherTookOutIsPutBackIfTheKernelTakesIt)
{
    peer_takes_xdp();
    const afxdp_flow_action out = output_to_a(net_.a());
    ASSERT_TRUE(targets_.add(devmap_, &out, 1, 1000));
    ASSERT_TRUE(targets_.on(a_));
    devmap_.lost_frames = 7;
    EXPECT_TRUE(targets_.run(devmap_, 1000));
    EXPECT_TRUE(targets_.on(a_));
    const std::string a = std::to_string(a_);
    EXPECT_EQ(devmap_.changes, (std::vector<std::string>{"+" + a, "+" + a}));
    EXPECT_TRUE(logged("in0: the kernel refused XDP redirects to "
                       + std::string(net_.a())
                       + " (7 frames lost so far); they went through OVS "
                         "since."));
}

TEST_F(Targets, ATargetIsTheInterfaceItWasNamedFor)
{
    // An index a deleted interface freed may go to the next one made.
    peer_takes_xdp();
    const afxdp_flow_action out = output_to_a(net_.b());
    ASSERT_TRUE(targets_.add(devmap_, &out, 1, 1000));
    EXPECT_FALSE(targets_.on(a_));
    EXPECT_EQ(described(), std::string(net_.b()) + " off: interface "
                           + std::to_string(a_) + " is " + net_.a()
                           + " now, not " + net_.b());
}

TEST_F(Targets, AGoneTargetLeavesWhateverFlowsSay)
{
    peer_takes_xdp();
    const afxdp_flow_action out = output_to_a(net_.a());
    ASSERT_TRUE(targets_.add(devmap_, &out, 1, 1000));
    ASSERT_TRUE(targets_.on(a_));
    EXPECT_TRUE(targets_.drop(devmap_, a_));
    EXPECT_FALSE(targets_.on(a_));
    EXPECT_EQ(devmap_.changes.back(), "-" + std::to_string(a_));
    EXPECT_EQ(described(), "");
    EXPECT_FALSE(targets_.drop(devmap_, a_)) << "already gone";
}

TEST_F(Targets, OnlyOutputsToAfxdpPortsAreTargets)
{
    peer_takes_xdp();
    const afxdp_flow_action acts[] = {output_to_a(net_.a(), false)};
    EXPECT_FALSE(targets_.add(devmap_, acts, 1, 1000));
    EXPECT_EQ(described(), "");
    EXPECT_TRUE(devmap_.changes.empty());
}

}  // namespace
