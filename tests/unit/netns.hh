// Test helper: a veth pair in a network namespace of its own.
//
// VethNetns creates a fresh namespace with `ip netns add`, a veth pair
// inside it with both ends up (and IPv6 off, so that the kernel sends no
// packets of its own on them), and moves the calling thread into it with
// setns() for the test's duration.  The destructor moves the thread back
// and deletes the namespace, which deletes the veth pair with it.
//
// Objects bound to the interfaces (AF_XDP devices, sockets) must be gone
// before the VethNetns is destroyed: declare it first in the test.
//
// When the helper cannot work here (not root, no `ip`, no namespace),
// skip_reason() says why and the test calls GTEST_SKIP() with it.
#ifndef AFXDP_TESTS_NETNS_HH
#define AFXDP_TESTS_NETNS_HH

#include <cstdint>
#include <string>
#include <vector>

namespace afxdp_test {

class VethNetns {
public:
    VethNetns();
    ~VethNetns();
    VethNetns(const VethNetns &) = delete;
    VethNetns &operator=(const VethNetns &) = delete;

    // Empty when the pair is up and this thread is in its namespace;
    // otherwise why not, in words fit for a skipped test's output.
    const std::string &skip_reason() const { return reason_; }

    const char *a() const { return a_.c_str(); }      // One end.
    const char *b() const { return b_.c_str(); }      // Its peer.
    const char *netns() const { return ns_.c_str(); }

    // Runs `ip -n NETNS link set IFNAME SETTINGS` (say "up", "mtu 9000");
    // returns "" on success, else what failed.
    std::string link_set(const char *ifname,
                         const std::string &settings) const;

private:
    bool setup();

    std::string reason_;
    std::string ns_;        // Namespace name, under /var/run/netns.
    std::string a_, b_;     // Veth ends, at most 15 characters each.
    int orig_ns_fd_ = -1;   // The thread's namespace before we entered.
    bool created_ = false;  // ns_ exists and is ours to delete.
    bool entered_ = false;  // This thread is in ns_.
};

// Runs `ip ARGS...` (ARGS split at spaces); returns "" on success, else
// what failed, with ip's own error message.
std::string run_ip(const std::string &args);

// Sends 'frame' out of 'ifname' through a raw AF_PACKET socket (through
// the interface's egress tc programs, if any); true if it went.
bool send_raw(const char *ifname, const std::vector<uint8_t> &frame);

}  // namespace afxdp_test

#endif  // AFXDP_TESTS_NETNS_HH
