// Test helper: a veth pair in a network namespace of its own (netns.hh).
#include "netns.hh"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace afxdp_test {
namespace {

// Where iproute2's `ip` lives, or nullptr.
const char *
find_ip()
{
    static const char *const paths[] = {"/sbin/ip", "/usr/sbin/ip",
                                        "/bin/ip", "/usr/bin/ip"};
    for (const char *p : paths) {
        if (!access(p, X_OK)) {
            return p;
        }
    }
    return nullptr;
}

// Writes 'value' to the sysctl file 'path'; failures are ignored (a
// kernel without IPv6 has nothing to turn off).
void
write_sysctl(const char *path, const char *value)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = write(fd, value, std::strlen(value));
        (void) n;
        close(fd);
    }
}

}  // namespace

std::string
VethNetns::link_set(const char *ifname, const std::string &settings) const
{
    return run_ip("-n " + ns_ + " link set " + ifname + " " + settings);
}

std::string
run_ip(const std::string &args)
{
    const char *ip = find_ip();
    if (!ip) {
        return "no 'ip' command (iproute2) found";
    }
    std::vector<std::string> words;
    std::istringstream in(args);
    for (std::string w; in >> w;) {
        words.push_back(w);
    }
    std::vector<char *> argv;
    argv.push_back(const_cast<char *>(ip));
    for (auto &w : words) {
        argv.push_back(&w[0]);
    }
    argv.push_back(nullptr);

    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC)) {
        return std::string("pipe: ") + std::strerror(errno);
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return std::string("fork: ") + std::strerror(errno);
    }
    if (pid == 0) {
        // Child: ip's stdout and stderr both go to the pipe.
        dup2(pipefd[1], STDOUT_FILENO);
        dup2(pipefd[1], STDERR_FILENO);
        execv(ip, argv.data());
        _exit(127);
    }
    close(pipefd[1]);
    std::string out;
    char buf[256];
    ssize_t n;
    while ((n = read(pipefd[0], buf, sizeof buf)) > 0
           || (n < 0 && errno == EINTR)) {
        if (n > 0) {
            out.append(buf, size_t(n));
        }
    }
    close(pipefd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return "";
    }
    while (!out.empty() && out.back() == '\n') {
        out.pop_back();
    }
    return "'ip " + args + "' failed: " + (out.empty() ? "no output" : out);
}

VethNetns::VethNetns()
{
    if (!setup() && reason_.empty()) {
        reason_ = "setting up the veth pair failed";
    }
}

bool
VethNetns::setup()
{
    if (geteuid() != 0) {
        reason_ = "needs root for network namespaces and XDP";
        return false;
    }
    if (!find_ip()) {
        reason_ = "no 'ip' command (iproute2) found";
        return false;
    }

    // Unique per process and per object: tests may run in parallel
    // processes, and one process creates one namespace per test.
    static unsigned counter;
    std::string pid = std::to_string(getpid());
    ns_ = "afxdp-ut-" + pid + "-" + std::to_string(counter++);
    a_ = "ut" + pid + "a";
    b_ = "ut" + pid + "b";

    orig_ns_fd_ = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (orig_ns_fd_ < 0) {
        reason_ = std::string("cannot open this thread's network "
                              "namespace: ") + std::strerror(errno);
        return false;
    }
    reason_ = run_ip("netns add " + ns_);
    if (!reason_.empty()) {
        return false;
    }
    created_ = true;

    std::string path = "/var/run/netns/" + ns_;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        reason_ = "cannot open " + path + ": " + std::strerror(errno);
        return false;
    }
    int r = setns(fd, CLONE_NEWNET);
    int e = errno;
    close(fd);
    if (r) {
        reason_ = "setns into " + ns_ + " failed: " + std::strerror(e);
        return false;
    }
    entered_ = true;

    // /proc/sys/net is the opening thread's namespace's.  New interfaces
    // copy 'default', so the veth pair never sends router solicitations
    // or MLD reports into the tests' traffic.
    write_sysctl("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
    write_sysctl("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");

    const std::string in_ns = "-n " + ns_ + " ";
    for (const std::string &cmd : {
             "link add " + a_ + " type veth peer name " + b_,
             "link set " + a_ + " up",
             "link set " + b_ + " up",
         }) {
        reason_ = run_ip(in_ns + cmd);
        if (!reason_.empty()) {
            return false;
        }
    }
    return true;
}

VethNetns::~VethNetns()
{
    if (entered_ && setns(orig_ns_fd_, CLONE_NEWNET)) {
        std::fprintf(stderr, "netns: returning to the original network "
                     "namespace failed: %s\n", std::strerror(errno));
    }
    if (orig_ns_fd_ >= 0) {
        close(orig_ns_fd_);
    }
    if (created_) {
        // Deleting the link first makes its removal synchronous; deleting
        // the namespace alone would leave it to the kernel's cleanup work.
        run_ip("-n " + ns_ + " link del " + a_);
        std::string err = run_ip("netns del " + ns_);
        if (!err.empty()) {
            std::fprintf(stderr, "netns: %s\n", err.c_str());
        }
    }
}

bool
send_raw(const char *ifname, const std::vector<uint8_t> &frame)
{
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    sockaddr_ll sll = {};
    sll.sll_family = AF_PACKET;
    sll.sll_ifindex = int(if_nametoindex(ifname));
    bool ok = fd >= 0
              && sendto(fd, frame.data(), frame.size(), 0,
                        reinterpret_cast<sockaddr *>(&sll), sizeof sll)
                 == ssize_t(frame.size());
    if (fd >= 0) {
        close(fd);
    }
    return ok;
}

}  // namespace afxdp_test
